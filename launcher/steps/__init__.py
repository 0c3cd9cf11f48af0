"""The user's steps on a running cluster and what they did: MapReduce, streaming and Spark steps, their history.

Owns :mod:`~launcher.steps.commands` (a step's command line and environment, built and checked before anything
starts), :mod:`~launcher.steps.jobs` (running a step), :mod:`~launcher.steps.jobhistory` and
:mod:`~launcher.steps.shuffle` (reading a finished job's history and shuffle counters) and
:mod:`~launcher.steps.diagnosis` (why a step failed, from its logs). May import :mod:`launcher.render`,
:mod:`launcher.fanout` and everything below them; not the cluster bring-up or the life cycle.
"""
