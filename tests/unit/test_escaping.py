"""Values from a job file that reach a shell, an XML file or a batch script are escaped or refused (issue 13
item 12): a fuzz test feeds hostile values (newlines, quotes, ``$(...)``, backquotes, ``]]>``, ``;``) to every
field that ends up in a generated file, then parses every XML file, runs ``bash -n`` on every script, and runs
the scripts themselves (``hadoop-env.sh`` sourced, the ``bin/`` wrappers' ``classpath``, each batch script with
a stand-in Python that records its arguments): a value is either refused with a ``UserError`` or arrives
exactly as written, and the canary command never runs.

Fields that are shell by design (``setup:``, ``batch.prologue``, ``batch.extra_directives``, a streaming
step's ``mapper``/``reducer``) are documented as such and not fed here.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from launcher.config.spec import JobSpec, load_spec
from launcher.lifecycle.submit import render_script
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.clients import render_wrappers
from launcher.render.config import render_config
from launcher.schedulers import get_scheduler
from launcher.schedulers.base import BatchScheduler
from launcher.util.errors import UserError

#: Hostile values; ``CANARY`` is replaced by a file path that must never be created. The first is a plain value,
#: accepted by every field: it proves each field is really fed through every check.
NASTY = ["plain.value-1", "a\nb", "it's", 'say "hi"', "$(touch CANARY)", "`touch CANARY`", "x]]>y",
         "a;touch CANARY", "$HOME", "back\\slash", "two words", "<&>", "tab\there", "#hash"]
#: Fields whose value reaches a generated file, and how a hostile value is put in them.
FIELDS: dict[str, Callable[[str, Path], dict[str, Any]]] = {
    "name": lambda v, tmp: {"name": v},
    "filesystem.root": lambda v, tmp: {"filesystem": {"root": str(tmp / f"root-{v}")}},
    "filesystem.local_dirs": lambda v, tmp: {"filesystem": {"local_dirs": str(tmp / f"local-{v}")}},
    "batch.partition": lambda v, tmp: {"batch": {"partition": v}},
    "batch.account": lambda v, tmp: {"batch": {"account": v}},
    "batch.qos": lambda v, tmp: {"batch": {"qos": v}},
    "sge.pe": lambda v, tmp: {"sge": {"pe": v}},
    "hadoop.properties": lambda v, tmp: {"hadoop": {"properties": {"core-site": {"hpc.test.value": v}}}},
    "hadoop.properties key": lambda v, tmp: {"hadoop": {"properties": {"core-site": {f"hpc.test.{v}": "1"}}}},
}
#: The batch scripts: scheduler name and the PBS flavor (``None``: one dialect).
BATCH = [("slurm", None), ("pbs", "pbspro"), ("pbs", "torque"), ("sge", None)]
PREFIX = {"slurm": "#SBATCH ", "pbs": "#PBS ", "sge": "#$ "}


def spec_with(field: str, value: str, tmp_path: Path, scheduler: str, flavor: str | None) -> JobSpec | None:
    """The spec with ``value`` in ``field``, or ``None`` when it is refused (a one-line ``UserError``)."""
    data: dict[str, Any] = {"name": "fuzz", "scheduler": scheduler, "filesystem": {"root": str(tmp_path / "root")},
                            "batch": {"cores_per_node": 2}, "steps": [{"example": "pi", "args": ["1", "10"]}]}
    for key, part in FIELDS[field](value, tmp_path).items():
        data[key] = {**data[key], **part} if isinstance(part, dict) and isinstance(data.get(key), dict) else part
    if flavor:
        data["pbs"] = {"flavor": flavor}
    try:
        spec, _ = load_spec(None, data=data)
    except UserError as exc:
        assert "\n" not in str(exc), str(exc)
        return None
    return spec


def shell_ok(script: Path) -> None:
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr + script.read_text()


def check_config(plan: ClusterPlan, field: str, value: str, out: Path, canary: Path) -> None:
    """Every XML file parses (and a property value arrives as written); ``hadoop-env.sh`` and the wrappers run."""
    files = render_config(plan)
    for name, text in files.items():
        if name.endswith(".xml"):
            root = ElementTree.fromstring(text)
            values = {p.findtext("name"): p.findtext("value") for p in root.iter("property")}
            if name == "core-site.xml" and field == "hadoop.properties":
                assert values["hpc.test.value"] == value
    env = out / "hadoop-env.sh"
    env.write_text(files["hadoop-env.sh"])
    shell_ok(env)
    shown = subprocess.run(["bash", "-c", 'source "$1"; printf %s "$HADOOP_CONF_DIR"', "_", str(env)],
                           capture_output=True, text=True, check=True).stdout
    assert shown == str(plan.conf_dir)
    for command, text in render_wrappers(plan).items():
        wrapper = out / command
        wrapper.write_text(text)
        shell_ok(wrapper)
        cp = subprocess.run(["bash", str(wrapper), "classpath"], capture_output=True, text=True, check=True).stdout
        assert cp.strip().split(":")[0] == str(plan.conf_dir)
    assert not canary.exists(), f"{field}={value!r} ran a command"


def check_batch_script(spec: JobSpec, scheduler: BatchScheduler, run_dir: Path, out: Path, canary: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch script passes ``bash -n``, every directive stays on its own line, and run with a stand-in Python
    it calls ``python -m launcher.cli run --run-dir RUN_DIR RUN_DIR/job.yaml`` with the exact paths."""
    recorder = out / "python"
    recorder.write_text(f'#!/bin/bash\nprintf "%s\\n" "$@" > {out}/argv\n')
    recorder.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(recorder))
    script = out / "batch.sh"
    text = render_script(spec, scheduler, run_dir)
    script.write_text(text)
    shell_ok(script)
    lines = text.splitlines()
    directives = lines[1:lines.index(next(line for line in lines if line.startswith("# Generated")))]
    assert all(line.startswith(PREFIX[scheduler.name]) for line in directives), directives
    run_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False, timeout=30)
    assert proc.returncode == 0, proc.stderr
    argv = (out / "argv").read_text().splitlines()
    assert argv == ["-m", "launcher.cli", "run", "--run-dir", str(run_dir), str(run_dir / "job.yaml")]
    assert not canary.exists()


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_hostile_values_are_refused_or_arrive_as_written(field: str, tmp_path: Path,
                                                         make_test_plan: Callable[..., ClusterPlan],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    canary = tmp_path / "canary"
    accepted = 0
    for index, template in enumerate(NASTY):
        value = template.replace("CANARY", str(canary))
        for scheduler_name, flavor in BATCH:
            spec = spec_with(field, value, tmp_path, scheduler_name, flavor)
            if spec is None:
                continue
            accepted += 1
            out = tmp_path / f"out-{index}-{scheduler_name}-{flavor}"
            out.mkdir()
            root = Path(spec.filesystem.root)
            plan = make_test_plan(spec, run_dir=root / "me" / "hpc-hadoop" / "fuzz-20240101-000000-abcd")
            if scheduler_name == BATCH[0][0]:  # the configuration does not depend on the batch system
                check_config(plan, field, value, out, canary)
            scheduler = get_scheduler(scheduler_name)
            assert isinstance(scheduler, BatchScheduler)
            check_batch_script(spec, scheduler, Path(plan.run_dir), out, canary, monkeypatch)
    assert accepted >= len(BATCH), f"{field}: even the plain value was refused, nothing was checked"
