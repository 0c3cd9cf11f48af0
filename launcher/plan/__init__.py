"""An allocation and a job spec -> the :class:`~launcher.plan.cluster_plan.ClusterPlan`: who runs where, with what.

Owns :mod:`~launcher.plan.cluster_plan`: which daemon runs on which node, the memory and cores of each container,
the cluster directory's layout (``plan.json``, a frozen :class:`launcher.util.records.Record`);
:mod:`~launcher.plan.hdfs`: what the comparison-only ``filesystem.mode: hdfs``
changes, asked by every layer above; and, for ``security:``, :mod:`~launcher.plan.security` (the realm, principals,
keytabs and rules a plan carries), :mod:`~launcher.plan.kerberos_checks` (what secure mode needs of every node, and
the probe each node runs), :mod:`~launcher.plan.webauth` (the signed ``hadoop.auth`` cookie) and
:mod:`~launcher.plan.daemon_sockets` (whether a web server's socket is the owner's daemon's before a credential goes
there). May import :mod:`launcher.schedulers` (the allocation), :mod:`launcher.config`, :mod:`launcher.runtime` and
:mod:`launcher.util`.
"""
