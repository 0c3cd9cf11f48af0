"""srun fan-out: ONE job step spanning every node, one task per node, running our agent.

``srun --overlap`` shares the allocation with the batch shell's own work; one step for the whole
cluster, never one per node (a thousand concurrent steps would swamp slurmctld). Slurm tracks every
process the agents start (with ``proctrack/cgroup``) and kills them when the step or the job ends.
"""

from __future__ import annotations

import signal

from launcher.fanout.base import Fanout, agent_argv
from launcher.plan import ClusterPlan


class SrunFanout(Fanout):
    """Starts the agents with one ``srun`` step; stopping sends SIGUSR1 to ``srun``, which passes it on.

    Not SIGTERM: ``srun`` answers SIGTERM with "forcing job termination" and slurmstepd SIGKILLs every task
    ``KillWait`` seconds later, before the agents have stopped their daemons and before a daemon's first run
    has written its class-data-sharing archive, so on Slurm the archives were never kept and every bring-up
    was a cold one (60 s instead of 14 s on the 3-node test cluster, issue 18). ``srun`` forwards SIGUSR1 to
    every task, and exits once the agents have. SIGTERM remains the escalation (:meth:`Fanout.stop`).
    """

    name = "srun"
    stop_signal = signal.SIGUSR1

    def command(self, plan: ClusterPlan) -> list[str]:
        """``srun --overlap -N n -n n --ntasks-per-node=1 --nodelist=... python -m launcher.agent RUN_DIR``."""
        count = len(plan.nodes)
        return ["srun", "--overlap", f"--nodes={count}", f"--ntasks={count}", "--ntasks-per-node=1",
                f"--nodelist={','.join(n.name for n in plan.nodes)}", "--kill-on-bad-exit=0",
                "--cpu-bind=none", f"--cpus-per-task={plan.cores_per_node}", "--job-name=hpc-hadoop-agents",
                f"--output={plan.run_dir}/logs/agent-%N.out", *agent_argv(plan)]
