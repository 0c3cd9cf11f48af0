"""The Hadoop runtime: the install (jars, JDK, shim), class-data sharing archives, the shuffle plugin's names.

Owns :mod:`~launcher.runtime.hadoop` (finding the Hadoop install and the JDK, the JVM flags every daemon gets),
:mod:`~launcher.runtime.cds` and :mod:`~launcher.runtime.cds_build` (AppCDS archives, ``python -m
launcher.runtime.cds_build`` in ``install.sh``) and :mod:`~launcher.runtime.shuffle_plugin`. It knows nothing of a
job file or a plan: it may import only :mod:`launcher.util`.
"""
