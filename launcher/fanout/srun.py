"""srun fan-out: ONE job step spanning every node, one task per node, running our agent.

``srun --overlap`` shares the allocation with the batch shell's own work; one step for the whole
cluster, never one per node (a thousand concurrent steps would swamp slurmctld). Slurm tracks every
process the agents start (with ``proctrack/cgroup``) and kills them when the step or the job ends.
"""

from __future__ import annotations

from launcher.fanout.base import Fanout, agent_argv
from launcher.plan import ClusterPlan


class SrunFanout(Fanout):
    """Starts the agents with one ``srun`` step; stopping sends SIGTERM to ``srun``, which passes it on."""

    name = "srun"

    def command(self, plan: ClusterPlan) -> list[str]:
        """``srun --overlap -N n -n n --ntasks-per-node=1 --nodelist=... python -m launcher.agent RUN_DIR``."""
        count = len(plan.nodes)
        return ["srun", "--overlap", f"--nodes={count}", f"--ntasks={count}", "--ntasks-per-node=1",
                f"--nodelist={','.join(n.name for n in plan.nodes)}", "--kill-on-bad-exit=0",
                "--cpu-bind=none", f"--cpus-per-task={plan.cores_per_node}", "--job-name=hpc-hadoop-agents",
                f"--output={plan.run_dir}/logs/agent-%N.out", *agent_argv(plan)]
