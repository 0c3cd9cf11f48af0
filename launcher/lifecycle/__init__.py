"""One run end to end: allocate, plan, bring the cluster up, run the steps, report, tear down; and the batch side.

Owns :mod:`~launcher.lifecycle.front` (the front half of every command, one call: ``front_door``),
:mod:`~launcher.lifecycle.compose` (the back half of a run, composed once into a
:class:`~launcher.lifecycle.runner.ClusterRun`), :mod:`~launcher.lifecycle.validate`, :mod:`~launcher.lifecycle.runner`
with its parts (:mod:`~launcher.lifecycle.bringup`, :mod:`~launcher.lifecycle.step_runs`,
:mod:`~launcher.lifecycle.teardown`, :mod:`~launcher.lifecycle.health`, :mod:`~launcher.lifecycle.signals`,
:mod:`~launcher.lifecycle.archives`, :mod:`~launcher.lifecycle.findings`), :mod:`~launcher.lifecycle.submit` (the
batch script and ``submit.json``), :mod:`~launcher.lifecycle.start` and :mod:`~launcher.lifecycle.clusters`
(long-lived clusters: the index and its one writer, their state derived without a write, stop and clean),
:mod:`~launcher.lifecycle.record` (the one writer of ``run.json``) and :mod:`~launcher.lifecycle.report` (its
record and the terminal summary),
:mod:`~launcher.lifecycle.observer` and :mod:`~launcher.lifecycle.progress` (the run's progress on the terminal, also
used by ``benchmarks``). Bring-up and teardown start and end the per-cluster KDC of
:mod:`launcher.security.kdc` (the security room, :mod:`launcher.security`). May import the cluster, steps, node
agent, :mod:`launcher.security.kdc` and everything below them; not the command line or the benchmarks.
"""
