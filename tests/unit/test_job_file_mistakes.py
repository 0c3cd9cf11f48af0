"""Issue #11: the mistakes people make in job files, one row each, through the real CLI (`hpc-hadoop render`).

A row is a job-file fragment (raw YAML text, so that unquoted times, tabs and bare numbers reach the parser as
typed) and either the one-line error it must give (exit code 2, naming the job file and the field) or text the
rendered output must contain (the value that is right).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

#: ``shared: true``: the batch-system cases render with a root under /tmp (node-local), which a real batch job may
#: not use; a case with ``shared="null"`` gets the detection (issue #11: a shared root).
HEADER = "name: mistakes\nfilesystem:\n  root: ROOT\n  shared: SHARED\n"
STEPS = "steps:\n  - example: pi\n    args: [2, 10]\n"


@dataclass(frozen=True)
class Case:
    """``yaml``: the fragment (``STEPS`` is appended unless it has ``steps:``). ``field`` and ``error``: the error
    line names the field and contains ``error``. ``renders``: texts the output (stdout) contains. ``warns``: text
    on stderr of a successful render."""

    yaml: str
    field: str | None = None
    error: str | None = None
    renders: tuple[str, ...] = ()
    warns: str | None = None
    shared: str = "true"


SLURM = "scheduler: slurm\n"
CASES: dict[str, Case] = {
    # -- walltimes
    "unquoted-hh-mm-ss": Case(SLURM + "walltime: 1:30:00\n", renders=("#SBATCH --time=01:30:00",)),
    "unquoted-mm-ss": Case(SLURM + "walltime: 45:00\n", renders=("#SBATCH --time=00:45:00",)),
    "bare-minutes": Case(SLURM + "walltime: 90\n", renders=("#SBATCH --time=01:30:00",)),
    "hours-unit": Case(SLURM + "walltime: 2h\n", renders=("#SBATCH --time=02:00:00",)),
    "days-hours": Case(SLURM + "walltime: 1-12\n", renders=("#SBATCH --time=36:00:00",)),
    "walltime-1h30": Case("walltime: 1h30\n", "walltime", "'1h30' is not a walltime"),
    "walltime-negative": Case("walltime: -5\n", "walltime", "not a positive walltime"),
    "walltime-words": Case("walltime: two hours\n", "walltime", "is not a walltime"),
    "signal-lead-minutes": Case(SLURM + "batch:\n  signal_lead: 5m\n", renders=("#SBATCH --signal=B:USR1@300",)),
    # -- YAML itself
    "tab-indent": Case("hadoop:\n\tmap_memory: 2g\n", "line 6", "indent with spaces"),
    "yes-is-a-string": Case(SLURM + "batch:\n  qos: yes\n", renders=("#SBATCH --qos=yes",)),
    # -- typos in keys and names
    "typo-top-level": Case("nodez: 2\n", "nodez", "unknown field 'nodez'"),
    "typo-nested": Case("hadoop:\n  map_memroy: 2g\n", "hadoop.map_memroy", "unknown field 'map_memroy'"),
    "typo-example": Case("steps:\n  - example: wordcont\n", "steps.1.example", "did you mean 'wordcount'?"),
    "jar-and-example": Case("steps:\n  - example: pi\n    jar: my.jar\n", "steps", "both `example` and `jar`"),
    "no-program": Case("steps:\n  - args: [1]\n", "steps", "none of `example`, `jar`, `streaming`, `spark`, `pyspark`"),
    "scheduler-case": Case("scheduler: SLURM\n", "scheduler", "'SLURM' is not allowed"),
    "nodes-word": Case("nodes: two\n", "nodes", "'two'"),
    "wrong-config-file": Case("hadoop:\n  properties:\n    mapred:\n      mapreduce.job.reduces: 8\n",
                              "hadoop.properties", "unknown configuration file 'mapred'"),
    # -- memory sizes
    "memory-2GB": Case("hadoop:\n  map_memory: 2GB\n", renders=("<name>mapreduce.map.memory.mb</name>\n"
                                                                 "    <value>2048</value>",)),
    "memory-2-space-G": Case("hadoop:\n  reduce_memory: 2 G\n", renders=("<name>mapreduce.reduce.memory.mb</name>\n"
                                                                         "    <value>2048</value>",)),
    "memory-bare-mib": Case("hadoop:\n  map_memory: 2048\n", renders=("<name>mapreduce.map.memory.mb</name>\n"
                                                                      "    <value>2048</value>", "-Xmx1638m")),
    "memory-2048MiB": Case("hadoop:\n  am_memory: 2048MiB\n", renders=("<name>yarn.app.mapreduce.am.resource.mb"
                                                                       "</name>\n    <value>2048</value>",)),
    "shuffle-typo": Case("hadoop:\n  shuffle: sharedfs\n", "hadoop.shuffle", "'sharedfs' is not allowed"),
    "shuffle-auto-shared": Case("filesystem:\n  local_dirs: shared\n", renders=(
        "<name>mapreduce.job.reduce.shuffle.consumer.plugin.class</name>\n"
        "    <value>org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle</value>",)),
    "memory-too-small": Case("hadoop:\n  map_memory: 64\n", "hadoop.map_memory", "below the 128 MiB minimum"),
    "heap-too-small": Case("hadoop:\n  daemon_heap: 100m\n", "hadoop.daemon_heap", "below the 256 MiB minimum"),
    "memory-words": Case("hadoop:\n  map_memory: lots\n", "hadoop.map_memory", "'lots' is not a size"),
    "node-memory-bare-mib": Case(SLURM + "batch:\n  memory_per_node: 64000\n", renders=("#SBATCH --mem=64000M",)),
    "node-memory-too-small-for-container": Case(
        SLURM + "batch:\n  memory_per_node: 4g\nhadoop:\n  map_memory: 4g\n", "batch.memory_per_node",
        "less than one 4096 MiB container"),
    # -- batch values
    "newline-in-partition": Case(SLURM + 'batch:\n  partition: "debug\\n#SBATCH --exclusive"\n', "batch.partition",
                                 "control character"),
    "newline-in-hadoop-home": Case('hadoop:\n  home: "/opt/hadoop\\nexport X=1"\n', "hadoop.home",
                                   "control character"),
    "space-in-account": Case(SLURM + "batch:\n  account: my project\n", "batch.account", "not a scheduler name"),
    "newline-in-directive": Case(SLURM + 'batch:\n  extra_directives: ["--exclusive\\necho hi"]\n',
                                 "batch.extra_directives", "control character"),
    # -- Hadoop properties
    "misspelt-property": Case("hadoop:\n  properties:\n    mapred-site:\n      mapreduce.map.memroy.mb: 2048\n",
                              warns="did you mean mapreduce.map.memory.mb?"),
    # -- a shared root (tmp_path is on ext4/xfs/tmpfs/overlay here: node-local)
    "local-root-on-slurm": Case(SLURM, "filesystem.root", "which the compute nodes do not share", shared="null"),
    "local-root-declared-shared": Case(SLURM, renders=("#SBATCH --nodes=1",)),
    "local-root-on-local-backend": Case("scheduler: local\n", renders=("==> steps <==",), shared="null"),
    # -- whole nodes by default (issue #11: one core per node before)
    "whole-nodes": Case(SLURM, renders=("#SBATCH --exclusive\n", "#SBATCH --mem=0\n")),
    "shared-nodes": Case(SLURM + "batch:\n  exclusive: false\n  cores_per_node: 2\n",
                         renders=("#SBATCH --cpus-per-task=2\n",)),
    # -- render makes every check submit makes
    "existing-output": Case("steps:\n  - example: teragen\n    args: [100, ROOT]\n", "steps.1", "already exists"),
    "output-inside-input": Case("steps:\n  - example: wordcount\n    args: [ROOT, ROOT/counts]\n", "steps.1",
                                "is inside input"),
    "relative-jar": Case("steps:\n  - jar: lib/nope.jar\n", "steps.1.jar", "/lib/nope.jar does not exist"),
    "missing-jar": Case("steps:\n  - jar: ROOT/nope.jar\n", "steps.1.jar", "does not exist"),
    "reducers-without-reducer": Case("steps:\n  - streaming:\n      mapper: cat\n      input: ROOT\n"
                                     "      output: ROOT-out\n      reducers: 4\n", "steps.1.streaming.reducers",
                                     "without a reducer would run a map-only job"),
    "container-larger-than-node": Case(SLURM + "batch:\n  memory_per_node: 8g\nhadoop:\n  map_memory: 16g\n",
                                       "batch.memory_per_node", "less than one 16384 MiB container"),
    "no-steps": Case("steps: []\n", renders=("==> steps <==",)),
    "dotted-property": Case("hadoop:\n  properties:\n    mapred-site:\n      mapreduce.job.reduces: 8\n",
                            renders=("<name>mapreduce.job.reduces</name>\n    <value>8</value>",)),
}


def _render(tmp_path: Path, case: Case) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path / "pfs"
    root.mkdir()
    text = (HEADER + case.yaml + ("" if "steps:" in case.yaml else STEPS)).replace("ROOT", str(root))
    text = text.replace("SHARED", case.shared)
    path = tmp_path / "job.yaml"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "launcher.cli", "render", str(path)], capture_output=True,
                          text=True, cwd=REPO, timeout=120, check=False)
    return path, proc


def test_there_are_at_least_twenty_cases() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("name", sorted(CASES))
def test_job_file_mistake(tmp_path: Path, name: str) -> None:
    case = CASES[name]
    path, proc = _render(tmp_path, case)
    assert "Traceback" not in proc.stderr
    if case.error is not None:
        assert proc.returncode == 2, (proc.returncode, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"error: {path}: {case.field}"), lines[0]
        assert case.error in lines[0], lines[0]
        assert proc.stdout == ""
    else:
        assert proc.returncode == 0, proc.stderr
        for text in case.renders:
            assert text in proc.stdout, text
        if case.warns:
            assert case.warns in proc.stderr
        else:
            assert "warning:" not in proc.stderr
