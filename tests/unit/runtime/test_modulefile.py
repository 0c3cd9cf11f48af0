"""``hpc-hadoop runtime module`` (launcher/runtime/modulefile.py, templates/modules/hpc-hadoop.lua.j2): the rendered
module file is loaded by Debian's real Lmod (``tests/cluster/site-up.sh`` installs it), which must set ``PATH``,
``HPC_HADOOP_SITE_DIR`` and ``JAVA_HOME`` exactly, paths with a space and a quote included; bad options and an
existing file are refused in one line. (The EasyBuild module and this one are loaded by two users in
tests/integration/test_site.py.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.runtime.modulefile import lua_string, render, write
from launcher.util.errors import UserError

LMOD = Path("/usr/share/lmod/lmod/libexec/lmod")


def _install(tmp_path: Path) -> Path:
    """A prefix with ``bin/hpc-hadoop`` (what :func:`render` checks), its name with a space and a quote."""
    root = tmp_path / 'sw "hh" 0.1'
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "hpc-hadoop").write_text("#!/bin/sh\n")
    return root


def _jdk(tmp_path: Path) -> Path:
    java = tmp_path / "jdk 17" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    return java.parents[1]


def _load(modulepath: Path, show: str) -> list[str]:
    """``module load hpc-hadoop`` by Lmod itself (its ``bash`` output evaluated by bash), then the values of
    ``show`` (a bash expression per line)."""
    if not LMOD.is_file():
        pytest.fail(f"no Lmod at {LMOD}: run tests/cluster/site-up.sh (as root) or apt-get install lmod")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(modulepath.parent), "MODULEPATH": str(modulepath),
           "HADOOP_HOME": "/opt/other-hadoop", "LANG": "C.UTF-8"}
    script = f'eval "$({LMOD} bash load hpc-hadoop)"\n' + "".join(f'printf "%s\\n" "{line}"\n'
                                                                   for line in show.splitlines())
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "error" not in done.stderr.lower(), done.stderr
    return done.stdout.splitlines()


def test_lmod_loads_the_rendered_module_and_sets_path_site_dir_and_java_home(tmp_path: Path) -> None:
    root, jdk = _install(tmp_path), _jdk(tmp_path)
    site = tmp_path / "site 'etc'"
    modulepath = tmp_path / "modules"
    (modulepath / "hpc-hadoop").mkdir(parents=True)
    write(render(root=root, site_dir=site, java_home=jdk), modulepath / "hpc-hadoop" / "0.1.0.lua")
    path, site_dir, java_home, hadoop_home, loaded = _load(
        modulepath, "${PATH}\n${HPC_HADOOP_SITE_DIR}\n${JAVA_HOME}\n${HADOOP_HOME-unset}\n${LOADEDMODULES}")
    assert path.split(":")[:2] == [str(jdk / "bin"), str(root / "bin")]
    assert (site_dir, java_home, hadoop_home, loaded) == (str(site), str(jdk), "unset", "hpc-hadoop/0.1.0")


def test_without_site_dir_and_java_home_the_module_sets_only_path(tmp_path: Path) -> None:
    root = _install(tmp_path)
    text = render(root=root)
    assert "HPC_HADOOP_SITE_DIR" not in text and "JAVA_HOME" not in text
    modulepath = tmp_path / "modules"
    (modulepath / "hpc-hadoop").mkdir(parents=True)
    write(text, modulepath / "hpc-hadoop" / "0.1.0.lua")
    path, site_dir = _load(modulepath, "${PATH}\n${HPC_HADOOP_SITE_DIR-unset}")
    assert path.split(":")[0] == str(root / "bin") and site_dir == "unset"


def test_lua_string_escapes_what_lua_would_read_otherwise() -> None:
    assert lua_string('a "b" \\c') == '"a \\"b\\" \\\\c"'
    assert lua_string("x\ny\x7f") == '"x\\010y\\127"'


def test_a_root_without_hpc_hadoop_and_a_java_home_without_java_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="has no bin/hpc-hadoop: not an install of hpc-hadoop"):
        render(root=tmp_path)
    with pytest.raises(UserError, match=r"--java-home: .* has no bin/java \(fix: name a JDK's directory"):
        render(root=_install(tmp_path), java_home=tmp_path)


def test_write_is_0644_refuses_an_existing_file_and_replaces_a_link_not_its_target(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        target = tmp_path / "0.1.0.lua"
        write("one\n", target)
        assert (target.stat().st_mode & 0o777, target.read_text()) == (0o644, "one\n")
        with pytest.raises(UserError, match=r"-o: .* exists \(fix: give --force to replace it"):
            write("two\n", target)
        victim = tmp_path / "victim"
        victim.write_text("keep\n")
        link = tmp_path / "link.lua"
        link.symlink_to(victim)
        with pytest.raises(UserError, match="exists"):
            write("two\n", link)
        write("two\n", link, force=True)
        assert not link.is_symlink() and link.read_text() == "two\n" and victim.read_text() == "keep\n"
        with pytest.raises(UserError, match="is not a directory"):
            write("x\n", tmp_path / "missing" / "0.1.0.lua")
    finally:
        os.umask(old)


def test_the_command_prints_the_module_of_the_running_install_or_one_line_on_bad_input(tmp_path: Path) -> None:
    printed = CliRunner().invoke(main, ["runtime", "module", "--site-dir", str(tmp_path)])
    assert printed.exit_code == 0, printed.output
    assert f'setenv("HPC_HADOOP_SITE_DIR", "{tmp_path}")' in printed.output
    assert 'prepend_path("PATH", pathJoin(root, "bin"))' in printed.output
    bad = CliRunner().invoke(main, ["runtime", "module", "--java-home", str(tmp_path)])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "has no bin/java" in bad.output, bad.output
