"""The one name → class registry (launcher/registry.py, issue 26 item 4): schedulers, fan-out launchers,
filesystems and workloads all use it."""

from __future__ import annotations

import pytest

from benchmarks.workloads import WORKLOADS, Workload, get_workload
from launcher.fanout import LAUNCHERS
from launcher.filesystems import FILESYSTEMS
from launcher.filesystems.base import Filesystem
from launcher.schedulers import SCHEDULERS, get_scheduler
from launcher.schedulers.base import Scheduler
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util.errors import UserError
from launcher.util.registry import Registry


def test_the_four_registries_are_one_mechanism() -> None:
    for registry in (SCHEDULERS, LAUNCHERS, FILESYSTEMS, WORKLOADS):
        assert isinstance(registry, Registry)
    assert list(SCHEDULERS) == ["local", "slurm", "pbs", "sge"] and SCHEDULERS["slurm"] is SlurmScheduler
    assert all(issubclass(SCHEDULERS[name], Scheduler) for name in SCHEDULERS)
    assert all(issubclass(FILESYSTEMS[name], Filesystem) for name in FILESYSTEMS)
    assert all(issubclass(WORKLOADS[name], Workload) for name in WORKLOADS)
    assert isinstance(get_scheduler("slurm"), SlurmScheduler) and get_workload("dd").name == "dd"


def test_unknown_names() -> None:
    with pytest.raises(UserError) as caught:
        get_scheduler("lsf")
    assert str(caught.value) == "scheduler: unknown scheduler 'lsf' (fix: use one of: local, pbs, sge, slurm)"
    with pytest.raises(UserError) as caught:
        get_workload("nope")
    assert f"use one of: {', '.join(WORKLOADS)}" in str(caught.value)  # in their order, as before
    with pytest.raises(KeyError):
        FILESYSTEMS["beegfs"]
    assert "beegfs" not in FILESYSTEMS


def test_register_a_class_or_a_path() -> None:
    registry: Registry[Scheduler] = Registry("scheduler", field="scheduler")
    registry.register("mine", SlurmScheduler)
    registry.register("lazy", "launcher.schedulers.sge:SgeScheduler")
    assert registry["mine"] is SlurmScheduler and registry["lazy"].__name__ == "SgeScheduler"
    assert "mine" not in SCHEDULERS  # each registry its own


def test_what_the_generic_code_asks_of_a_scheduler_comes_from_its_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Detection in the job environment, the CLI's choices, the job file's ``scheduler`` values and each backend's
    settings section come from the registered backends (issue 26 item 4: a new scheduler is its file plus its
    template)."""
    from launcher.cli.common import detect_scheduler
    from launcher.config.spec import SCHEDULER_NAMES, JobSpec

    assert SCHEDULER_NAMES == tuple(SCHEDULERS)
    assert detect_scheduler() is None  # the unit tests' environment has none of the variables
    for name, variables in (("slurm", {"SLURM_JOB_ID": "7"}), ("pbs", {"PBS_JOBID": "7.vm"}),
                            ("sge", {"JOB_ID": "7", "PE_HOSTFILE": "/var/spool/pe_hostfile"})):
        with monkeypatch.context() as env:
            for variable, value in variables.items():
                env.setenv(variable, value)
            assert detect_scheduler() == name
    with monkeypatch.context() as env:
        env.setenv("JOB_ID", "7")  # JOB_ID alone is not Grid Engine's
        assert detect_scheduler() is None
    for name in SCHEDULERS:
        section = SCHEDULERS[name].settings_section
        assert section is None or section in JobSpec.model_fields
