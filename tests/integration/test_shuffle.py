"""The shared-filesystem shuffle (issue 15, ``hadoop.shuffle``) with real daemons: TeraSort + TeraValidate whose
reducers read every map output straight from the NodeManager local dirs on the shared filesystem, an ``http``
step in the same cluster (Hadoop's shuffle through the ShuffleHandler, still running), and the per-map fallback
to HTTP when a map output cannot be found; the run report's counters say which bytes went which way."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import psutil
import pytest
import yaml

from launcher.jobhistory import find_jhist, job_events
from tests.conftest import REPO, fresh_pfs_dir, hpc_hadoop, only_run_dir, processes_of, run_report
from tests.users import TestUser, make_user, user_dir

pytestmark = pytest.mark.hadoop

SMALL = {"daemon_heap": "512m", "map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m"}
PLUGIN = "org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle"
#: TeraGen rows (100 bytes each) and maps of the tests: 10 MB in 4 map outputs per sort.
ROWS, MAPS = 100_000, 4


def records(directory: Path, pattern: str) -> list[bytes]:
    """TeraSort's 100-byte records of the files matching ``pattern`` in ``directory``, file by file."""
    data = b"".join(p.read_bytes() for p in sorted(directory.glob(pattern)))
    assert len(data) % 100 == 0
    return [data[i:i + 100] for i in range(0, len(data), 100)]


def check_sorted(out: Path, name: str) -> None:
    generated, ordered = records(out / "gen", "part-m-*"), records(out / name, "part-r-*")
    assert len(ordered) == ROWS
    assert [r[:10] for r in ordered] == sorted(r[:10] for r in generated)
    assert sorted(ordered) == sorted(generated)


def sort_steps(fs_root_dir: str, wrong_dirs: str) -> list[dict]:
    """TeraGen, TeraSort and TeraValidate with the cluster's shuffle, then TeraSort with Hadoop's own shuffle
    (``http``) and TeraSort with the plugin told ``wrong_dirs`` as the NodeManagers' local dirs (every map output
    over HTTP)."""
    out = f"{fs_root_dir}/output"
    return [
        {"example": "teragen", "args": [f"-Dmapreduce.job.maps={MAPS}", str(ROWS), f"{out}/gen"]},
        {"example": "terasort", "args": [f"{out}/gen", f"{out}/sorted"]},
        {"example": "teravalidate", "args": [f"{out}/sorted", f"{out}/validate"]},
        {"example": "terasort", "name": "terasort-http",
         "args": ["-Dmapreduce.job.reduce.shuffle.consumer.plugin.class=org.apache.hadoop.mapreduce.task.reduce"
                  ".Shuffle", f"{out}/gen", f"{out}/sorted-http"]},
        {"example": "terasort", "name": "terasort-fallback",
         "args": [f"-Dhpchadoop.shuffle.shared.local-dirs={wrong_dirs}", f"{out}/gen", f"{out}/sorted-fallback"]},
    ]


def check_report(run_dir: Path, reducers: int) -> None:
    """The sorts' outputs and each step's ``shuffle`` in run.json."""
    report = run_report(run_dir)
    steps = report["steps"]
    assert [s["state"] for s in steps] == ["succeeded"] * 5, steps
    out = run_dir / "output"
    for name in ("sorted", "sorted-http", "sorted-fallback"):
        check_sorted(out, name)
    validate = "".join(p.read_text() for p in (out / "validate").glob("part-r-*"))
    assert "checksum" in validate and "error" not in validate.lower(), validate
    assert steps[0]["shuffle"] is None  # TeraGen has no reducers

    direct = steps[1]["shuffle"]
    print("shared-fs:", {k: v for k, v in direct.items() if k != "reducers"})
    assert direct["used"] == "shared-fs" and direct["shuffle_bytes"] > ROWS * 100
    assert direct["direct_bytes"] == direct["shuffle_bytes"] and direct["http_bytes"] == 0
    assert direct["direct_maps"] == MAPS * reducers and direct["http_maps"] == 0
    assert len(direct["reducers"]) == reducers
    for reducer in direct["reducers"]:
        assert reducer["direct_bytes"] == reducer["shuffle_bytes"] > 0 and reducer["http_bytes"] == 0, reducer
        assert reducer["shuffle_s"] is not None and reducer["shuffle_s"] > 0
    assert steps[2]["shuffle"]["used"] == "shared-fs" and steps[2]["shuffle"]["http_bytes"] == 0

    http = steps[3]["shuffle"]
    assert http["used"] == "http" and http["http_bytes"] == http["shuffle_bytes"] == direct["shuffle_bytes"]
    assert http["direct_bytes"] == 0 and http["http_maps"] == MAPS * reducers

    fallback = steps[4]["shuffle"]
    assert fallback["used"] == "shared-fs" and fallback["direct_bytes"] == 0 and fallback["direct_maps"] == 0
    assert fallback["http_bytes"] == fallback["shuffle_bytes"] == direct["shuffle_bytes"]
    assert fallback["http_maps"] == MAPS * reducers
    # The reducers' logs say which map outputs went over HTTP, and why.
    logs = "".join(p.read_text(errors="replace") for d in ("logs", "app-logs") for p in (run_dir / d).rglob("*")
                   if p.is_file())
    assert "shared-fs shuffle: fetching attempt_" in logs and "/nonexistent" in logs


def test_terasort_shared_fs_shuffle_on_the_local_backend(hadoop_runtime: Path, pfs_root: Path,
                                                        tmp_path: Path) -> None:
    """``filesystem.local_dirs: shared`` (``hadoop.shuffle: auto`` = ``shared-fs``), two reducers."""
    job = {"scheduler": "local", "name": "shuffle-local",
           "filesystem": {"root": str(pfs_root), "local_dirs": "shared"},
           "hadoop": {**SMALL, "properties": {"mapred-site": {"mapreduce.job.reduces": 2}}},
           "steps": sort_steps("${run_dir}", "127.0.0.1=/nonexistent,localhost=/nonexistent")}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    result = hpc_hadoop("submit", str(path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run_dir = only_run_dir(pfs_root)
    assert PLUGIN in (run_dir / "conf" / "mapred-site.xml").read_text()
    check_report(run_dir, reducers=2)
    assert "shuffle of terasort: shared-fs, 10400048 bytes read directly, 0 over HTTP" in result.stdout + result.stderr
    assert processes_of(run_dir) == []
    logs = "".join(p.read_text(errors="replace") for p in (run_dir / "app-logs").rglob("*") if p.is_file())
    assert "/nonexistent/usercache/" in logs and "cannot be read" in logs  # the node known, its files not there


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


def test_reducer_rerun_shuffles_every_map_output_again(hadoop_runtime: Path, pfs_root: Path, tmp_path: Path) -> None:
    """A streaming job whose reducer fails its first attempt on purpose, after its shuffle: the second attempt
    shuffles every map output again through the plugin, straight from the shared filesystem, and the sums are
    right."""
    maps, per_map = 4, 3000
    data = pfs_root / "input"
    data.mkdir()
    expected: dict[str, int] = {}
    for m in range(maps):  # one small file, one map
        lines = []
        for i in range(per_map):
            key, value = f"k{(i * 7 + m) % 997:04d}", i % 13 + m
            expected[key] = expected.get(key, 0) + value
            lines.append(f"{key}\t{value}\n")
        (data / f"part-{m}.txt").write_text("".join(lines))
    (tmp_path / "sum_reducer.py").write_text(FAILING_REDUCER)
    job = {"scheduler": "local", "name": "shuffle-rerun",
           "filesystem": {"root": str(pfs_root), "local_dirs": "shared"},
           "hadoop": SMALL,
           "steps": [{"name": "rerun", "streaming": {
               "mapper": "cat", "reducer": "python3 sum_reducer.py", "files": ["sum_reducer.py"],
               "input": [str(data)], "output": "${run_dir}/output/sums", "reducers": 1},
               "properties": {"mapreduce.job.ubertask.enable": False}}]}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    result = hpc_hadoop("submit", str(path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run_dir = only_run_dir(pfs_root)
    (step,) = run_report(run_dir)["steps"]
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
    assert len([kind for kind, _ in events if kind == "MAP_ATTEMPT_FINISHED"]) == maps
    # The successful attempt read every map output again, all of them straight from the filesystem.
    shuffle = step["shuffle"]
    print("re-run reducer:", {k: v for k, v in shuffle.items() if k != "reducers"})
    (reducer,) = shuffle["reducers"]
    assert reducer["attempt"] == reduce_attempts[1][1]
    assert shuffle["used"] == "shared-fs" and shuffle["direct_maps"] == maps and shuffle["http_maps"] == 0
    assert reducer["shuffled_maps"] == maps
    assert shuffle["direct_bytes"] == shuffle["shuffle_bytes"] > maps * per_map and shuffle["http_bytes"] == 0
    # The failed attempt had shuffled them too, before its reducer script failed (its own container's log).
    logs = "".join(p.read_text(errors="replace") for d in ("logs", "app-logs") for p in (run_dir / d).rglob("*")
                   if p.is_file())
    assert "the first attempt of this reducer fails on purpose, after 12000 records" in logs
    sums = {}
    for part in (run_dir / "output" / "sums").glob("part-*"):
        for line in part.read_text().splitlines():
            key, _, value = line.partition("\t")
            assert key not in sums, key
            sums[key] = int(value)
    assert sums == expected
    assert processes_of(run_dir) == []


@pytest.fixture(scope="module")
def dave() -> TestUser:
    """The ordinary user who submits the Slurm tests' jobs."""
    return make_user("hhdave")


@pytest.fixture
def dave_root(slurm_cluster: list[str], dave: TestUser, request: pytest.FixtureRequest) -> Path:
    """A fresh scratch root on the GlusterFS mount (0755) with ``hhdave``'s own directory in it."""
    root = fresh_pfs_dir(request.node.name)
    root.chmod(0o755)
    user_dir(root, dave)
    return root


def slurm_job(dave: TestUser, root: Path, job: dict) -> Path:
    """A Slurm job file of 3 nodes whose NodeManager local dirs are on GlusterFS, owned by ``hhdave``."""
    job = {"scheduler": "slurm", "nodes": 3, "walltime": "00:20:00",
           "filesystem": {"root": str(root), "local_dirs": "shared"}, **job}
    path = root / dave.name / f"{job['name']}.yaml"
    path.write_text(yaml.safe_dump(job))
    return dave.own(path, 0o600)


@pytest.mark.slurm
def test_terasort_shared_fs_shuffle_on_three_slurm_nodes(dave_root: Path, dave: TestUser) -> None:
    """The same steps on the 3-node Slurm test cluster over GlusterFS, submitted by ``hhdave``: reducers on one
    node read the outputs of maps that ran on the others straight from their ``nm-local/<host>``."""
    job = slurm_job(dave, dave_root, {
        "name": "shuffle-slurm",
        "hadoop": {**SMALL, "properties": {"mapred-site": {"mapreduce.job.reduces": 2,
                                                           "mapreduce.job.ubertask.enable": False}}},
        "steps": sort_steps("${run_dir}", "nohost=/nonexistent")})
    result = dave.hpc_hadoop("submit", str(job), "--wait", timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    (run_dir,) = [p for p in dave_root.glob("*/hpc-hadoop/*") if p.is_dir()]
    check_report(run_dir, reducers=2)
    sort = run_report(run_dir)["steps"][1]
    reducer_hosts = {r["host"] for r in sort["shuffle"]["reducers"]}
    mapped_on = attempt_hosts(run_dir, sort["job_id"], "MAP_ATTEMPT_FINISHED")
    print("TeraSort maps on", sorted(mapped_on), "reducers on", sorted(reducer_hosts))
    # Every reducer read, straight from the filesystem, outputs of maps that ran on another node.
    assert all(mapped_on - {host} for host in reducer_hosts), (mapped_on, reducer_hosts)
    assert processes_of(run_dir) == []


def attempt_hosts(run_dir: Path, job_id: str, event: str) -> set[str]:
    """The hosts of a job's ``event`` (``MAP_ATTEMPT_FINISHED``...) in its .jhist."""
    (jhist,) = run_dir.glob(f"history/**/{job_id}*.jhist")
    hosts = set()
    for line in jhist.read_text(errors="replace").splitlines():
        if f'"type":"{event}"' in line:
            hosts.update(re.findall(r'"hostname":"([^"]+)"', line))
    return hosts


def container_hosts(run_dir: Path, *words: str) -> set[str]:
    """The nodes where a container whose command line has all of ``words`` runs now (its log directory is
    ``logs/<node>/userlogs/``; the node namespaces share this PID namespace)."""
    hosts = set()
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmdline = " ".join(proc.info["cmdline"] or [])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        found = re.search(re.escape(str(run_dir)) + r"/logs/([^/]+)/userlogs/", cmdline)
        if found and all(word in cmdline for word in words):
            hosts.add(found.group(1))
    return hosts


@pytest.mark.slurm
def test_nodemanager_killed_mid_shuffle_the_job_completes(dave_root: Path, dave: TestUser) -> None:
    """SIGKILL to the NodeManager of a node (not the master, not the ApplicationMaster's) that runs maps while
    the reducer is shuffling with ``shared-fs`` (it starts after the first map: slowstart 0.05; 12 maps of 6 s in
    waves over 2 containers a node keep maps running during the shuffle). YARN loses the
    node; the ApplicationMaster re-runs its maps, finished ones included, on the other nodes and tells the reducer
    their first outputs are obsolete (or re-runs the reducer, when it ran there); the step succeeds, every map's
    output shuffled once."""
    maps = 12
    job = slurm_job(dave, dave_root, {
        "name": "shuffle-lost", "nodemanager_on_master": True,
        "hadoop": {**SMALL, "containers_per_node": 2,
                   "properties": {"mapred-site": {"mapreduce.job.ubertask.enable": False}}},
        "steps": [{"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                   "args": ["-m", str(maps), "-r", "1", "-mt", "6000", "-rt", "1000"]}]})
    launcher = dave.popen([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "submit", str(job),
                           "--wait"])
    try:
        victim, run_dir = None, None
        deadline = time.monotonic() + 300
        while victim is None and time.monotonic() < deadline and launcher.poll() is None:
            time.sleep(0.5)
            dirs = [p for p in dave_root.glob("*/hpc-hadoop/*") if p.is_dir()]
            if not dirs:
                continue
            run_dir = dirs[0]
            if not container_hosts(run_dir, "org.apache.hadoop.mapred.YarnChild", "_r_000000_"):
                continue  # the reducer is not shuffling yet
            am = container_hosts(run_dir, "org.apache.hadoop.mapreduce.v2.app.MRAppMaster")
            mapping = container_hosts(run_dir, "org.apache.hadoop.mapred.YarnChild", "_m_0")
            candidates = sorted(mapping - am - {"n1"})
            victim = candidates[0] if candidates else None
        assert victim is not None and run_dir is not None, "no node runs maps during the shuffle"
        agent = json.loads((run_dir / "agents" / f"{victim}.json").read_text())
        os.kill(agent["daemons"]["nodemanager"]["pid"], signal.SIGKILL)
        output, errors = launcher.communicate(timeout=600)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 0, output[-4000:] + errors[-2000:]
    report = run_report(run_dir)
    step = report["steps"][0]
    assert report["state"] == "succeeded" and step["state"] == "succeeded", report
    assert [lost["node"] for lost in report["lost_nodes"]] == [victim]
    shuffle = step["shuffle"]
    print(f"NodeManager on {victim} killed mid-shuffle:", {k: v for k, v in shuffle.items() if k != "reducers"})
    assert shuffle["used"] == "shared-fs" and shuffle["direct_maps"] + shuffle["http_maps"] == maps
    assert processes_of(run_dir) == []
