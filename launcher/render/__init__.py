"""The cluster plan -> files and commands: Hadoop and Spark configuration, client wrappers, JVM command lines.

Owns :mod:`~launcher.render.config` (the ``*-site.xml`` files from ``templates/hadoop/``),
:mod:`~launcher.render.clients` (``bin/hadoop``, ``bin/yarn`` from ``templates/clients/``, the client
environment), :mod:`~launcher.render.daemons` (a daemon's or client's environment and ``java`` command line) and
:mod:`~launcher.render.spark` (Spark on the cluster: ``spark-defaults.conf``, executor sizing, ``spark-submit``).
May import :mod:`launcher.plan` and everything below it; not the fan-out or filesystems (its siblings).
"""
