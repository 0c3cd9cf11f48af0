"""hpc-hadoop: on-demand Apache Hadoop (YARN + MapReduce) inside HPC batch allocations.

HDFS is replaced by the site's parallel filesystem (``fs.defaultFS=file:///``), the way the Oak Ridge
paper "Design and Evaluation of Hadoop on the Spider Filesystem" ran it. See ``docs/architecture.md``.
"""

__version__ = "0.1.0"
