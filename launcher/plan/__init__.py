"""An allocation and a job spec -> the :class:`~launcher.plan.cluster_plan.ClusterPlan`: who runs where, with what.

Owns :mod:`~launcher.plan.cluster_plan`: which daemon runs on which node, the memory and cores of each container,
the cluster directory's layout (``plan.json``, a frozen
:class:`launcher.util.records.Record`); :mod:`~launcher.plan.hdfs`: what the comparison-only ``filesystem.mode: hdfs``
changes, asked by every layer above; and :mod:`~launcher.plan.daemon_sockets` (whether a web server's socket is the
owner's daemon's before a credential goes there). What ``security:`` means (the realm, principals, keytabs and rules
a plan carries, :attr:`ClusterPlan.security <launcher.plan.cluster_plan.ClusterPlan.security>`) is
:mod:`launcher.security.kerberos`, in the security room (:mod:`launcher.security`), below the plan. May import
:mod:`launcher.security.kerberos` and :mod:`launcher.security.checks`, :mod:`launcher.schedulers` (the allocation),
:mod:`launcher.config`, :mod:`launcher.runtime` and :mod:`launcher.util`.
"""
