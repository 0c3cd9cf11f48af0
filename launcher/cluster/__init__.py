"""Bringing a planned cluster up on every node, waiting until it is ready, and stopping it.

Owns :mod:`~launcher.cluster.cluster` (the agents started through :mod:`launcher.fanout`, readiness, stop) and
:mod:`~launcher.cluster.watch` (writes that must not stall the run on a slow shared filesystem). May import
:mod:`launcher.render`, :mod:`launcher.fanout` and everything below them; not the steps or the life cycle.
"""
