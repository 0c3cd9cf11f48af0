"""The bottom of the data flow: what every layer shares, with no knowledge of Hadoop's configuration or of a plan.

Owns :mod:`~launcher.util.errors` (the user-facing errors), :mod:`~launcher.util.units` (sizes and times),
:mod:`~launcher.util.yamlio`, :mod:`~launcher.util.polling` (the one way to wait), :mod:`~launcher.util.processes` (the
one way to end processes), :mod:`~launcher.util.network`, :mod:`~launcher.util.sockets` (every user's listening TCP
sockets, from ``/proc/net/tcp*``), :mod:`~launcher.util.records` (the typed records of the files that pass between
processes: ``run.json``, ``agents/<node>.json``, ``submit.json``...) and :mod:`~launcher.util.states` (their state
vocabularies and exit codes), :mod:`~launcher.util.safedirs` (directories used only when they are ours),
:mod:`~launcher.util.sealed` (files sealed for other nodes), :mod:`~launcher.util.userdirs` (per-user directories),
:mod:`~launcher.util.registry` (name -> class) and :mod:`~launcher.util.resources` (where templates, presets and
runtimes live). It imports nothing of ``launcher`` but ``launcher.util``.
"""
