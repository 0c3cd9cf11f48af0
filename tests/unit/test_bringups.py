"""tests/bringups.py (issue 38 item 5): a test whose body starts a cluster without ``own_cluster("why")`` fails; one
with the marker, or one that reads a cluster a module-scoped fixture started, passes. The "cluster" is a process the
kernel shows as ``java`` with the ResourceManager's main class on its command line (a Python interpreter started
through a link named ``java``), which is all the counter looks at; the inner session is told another main class, so
that the suite's own count does not see its stand-ins."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

#: The main class of the inner session's stand-in ResourceManagers (``HPC_HADOOP_TEST_RM_CLASS``): not the real one,
#: which the outer session counts.
STAND_IN_RM = "org.hpchadoop.tests.StandInResourceManager"

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]

MODULE = '''
import subprocess, sys, time
import pytest

pytestmark = pytest.mark.hadoop  # the counter counts where the hadoop tests run

JAVA = {java!r}


def fake_resourcemanager():
    proc = subprocess.Popen([JAVA, "-c", "import time; time.sleep(30)", {rm!r}])
    time.sleep(1.0)  # four of the counter's looks
    return proc


@pytest.fixture(scope="module")
def shared():
    proc = fake_resourcemanager()
    yield
    proc.kill()


def test_unmarked():
    fake_resourcemanager().kill()


@pytest.mark.own_cluster("its walltime ends it")
def test_marked():
    fake_resourcemanager().kill()


@pytest.mark.own_cluster("")
def test_marked_without_a_reason():
    fake_resourcemanager().kill()


def test_reads_the_shared_one(shared):
    pass


def test_starts_nothing():
    pass
'''


def test_a_cluster_of_its_own_needs_a_reason(pytester: pytest.Pytester, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.symlink_to(sys.executable)
    pytester.makeconftest("from tests.bringups import *  # noqa: F401,F403\n")
    pytester.makeini("[pytest]\nmarkers =\n    hadoop: starts clusters\n")
    pytester.makepyfile(test_fake=MODULE.format(java=str(java), rm=STAND_IN_RM))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("HPC_HADOOP_TEST_RM_CLASS", STAND_IN_RM)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("failed")) == (3, 2), result.stdout.str()
    text = result.stdout.str()
    assert "test_fake.py::test_unmarked started 1 cluster(s) of its own" in text
    assert "test_fake.py::test_marked_without_a_reason started 1 cluster(s) of its own" in text
    assert "test_fake.py 4" in text  # the counter's line by module
