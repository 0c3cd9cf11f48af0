"""``hpc-hadoop examples [copy DIR]`` (launcher/cli/examples.py) and the examples as package data
(:func:`launcher.util.resources.examples_dir`), issue 39: an install from a wheel had no ``examples/``; the examples
leave ``scheduler`` and ``filesystem.root`` to the site's layers."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from launcher.cli.examples import describe, shipped_examples
from launcher.cli.main import main
from launcher.config.load import load_spec
from launcher.config.spec import DEFAULT_ROOT
from launcher.util import resources
from launcher.util.errors import UserError
from tests.conftest import REPO

JOB_FILES = sorted(p.name for p in (REPO / "examples").glob("*.yaml"))


@pytest.fixture(autouse=True)
def this_checkouts_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples of the checkout under test (a worktree's editable install would read its main checkout's)."""
    monkeypatch.setenv("HPC_HADOOP_SHARE", str(REPO))


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(main, args, catch_exceptions=False)


@pytest.fixture
def site_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_yaml: Callable[..., Path]) -> Path:
    """A site layer (``$HPC_HADOOP_SITE_DIR``) whose config sets ``filesystem.root`` (the site's "Lustre")."""
    site_dir = tmp_path / "etc-hpc-hadoop"
    root = tmp_path / "lustre"
    root.mkdir()
    write_yaml(site_dir / "config.yaml", {"filesystem": {"root": str(root)}})
    for path in (site_dir, site_dir / "config.yaml"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("HPC_HADOOP_SITE_DIR", str(site_dir))
    return root


# -- the examples leave scheduler and root to the site ------------------------------------------------------------

@pytest.mark.parametrize("example", JOB_FILES)
def test_no_example_sets_the_scheduler_or_the_root(example: str) -> None:
    data: dict[str, Any] = yaml.safe_load((REPO / "examples" / example).read_text())
    assert "scheduler" not in data and "root" not in data.get("filesystem", {}), example


@pytest.mark.parametrize("example", JOB_FILES)
def test_without_a_site_layer_an_example_runs_here_in_the_default_root(example: str, spark_home: Path) -> None:
    """A laptop without a site layer keeps what the examples used to say: this machine, ``/tmp/hpc-hadoop-pfs``."""
    spec, _ = load_spec(REPO / "examples" / example, sets=[f"spark.home={spark_home}"])
    assert (spec.scheduler, spec.filesystem.root) == ("local", "/tmp/hpc-hadoop-pfs") == ("local", DEFAULT_ROOT)


@pytest.mark.parametrize("example", JOB_FILES)
def test_the_site_configs_root_wins_for_every_example(example: str, site_root: Path, spark_home: Path) -> None:
    spec, sources = load_spec(REPO / "examples" / example, sets=[f"spark.home={spark_home}"])
    assert spec.filesystem.root == str(site_root)
    assert sources[0].endswith("config.yaml")


def test_a_site_presets_scheduler_and_root_win_for_the_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                write_yaml: Callable[..., Path]) -> None:
    site_dir = tmp_path / "site"
    write_yaml(site_dir / "config.yaml", {"site": "ours"})
    write_yaml(site_dir / "site-configs" / "ours.yaml", {"scheduler": "slurm", "filesystem": {"root": "/lustre/x"}})
    for path in (site_dir, *site_dir.rglob("*")):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("HPC_HADOOP_SITE_DIR", str(site_dir))
    spec, _ = load_spec(REPO / "examples" / "wordcount.yaml")
    assert (spec.scheduler, spec.filesystem.root) == ("slurm", "/lustre/x")


# -- where the examples are ----------------------------------------------------------------------------------------

def test_the_examples_are_found_without_a_share_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``$HPC_HADOOP_SHARE``: the package's examples (a checkout's ``examples/`` in an editable install)."""
    monkeypatch.delenv("HPC_HADOOP_SHARE")
    found = resources.examples_dir()
    assert (found / "wordcount.yaml").is_file() and (found / "python" / "wordcount.py").is_file()


def test_a_share_directory_without_examples_falls_back_to_the_packages(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HPC_HADOOP_SHARE", str(tmp_path))  # a site's templates only
    assert (resources.examples_dir() / "wordcount.yaml").is_file()
    (tmp_path / "examples").mkdir()
    assert resources.examples_dir() == tmp_path / "examples"


def test_a_package_without_examples_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HPC_HADOOP_SHARE", str(tmp_path))
    monkeypatch.setattr(resources.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(resources, "checkout", lambda: None)
    monkeypatch.setattr(resources, "__file__", str(tmp_path / "a" / "b" / "resources.py"))
    with pytest.raises(UserError, match="has no examples"):
        resources.examples_dir()
    result = CliRunner().invoke(main, ["examples"])
    assert result.exit_code == 2 and "has no examples" in result.output and len(result.output.splitlines()) == 1


# -- listing -------------------------------------------------------------------------------------------------------

def test_the_listing_names_every_example_with_its_first_sentence() -> None:
    result = invoke(["examples"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    names = [line.split()[0] for line in lines[:-1]]
    assert names == [e.name for e in shipped_examples()]
    assert {"wordcount.yaml", "spark.yaml", "python/wordcount.py", "python/mapper.py", "batch/slurm.sbatch"} <= {
        *names}
    wordcount = next(line for line in lines if line.startswith("wordcount.yaml "))
    assert wordcount.endswith("(Debian package dict-gcide, 40 MB of text once unpacked).")
    assert all(line.split(None, 1)[1:] for line in lines[:-1])  # every one has a description
    assert "hpc-hadoop examples copy DIR" in lines[-1]


def test_describe_takes_the_leading_comment_or_the_docstring() -> None:
    assert describe("#!/bin/bash\n# One line. Two.\n#SBATCH -N 3\n") == "One line."
    assert describe("# Spread over\n# two lines: here. Then\nname: x\n") == "Spread over two lines: here."
    assert describe('"""A docstring, e.g. this\none."""\nimport sys\n') == "A docstring, e.g."
    assert describe("name: x\n") == ""


# -- copy ----------------------------------------------------------------------------------------------------------

def test_copy_makes_the_directory_one_line_per_file_with_modes(tmp_path: Path) -> None:
    target = tmp_path / "new" / "hh-examples"
    result = invoke(["examples", "copy", str(target)])
    assert result.exit_code == 0, result.output
    examples = shipped_examples()
    lines = result.output.splitlines()
    assert lines[:-1] == [f"copied  {target / e.name}" for e in examples]
    for example in examples:
        copy = target / example.name
        assert copy.read_bytes() == example.path.read_bytes()
        assert copy.stat().st_uid == os.getuid()
        want = 0o755 if example.name.startswith("batch/") else 0o644
        assert stat.S_IMODE(copy.stat().st_mode) == want, example.name


def test_copy_never_overwrites_without_force(tmp_path: Path) -> None:
    target = tmp_path / "hh"
    (target / "python").mkdir(parents=True)
    (target / "wordcount.yaml").write_text("mine\n")
    (target / "python" / "mapper.py").write_text("my mapper\n")
    result = invoke(["examples", "copy", str(target)])
    assert result.exit_code == 0, result.output
    assert (target / "wordcount.yaml").read_text() == "mine\n"
    assert (target / "python" / "mapper.py").read_text() == "my mapper\n"
    lines = [" ".join(line.split()) for line in result.output.splitlines()]
    assert f"kept {target / 'wordcount.yaml'} (already there: --force replaces it)" in lines
    assert (target / "spark.yaml").is_file()  # the others are copied
    again = invoke(["examples", "copy", str(target)])
    assert all(line.startswith("kept ") for line in again.output.splitlines()[:-1])
    forced = invoke(["examples", "copy", "--force", str(target)])
    assert f"replaced  {target / 'wordcount.yaml'}" in forced.output.splitlines()
    assert (target / "wordcount.yaml").read_bytes() == (REPO / "examples" / "wordcount.yaml").read_bytes()


def test_force_replaces_a_symbolic_link_and_not_what_it_points_to(tmp_path: Path) -> None:
    target = tmp_path / "hh"
    target.mkdir()
    precious = tmp_path / "precious.yaml"
    precious.write_text("precious\n")
    (target / "wordcount.yaml").symlink_to(precious)
    assert invoke(["examples", "copy", "--force", str(target)]).exit_code == 0
    assert precious.read_text() == "precious\n" and not (target / "wordcount.yaml").is_symlink()


@pytest.mark.parametrize("where", ["file", "below a file"])
def test_a_dir_that_is_a_file_is_one_line_with_exit_2(tmp_path: Path, where: str) -> None:
    afile = tmp_path / "hh"
    afile.write_text("")
    target = afile if where == "file" else afile / "sub"
    result = CliRunner().invoke(main, ["examples", "copy", str(target)])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("error: DIR: ") and f"{afile}" in line and "not a directory" in line and "fix:" in line


def test_an_unwritable_dir_is_one_line_with_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "ro"
    target.mkdir()
    os.chmod(target, 0o555)
    try:
        result = CliRunner().invoke(main, ["examples", "copy", str(target / "sub")])
    finally:
        os.chmod(target, 0o755)
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert f"{target}, where {target / 'sub'} would be made, is not writable by you" in line and "fix:" in line
    assert not (target / "sub").exists()


def test_the_copied_examples_relative_paths_work_from_dir(tmp_path: Path, site_root: Path, spark_home: Path,
                                                          built_runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``render`` of the copies, from another directory: the word count, and the Spark example's
    ``python/wordcount.py`` and streaming ``files`` found beside the copied job file; the site's root used."""
    target = tmp_path / "hh-examples"
    assert invoke(["examples", "copy", str(target)]).exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = invoke(["render", str(target / "wordcount.yaml")])
    assert result.exit_code == 0, result.output
    assert f"{site_root}/" in result.output and "/tmp/hpc-hadoop-pfs" not in result.output
    spark = invoke(["render", str(target / "spark.yaml"), "--set", f"spark.home={spark_home}"])
    assert spark.exit_code == 0, spark.output
    assert str(target / "python" / "wordcount.py") in spark.output
    assert str(target / "python" / "mapper.py") in spark.output


@pytest.mark.skipif(os.getuid() != 0, reason="a directory of another user needs chown (the suite runs as root)")
def test_copy_into_a_shared_directory_uses_no_level_another_user_made_or_can_change(tmp_path: Path) -> None:
    """DIR in a 1777 directory (``/tmp``): a DIR another user made first, one that is a symbolic link, and one its
    group can write are refused in one line, nothing copied; a new DIR is made one level at a time, 0700."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    theirs = shared / "hh-examples"
    theirs.mkdir()
    os.chmod(theirs, 0o777)  # writable by this user too: what the level-by-level check refuses is whose it is
    os.chown(theirs, 65534, 65534)  # nobody
    link = shared / "linked"
    link.symlink_to(tmp_path)
    group = shared / "group"
    group.mkdir()
    os.chmod(group, 0o775)
    for target, said in ((theirs, "is not yours"), (link, "is a symbolic link"), (group, "writable by its group")):
        result = CliRunner().invoke(main, ["examples", "copy", str(target)])
        assert result.exit_code == 2 and said in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and not (target / "wordcount.yaml").exists()
    new = shared / "mine" / "examples"
    result = invoke(["examples", "copy", str(new)])
    assert result.exit_code == 0, result.output
    assert {stat.S_IMODE(p.stat().st_mode) for p in (shared / "mine", new, new / "python")} == {0o700}


# -- the batch scripts' default job leaves the root to the layers too --------------------------------------------

#: ``hpc-hadoop`` for the batch scripts: ``config`` is the real command of this checkout, ``run`` prints its arguments.
FAKE_RUN = """#!/bin/bash
if [ "$1" = run ]; then shift; printf '%s\\n' "$@"; exit 0; fi
exec {python} -m launcher.cli "$@"
"""


@pytest.mark.parametrize("script", ["slurm.sbatch", "pbs.qsub", "sge.qsub"])
@pytest.mark.parametrize("layer", ["none", "site", "none-no-scratch"])
def test_a_batch_scripts_default_job_takes_the_layers_root_else_scratch(tmp_path: Path, script: str, layer: str,
                                                                        site_root: Path) -> None:
    """No argument: the copied word count, ``filesystem.root`` left to the site config when it names one; with no
    layer naming one, ``$SCRATCH/hpc-hadoop`` (``--set``); neither: one line saying so, exit 1 (bash's ``:?``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hpc-hadoop").write_text(FAKE_RUN.format(python=sys.executable))
    (bin_dir / "hpc-hadoop").chmod(0o755)
    work = tmp_path / "work"
    invoke(["examples", "copy", str(work)])
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PBS_O_WORKDIR": str(work),
           "PYTHONPATH": str(REPO), "SCRATCH": str(tmp_path / "scratch"), "HOME": str(tmp_path / "home")}
    if layer != "site":
        env["HPC_HADOOP_SITE_DIR"] = str(tmp_path / "no-site")
    if layer == "none-no-scratch":
        del env["SCRATCH"]
    done = subprocess.run(["bash", str(work / "batch" / script)], cwd=work, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    if layer == "none-no-scratch":
        assert done.returncode == 1 and "no layer names a filesystem.root: set SCRATCH" in done.stderr, done.stderr
        return
    assert done.returncode == 0, done.stderr
    expected = ["wordcount.yaml"] + ([] if layer == "site" else
                                     ["--set", f"filesystem.root={tmp_path / 'scratch'}/hpc-hadoop"])
    assert done.stdout.splitlines() == expected
