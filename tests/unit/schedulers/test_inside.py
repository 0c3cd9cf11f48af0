"""What ``run`` takes from the allocation it runs in (issue 28 item 3): launcher/schedulers/inside.py, on allocations
read from a real environment dict and Slurm 22.05's recorded ``scontrol`` output."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest

from launcher.config.spec import JobSpec
from launcher.schedulers import base
from launcher.schedulers.allocation import Allocation, Node
from launcher.schedulers.inside import take_allocation
from launcher.schedulers.local import LocalScheduler
from launcher.schedulers.pbs import PbsScheduler
from launcher.schedulers.sge import SgeScheduler
from launcher.schedulers.slurm import SlurmScheduler
from tests.unit.schedulers.test_slurm import fake_commands, recorded

#: The environment of a job of Slurm 22.05 on four nodes, as sbatch sets it (the variables the allocation reads).
SLURM_ENV = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "n[01-03],gpu7", "SLURM_CPUS_ON_NODE": "16",
             "SLURM_MEM_PER_NODE": "62500"}
#: When the recorded job started (``StartTime=2026-01-01T10:00:05``), epoch seconds.
STARTED = datetime(2026, 1, 1, 10, 0, 5).timestamp()


def allocation(scheduler: str, count: int, walltime: float | None) -> Allocation:
    return Allocation(scheduler=scheduler, job_id="77", nodes=tuple(Node(f"n{i}", f"10.0.0.{i}")
                                                                        for i in range(1, count + 1)),
                      cores_per_node=4, memory_per_node=8 << 30, walltime=walltime, start_time=STARTED)


def test_a_slurm_allocation_read_from_the_environment_gives_its_nodes_and_walltime(
        monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec]) -> None:
    """The job file asks 2 nodes for 20 minutes; the sbatch script got 4 nodes for an hour: all 4 are used, the
    hour is the walltime, and one line says so, naming where each came from."""
    for name, value in SLURM_ENV.items():
        monkeypatch.setenv(name, value)
    fake_commands(monkeypatch, {"scontrol show hostnames": (0, recorded("scontrol-show-hostnames.txt")),
                                "scontrol show job": (0, recorded("scontrol-show-job-running.txt"))})
    monkeypatch.setattr(base, "node_address", lambda name: f"10.1.0.{len(name)}")
    spec = make_spec(nodes=2, walltime="00:20:00")
    scheduler = SlurmScheduler()
    taken = take_allocation(spec, scheduler.allocation(spec), scheduler, SLURM_ENV, now=STARTED + 150)
    assert taken.line == ("allocation: Slurm job 4242, 4 nodes (n01,n02,n03,gpu7) from SLURM_JOB_NODELIST, "
                          "walltime 01:00:00 (00:57:30 left) from `scontrol show job` TimeLimit; job file asked "
                          "nodes: 2 → using 4, walltime: 00:20:00 → using 01:00:00")
    assert (taken.spec.nodes, taken.spec.walltime) == (4, 3600)
    assert (spec.nodes, spec.walltime) == (2, 1200)  # the job file's spec is left as it was


def test_the_node_variable_named_is_the_one_set(make_spec: Callable[..., JobSpec]) -> None:
    """Slurm before 20.x sets only SLURM_NODELIST: the line names the variable the nodes came from."""
    spec = make_spec(nodes=3, walltime="01:00:00")
    taken = take_allocation(spec, allocation("slurm", 3, 3600.0), SlurmScheduler(),
                            {"SLURM_JOB_ID": "77", "SLURM_NODELIST": "n[1-3]"}, now=STARTED)
    assert taken.line == ("allocation: Slurm job 77, 3 nodes (n1,n2,n3) from SLURM_NODELIST, walltime 01:00:00 "
                          "(01:00:00 left) from `scontrol show job` TimeLimit; job file asked nodes: 3, "
                          "walltime: 01:00:00")
    assert taken.spec is spec


@pytest.mark.parametrize(("scheduler", "variable", "source"), [
    (PbsScheduler(), "PBS_NODEFILE", "`qstat -f` Resource_List.walltime"),
    (SgeScheduler(), "PE_HOSTFILE", "`qstat -j` h_rt"),
])
def test_pbs_and_grid_engine_name_their_node_file_and_walltime_source(
        make_spec: Callable[..., JobSpec], scheduler: base.BatchScheduler, variable: str, source: str) -> None:
    taken = take_allocation(make_spec(nodes=2, walltime="00:30:00"), allocation(scheduler.name, 2, 1800.0),
                            scheduler, {variable: "/var/spool/hosts"}, now=STARTED + 60)
    assert taken.line == (f"allocation: {scheduler.system.shown} job 77, 2 nodes (n1,n2) from {variable}, walltime "
                          f"00:30:00 (00:29:00 left) from {source}; job file asked nodes: 2, walltime: 00:30:00")


def test_fewer_nodes_than_asked_are_left_for_the_plan_to_refuse(make_spec: Callable[..., JobSpec]) -> None:
    spec = make_spec(nodes=3)
    taken = take_allocation(spec, allocation("slurm", 2, 3600.0), SlurmScheduler(), SLURM_ENV, now=STARTED)
    assert "job file asked nodes: 3 → refused, the allocation has 2" in taken.line
    assert taken.spec.nodes == 3


def test_no_time_limit_keeps_the_job_files_walltime(make_spec: Callable[..., JobSpec]) -> None:
    """Slurm's ``TimeLimit=UNLIMITED``: no deadline; the job file's walltime still sizes the timeouts."""
    spec = make_spec(nodes=1, walltime="00:40:00")
    taken = take_allocation(spec, allocation("slurm", 1, None), SlurmScheduler(), SLURM_ENV, now=STARTED)
    assert taken.line.endswith("1 node (n1) from SLURM_JOB_NODELIST, no time limit from `scontrol show job` "
                               "TimeLimit; job file asked nodes: 1, walltime: 00:40:00 → kept for timeouts, "
                               "no deadline")
    assert taken.spec.walltime == 2400


def test_the_local_backend_takes_nothing(make_spec: Callable[..., JobSpec]) -> None:
    spec = make_spec(scheduler="local", nodes=1, walltime="00:20:00")
    local = Allocation(scheduler="local", job_id=None, nodes=(Node("localhost", "127.0.0.1"),), cores_per_node=2,
                       memory_per_node=1 << 30, walltime=1200.0)
    taken = take_allocation(spec, local, LocalScheduler(), {})
    assert taken.spec is spec
    assert taken.line == "allocation: this machine (local backend), 1 node (localhost), walltime 00:20:00 from the " \
                         "job file"
