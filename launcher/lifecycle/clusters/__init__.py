"""Clusters that stay up for interactive use, and every cluster of the user's index: its index, its state, stop and
clean.

``hpc-hadoop start`` makes a cluster directory, then either submits a batch job whose script runs
``hpc-hadoop run --hold`` or, on the local backend and inside an existing allocation, starts that same
command detached from the terminal. The held run brings the cluster up, runs the job file's steps (if any)
and then keeps the cluster up until a stop is requested (the file ``stop-requested`` in the cluster
directory, which ``hpc-hadoop stop`` writes: any node of the shared filesystem can write it), the walltime
is nearly over, or a signal arrives; then it tears down as every run does and ``run.json`` says ``stopped``.

The state lives in the cluster directory (``plan.json``, ``run.json``, ``submit.json``, on the shared
filesystem); a small index of the user's clusters lives in ``$XDG_STATE_HOME/hpc-hadoop/clusters/``
(default ``~/.local/state/hpc-hadoop/clusters/``): one ``<cluster id>.json`` per cluster with its cluster
directory, scheduler and job id.

* :mod:`~launcher.lifecycle.clusters.index`: the index (read), and the one writer of it (:func:`~.index.register`,
  :func:`~.index.record`, :func:`~.index.unregister`) and of ``ended.json`` (:func:`~.index.record`,
  :func:`~.index.record_end`); :func:`~.index.check_index` before a cluster only the index can reach starts.
* :mod:`~launcher.lifecycle.clusters.status`: :class:`~.status.ClusterStatus` and its derivation from the cluster
  directory and the batch system's answer (:func:`~.status.status_of`, :func:`~.status.statuses`,
  :func:`~.status.find`), which writes nothing: what a look learned comes back in
  :attr:`~.status.ClusterStatus.observed`, and the commands that look pass it to :func:`~.index.record`.
* :mod:`~launcher.lifecycle.clusters.stop`: the stop protocol (:func:`~.stop.request_stop`,
  :func:`~.stop.cancel_leftover`).
* :mod:`~launcher.lifecycle.clusters.clean`: ``clean`` (:func:`~.clean.cleanup_of`, :func:`~.clean.clean`).

``clean`` and ``stop`` import ``status``, which imports ``index``; ``index`` imports none of them.
"""
