"""Bringing a planned cluster up on every node, waiting until it is ready, stopping it, and reaching its web pages.

Owns :mod:`~launcher.cluster.cluster` (the agents started through :mod:`launcher.fanout`, readiness, decommissioning,
stop), :mod:`~launcher.cluster.events` (what a bring-up has done so far, one line per event),
:mod:`~launcher.cluster.watch` (writes that must not stall the run on a slow shared filesystem) and
:mod:`~launcher.cluster.webproxy` (``hpc-hadoop ui``'s proxy to the daemons' web servers). May import
:mod:`launcher.render`, :mod:`launcher.fanout` and everything below them; not the steps or the life cycle.
"""
