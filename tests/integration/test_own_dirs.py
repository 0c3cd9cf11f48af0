"""Directories another user made for the owner, on the owner's node (issue 36 items 2 and 3, and "Smaller"): two
ordinary users on the local backend, ``hhalice`` the owner and ``hhmallory`` the attacker, real directories, the real
``hpc-hadoop`` command as alice.

- mallory makes ``<root>/hhalice/hpc-hadoop`` (mode 0777) in a 1777 ``filesystem.root`` before alice's first run, or
  ``<local_dirs>/hpc-hadoop-hhalice`` in a 1777 ``filesystem.local_dirs``: ``submit``, ``start`` and ``run`` exit 2
  with the one line that names the directory, its owner and mode, and the fix; nothing is made, nothing started.
- alice's cluster directory sits in an ``hpc-hadoop`` of mallory's (as every release before issue 36 accepted it):
  mallory swaps it for a link farm whose ``bin/`` is hers; ``env``, ``exec`` and the held run (``run --run-dir ...
  --hold``, what ``start`` and the batch script run) refuse it in one line and run nothing of hers.
- a state directory alice cannot write: ``start`` and ``run --hold`` exit 2 in one line before anything starts.

None of these starts a Hadoop daemon, with or without the fixes: every job file here has a ``setup:`` line that fails
(``exit 3``), which a run reaches before its bring-up, should a refusal not come. The other attacks of
``tests/integration/attacks.py`` need a running cluster (``test_security.py``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, processes_of
from tests.integration.attacks import Mallory, link_farm, mallory_here, mallory_makes
from tests.users import make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop

#: The commands that make a cluster directory and start a cluster, as alice runs them on the local backend.
STARTING = ("submit", "start", "run")
#: A setup line that fails: a run that got past every refusal stops here, before any daemon (``ClusterRun``).
SAFETY_NET = ["exit 3"]


class Scene:
    """alice, mallory and their directories in one fresh base under ``/tmp``: ``root`` (mode 1777, the scratch
    filesystem's root, ``filesystem.root``), ``local`` (mode 1777, a node-local disk), alice's own ``home`` (job
    files, her state directory ``home/state``) and mallory's."""

    def __init__(self) -> None:
        self.alice, user = make_user("hhalice"), make_user("hhmallory")
        self.base = shared_base("hh-owndirs")
        self.root, self.local = self.base / "scratch", self.base / "local"
        for shared in (self.root, self.local):
            shared.mkdir()
            shared.chmod(0o1777)
        self.home = user_dir(self.base, self.alice)
        self.mallory: Mallory = mallory_here(user, user_dir(self.base, user))
        self.env = {"XDG_STATE_HOME": str(self.home / "state")}

    def job(self, name: str, **filesystem: str) -> Path:
        """A job file of alice's (mode 0600): the local backend, ``filesystem.root`` = :attr:`root` plus
        ``filesystem``, the failing setup line, one step."""
        path = self.home / f"{name}.yaml"
        path.write_text(yaml.safe_dump({
            "name": name, "scheduler": "local", "walltime": "00:10:00", "security": "simple",
            "filesystem": {"root": str(self.root), **filesystem}, "setup": SAFETY_NET,
            "steps": [{"example": "pi", "args": [1, 10]}]}))
        self.alice.own(path, 0o600)
        return path

    def index(self) -> list[str]:
        """The entries of alice's index of clusters."""
        clusters = self.home / "state" / "hpc-hadoop" / "clusters"
        return sorted(p.name for p in clusters.glob("*.json")) if clusters.is_dir() else []


@pytest.fixture
def scene() -> Iterator[Scene]:
    made = Scene()
    try:
        yield made
    finally:
        shutil.rmtree(made.base, ignore_errors=True)


def refused_by_every_starting_command(scene: Scene, job: Path, line: str, untouched: Path) -> None:
    """``submit``, ``start`` and ``run`` of ``job`` as alice: each exits 2 printing exactly ``line`` (``error: ...``),
    leaves ``untouched`` empty and alice's index without an entry, and no process of the scene runs."""
    for command in STARTING:
        done = scene.alice.hpc_hadoop(command, str(job), env=scene.env, timeout=300)
        print(f"alice: hpc-hadoop {command} {job.name}: exit {done.returncode}: {done.stderr.strip()}")
        assert (done.returncode, done.stderr, done.stdout) == (2, line + "\n", ""), (command, done.stdout[-2000:],
                                                                                   done.stderr[-3000:])
        assert list(untouched.iterdir()) == [], (command, list(untouched.iterdir()))
        assert scene.index() == [] and processes_of(scene.base) == []


def test_a_clusters_directory_mallory_made_first_is_refused_by_submit_start_and_run(scene: Scene) -> None:
    """mallory makes ``<root>/hhalice/hpc-hadoop`` 0777 (both levels hers) in the 1777 root before alice's first run:
    every command that would make alice's cluster directory in it refuses ``<root>/hhalice``."""
    made = mallory_makes(scene.mallory, scene.root, scene.root / scene.alice.name / "hpc-hadoop")
    job = scene.job("owndirs")
    line = (f"error: {job}: filesystem.root: {made[0]} is not yours (owner hhmallory, mode 0777): hpc-hadoop uses no "
            "directory another user made (fix: remove it or ask hhmallory to (it is not yours), then run again)")
    refused_by_every_starting_command(scene, job, line, made[-1])


def test_a_writable_clusters_directory_of_the_owners_is_refused_too(scene: Scene) -> None:
    """alice's own ``<root>/hhalice`` (made by the site for her, 0755) holding an ``hpc-hadoop`` she once made with
    umask 000 (0777, hers): anyone could swap her cluster directories there, so it is refused, with ``chmod go-w``."""
    home = scene.root / scene.alice.name
    home.mkdir()
    scene.alice.own(home, 0o755)
    clusters = home / "hpc-hadoop"
    clusters.mkdir()
    scene.alice.own(clusters, 0o777)
    job = scene.job("writable")
    line = (f"error: {job}: filesystem.root: {clusters} is writable by its group and others (owner hhalice, mode "
            f"0777): they could swap what is in it (fix: chmod go-w {clusters})")
    refused_by_every_starting_command(scene, job, line, clusters)


def test_a_local_dir_mallory_made_first_is_refused_by_submit_start_and_run(scene: Scene) -> None:
    """mallory makes ``<local_dirs>/hpc-hadoop-hhalice`` 0777 in the 1777 node-local root: the NodeManager's local dir
    (``usercache/``, ``nmPrivate/``: localized jars, ``launch_container.sh``) would be in her directory. On the local
    backend the node is this host, so the launcher refuses it before anything starts (another node's agent refuses
    its own: ``tests/unit/node/test_agent.py``)."""
    (made,) = mallory_makes(scene.mallory, scene.local, scene.local / f"hpc-hadoop-{scene.alice.name}")
    job = scene.job("localdirs", local_dirs=str(scene.local))
    line = (f"error: {job}: filesystem.local_dirs: {made} is not yours (owner hhmallory, mode 0777): hpc-hadoop uses "
            "no directory another user made (fix: remove it or ask hhmallory to (it is not yours), then run again)")
    refused_by_every_starting_command(scene, job, line, made)
    assert not (scene.root / scene.alice.name).exists()  # no cluster directory was made for alice either


#: As alice, with this checkout's code: a held cluster's directory made by the real code (``prepare_run``: plan,
#: ``conf/``, ``bin/``, the index entry), no daemon started, and its report as a held run's once it is up, held by the
#: process ``argv[2]``; or (``argv[3] == "submitted"``) a directory as ``start`` makes it for its held run
#: (``make_cluster_dir``: ``job.yaml`` only). Prints the cluster directory.
OWNERS_CLUSTER = r"""
import sys
from pathlib import Path
from launcher.config.load import load_spec
from launcher.lifecycle.compose import prepare_run
from launcher.lifecycle.front import front_door
from launcher.lifecycle.clusters.index import register
from launcher.lifecycle.runner import new_report
from launcher.lifecycle.submit import make_cluster_dir

job, holder, kind = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
spec, _ = load_spec(job, require_steps=False)
if kind == "submitted":
    print(make_cluster_dir(front_door("start-here", spec, job), job, command="start"))
    sys.exit(0)
ready = front_door("run", spec, job)
prepare_run(ready)
report = new_report(ready.plan, hold=True)
report.bringup_s = 1.0
report.write()
register(ready.plan.cluster_id, ready.plan.run_dir, "local", holder_pid=holder, interactive=True)
print(ready.plan.run_dir)
"""


def owners_cluster(scene: Scene, job: Path, holder: subprocess.Popen[str], kind: str = "held") -> Path:
    """:data:`OWNERS_CLUSTER` as alice: the cluster directory it made."""
    done = scene.alice.run([str(REPO / ".venv" / "bin" / "python"), "-c", OWNERS_CLUSTER, str(job), str(holder.pid),
                            kind], env=scene.env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.strip().splitlines()[-1])


def test_a_cluster_directory_swapped_for_a_link_farm_is_refused_by_env_exec_and_the_holder(scene: Scene) -> None:
    """alice's cluster directories in a ``<root>/hhalice/hpc-hadoop`` of mallory's: a held one (ready, its holder alive)
    and one ``start`` made for its held run. mallory renames each and leaves a farm of links back in its place, with a
    ``bin/`` of hers and, for the held run, a ``job.yaml`` of hers whose ``setup:`` line would run as alice. Before
    issue 36 ``exec ID -- yarn node -list`` printed her ``Total Nodes:1`` and ran her ``bin/yarn`` as alice, and the
    held run ran her setup line; now ``env``, ``exec`` and ``run --run-dir`` refuse in one line, exit 2, and nothing of
    hers runs."""
    alice = scene.alice
    job = scene.job("swap")
    holder = alice.popen(["sleep", "600"])
    try:
        held = owners_cluster(scene, job, holder)
        submitted = owners_cluster(scene, job, holder, "submitted")
        clusters = held.parent
        assert submitted.parent == clusters == scene.root / alice.name / "hpc-hadoop"
        # <root>/hhalice/hpc-hadoop as every release before issue 36 left it when mallory had made both levels
        # before alice's first run (test_a_clusters_directory_mallory_made_first_...): hers, 0777
        for level in (clusters.parent, clusters):
            subprocess.run(["chown", f"{scene.mallory.user.uid}:{scene.mallory.user.gid}", str(level)], check=True)
            level.chmod(0o777)
        mark = link_farm(scene.mallory, held)
        link_farm(scene.mallory, submitted, links=(), clients=False, job_yaml=yaml.safe_dump({
            "name": "swap", "scheduler": "local", "walltime": "00:10:00", "security": "simple",
            "filesystem": {"root": str(scene.root)}, "setup": [f"id -un >> {clusters}/ran-her-setup; exit 3"]}))
        refusal = (f"{clusters.parent} is not yours (owner hhmallory, mode 0777): hpc-hadoop uses no directory "
                   "another user made (fix: remove it or ask hhmallory to (it is not yours), then run again)")
        for args, field in ((["env", held.name], "ID"), (["exec", held.name, "--", "yarn", "node", "-list"], "ID"),
                            (["run", "--run-dir", str(submitted), "--hold", str(submitted / "job.yaml")], "--run-dir")):
            done = alice.hpc_hadoop(*args, env=scene.env, timeout=300)
            print(f"alice: hpc-hadoop {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
            assert (done.returncode, done.stderr, done.stdout) == (2, f"error: {field}: {refusal}\n", ""), (
                args, done.stdout[-2000:], done.stderr[-3000:])
        assert not mark.exists() and not (clusters / "ran-her-setup").exists()
        listed = alice.hpc_hadoop("list", "--json", env=scene.env)
        rows = [json.loads(text) for text in listed.stdout.splitlines()]
        states = {row["cluster_id"]: (row["state"], row["detail"]) for row in rows}
        assert states[held.name] == ("unreachable", f"ID: {refusal}"), states
    finally:
        holder.kill()
        holder.wait()
    assert processes_of(scene.base) == []


def test_a_state_directory_the_owner_cannot_write_is_one_line_before_anything_starts(scene: Scene) -> None:
    """``XDG_STATE_HOME`` alice cannot write (root's, 0755): ``start`` made the cluster directory, started the held
    run and ended in a ``StopIteration`` traceback while the cluster ran on, unknown to ``list`` and ``stop``; now
    ``start`` and ``run --hold`` exit 2 in one line, nothing made, nothing started."""
    state = scene.base / "roots-state"
    state.mkdir(mode=0o755)
    job = scene.job("nostate")
    clusters = state / "hpc-hadoop" / "clusters"
    line = (f"error: XDG_STATE_HOME: cannot write the index of your clusters in {clusters}: Permission denied "
            "(fix: make it writable, or set XDG_STATE_HOME to a directory of yours that you can write)\n")
    for args in (["start", str(job)], ["run", "--hold", str(job)]):
        done = scene.alice.hpc_hadoop(*args, env={"XDG_STATE_HOME": str(state)}, timeout=300)
        print(f"alice: hpc-hadoop {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
        assert (done.returncode, done.stderr, done.stdout) == (2, line, ""), (args, done.stdout[-2000:],
                                                                           done.stderr[-3000:])
        assert not (scene.root / scene.alice.name).exists() and processes_of(scene.base) == []
