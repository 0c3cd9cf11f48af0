"""Class-data-sharing (AppCDS) archives of a run: what the agents did with them, and publishing the
ApplicationMasters' archives at teardown.

Owns: :class:`Archives`. Imports the cluster (the agents' states) and :mod:`launcher.runtime.cds`.
"""

from __future__ import annotations

from launcher.cluster.cluster import Cluster
from launcher.lifecycle.report import RunReport
from launcher.plan.cluster_plan import ClusterPlan
from launcher.runtime.cds import publish_am_archives


class Archives:
    """AppCDS archives of one cluster: notes on what the agents did with them (:meth:`note`), the ApplicationMasters'
    archives published once none runs (:meth:`publish`).

    Args:
        plan: the run's plan (``hadoop.class_data_sharing``, the runtime).
        cluster: its cluster (the agents' states).
        report: the run report the notes go into.
    """

    def __init__(self, plan: ClusterPlan, cluster: Cluster, report: RunReport) -> None:
        self.plan = plan
        self.cluster = cluster
        self.report = report

    def note(self) -> None:
        """Add to the report's notes (``run.json``, one ``note:`` line each on the terminal) what the agents did with
        class-data-sharing archives (``archive_notes`` of ``agents/<node>.json``): one set aside after a daemon died
        mapping it, one dropped because the teardown's budget ran out (:mod:`launcher.node.agent`). Where ``agents/``
        cannot be read (the filesystem is gone), from the states the cluster's watch last read."""
        try:
            states = self.cluster.states()
        except OSError:
            states = self.cluster.watched_states()
        for _node, state in sorted(states.items()):
            for note in state.archive_notes:
                if note not in self.report.notes:
                    self.report.notes.append(note)

    def publish(self) -> None:
        """At teardown, when the job asks for class-data sharing and the shared filesystem answers: publish the
        ApplicationMasters' archives (:func:`launcher.runtime.cds.publish_am_archives`: this cluster's AMs have all
        ended, another cluster's of the same user may still be writing)."""
        if self.plan.spec.hadoop.class_data_sharing and self.cluster.watch.stall() is None:
            publish_am_archives(self.plan.runtime, ended=self.plan.cluster_id)
