"""An allocation and a job spec -> the :class:`~launcher.plan.cluster_plan.ClusterPlan`: who runs where, with what.

Owns :mod:`~launcher.plan.cluster_plan`: which daemon runs on which node, the memory and cores of each container,
the cluster directory's layout; and :mod:`~launcher.plan.hdfs`: what the comparison-only ``filesystem.mode: hdfs``
changes, asked by every layer above. May import :mod:`launcher.schedulers` (the allocation), :mod:`launcher.config`,
:mod:`launcher.runtime` and :mod:`launcher.util`.
"""
