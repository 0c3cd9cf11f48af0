"""Bringing a planned cluster up on every node, waiting until it is ready, stopping it.

Owns :mod:`~launcher.cluster.cluster` (the agents started through :mod:`launcher.fanout`, readiness, decommissioning,
stop), :mod:`~launcher.cluster.events` (what a bring-up has done so far, one line per event) and
:mod:`~launcher.cluster.watch` (writes that must not stall the run on a slow shared filesystem); ``hpc-hadoop ui``'s
proxy to the daemons' web servers is the command line's (:mod:`launcher.cli.webproxy`). May import
:mod:`launcher.render`, :mod:`launcher.fanout`, :mod:`launcher.security.webauth` and everything below them; not the
steps or the life cycle.
"""
