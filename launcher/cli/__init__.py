"""The command line (``hpc-hadoop``, ``python -m launcher.cli``): commands, options, ``doctor``.

Owns :mod:`~launcher.cli.main` (the click group and the run/submit/render/bench commands),
:mod:`~launcher.cli.clusters` (the commands on long-lived clusters), :mod:`~launcher.cli.webproxy` (the ``ui``
command's proxy to the daemons' web servers), :mod:`~launcher.cli.common` (shared options, loading a job file, the
scheduler detected from the environment) and :mod:`~launcher.cli.doctor`. The top of the data flow: it may import
everything, including :mod:`benchmarks`; nothing imports it.
"""
