"""One run end to end: allocate, plan, bring the cluster up, run the steps, report, tear down; and the batch side.

Owns :mod:`~launcher.lifecycle.compose` (the back half of a run, composed once into a
:class:`~launcher.lifecycle.runner.ClusterRun`), :mod:`~launcher.lifecycle.validate`, :mod:`~launcher.lifecycle.runner`
with its parts (:mod:`~launcher.lifecycle.bringup`, :mod:`~launcher.lifecycle.step_runs`,
:mod:`~launcher.lifecycle.teardown`, :mod:`~launcher.lifecycle.health`, :mod:`~launcher.lifecycle.signals`,
:mod:`~launcher.lifecycle.archives`, :mod:`~launcher.lifecycle.findings`), :mod:`~launcher.lifecycle.kdc` (the
per-cluster KDC and the secure-mode checks of every node), :mod:`~launcher.lifecycle.submit` (the batch script and
``submit.json``), :mod:`~launcher.lifecycle.start` and :mod:`~launcher.lifecycle.interactive` (long-lived clusters),
:mod:`~launcher.lifecycle.record` (the one writer of ``run.json``) and :mod:`~launcher.lifecycle.report` (its record
and the terminal summary),
:mod:`~launcher.lifecycle.observer` and :mod:`~launcher.lifecycle.progress` (the run's progress on the terminal, also
used by ``benchmarks``). May import the cluster, steps, node agent and everything below them; not the command line or
the benchmarks.
"""
