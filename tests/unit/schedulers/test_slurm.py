"""Slurm backend: the rendered sbatch script against golden text, and the parsers on ``squeue``, ``scontrol show
job -o``, ``scontrol show hostnames`` and ``sinfo`` output recorded in the shape Slurm 22.05 prints
(``tests/data/slurm/``). Nothing here runs a Slurm command: :func:`run_command` is replaced by the recordings.
(The backend end to end runs on a real Slurm in ``tests/integration/test_slurm.py``.)
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from launcher import __version__
from launcher.config.spec import JobSpec
from launcher.lifecycle.submit import render_script
from launcher.schedulers import base, slurm
from launcher.schedulers.base import JobState, NoAnswer, state_of
from launcher.schedulers.slurm import SlurmScheduler, parse_scontrol_job, parse_time_limit
from launcher.util.errors import UserError
from launcher.util.units import MiB
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "slurm"
RUN_DIR = Path("/scratch/me/hpc-hadoop/wc4-20260101-100000-abcd")
#: What Slurm 22.05's squeue/scontrol print (exit 1) for a job slurmctld no longer knows, and while slurmctld is
#: stopped (recorded on the test cluster).
FORGOT = "slurm_load_jobs error: Invalid job id specified"
DOWN = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"



def recorded(name: str) -> str:
    return (DATA / name).read_text()


def fake_commands(monkeypatch: pytest.MonkeyPatch, outputs: dict[str, tuple[int, str]]) -> list[list[str]]:
    """Answer ``run_command`` from ``outputs`` (first word(s) of argv → (returncode, stdout)); returns the calls."""
    calls: list[list[str]] = []

    def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        key = next(k for k in outputs if " ".join(argv).startswith(k))
        code, out = outputs[key]
        if kwargs.get("check", True) and code:
            raise AssertionError(f"{argv} failed")
        return subprocess.CompletedProcess(argv, code, out, "")

    monkeypatch.setattr(base, "run_command", run)
    return calls


# -- the batch script ---------------------------------------------------------------------------------

def test_rendered_sbatch_script_matches_golden(make_spec: Callable[..., JobSpec]) -> None:
    spec = make_spec(name="wc4", nodes=4, walltime="01:00:00",
                     batch={"cores_per_node": 16, "memory_per_node": 62500, "partition": "debug",
                            "account": "proj42", "qos": "normal", "extra_directives": ["--constraint=ib"],
                            "prologue": ["module load java/17"]})
    script = render_script(spec, SlurmScheduler(), RUN_DIR)
    golden = recorded("golden-wc4.sbatch").replace("VERSION", __version__).replace("PYTHON", sys.executable)
    assert script == golden


def test_skip_directives_and_short_walltime_lead(make_spec: Callable[..., JobSpec]) -> None:
    spec = make_spec(walltime="00:10:00", batch={"skip_directives": ["--chdir"]})
    lines = SlurmScheduler().filtered_directives(spec, RUN_DIR)
    assert "--signal=B:USR1@60" in lines  # 10% of 10 min, as the runner's and Grid Engine's lead
    assert not any(line.startswith("--chdir") for line in lines)


# -- parsers --------------------------------------------------------------------------------------------

def test_parse_scontrol_job_running() -> None:
    info = parse_scontrol_job(recorded("scontrol-show-job-running.txt"))
    assert info["JobId"] == "4242"
    assert info["JobState"] == "RUNNING"
    assert info["TimeLimit"] == "01:00:00"
    assert info["StartTime"] == "2026-01-01T10:00:05"
    assert info["NodeList"] == "n[01-03],gpu7"
    assert info["AllocNode:Sid"] == "login1:48211"
    assert info["TRES"] == "cpu=64,mem=250000M,node=4,billing=64"
    assert info["Power"] == ""


@pytest.mark.parametrize(("name", "state", "limit"), [
    ("scontrol-show-job-running.txt", "RUNNING", 3600.0),
    ("scontrol-show-job-pending.txt", "PENDING", 86400.0),
    ("scontrol-show-job-timeout.txt", "TIMEOUT", 300.0),
])
def test_recorded_jobs_state_and_time_limit(name: str, state: str, limit: float) -> None:
    info = parse_scontrol_job(recorded(name))
    assert info["JobState"] == state
    assert parse_time_limit(info["TimeLimit"]) == limit


@pytest.mark.parametrize(("text", "seconds"), [("30:00", 1800.0), ("1-00:00:00", 86400.0), ("2-12", 216000.0),
                                               ("UNLIMITED", None), ("Partition_Limit", None)])
def test_parse_time_limit_forms(text: str, seconds: float | None) -> None:
    assert parse_time_limit(text) == seconds


def test_state_from_squeue(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_commands(monkeypatch, {"squeue": (0, recorded("squeue-running.txt"))})
    assert SlurmScheduler().state("4242") is JobState.RUNNING
    assert calls == [["squeue", "-h", "-j", "4242", "-o", "%T"]]


def test_state_falls_back_to_scontrol_after_squeue_forgot(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_commands(monkeypatch, {"squeue": (1, FORGOT),
                                "scontrol show job": (0, recorded("scontrol-show-job-timeout.txt"))})
    assert SlurmScheduler().state("4240") is JobState.TIMEOUT


def test_state_unknown_when_slurm_forgot_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_commands(monkeypatch, {"squeue": (1, FORGOT), "scontrol show job": (1, FORGOT)})
    assert SlurmScheduler().state("1") is JobState.UNKNOWN


def test_state_no_answer_when_slurmctld_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25 item 7: slurmctld stopped (recorded on the test cluster, exit 1) is no answer, never "forgot"."""
    fake_commands(monkeypatch, {"squeue": (1, DOWN), "scontrol show job": (1, DOWN)})
    answer = SlurmScheduler().state("1")
    assert isinstance(answer, NoAnswer) and state_of(answer) is JobState.NO_ANSWER
    assert "Unable to contact slurm controller" in str(answer)


@pytest.mark.parametrize(("stdout", "job_id"), [("4242\n", "4242"), ("4242;cluster2\n", "4242")])
def test_parse_job_id_of_sbatch_parsable(stdout: str, job_id: str) -> None:
    assert SlurmScheduler().parse_job_id(stdout) == job_id


def test_parse_job_id_refuses_a_message() -> None:
    with pytest.raises(UserError, match="no job id"):
        SlurmScheduler().parse_job_id("sbatch: error: Batch job submission failed: Invalid account\n")


def test_check_refuses_more_nodes_than_the_partition_has(monkeypatch: pytest.MonkeyPatch,
                                                         make_spec: Callable[..., JobSpec]) -> None:
    fake_commands(monkeypatch, {"sinfo": (0, recorded("sinfo-partitions.txt"))})
    SlurmScheduler().check(make_spec(nodes=16, batch={"partition": "batch"}))  # 12 + 4 nodes
    with pytest.raises(UserError, match="partition debug has 4 nodes"):
        SlurmScheduler().check(make_spec(nodes=5))  # debug* is the default


def test_allocation_from_environment_and_recorded_scontrol(monkeypatch: pytest.MonkeyPatch,
                                                           make_spec: Callable[..., JobSpec]) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "n[01-03],gpu7")
    monkeypatch.setenv("SLURM_CPUS_ON_NODE", "16")
    monkeypatch.setenv("SLURM_MEM_PER_NODE", "62500")
    fake_commands(monkeypatch, {"scontrol show hostnames": (0, recorded("scontrol-show-hostnames.txt")),
                                "scontrol show job": (0, recorded("scontrol-show-job-running.txt"))})
    monkeypatch.setattr(base, "node_address", lambda name: f"10.1.0.{len(name)}")
    # a 256 GiB node without a cgroup limit: the granted 62500 MiB is the smallest (issue #11)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(total=256 << 30))
    monkeypatch.setattr(base, "cgroup_memory_limit", lambda: None)
    alloc = SlurmScheduler().allocation(make_spec(nodes=4))
    assert [n.name for n in alloc.nodes] == ["n01", "n02", "n03", "gpu7"]
    assert (alloc.cores_per_node, alloc.memory_per_node) == (16, 62500 * MiB)
    assert alloc.walltime == 3600.0
    assert alloc.start_time == datetime(2026, 1, 1, 10, 0, 5).timestamp()
    assert alloc.job_id == "4242" and alloc.fanout == "srun"


# -- whole nodes (issue #11) ----------------------------------------------------------------------

def test_whole_nodes_by_default(make_spec: Callable[..., JobSpec]) -> None:
    """Slurm's default was one core per node (--ntasks-per-node=1 and nothing else): now --exclusive and --mem=0."""
    lines = SlurmScheduler().directives(make_spec(), RUN_DIR)
    assert "--exclusive" in lines and "--mem=0" in lines and "--ntasks-per-node=1" in lines
    lines = SlurmScheduler().directives(make_spec(batch={"memory_per_node": "60g", "cores_per_node": 8}), RUN_DIR)
    assert "--exclusive" in lines and "--mem=61440M" in lines and "--mem=0" not in lines
    assert "--cpus-per-task=8" in lines
    shared = SlurmScheduler().directives(make_spec(batch={"exclusive": False}), RUN_DIR)
    assert "--exclusive" not in shared and not any(line.startswith("--mem") for line in shared)


@pytest.mark.parametrize(("env", "cores", "memory_mib"), [
    ({"SLURM_CPUS_ON_NODE": "16", "SLURM_MEM_PER_NODE": "62500"}, 16, 62500),
    ({"SLURM_CPUS_ON_NODE": "4", "SLURM_MEM_PER_CPU": "1000"}, 4, 4000),       # --mem-per-cpu: × cores
    ({"SLURM_JOB_CPUS_PER_NODE": "16(x4)", "SLURM_MEM_PER_CPU": "2000"}, 16, 32000),
    ({"SLURM_CPUS_ON_NODE": "8", "SLURM_MEM_PER_NODE": "0"}, 8, 100 * 1024),   # --mem=0: the node (cgroup) decides
    ({"SLURM_CPUS_ON_NODE": "64", "SLURM_MEM_PER_NODE": "500000"}, 64, 100 * 1024),  # cgroup below the request
])
def test_granted_cores_and_memory(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], cores: int,
                                  memory_mib: int) -> None:
    """Sizing reads what the allocation grants: never more memory than the smallest of Slurm's numbers, the
    node's RAM and the cgroup limit (100 GiB here, on a 256 GiB node)."""
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(total=256 << 30))
    monkeypatch.setattr(base, "cgroup_memory_limit", lambda: 100 << 30)
    assert slurm.granted(env) == (cores, memory_mib * MiB)


# -- issue 11, folded from tests/unit/test_real_site.py: Issue #11, "right on a real site": YAML 1.2 reading,
# memory in MiB, one teardown lead, our own walltime exception, batch names checked before they reach a batch
# script.


SpecFactory = Callable[..., JobSpec]


RUN_DIR_real_site = Path("/scratch/me/hpc-hadoop/x")


def test_memory_per_node_bare_number_is_mib_in_sbatch(make_spec: SpecFactory) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec = make_spec(batch={"memory_per_node": 64000})
    assert "--mem=64000M" in SlurmScheduler().directives(spec, RUN_DIR_real_site)
