"""The shared-filesystem shuffle (issue 15, ``hadoop.shuffle``) with real daemons: TeraSort + TeraValidate whose
reducers read every map output straight from the NodeManager local dirs on the shared filesystem, an ``http``
step in the same cluster (Hadoop's shuffle through the ShuffleHandler, still running), and the per-map fallback
to HTTP when a map output cannot be found; the run report's counters say which bytes went which way. Under
failure: a reducer whose first attempt fails reads every map output again, and a NodeManager lost mid-shuffle
has its finished maps re-run elsewhere, their first outputs declared obsolete to the reducer.

The local backend's two tests share one cluster (:func:`local_run`, whose last steps are test_local_end_to_end.py's
failing step), and so do the two Slurm tests (:func:`slurm_run`)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import yaml

from launcher.steps.jobhistory import find_jhist, job_events
from tests.conftest import REPO, fresh_pfs_dir, hpc_hadoop, only_run_dir, processes_of, run_report
from tests.jobs import SMALL
from tests.users import TestUser, make_user, user_dir

pytestmark = pytest.mark.hadoop

PLUGIN = "org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle"
#: TeraGen rows (100 bytes each) and maps of the tests: 10 MB in 4 map outputs per sort.
ROWS, MAPS = 100_000, 4


def records(directory: Path, pattern: str) -> list[bytes]:
    """TeraSort's 100-byte records of the files matching ``pattern`` in ``directory``, file by file."""
    data = b"".join(p.read_bytes() for p in sorted(directory.glob(pattern)))
    assert len(data) % 100 == 0
    return [data[i:i + 100] for i in range(0, len(data), 100)]


def write_sort_input(directory: Path, seed: int = 15) -> None:
    """:data:`ROWS` TeraSort records of 100 bytes (10 random key bytes, then the row number and filler, as TeraGen
    writes them) in :data:`MAPS` files ``part-m-0000N``: the input of the sorts without a TeraGen step."""
    rng = random.Random(seed)
    directory.mkdir()
    per_file = ROWS // MAPS
    for m in range(MAPS):
        rows = range(m * per_file, ROWS if m == MAPS - 1 else (m + 1) * per_file)
        (directory / f"part-m-{m:05d}").write_bytes(b"".join(
            rng.randbytes(10) + b"\x00\x11" + f"{row:032X}".encode() + b"\x88\x99\xaa\xbb" + b"0123" * 12
            + b"\xcc\xdd\xee\xff" for row in rows))


def check_sorted(gen: Path, output: Path) -> None:
    """``output`` holds the records of ``gen`` (TeraGen's or :func:`write_sort_input`'s), sorted by key."""
    generated, ordered = records(gen, "part-m-*"), records(output, "part-r-*")
    assert len(ordered) == ROWS
    assert [r[:10] for r in ordered] == sorted(r[:10] for r in generated)
    assert sorted(ordered) == sorted(generated)


#: The steps :func:`sort_steps` may give after TeraGen: TeraSort with the cluster's shuffle, TeraValidate, TeraSort
#: with Hadoop's own shuffle and TeraSort with the plugin's per-map fallback to HTTP.
SORTS = ("terasort", "teravalidate", "terasort-http", "terasort-fallback")


def sort_steps(fs_root_dir: str, wrong_dirs: str, names: tuple[str, ...] = SORTS,
               gen: str | None = None) -> list[dict]:
    """TeraGen (none when ``gen``, the sorts' input, exists already), then of :data:`SORTS` those in ``names``:
    TeraSort and TeraValidate with the cluster's shuffle, TeraSort with Hadoop's own shuffle (``http``) and
    TeraSort with the plugin told ``wrong_dirs`` as the NodeManagers' local dirs (every map output over HTTP)."""
    out = f"{fs_root_dir}/output"
    source = gen or f"{out}/gen"
    steps = {
        "terasort": {"example": "terasort", "args": [source, f"{out}/sorted"]},
        "teravalidate": {"example": "teravalidate", "args": [f"{out}/sorted", f"{out}/validate"]},
        "terasort-http": {
            "example": "terasort", "name": "terasort-http",
            "args": ["-Dmapreduce.job.reduce.shuffle.consumer.plugin.class=org.apache.hadoop.mapreduce.task.reduce"
                     ".Shuffle", source, f"{out}/sorted-http"]},
        "terasort-fallback": {
            "example": "terasort", "name": "terasort-fallback",
            "args": [f"-Dhpchadoop.shuffle.shared.local-dirs={wrong_dirs}", source, f"{out}/sorted-fallback"]},
    }
    teragen = [] if gen else [{"example": "teragen", "args": [f"-Dmapreduce.job.maps={MAPS}", str(ROWS), source]}]
    return [*teragen, *(steps[name] for name in SORTS if name in names)]


def check_report(run_dir: Path, reducers: int, names: tuple[str, ...] = SORTS, gen: Path | None = None) -> None:
    """The sorts' outputs and each step's ``shuffle`` in run.json (the steps of :func:`sort_steps` with
    ``names`` and ``gen``, first in the run)."""
    first = 0 if gen else 1
    steps = run_report(run_dir)["steps"][:first + len(names)]
    assert [s["state"] for s in steps] == ["succeeded"] * (first + len(names)), steps
    if not gen:
        assert steps[0]["shuffle"] is None  # TeraGen has no reducers
    by_name = {s["name"]: s["shuffle"] for s in steps[first:]}
    assert list(by_name) == [name for name in SORTS if name in names], list(by_name)
    out = run_dir / "output"
    for name in ("sorted", "sorted-http", "sorted-fallback"):
        if name.replace("sorted", "terasort") in names:
            check_sorted(gen or out / "gen", out / name)

    direct = by_name["terasort"]
    print("shared-fs:", {k: v for k, v in direct.items() if k != "reducers"})
    assert direct["used"] == "shared-fs" and direct["shuffle_bytes"] > ROWS * 100
    assert direct["direct_bytes"] == direct["shuffle_bytes"] and direct["http_bytes"] == 0
    assert direct["direct_maps"] == MAPS * reducers and direct["http_maps"] == 0
    assert len(direct["reducers"]) == reducers
    for reducer in direct["reducers"]:
        assert reducer["direct_bytes"] == reducer["shuffle_bytes"] > 0 and reducer["http_bytes"] == 0, reducer
        assert reducer["shuffle_s"] is not None and reducer["shuffle_s"] > 0

    if "teravalidate" in names:
        validate = "".join(p.read_text() for p in (out / "validate").glob("part-r-*"))
        assert "checksum" in validate and "error" not in validate.lower(), validate
        assert by_name["teravalidate"]["used"] == "shared-fs" and by_name["teravalidate"]["http_bytes"] == 0

    if "terasort-http" in names:
        http = by_name["terasort-http"]
        assert http["used"] == "http" and http["http_bytes"] == http["shuffle_bytes"] == direct["shuffle_bytes"]
        assert http["direct_bytes"] == 0 and http["http_maps"] == MAPS * reducers

    if "terasort-fallback" in names:
        fallback = by_name["terasort-fallback"]
        assert fallback["used"] == "shared-fs" and fallback["direct_bytes"] == 0 and fallback["direct_maps"] == 0
        assert fallback["http_bytes"] == fallback["shuffle_bytes"] == direct["shuffle_bytes"]
        assert fallback["http_maps"] == MAPS * reducers
        # The reducers' logs say which map outputs went over HTTP, and why.
        logs = "".join(p.read_text(errors="replace") for d in ("logs", "app-logs")
                       for p in (run_dir / d).rglob("*") if p.is_file())
        assert "shared-fs shuffle: fetching attempt_" in logs and "/nonexistent" in logs


#: The streaming reducer of the re-run test: sums the values of each key, and fails its first attempt (attempt ids
#: end in ``_0``) after reading all its input. Streaming exports the task's configuration to the environment, dots
#: as underscores.
FAILING_REDUCER = """\
import os, sys
attempt = os.environ["mapreduce_task_attempt_id"]
lines = sys.stdin.read().splitlines()
if attempt.endswith("_0"):
    sys.exit(f"{attempt}: the first attempt of this reducer fails on purpose, after {len(lines)} records")
totals, keys = {}, []
for line in lines:
    key, _, value = line.partition("\\t")
    if key not in totals:
        keys.append(key)
    totals[key] = totals.get(key, 0) + int(value)
assert keys == sorted(keys), "the reducer's input is not sorted by key"
for key in keys:
    print(f"{key}\\t{totals[key]}")
"""


#: Maps of the re-run step (one input file each) and records per map.
RERUN_MAPS, RERUN_RECORDS = 4, 3000


def rerun_input(directory: Path) -> dict[str, int]:
    """Writes the re-run step's input files (``key<TAB>value`` lines) into ``directory``; returns the sum of the
    values of each key (the expected output), computed here."""
    directory.mkdir()
    expected: dict[str, int] = {}
    for m in range(RERUN_MAPS):
        lines = []
        for i in range(RERUN_RECORDS):
            key, value = f"k{(i * 7 + m) % 997:04d}", i % 13 + m
            expected[key] = expected.get(key, 0) + value
            lines.append(f"{key}\t{value}\n")
        (directory / f"part-{m}.txt").write_text("".join(lines))
    return expected


def sequence_sort(source: Path) -> dict:
    """The examples' ``sort`` of ``key<TAB>value`` text files (``KeyValueTextInputFormat``) into a SequenceFile of
    ``Text`` keys and values (its default output format): a job's output only Hadoop's reader shows as text (issue
    40, ``hpc-hadoop results``). One reducer, so that the job runs in uber mode (4 s, not the 14 s of two reducers'
    containers); a ``jar:`` step, as its options are not paths."""
    return {"name": "seqsort", "jar": "${examples_jar}", "output": "${run_dir}/output/seqsort",
            "args": ["sort", "-r", "1", "-inFormat", "org.apache.hadoop.mapreduce.lib.input.KeyValueTextInputFormat",
                     "-outKey", "org.apache.hadoop.io.Text", "-outValue", "org.apache.hadoop.io.Text", str(source),
                     "${run_dir}/output/seqsort"]}


#: The steps of :func:`local_run` after the sorts: the re-run step, then a step whose Python mapper fails on its
#: first line, then one that never runs (the failed step ends the run).
LOCAL_TAIL = ("reducer-rerun", "bad-mapper")


@dataclass(frozen=True)
class LocalRun:
    """The local-backend cluster the local tests here and in test_local_end_to_end.py read: ``submit``'s result, its
    cluster directory and the re-run step's expected sums."""

    result: subprocess.CompletedProcess[str]
    run_dir: Path
    expected: dict[str, int]

    def check_ran_to_the_failing_step(self) -> dict:
        """Every step succeeded up to ``bad-mapper``, which failed and ended the run (exit 1); returns run.json."""
        report = run_report(self.run_dir)
        names = [s["name"] for s in report["steps"]]
        states = [s["state"] for s in report["steps"]]
        assert names[-len(LOCAL_TAIL):] == list(LOCAL_TAIL), names
        assert states == ["succeeded"] * (len(states) - 1) + ["failed"], report["steps"]
        assert self.result.returncode == 1, self.result.stdout[-3000:] + self.result.stderr[-3000:]
        return report


def run_local_cluster(tmp_path_factory: pytest.TempPathFactory) -> LocalRun:
    """The session's ``local_run`` (tests/conftest.py): one local-backend cluster (``filesystem.local_dirs:
    shared``, so ``hadoop.shuffle: auto`` = ``shared-fs``; two reducers a job) that runs :func:`sort_steps`, the
    examples' ``sort`` of the re-run input into SequenceFiles (:data:`SEQUENCE_SORT`, read by ``hpc-hadoop results``
    in test_local_end_to_end.py), a streaming step whose reducer fails its first attempt on purpose
    (:data:`FAILING_REDUCER`), a streaming step whose
    Python mapper raises ``NameError`` on its first line while the JVM still writes 1.2 MB to it, and a step that
    never runs: one bring-up for the two tests that follow and test_local_end_to_end.py's failing step."""
    base = tmp_path_factory.mktemp("shuffle-local")
    root = base / "pfs"
    root.mkdir()
    expected = rerun_input(root / "rerun-input")
    (base / "sum_reducer.py").write_text(FAILING_REDUCER)
    rerun = {"name": "reducer-rerun", "streaming": {
        "mapper": "cat", "reducer": "python3 sum_reducer.py", "files": ["sum_reducer.py"],
        "input": [str(root / "rerun-input")], "output": "${run_dir}/output/sums", "reducers": 1},
        "properties": {"mapreduce.job.ubertask.enable": False}}
    data = root / "in.txt"
    data.write_text("a b c\n" * 200000)
    mapper = root / "mapper.py"
    mapper.write_text("import sys\n\nfor line in sys.stdin:\n    print(line.split()[0] + '\\t' + undefined_name)\n")
    failing = [
        {"name": "bad-mapper", "streaming": {"mapper": "/usr/bin/python3 mapper.py", "files": [str(mapper)],
                                             "input": [str(data)], "output": "${run_dir}/out1"},
         "properties": {"mapreduce.map.maxattempts": 1, "mapreduce.job.ubertask.enable": False}},
        {"name": "never-runs", "example": "pi", "args": ["1", "10"]}]
    job = {"scheduler": "local", "name": "shuffle-local",
           "filesystem": {"root": str(root), "local_dirs": "shared"},
           "hadoop": {**SMALL, "properties": {"mapred-site": {"mapreduce.job.reduces": 2}}},
           "steps": [*sort_steps("${run_dir}", "127.0.0.1=/nonexistent,localhost=/nonexistent"),
                     sequence_sort(root / "rerun-input"), rerun, *failing]}
    path = base / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    return LocalRun(hpc_hadoop("submit", str(path)), only_run_dir(root), expected)


def test_terasort_shared_fs_shuffle_on_the_local_backend(local_run: LocalRun) -> None:
    """TeraSort + TeraValidate with ``shared-fs``, TeraSort with ``http`` and with the HTTP fallback, two
    reducers each."""
    result, run_dir = local_run.result, local_run.run_dir
    local_run.check_ran_to_the_failing_step()
    assert PLUGIN in (run_dir / "conf" / "mapred-site.xml").read_text()
    check_report(run_dir, reducers=2)
    assert "shuffle of terasort: shared-fs, 10400048 bytes read directly, 0 over HTTP" in result.stdout + result.stderr
    assert processes_of(run_dir) == []
    logs = "".join(p.read_text(errors="replace") for p in (run_dir / "app-logs").rglob("*") if p.is_file())
    assert "/nonexistent/usercache/" in logs and "cannot be read" in logs  # the node known, its files not there


def test_reducer_rerun_shuffles_every_map_output_again(local_run: LocalRun) -> None:
    """A streaming step (``mapper: cat``, one reducer, no uber mode) whose reducer script fails its first attempt
    on purpose, after its shuffle: the second attempt shuffles every map output again through the plugin,
    straight from the shared filesystem, and the sums are right."""
    run_dir = local_run.run_dir
    step = next(s for s in local_run.check_ran_to_the_failing_step()["steps"] if s["name"] == "reducer-rerun")
    assert step["state"] == "succeeded", step
    # The .jhist: the reduce task's first attempt failed, its second succeeded; every map ran once.
    jhist = find_jhist(run_dir / "history", step["job_id"])
    assert jhist is not None
    events = job_events(jhist)
    reduce_attempts = [(kind, f["attemptId"]) for kind, f in events
                       if kind.startswith("REDUCE_ATTEMPT_") and kind != "REDUCE_ATTEMPT_STARTED"]
    assert [kind for kind, _ in reduce_attempts] == ["REDUCE_ATTEMPT_FAILED", "REDUCE_ATTEMPT_FINISHED"], \
        reduce_attempts
    assert reduce_attempts[0][1].endswith("_r_000000_0") and reduce_attempts[1][1].endswith("_r_000000_1")
    assert len([kind for kind, _ in events if kind == "MAP_ATTEMPT_FINISHED"]) == RERUN_MAPS
    # The successful attempt read every map output again, all of them straight from the filesystem.
    shuffle = step["shuffle"]
    print("re-run reducer:", {k: v for k, v in shuffle.items() if k != "reducers"})
    (reducer,) = shuffle["reducers"]
    assert reducer["attempt"] == reduce_attempts[1][1] and reducer["shuffled_maps"] == RERUN_MAPS
    assert shuffle["used"] == "shared-fs" and shuffle["direct_maps"] == RERUN_MAPS and shuffle["http_maps"] == 0
    assert shuffle["direct_bytes"] == shuffle["shuffle_bytes"] > RERUN_MAPS * RERUN_RECORDS
    assert shuffle["http_bytes"] == 0
    # The failed attempt had shuffled them too: its script read every record before it failed (its stderr).
    logs = "".join(p.read_text(errors="replace") for d in ("logs", "app-logs") for p in (run_dir / d).rglob("*")
                   if p.is_file())
    records_in = RERUN_MAPS * RERUN_RECORDS
    assert f"the first attempt of this reducer fails on purpose, after {records_in} records" in logs
    sums: dict[str, int] = {}
    for part in (run_dir / "output" / "sums").glob("part-*"):
        for line in part.read_text().splitlines():
            key, _, value = line.partition("\t")
            assert key not in sums, key
            sums[key] = int(value)
    assert sums == local_run.expected
    assert processes_of(run_dir) == []


@pytest.fixture(scope="module")
def dave() -> TestUser:
    """The ordinary user who submits the Slurm tests' jobs."""
    return make_user("hhdave")


def slurm_job(dave: TestUser, root: Path, job: dict) -> Path:
    """A Slurm job file of 3 nodes whose NodeManager local dirs are on GlusterFS, owned by ``hhdave``."""
    job = {"scheduler": "slurm", "nodes": 3, "walltime": "00:20:00",
           "filesystem": {"root": str(root), "local_dirs": "shared"}, **job}
    path = root / dave.name / f"{job['name']}.yaml"
    path.write_text(yaml.safe_dump(job))
    return dave.own(path, 0o600)


def attempt_hosts(run_dir: Path, job_id: str, event: str) -> set[str]:
    """The hosts of a job's ``event`` (``MAP_ATTEMPT_FINISHED``...) in its .jhist."""
    (jhist,) = run_dir.glob(f"history/**/{job_id}*.jhist")
    hosts = set()
    for line in jhist.read_text(errors="replace").splitlines():
        if f'"type":"{event}"' in line:
            hosts.update(re.findall(r'"hostname":"([^"]+)"', line))
    return hosts


def containers(run_dir: Path, *words: str) -> list[tuple[str, psutil.Process, str]]:
    """``(node, process, command line)`` of each live container JVM of the cluster whose command line has all of
    ``words`` (its log directory is ``logs/<node>/userlogs/``; the node namespaces share this PID namespace)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            argv = proc.info["cmdline"] or []
            if not argv or not argv[0].endswith("java") or proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        cmdline = " ".join(argv)
        found_in = re.search(re.escape(str(run_dir)) + r"/logs/([^/]+)/userlogs/", cmdline)
        if found_in and all(word in cmdline for word in words):
            found.append((found_in.group(1), proc, cmdline))
    return found


def container_hosts(run_dir: Path, *words: str) -> set[str]:
    """The nodes where a container whose command line has all of ``words`` runs now (:func:`containers`)."""
    return {node for node, _, _ in containers(run_dir, *words)}


#: A line of the shared-fs shuffle's reducer log saying it read a map's output straight from a node's local dir.
DIRECT_READ = re.compile(r"sharedfs-fetcher#\d+ read \d+ bytes of (attempt_\S+) from \S*/nm-local/([^/\s]+)/")
#: A map attempt id on a container's command line.
MAP_ATTEMPT = re.compile(r"attempt_\d+_\d+_m_\d+_\d+")


def map_output_written(run_dir: Path, node: str, attempt: str) -> bool:
    """Whether ``attempt`` has written its final output index (``file.out.index``) in ``node``'s local dir."""
    return any(run_dir.glob(f"nm-local/{node}/usercache/*/appcache/*/output/{attempt}/file.out.index"))


def container_log(run_dir: Path, host: str, container: str) -> str:
    """The ``syslog`` and ``stderr`` of one container: from ``logs/<host>/userlogs/`` while its NodeManager keeps
    them there, else from the NodeManager's aggregated file ``app-logs/**/<host>_<port>`` (a TFile whose keys
    are the container ids, as ``writeUTF`` strings: two length bytes, then the id)."""
    local = sorted(run_dir.glob(f"logs/{host}/userlogs/application_*/{container}"))
    if local:
        return "".join(p.read_text(errors="replace") for p in sorted(local[0].iterdir())
                       if p.name in ("syslog", "stderr"))
    for aggregated in run_dir.glob(f"app-logs/**/{host}_*"):
        data = aggregated.read_bytes()
        keys = [m for m in re.finditer(rb"\x00([\x10-\x7f])(container_[0-9_e]+)", data)
                if m.group(1)[0] == len(m.group(2))]
        for key, following in zip(keys, [*keys[1:], None], strict=True):
            if key.group(2).decode() == container:
                return data[key.end():following.start() if following else len(data)].decode(errors="replace")
    raise AssertionError(f"no log of {container} on {host} in {run_dir}")


#: The sorts of the Slurm cluster (after them, the SleepJob whose node is lost: its job number is one more). Hadoop's
#: own shuffle (``terasort-http``) runs on the local cluster only since issue 38: every other multi-node test shuffles
#: through it (node-local dirs), and the plugin's bytes against it are compared there.
SLURM_SORTS = ("terasort", "terasort-fallback")
#: Maps of the SleepJob: one wave (3 containers of 512 MB a node, one of them its ApplicationMaster's).
LOST_MAPS = 8


@dataclass(frozen=True)
class SlurmRun:
    """The Slurm cluster the three Slurm tests read: the ``submit --wait`` client's exit code and output, the cluster
    directory, the sorts' input, the node whose NodeManager was killed mid-shuffle and the map that had finished
    there, and the node of the last step's ApplicationMaster whose NodeManager was killed, and when (epoch s)."""

    returncode: int
    output: str
    run_dir: Path
    gen: Path
    victim: str
    done_there: str
    am_victim: str
    am_killed: float


def freeze_a_map(run_dir: Path, mapping: list[tuple[str, psutil.Process, str]],
                 sleep_job: str) -> tuple[str | None, psutil.Process | None]:
    """For :func:`slurm_run`: on the first node (not the master, not the SleepJob's ApplicationMaster's) running
    two of its maps, freeze (SIGSTOP) the last one before it wrote its output. ``mapping``: ``(node, process, map
    attempt)`` of the running map containers. Returns ``(node, frozen process)``, or ``(None, None)`` (not yet)."""
    am = container_hosts(run_dir, "org.apache.hadoop.mapreduce.v2.app.MRAppMaster", f"{sleep_job}01_")
    for node in sorted({node for node, _, _ in mapping} - am - {"n1"}) if am else []:
        here = [(proc, attempt) for n, proc, attempt in mapping if n == node]
        if len(here) < 2:
            continue
        proc, attempt = here[-1]
        try:
            proc.suspend()
        except psutil.NoSuchProcess:
            continue
        if map_output_written(run_dir, node, attempt):  # too late for this one: it may have reported
            proc.resume()
            continue
        print(f"froze {attempt} on {node}")
        return node, proc
    return None, None


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster: list[str], dave: TestUser) -> SlurmRun:
    """One 3-node Slurm cluster over GlusterFS, submitted by ``hhdave``, for the three tests that follow: the
    sorts of :data:`SLURM_SORTS` (input written here: TeraGen and TeraValidate run on the local backend only),
    then a SleepJob of :data:`LOST_MAPS` maps and one reducer during whose shuffle the NodeManager of a node (not
    the master, not the SleepJob's ApplicationMaster's) gets SIGKILL, after a map finished on that node and while
    another map of it has not; then, on the two nodes left, a SleepJob whose ApplicationMaster's NodeManager gets
    SIGKILL once a map runs (:func:`nodemanager_of_the_application_master_killed`).

    3 containers of 512 MB a node (``containers_per_node: 2`` + the ApplicationMaster's share), fewer than a
    sort's 4 maps: YARN places all the maps at once, so they run on at least two nodes and every reducer has maps
    on another node (with 5 a node, all 4 often ran on one, and a reducer could land there too).

    The kill is deterministic, not a race: as soon as the chosen node runs two of the SleepJob's maps, one of
    them is frozen (SIGSTOP, before it wrote its output), so the job cannot end before the ApplicationMaster has
    learnt that the node is gone (it re-runs a lost node's finished maps only while a reducer has not finished);
    the NodeManager is killed once another map of that node has finished and the reducer runs. The lost node's
    agent kills the frozen map with the rest."""
    root = fresh_pfs_dir("test_shuffle_slurm")
    root.chmod(0o755)
    user_dir(root, dave)
    gen = root / dave.name / "gen"
    write_sort_input(gen)
    for path in (gen, *gen.iterdir()):
        dave.own(path, 0o700 if path.is_dir() else 0o600)
    job = slurm_job(dave, root, {
        "name": "shuffle-slurm", "nodemanager_on_master": True,
        "hadoop": {**SMALL, "containers_per_node": 2,
                   "properties": {"mapred-site": {"mapreduce.job.reduces": 2,
                                                  "mapreduce.job.ubertask.enable": False}}},
        "steps": [*sort_steps("${run_dir}", "nohost=/nonexistent", SLURM_SORTS, gen=str(gen)),
                  {"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob", "name": "sleep-lost",
                   "args": ["-m", str(LOST_MAPS), "-r", "1", "-mt", "1000", "-rt", "500"]},
                  {"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob", "name": "am-lost",
                   "args": ["-m", "6", "-r", "1", "-mt", "3000", "-rt", "1000"]}]})
    sleep_job = f"_{len(SLURM_SORTS) + 1:04d}_"  # in the SleepJob's application, container and attempt ids
    am_job = f"_{len(SLURM_SORTS) + 2:04d}_"  # the same, of the last SleepJob, whose ApplicationMaster's node is lost
    launcher = dave.popen([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "submit", str(job),
                           "--wait"])
    frozen: psutil.Process | None = None
    victim, run_dir, done_there, am_victim, am_killed = None, None, None, None, 0.0
    try:
        seen: dict[str, str] = {}  # map attempt -> node, of every map container of the SleepJob seen running
        deadline = time.monotonic() + 600
        while done_there is None and time.monotonic() < deadline and launcher.poll() is None:
            time.sleep(0.25)
            dirs = [p for p in root.glob("*/hpc-hadoop/*") if p.is_dir()]
            if not dirs:
                continue
            run_dir = dirs[0]
            mapping = [(node, proc, MAP_ATTEMPT.search(cmdline)[0]) for node, proc, cmdline
                       in containers(run_dir, "org.apache.hadoop.mapred.YarnChild", f"{sleep_job}m_0")]
            running = {attempt for _, _, attempt in mapping}
            if victim is None:
                seen.update({attempt: node for node, _, attempt in mapping})
                victim, frozen = freeze_a_map(run_dir, mapping, sleep_job)
            else:
                # A map of the victim finished: its output is written and its JVM is gone (it exits once the
                # ApplicationMaster has its report). The reducer's own log cannot tell: it reaches the shared
                # filesystem only in blocks.
                if not container_hosts(run_dir, "org.apache.hadoop.mapred.YarnChild", f"{sleep_job}r_000000_"):
                    continue  # the reducer is not shuffling yet
                done_there = next((attempt for attempt, node in seen.items() if node == victim
                                   and attempt not in running and map_output_written(run_dir, node, attempt)), None)
        if launcher.poll() is not None:
            output, errors = launcher.communicate()
            pytest.fail(f"the run ended before the kill ({launcher.returncode}): {output[-3000:]}{errors[-2000:]}")
        assert victim is not None and run_dir is not None, "no node other than the master's and the AM's ran 2 maps"
        assert done_there is not None, f"no map finished on {victim}"
        agent = json.loads((run_dir / "agents" / f"{victim}.json").read_text())
        os.kill(agent["daemons"]["nodemanager"]["pid"], signal.SIGKILL)
        print(f"NodeManager on {victim} killed after {done_there} finished there")
        am_victim, am_killed = nodemanager_of_the_application_master_killed(launcher, run_dir, am_job)
        output, errors = launcher.communicate(timeout=600)
    finally:
        if launcher.poll() is None:
            launcher.kill()
        if frozen is not None and frozen.is_running():
            frozen.kill()
        if am_victim is None and run_dir is not None and (run_dir / "submit.json").is_file():
            # Failed before the last kill: end the allocation rather than leave it to its walltime.
            job_id = json.loads((run_dir / "submit.json").read_text())["job_id"]
            subprocess.run(["scancel", job_id], check=False, capture_output=True)
    return SlurmRun(launcher.returncode, output[-4000:] + errors[-2000:], run_dir, gen, victim, done_there,
                    am_victim or "", am_killed)


def nodemanager_of_the_application_master_killed(launcher: subprocess.Popen[str], run_dir: Path,
                                                 am_job: str) -> tuple[str, float]:
    """For :func:`slurm_run`'s last step: once the SleepJob ``am_job`` (its number in ids, ``_0004_``) runs a map,
    SIGKILL to the NodeManager of the node that runs its first ApplicationMaster. Returns ``(node, when)``, epoch
    seconds."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and launcher.poll() is None:
        time.sleep(0.25)
        am = container_hosts(run_dir, "org.apache.hadoop.mapreduce.v2.app.MRAppMaster", f"{am_job}01_")
        if am and container_hosts(run_dir, "org.apache.hadoop.mapred.YarnChild", f"{am_job}m_0"):
            (node,) = am
            agent = json.loads((run_dir / "agents" / f"{node}.json").read_text())
            os.kill(agent["daemons"]["nodemanager"]["pid"], signal.SIGKILL)
            print(f"NodeManager on {node}, the ApplicationMaster's of the last step, killed")
            return node, time.time()
    output, errors = launcher.communicate(timeout=60) if launcher.poll() is not None else ("", "")
    pytest.fail(f"the last step's ApplicationMaster and a map never ran at once ({launcher.returncode}): "
                f"{output[-3000:]}{errors[-2000:]}")


@pytest.mark.slurm
def test_terasort_shared_fs_shuffle_on_three_slurm_nodes(slurm_run: SlurmRun) -> None:
    """TeraSort with ``shared-fs`` and with the HTTP fallback on 3 Slurm nodes: reducers on one
    node read the outputs of maps that ran on the others straight from their ``nm-local/<host>``; each sort's
    output is checked here, record by record."""
    assert slurm_run.returncode == 0, slurm_run.output
    run_dir = slurm_run.run_dir
    check_report(run_dir, reducers=2, names=SLURM_SORTS, gen=slurm_run.gen)
    sort = run_report(run_dir)["steps"][0]
    reducer_hosts = {r["host"] for r in sort["shuffle"]["reducers"]}
    mapped_on = attempt_hosts(run_dir, sort["job_id"], "MAP_ATTEMPT_FINISHED")
    print("TeraSort maps on", sorted(mapped_on), "reducers on", sorted(reducer_hosts))
    # Every reducer read, straight from the filesystem, outputs of maps that ran on another node.
    assert len(mapped_on) >= 2 and all(mapped_on - {host} for host in reducer_hosts), (mapped_on, reducer_hosts)
    assert processes_of(run_dir) == []


@pytest.mark.slurm
def test_nodemanager_killed_mid_shuffle_the_job_completes(slurm_run: SlurmRun) -> None:
    """The SleepJob of :func:`slurm_run`, whose node lost its NodeManager mid-shuffle (issue 13 item 1: a node that
    runs maps, not the ApplicationMaster): YARN loses the node; the ApplicationMaster re-runs its maps, finished ones
    included, on the other nodes and tells the reducer their first outputs are obsolete (or re-runs the reducer,
    when it ran there); the step succeeds, every map's output shuffled once: a first output the reducer read before
    the node was lost is not read again."""
    assert slurm_run.returncode == 0, slurm_run.output
    run_dir, victim, done_there, maps = slurm_run.run_dir, slurm_run.victim, slurm_run.done_there, LOST_MAPS
    report = run_report(run_dir)
    step = report["steps"][len(SLURM_SORTS)]
    assert report["state"] == "succeeded" and step["name"] == "sleep-lost" and step["state"] == "succeeded", report
    assert [(lost["node"], lost["step"]) for lost in report["lost_nodes"]] == [
        (victim, len(SLURM_SORTS) + 1), (slurm_run.am_victim, len(SLURM_SORTS) + 2)]
    # Issue 13 item 1 (a lost node that runs maps, not the ApplicationMaster; test_slurm.py's own cluster for it
    # until issue 38): the kill is named, and the run's notes say in which step it came.
    lost = report["lost_nodes"][0]
    assert lost["daemon"] == "nodemanager" and lost["exit"] == -9, lost
    assert any(f"nodemanager on {victim} lost during step {len(SLURM_SORTS) + 1}" in note for note in report["notes"])
    shuffle = step["shuffle"]
    print(f"NodeManager on {victim} killed mid-shuffle:", {k: v for k, v in shuffle.items() if k != "reducers"})
    assert shuffle["used"] == "shared-fs" and shuffle["direct_maps"] + shuffle["http_maps"] == maps
    (reducer,) = shuffle["reducers"]
    assert reducer["shuffled_maps"] == maps and reducer["host"] != victim

    # The .jhist: each map that finished on the lost node was withdrawn (killed: the node is unusable) and run
    # again on another node. That second attempt succeeds, unless the reducer finishes first: with ``shared-fs`` it
    # may already have read the first attempt's output, which stays on the shared filesystem, and then needs no
    # other (the ApplicationMaster kills the second attempt as the job ends; CI saw this on 2026-11-27).
    jhist = find_jhist(run_dir / "history", step["job_id"])
    assert jhist is not None
    events = job_events(jhist)
    order = [(kind, f.get("attemptId")) for kind, f in events]
    finished = [(f["taskid"], f["attemptId"], f["hostname"]) for kind, f in events if kind == "MAP_ATTEMPT_FINISHED"]
    first = {task: attempt for task, attempt, host in finished if host == victim}
    assert first and done_there in first.values(), (first, done_there)
    killed = {f["attemptId"]: f for kind, f in events if kind == "MAP_ATTEMPT_KILLED"}
    rerun = {f["taskid"]: f for kind, f in events if kind == "MAP_ATTEMPT_STARTED" and f["taskid"] in first
             and f["attemptId"] != first[f["taskid"]]}
    print("finished on the lost node, then run again:", {first[t]: rerun.get(t, {}).get("trackerName") for t in first})
    reduced = order.index(("REDUCE_ATTEMPT_FINISHED", reducer["attempt"]))
    for task, attempt in first.items():
        assert "unusable node" in killed[attempt]["error"], killed.get(attempt)  # the first success withdrawn
        again = rerun[task]
        assert again["trackerName"] != victim and order.index(("MAP_ATTEMPT_KILLED", attempt)) < order.index(
            ("MAP_ATTEMPT_STARTED", again["attemptId"])), again
        if ("MAP_ATTEMPT_FINISHED", again["attemptId"]) not in order:  # not needed: killed once the reducer was done
            assert order.index(("MAP_ATTEMPT_KILLED", again["attemptId"])) > reduced, again

    # The successful reducer's log: each first output declared obsolete to it, and each map committed exactly once
    # (a second copy of a map already shuffled is aborted by Hadoop's scheduler, and says so).
    started = {f["attemptId"]: f["containerId"] for kind, f in events if kind == "REDUCE_ATTEMPT_STARTED"}
    log = container_log(run_dir, reducer["host"], started[reducer["attempt"]])
    for attempt in first.values():
        assert re.search(rf"Ignoring obsolete output of (KILLED|OBSOLETE) map-task: '{attempt}'", log), attempt
    reads = DIRECT_READ.findall(log) + [(a, "http") for a in re.findall(r"about to shuffle output of map (\S+)", log)]
    aborted = re.findall(r"Aborting already-finished MapOutput for (\S+)", log)
    per_task = {}
    for attempt, _ in reads:
        task = attempt.rsplit("_", 1)[0]
        per_task[task] = per_task.get(task, 0) + 1
    for attempt in aborted:
        per_task[attempt.rsplit("_", 1)[0]] -= 1
    assert len(per_task) == maps and set(per_task.values()) == {1}, (reads, aborted)
    read = {attempt for attempt, _ in reads}
    assert all(first[t] in read for t in first if ("MAP_ATTEMPT_FINISHED", rerun[t]["attemptId"]) not in order)
    assert processes_of(run_dir) == []


@pytest.mark.slurm
def test_nodemanager_of_the_application_master_lost_mid_job_the_job_completes(slurm_run: SlurmRun) -> None:
    """Issue 13 item 2, the last step of :func:`slurm_run` (test_slurm.py's cluster of its own until issue 38): SIGKILL
    to the NodeManager of the node that runs the SleepJob's ApplicationMaster, once a map runs. Its agent ends the
    node's containers, as a lost node would; the launcher sees the loss within a second and decommissions the node
    (conf/nodes.exclude, yarn rmadmin -refreshNodes) instead of waiting for yarn.nm.liveness-monitor.expiry-interval-ms;
    then a second ApplicationMaster attempt starts, on the one node left, and recovers the finished tasks from the
    first one's history on the shared filesystem. The step succeeds, run.json names the lost node, nothing is left,
    and the allocation is released. Submitted by ``hhdave``, not root. The ApplicationMaster's node is the master
    (``nodemanager_on_master``) as often as not: its agent then ends the NodeManager's containers and runs on with the
    ResourceManager (stop 51's CI failed the run there; tests/unit/node/test_agent.py holds that case alone)."""
    from tests.integration.test_slurm import queued_jobs

    assert slurm_run.returncode == 0, slurm_run.output
    run_dir, victim = slurm_run.run_dir, slurm_run.am_victim
    report = run_report(run_dir)
    step = report["steps"][-1]
    # the recovery figure for docs/reliability.md
    master = ", the master" if victim == "n1" else ""
    print(f"NodeManager on {victim} (the ApplicationMaster's{master}) killed; the step took {step['wall_s']:.1f} s, "
          f"the run ended {report['ended'] - slurm_run.am_killed:.1f} s after the kill "
          f"(run total {report['total_s']:.1f} s)")
    assert report["state"] == "succeeded" and step["name"] == "am-lost" and step["state"] == "succeeded", report
    lost = report["lost_nodes"][-1]
    assert lost["node"] == victim != slurm_run.victim and lost["daemon"] == "nodemanager" and lost["exit"] == -9
    assert any(f"nodemanager on {victim} lost during step {len(SLURM_SORTS) + 2}" in note for note in report["notes"])
    jhist = find_jhist(run_dir / "history", step["job_id"])
    assert jhist is not None
    assert re.search(r"appattempt_\d+_\d+_000002", jhist.read_text(errors="replace")), \
        "no second ApplicationMaster attempt"
    assert processes_of(run_dir) == [] and queued_jobs() == []
