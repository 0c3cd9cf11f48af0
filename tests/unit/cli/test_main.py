"""The command line: user errors are one line and exit 2; render previews without side effects (launcher/cli/main.py).

Each behaviour is checked through Click's CliRunner and through the installed `hpc-hadoop` in a subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from launcher.cli.main import main
from launcher.render.config import CONFIG_TEMPLATES, EXCLUDE_FILE, SECURE_TEMPLATES
from launcher.schedulers.slurm import SlurmScheduler
from tests.conftest import REPO
from tests.unit.schedulers.test_pbs import STANDINS as PBS_STANDINS

WriteYaml = Callable[..., Path]


def valid_job(root: Path, **fields: Any) -> dict[str, Any]:
    return {"name": "clitest", "filesystem": {"root": str(root)},
            "steps": [{"example": "teragen", "args": [100, "${run_dir}/gen"]}], **fields}


#: name → (job file content or None for no file, extra CLI args, text the error must contain)
BAD_JOBS: dict[str, tuple[Any, list[str], str]] = {
    "unknown-field": ({"nodez": 1}, [], "unknown field 'nodez'"),
    "bad-size": ({"hadoop": {"map_memory": "lots"}}, [], "hadoop.map_memory: 'lots' is not a size"),
    "wrong-type": ({"nodes": "many"}, [], "nodes: 'many'"),
    "local-3-nodes": ({"nodes": 3}, [], "the local backend runs on this one machine"),
    "unknown-site": ({"site": "atlantis"}, [], "unknown site preset 'atlantis'"),
    "missing-steps": ({"steps": None}, [], "steps"),
    "bad-set": ({}, ["--set", "hadoop.reduce_memory=heaps"], "command line: hadoop.reduce_memory"),
    "bad-walltime-flag": ({}, ["--walltime", "soonish"], "walltime: 'soonish' is not a walltime"),
    "invalid-yaml": ("name: x\nfilesystem:\n  root: ROOT\nsteps:\n  - example: pi\n   args: x\n", [], "line 6"),
    "missing-file": (None, [], "job file not found"),
}


def write_bad_job(tmp_path: Path, root: Path, case: str, write_yaml: WriteYaml) -> tuple[Path, list[str], str]:
    content, args, expected = BAD_JOBS[case]
    job = tmp_path / "job.yaml"
    if isinstance(content, str):
        job.write_text(content.replace("ROOT", str(root)))
    elif content is not None:
        data = {k: v for k, v in {**valid_job(root), **content}.items() if v is not None}
        write_yaml(job, data)
    return job, args, expected


def assert_one_line_error(code: int, stdout: str, stderr: str, expected: str) -> None:
    assert "Traceback" not in stderr + stdout
    assert code == 2, f"exit code {code}; stderr: {stderr!r}"
    lines = stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert expected in lines[0]


#: The console script that pip installed beside this interpreter (``.venv/bin/hpc-hadoop``): the README's test
#: command runs ``.venv/bin/python -m pytest`` without activating the venv, so ``PATH`` need not have it.
HPC_HADOOP = str(Path(sys.executable).parent / "hpc-hadoop")


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(main, args)


@pytest.fixture
def hpc_hadoop() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the installed ``hpc-hadoop`` entry point (:data:`HPC_HADOOP`) in a subprocess."""
    exe = HPC_HADOOP
    assert os.access(exe, os.X_OK), f"no {exe}: run `pip install -e .` in the repository (./install.sh does)"
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")}

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60,
                              check=False)

    return run


# -- user errors ----------------------------------------------------------------------------------

#: Every bad job file with every command, except a file without steps for ``render``, which takes it as
#: ``start`` does (issue #11; test_render_and_doctor_take_a_job_file_without_steps).
BAD_CASES = [(case, command) for case in sorted(BAD_JOBS) for command in ("render", "run", "submit")
             if (case, command) != ("missing-steps", "render")]


@pytest.mark.parametrize(("case", "command"), BAD_CASES)
def test_bad_job_file_cli_runner(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml, command: str,
                                 case: str) -> None:
    job, args, expected = write_bad_job(tmp_path, pfs_root, case, write_yaml)
    result = invoke([command, str(job), *args])
    assert_one_line_error(result.exit_code, result.stdout, result.stderr, expected)
    assert result.stdout == ""
    assert list(pfs_root.iterdir()) == []


def test_render_and_doctor_take_a_job_file_without_steps(tmp_path: Path, pfs_root: Path,
                                                         write_yaml: WriteYaml) -> None:
    job = write_yaml(tmp_path / "nosteps.yaml", {"name": "nosteps", "filesystem": {"root": str(pfs_root)}})
    result = invoke(["render", str(job)])
    assert result.exit_code == 0, result.output
    assert "==> conf/yarn-site.xml <==" in result.stdout and result.stdout.rstrip().endswith("==> steps <==")
    result = invoke(["doctor", str(job)])
    assert "job file" in result.stdout and "0 step(s)" in result.stdout, result.stdout


def test_render_refuses_an_existing_output_unless_overwrite(tmp_path: Path, pfs_root: Path,
                                                            write_yaml: WriteYaml) -> None:
    out = tmp_path / "exists"
    out.mkdir()
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root, steps=[{"example": "teragen",
                                                                        "args": [100, str(out)]}]))
    result = invoke(["render", str(job)])
    assert_one_line_error(result.exit_code, result.stdout, result.stderr, f"output {out} already exists")
    assert invoke(["render", str(job), "--overwrite"]).exit_code == 0


def test_doctor_reports_a_missing_jar_as_a_fail_line(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml) -> None:
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root, steps=[{"jar": str(tmp_path / "nope.jar")}]))
    result = invoke(["doctor", str(job)])
    assert result.exit_code == 1
    [line] = [line for line in result.stdout.splitlines() if "job file" in line]
    assert line.split()[0] == "fail" and "steps.1.jar: jar" in line and "does not exist" in line, line


@pytest.mark.parametrize("case", ["bad-size", "unknown-field"])
def test_bad_job_file_doctor(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml, case: str) -> None:
    job, args, expected = write_bad_job(tmp_path, pfs_root, case, write_yaml)
    result = invoke(["doctor", str(job), *args])
    assert_one_line_error(result.exit_code, result.stdout, result.stderr, expected)


@pytest.mark.parametrize("case", ["unknown-field", "invalid-yaml", "bad-set"])
def test_bad_job_file_subprocess(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml, case: str,
                                 hpc_hadoop: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    job, args, expected = write_bad_job(tmp_path, pfs_root, case, write_yaml)
    proc = hpc_hadoop("render", str(job), *args, cwd=tmp_path)
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, expected)
    assert list(pfs_root.iterdir()) == []


def test_java_home_without_java_is_an_error_not_a_fallback(tmp_path: Path, pfs_root: Path,
                                                           write_yaml: WriteYaml) -> None:
    """A ``$JAVA_HOME`` without ``bin/java`` stops the run (as Hadoop's scripts do) although a real JDK is on
    PATH: falling back would run another Java than the user named. Unset, the JDK on PATH is used."""
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root))
    exe = HPC_HADOOP
    base = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    bad = subprocess.run([exe, "submit", str(job)], capture_output=True, text=True, timeout=60, check=False,
                         env={**base, "JAVA_HOME": str(tmp_path / "no-jdk")})
    assert_one_line_error(bad.returncode, bad.stdout, bad.stderr, f"$JAVA_HOME {tmp_path / 'no-jdk'}")
    assert "unset it to use java on PATH" in bad.stderr
    assert list(pfs_root.iterdir()) == []
    unset = subprocess.run([exe, "render", str(job)], capture_output=True, text=True, timeout=60, check=False,
                           env=base)
    assert unset.returncode == 0, unset.stderr


def test_error_line_names_file_field_and_fix(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml) -> None:
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root, nodez=1))
    result = invoke(["render", str(job)])
    line = result.stderr.strip()
    assert line.startswith(f"error: {job}: nodez: unknown field 'nodez' (fix: did you mean 'nodes'? "
                           "valid fields here: ")


def test_error_text_with_closing_bracket_tag_is_printed_verbatim(tmp_path: Path, pfs_root: Path,
                                                                 write_yaml: WriteYaml) -> None:
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root, name="[/bad]"))
    result = invoke(["render", str(job)])
    assert_one_line_error(result.exit_code, result.stdout, result.stderr, "'[/bad]' is not a valid name")


def test_error_text_with_brackets_is_printed_verbatim(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml) -> None:
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root, steps="not a list"))
    result = invoke(["render", str(job)])
    assert_one_line_error(result.exit_code, result.stdout, result.stderr, "use a YAML list ([a, b] or one")


# -- render of a valid job --------------------------------------------------------------------------

def sections(stdout: str) -> dict[str, str]:
    """Split `render` output at its headers (`==> title <==`) into title → text."""
    found: dict[str, str] = {}
    title = None
    for line in stdout.splitlines():
        match = re.fullmatch(r"==> (\S.*?) <==", line)
        if match:
            title = match.group(1)
            found[title] = ""
        elif title is not None:
            found[title] += line + "\n"
    return found


def test_render_prints_every_conf_file(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml,
                                       built_runtime: Path) -> None:
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root))
    result = invoke(["render", str(job), "--set", 'hadoop.properties.yarn-site."my.cli.prop"=42'])
    assert result.exit_code == 0, result.stderr
    parts = sections(result.stdout)
    expected = [f"conf/{name}" for name in [*CONFIG_TEMPLATES, *SECURE_TEMPLATES, EXCLUDE_FILE]]  # per-cluster
    assert expected == [t for t in parts if t.startswith("conf/")]
    assert "<name>my.cli.prop</name>" in parts["conf/yarn-site.xml"]
    assert "<value>42</value>" in parts["conf/yarn-site.xml"]
    assert re.search(r"^1\. teragen: .*RunJar .*hadoop-mapreduce-examples-.*\.jar teragen 100 ", parts["steps"],
                     re.MULTILINE)
    assert list(pfs_root.iterdir()) == []  # a preview creates nothing


def test_render_subprocess_prints_every_conf_file(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml,
                                                  built_runtime: Path,
                                                  hpc_hadoop: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root))
    proc = hpc_hadoop("render", str(job), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    titles = list(sections(proc.stdout))
    for name in CONFIG_TEMPLATES:
        assert f"conf/{name}" in titles
    assert list(pfs_root.iterdir()) == []


def test_rendered_files_are_printed_verbatim(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml,
                                            built_runtime: Path) -> None:
    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root))
    result = invoke(["render", str(job)])
    assert result.exit_code == 0, result.stderr
    parts = sections(result.stdout)
    yarn = ET.fromstring(parts["conf/yarn-site.xml"].strip())
    values = {p.findtext("name"): p.findtext("value") for p in yarn.findall("property")}
    assert "\n" not in values["yarn.application.classpath"]  # long values are not wrapped
    assert values["yarn.application.classpath"].startswith(str(built_runtime))
    assert parts["conf/hadoop-env.sh"].startswith("# Environment of cluster clitest-")
    for name in ("core-site.xml", "mapred-site.xml", "capacity-scheduler.xml"):
        assert ET.fromstring(parts[f"conf/{name}"].strip()).tag == "configuration"


def test_version_and_sites(tmp_path: Path) -> None:
    version = invoke(["--version"])
    assert version.exit_code == 0
    assert version.stdout.startswith("hpc-hadoop, version ")
    assert invoke(["sites"]).exit_code == 0


# -- issue 11, folded from tests/unit/test_relative_paths.py: Issue #11: relative paths in a job file mean the
# job file's directory, and the submitted job.yaml holds them absolute (launcher/config/spec.py
# ``absolute_paths``): the run happens in the cluster directory, not where `submit` ran.


def test_render_from_another_directory_finds_a_relative_jar(project: Path) -> None:
    """Issue 11 (was ``tests/unit/test_relative_paths.py``)."""
    proc = subprocess.run([sys.executable, "-m", "launcher.cli", "render", str(project / "job.yaml")],
                          capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"RunJar {project}/target/myjob-1.0.jar in out" in proc.stdout


# -- issue 11, folded from tests/unit/test_shared_root.py: Issue #11: a batch job's cluster directory must be
# on a filesystem every node shares (launcher/filesystems/__init__.py ``check_shared_root``,
# launcher/filesystems/detect.py ``node_local_type``), checked before anything is queued.


@pytest.mark.parametrize("command", ["submit", "start", "render"])
def test_cli_refuses_before_anything_is_queued(tmp_path: Path, pfs_root: Path, monkeypatch: pytest.MonkeyPatch,
                                               write_yaml: Callable[..., Path], command: str) -> None:
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
    def never(*args: object) -> str:
        raise AssertionError("submitted")

    monkeypatch.setattr(SlurmScheduler, "submit", never)
    monkeypatch.setattr(SlurmScheduler, "check", lambda self, spec: None)
    job = write_yaml(tmp_path / "job.yaml", {"name": "loc", "scheduler": "slurm", "nodes": 1,
                                             "filesystem": {"root": str(pfs_root)},
                                             "steps": [{"example": "pi", "args": [1, 10]}]})
    result = CliRunner().invoke(main, [command, str(job)])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {job}: filesystem.root: {pfs_root} is on "), line
    assert "(fix: set filesystem.root to a directory on the parallel filesystem" in line
    assert result.stdout == "" and list(pfs_root.iterdir()) == []


# -- issue 25 item 10, folded from tests/unit/test_small_fixes.py: Small things a user saw on real PBS and in
# a run's progress (issue 25 item 10): a submission the batch system refuses leaves nothing on the filesystem;
# ``render`` says which YARN sizes the allocation decides when the job runs; a step that never submitted a job
# shows no progress it never made.


@pytest.fixture
def pbs_standins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], None]:
    """The PBS stand-in commands first on PATH; call with the flavor (``torque``, ``pbspro``)."""
    monkeypatch.setenv("PATH", f"{PBS_STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PBS_STANDIN_DIR", str(tmp_path / "standin"))
    return lambda flavor: monkeypatch.setenv("PBS_STANDIN_FLAVOR", flavor)


def render_notes(stdout: str) -> list[str]:
    """The lines of ``render``'s ``notes`` section."""
    _, found, rest = stdout.partition("==> notes <==\n")
    return rest.partition("==> ")[0].splitlines() if found else []


def test_render_on_pbs_pro_says_the_cores_come_from_the_allocation(pbs_standins: Callable[[str], None],
                                                                    tmp_path: Path, pfs_root: Path,
                                                                    write_yaml: Callable[..., Path],
                                                                    built_runtime: Path) -> None:
    """Item 10: PBS Pro asks ``ncpus=1`` with ``place=scatter:excl`` and YARN gets the whole node's cores inside the
    allocation; the preview's ``cpu-vcores 1`` (and the memory that follows from it) is said to be a stand-in.
    With the cores in the job file, no such note; Torque, which grants the cores asked for, has none for cores.
    Issue 25 item 10 (was ``tests/unit/test_small_fixes.py``)."""
    pbs_standins("pbspro")
    job = write_yaml(tmp_path / "job.yaml", {"name": "pbsr", "scheduler": "pbs", "nodes": 2,
                                             "filesystem": {"root": str(pfs_root), "shared": True}})
    result = CliRunner().invoke(main, ["render", str(job)])
    assert result.exit_code == 0, result.output
    assert "#PBS -l select=2:ncpus=1\n" in result.stdout and "#PBS -l place=scatter:excl\n" in result.stdout
    assert "<name>yarn.nodemanager.resource.cpu-vcores</name>\n    <value>1</value>" in result.stdout
    notes = render_notes(result.stdout)
    assert [n for n in notes if n.startswith("yarn.nodemanager.resource.cpu-vcores 1 is a stand-in: the job takes "
                                             "whole nodes (batch.exclusive) and YARN gets each node's cores from the "
                                             "allocation when it runs")], notes
    assert [n for n in notes if n.startswith("yarn.nodemanager.resource.memory-mb 2048 is a stand-in")], notes
    fixed = CliRunner().invoke(main, ["render", str(job), "--set", "batch.cores_per_node=4",
                                      "--set", "hadoop.nodemanager_memory=6g"])
    assert fixed.exit_code == 0, fixed.output
    assert not [n for n in render_notes(fixed.stdout) if "stand-in" in n], fixed.stdout
    pbs_standins("torque")
    torque = CliRunner().invoke(main, ["render", str(job)])
    assert torque.exit_code == 0, torque.output
    assert not [n for n in render_notes(torque.stdout) if "cpu-vcores" in n], torque.stdout


# -- what a command imports (issue 26 item 1) -----------------------------------------------------------------

#: Modules `render` of a MapReduce job on the local backend must not import: the cluster's life cycle, the other
#: batch systems and their fan-out launchers, filesystem classes other than the one decided, the commands on
#: long-lived clusters and `ui`'s proxy, `doctor`, the runtime installer, Spark (no Spark step), running steps and
#: the failed-step diagnosis, the benchmarks, the package data's own packages (found, not imported).
NOT_FOR_RENDER = (
    "launcher.lifecycle.runner", "launcher.lifecycle.compose", "launcher.lifecycle.clusters",
    "launcher.lifecycle.report", "launcher.cluster", "launcher.node", "launcher.schedulers.slurm",
    "launcher.schedulers.pbs", "launcher.schedulers.sge", "launcher.fanout.srun", "launcher.fanout.pbsdsh",
    "launcher.fanout.qrsh", "launcher.filesystems.lustre", "launcher.filesystems.orangefs",
    "launcher.filesystems.gpfs", "launcher.cli.clusters", "launcher.cli.webproxy", "launcher.cli.runtime",
    "launcher.cli.doctor", "launcher.runtime.install", "launcher.runtime.cds_build", "launcher.render.spark",
    "launcher.steps.diagnosis",
    "launcher.steps.jobs",  # issue 38: render builds the steps' command lines (steps.commands), runs none
    "benchmarks", "launcher._data.templates", "launcher._data.site_configs", "launcher._data.shim",
)


def _among(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(f"{p}.") for p in prefixes)]


def test_render_imports_only_what_a_local_job_needs(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml,
                                                    built_runtime: Path) -> None:
    """`render` of a local MapReduce job, in a fresh interpreter (tests/modules_opened.py), imports the checks and
    the rendering (validate and plan, the configuration, the decided filesystem class) and none of
    :data:`NOT_FOR_RENDER`. Issue 26 item 1 (a local run opens about a third of the flat tree's modules)."""
    from tests.modules_opened import opened

    job = write_yaml(tmp_path / "job.yaml", valid_job(pfs_root))
    got = opened(["render", str(job)], cwd=str(REPO))
    assert got.code == 0
    for needed in ("launcher.lifecycle.validate", "launcher.render.config", "launcher.plan.cluster_plan",
                   "launcher.schedulers.local", "launcher.filesystems.generic", "launcher.steps.commands"):
        assert needed in got.imported and needed in got.entered, needed
    assert _among(got.imported, NOT_FOR_RENDER) == []


def test_help_imports_no_command_module(hpc_hadoop: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    """`hpc-hadoop --help` lists every command, the lazy ones too (`list`, `runtime`: launcher.cli.main.LazyGroup),
    but imports only the CLI's own modules (those that define the listed commands) and the schedulers' names: not
    the job-file model (pydantic), no life cycle, no rendering, no benchmark."""
    from tests.modules_opened import opened

    got = opened(["--help"], cwd=str(REPO))
    assert got.code == 0
    assert _among(got.imported, ("launcher.config", "launcher.schedulers.base", "launcher.schedulers.local",
                                 "launcher.lifecycle.runner", "launcher.lifecycle.submit", "launcher.render",
                                 "launcher.plan", "launcher.security", "launcher.filesystems", "launcher.cluster",
                                 "launcher.cli.webproxy", "benchmarks")) == []
    listed = hpc_hadoop("--help", cwd=REPO).stdout
    for command in ("submit", "render", "start", "list", "status", "stop", "clean", "completion", "runtime"):
        assert re.search(rf"^  {command}\s", listed, re.MULTILINE), command
    assert "install" in hpc_hadoop("runtime", "--help", cwd=REPO).stdout


# -- your own batch script (issue 28 item 3) ------------------------------------------------------------------

def test_render_run_shows_what_run_takes_from_the_allocation_it_is_in(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml,
        built_runtime: Path) -> None:
    """Inside a Slurm job (its environment; Slurm 22.05's recorded ``scontrol`` answers) ``render --run`` detects
    Slurm over the job file's ``scheduler: local`` as ``run`` does, says what it takes (4 nodes, not the 1 asked;
    the hour, not the 20 minutes) and renders the configuration on those nodes; no batch script."""
    from launcher.schedulers import base
    from tests.unit.schedulers.test_inside import SLURM_ENV
    from tests.unit.schedulers.test_slurm import fake_commands, recorded

    for name, value in SLURM_ENV.items():
        monkeypatch.setenv(name, value)
    fake_commands(monkeypatch, {"scontrol show hostnames": (0, recorded("scontrol-show-hostnames.txt")),
                                "scontrol show job": (0, recorded("scontrol-show-job-running.txt"))})
    monkeypatch.setattr(base, "node_address", lambda name: f"10.1.0.{len(name)}")
    job = write_yaml(tmp_path / "wc.yaml", valid_job(pfs_root, scheduler="local", nodes=1, walltime="00:20:00",
                                                     filesystem={"root": str(pfs_root), "shared": True}))
    result = invoke(["render", "--run", str(job)])
    assert result.exit_code == 0, result.output
    assert "==> batch script <==" not in result.stdout
    section = result.stdout.split("==> allocation <==\n")[1].split("==> ")[0].splitlines()
    assert len(section) == 1 and re.fullmatch(
        r"allocation: Slurm job 4242, 4 nodes \(n01,n02,n03,gpu7\) from SLURM_JOB_NODELIST, walltime 01:00:00 "
        r"\(\d\d:\d\d:\d\d left\) from `scontrol show job` TimeLimit; job file asked nodes: 1 → using 4, "
        r"walltime: 00:20:00 → using 01:00:00", section[0]), section
    yarn = result.stdout.split("==> conf/yarn-site.xml <==\n")[1].split("==> ")[0]
    # the ResourceManager on the first node (n01: 10.1.0.3), YARN sized on its 16 granted cores
    assert "<name>yarn.resourcemanager.hostname</name>\n    <value>10.1.0.3</value>" in yarn, yarn
    assert "<name>yarn.nodemanager.resource.cpu-vcores</name>\n    <value>16</value>" in yarn, yarn
    assert list(pfs_root.iterdir()) == []


def test_render_run_outside_an_allocation_is_one_line(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SLURM_JOB_ID", "PBS_JOBID", "JOB_ID", "PE_HOSTFILE"):
        monkeypatch.delenv(name, raising=False)
    job = write_yaml(tmp_path / "wc.yaml", valid_job(pfs_root, scheduler="slurm", nodes=2))
    result = invoke(["render", "--run", str(job)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "not inside a Slurm allocation" in result.stderr, result.stderr


def test_doctor_takes_nodes_as_render_and_submit_do(tmp_path: Path, pfs_root: Path, write_yaml: WriteYaml,
                                                    built_runtime: Path) -> None:
    job = write_yaml(tmp_path / "wc.yaml", valid_job(pfs_root, scheduler="slurm", nodes=2,
                                                     filesystem={"root": str(pfs_root), "shared": True}))
    result = invoke(["doctor", str(job), "--nodes", "3"])
    line = next(line for line in result.stdout.splitlines() if "job file" in line)
    assert f"{job}: 3 node(s), 1 step(s)" in line, result.output


def test_start_inside_an_allocation_checks_the_job_file_against_the_allocations_batch_system(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_yaml: Callable[..., Path]) -> None:
    """Issue 40: ``hpc-hadoop start job.yaml`` in a batch script of 2 nodes, the job file naming no batch system
    (``nodes: 2``), was refused as if for the ``local`` backend (one node) before the allocation was detected; as
    ``run`` does, it is checked against the allocation's (and starts there), while a job file that names another
    batch system is still refused in one line."""
    import launcher.lifecycle.start as start_module

    started: list[str] = []

    def detached(spec: Any, job_file: Path, *, overwrite: bool) -> Path:
        started.append(spec.scheduler)
        raise SystemExit(0)  # what follows (waiting for the cluster) is not this test's

    monkeypatch.setattr(start_module, "start_detached", detached)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    job = write_yaml(tmp_path / "job.yaml", {"name": "inside", "nodes": 2, "filesystem": {"root": str(tmp_path)}})
    result = CliRunner().invoke(main, ["start", str(job)])
    assert result.exit_code == 0 and started == ["slurm"], result.output
    other = write_yaml(tmp_path / "pbs.yaml", {"name": "inside", "scheduler": "pbs", "nodes": 2,
                                               "filesystem": {"root": str(tmp_path)}})
    refused = CliRunner().invoke(main, ["start", str(other)])
    assert refused.exit_code == 2 and "runs inside a slurm allocation but the job asks for pbs" in refused.stderr
