"""The per-node agent (``python -m launcher.node.agent RUN_DIR``) and the listeners it reports.

Owns :mod:`~launcher.node.agent` (starts and watches this node's Hadoop daemons, writes ``agents/<node>.json``)
and :mod:`~launcher.node.listeners` (which ports a node's daemons listen on); the agent opens its node's sealed keys
with :mod:`launcher.security.keytabs` (the security room). May import :mod:`launcher.render`,
:mod:`launcher.security.keytabs` and everything below them; not the cluster, the steps or the life cycle.
"""
