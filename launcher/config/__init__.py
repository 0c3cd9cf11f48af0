"""The job file -> :class:`~launcher.config.spec.JobSpec`: its model, site presets, Hadoop property checks, examples.

Owns :mod:`~launcher.config.spec` (the pydantic model of a job file and the presets it is layered on),
:mod:`~launcher.config.properties` (known Hadoop properties), :mod:`~launcher.config.examples` (the example
jars and programs a step may name) and :mod:`~launcher.config.docgen` (the job-file reference generated from the
model). May import :mod:`launcher.runtime` (to read the defaults of the Hadoop install it will use) and
:mod:`launcher.util`, nothing above.
"""
