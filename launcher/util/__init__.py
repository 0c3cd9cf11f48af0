"""Utilities with no knowledge of Hadoop or of a run: errors, units, YAML 1.2 I/O, waiting, networking, registries.

Owns :mod:`~launcher.util.errors` (the user-facing errors), :mod:`~launcher.util.units` (sizes and times),
:mod:`~launcher.util.yamlio`, :mod:`~launcher.util.polling` (the one way to wait), :mod:`~launcher.util.network`,
:mod:`~launcher.util.sockets` (every user's listening TCP sockets, from ``/proc/net/tcp*``),
:mod:`~launcher.util.registry` (name -> class) and :mod:`~launcher.util.resources` (where templates, presets and
runtimes live).
The bottom of the data flow: it imports nothing of ``launcher`` but ``launcher.util``.
"""
