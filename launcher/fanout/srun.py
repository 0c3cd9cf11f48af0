"""srun launcher: ONE job step spanning the nodes, one task per node.

``srun --overlap`` shares the allocation with the batch shell's own work; one step for the whole
cluster, never one per node (a thousand concurrent steps would swamp slurmctld). Slurm tracks every
process the agents start (with ``proctrack/cgroup``) and kills them when the step or the job ends.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence

from launcher.fanout.base import Launcher, StepOptions


class SrunLauncher(Launcher):
    """One ``srun --overlap`` step over all the nodes; stopping sends SIGUSR1 to ``srun``, which passes it on.

    Not SIGTERM: ``srun`` answers SIGTERM with "forcing job termination" and slurmstepd SIGKILLs every task
    ``KillWait`` seconds later, before the agents have stopped their daemons and before a daemon's first run
    has written its class-data-sharing archive, so on Slurm the archives were never kept and every bring-up
    was a cold one (60 s instead of 14 s on the 3-node test cluster, issue 18). ``srun`` forwards SIGUSR1 to
    every task, and exits once the agents have. SIGTERM remains the escalation
    (:meth:`launcher.fanout.processes.AgentGroup.stop`).
    """

    name = "srun"
    stop_signal = signal.SIGUSR1

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        """``srun --overlap --export=ALL --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=A,B [options] ARGV...``.

        ``--export=ALL``: the step gets this process's environment whatever the batch job was submitted with; a job
        of ``sbatch --export=NONE`` (Open OnDemand's, some sites' default) has ``SLURM_EXPORT_ENV=NONE``, which every
        ``srun`` in it would otherwise inherit (sbatch(1)), leaving the agents without the launcher's environment.

        ``options`` become, in this order and only when set: ``--kill-on-bad-exit=0|1``, ``--cpu-bind=``,
        ``--cpus-per-task=``, ``--job-name=``, ``--output=``.

        Raises:
            ValueError: ``nodes`` is empty.
        """
        if not nodes:
            raise ValueError("srun needs at least one node")
        count, opts = len(nodes), options or StepOptions()
        command = [self.program or "srun", "--overlap", "--export=ALL", f"--nodes={count}", f"--ntasks={count}",
                   "--ntasks-per-node=1", f"--nodelist={','.join(nodes)}"]
        if opts.kill_on_bad_exit is not None:
            command.append(f"--kill-on-bad-exit={int(opts.kill_on_bad_exit)}")
        if opts.cpu_bind is not None:
            command.append(f"--cpu-bind={opts.cpu_bind}")
        if opts.cpus_per_task is not None:
            command.append(f"--cpus-per-task={opts.cpus_per_task}")
        if opts.job_name is not None:
            command.append(f"--job-name={opts.job_name}")
        if opts.output is not None:
            command.append(f"--output={opts.output}")
        return [*command, *argv]
