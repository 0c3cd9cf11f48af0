"""One run end to end: allocate, plan, bring the cluster up, run the steps, report, tear down; and the batch side.

Owns :mod:`~launcher.lifecycle.runner` (a run inside an allocation), :mod:`~launcher.lifecycle.submit` (the batch
script and ``submit.json``), :mod:`~launcher.lifecycle.start` and :mod:`~launcher.lifecycle.interactive`
(long-lived clusters), :mod:`~launcher.lifecycle.report` (``report.md``) and :mod:`~launcher.lifecycle.progress`
(the run's progress on the terminal, also used by ``benchmarks``). May import the cluster, steps, node agent and
everything below them; not the command line or the benchmarks.
"""
