"""What ``filesystem.mode: hdfs`` means, asked of one module (launcher/plan/hdfs.py; issue 26 item 4)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.hdfs import CONFIG_TEMPLATES, HdfsMode, hdfs_mode
from launcher.util.errors import ClusterError

SpecFactory = Callable[..., JobSpec]
PlanFactory = Callable[..., ClusterPlan]


@pytest.mark.parametrize("mode", ["rawfs", "shim"])
def test_other_modes_keep_everything_in_the_cluster_directory(make_spec: SpecFactory, mode: str) -> None:
    answers = hdfs_mode(make_spec(filesystem={"mode": mode}).filesystem)
    assert not answers.enabled and not answers.default_fs and not answers.staging_on_hdfs
    assert answers.history_in_cluster_dir
    assert answers.master_daemons == 3
    assert answers.roles(first=True) == () and answers.roles(first=False) == ()
    assert answers.uri("/x", "10.0.0.1", 1234) is None
    assert answers.config_templates == {}


def test_hdfs_mode_answers(make_spec: SpecFactory, pfs_root: Path) -> None:
    answers = hdfs_mode(make_spec(filesystem={"root": str(pfs_root), "mode": "hdfs"}).filesystem)
    assert answers.enabled and answers.default_fs and answers.staging_on_hdfs
    assert not answers.history_in_cluster_dir
    assert answers.master_daemons == 5
    assert answers.roles(first=True) == ("namenode", "datanode") and answers.roles(first=False) == ("datanode",)
    assert answers.uri("/run/staging", "10.0.0.1", 1234) == "hdfs://10.0.0.1:1234/run/staging"
    assert answers.config_templates == CONFIG_TEMPLATES == {"hdfs-site.xml": "hadoop/hdfs-site.xml.j2"}


@pytest.mark.parametrize("mode", ["rawfs", "shim", "hdfs"])
def test_the_plan_asks_the_module(make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path,
                                  mode: str) -> None:
    plan = make_test_plan(make_spec(filesystem={"root": str(pfs_root), "mode": mode}))
    assert plan.hdfs == hdfs_mode(plan.spec.filesystem)
    staging = plan.striped_dirs()["staging"]
    assert staging == ([] if mode == "hdfs" else [plan.path("staging")])
    scheme = {"rawfs": "file://", "shim": "pfs://", "hdfs": f"hdfs://10.0.0.1:{plan.ports.nn}"}[mode]
    assert plan.fs_uri("/a/b") == scheme + "/a/b"


class _NameNode(BaseHTTPRequestHandler):
    """A NameNode's ``/jmx`` as far as :meth:`HdfsMode.wait_ready` reads it: answers from ``server.beans``."""

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        query = parse_qs(urlparse(self.path).query)["qry"][0]
        beans: dict[str, Any] = self.server.beans  # type: ignore[attr-defined]
        body = json.dumps({"beans": [beans[query.rpartition("=")[2]]]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def namenode() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NameNode)
    server.beans = {"FSNamesystemState": {"NumLiveDataNodes": 3},  # type: ignore[attr-defined]
                    "NameNodeInfo": {"Safemode": ""}}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _web(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_wait_ready_returns_once_every_datanode_is_live_out_of_safe_mode(namenode: ThreadingHTTPServer,
                                                                         tmp_path: Path) -> None:
    checks: list[int] = []
    waited = HdfsMode(enabled=True).wait_ready(_web(namenode), 3, check=lambda: checks.append(1),
                                               namenode_log=tmp_path / "namenode.log", timeout=30.0)
    assert waited >= 0.0 and checks


def test_wait_ready_names_what_is_missing(namenode: ThreadingHTTPServer, tmp_path: Path) -> None:
    namenode.beans["NameNodeInfo"] = {"Safemode": "Safe mode is ON."}  # type: ignore[attr-defined]
    with pytest.raises(ClusterError, match=r"3 of 4 DataNodes live \(safe mode: Safe mode is ON\.\)") as err:
        HdfsMode(enabled=True).wait_ready(_web(namenode), 4, check=lambda: None,
                                          namenode_log=tmp_path / "namenode.log", timeout=0.5)
    assert str(tmp_path / "namenode.log") in str(err.value)


def test_wait_ready_ends_with_the_callers_probe(namenode: ThreadingHTTPServer, tmp_path: Path) -> None:
    def died() -> None:
        raise ClusterError("the NameNode died")

    with pytest.raises(ClusterError, match="the NameNode died"):
        HdfsMode(enabled=True).wait_ready(_web(namenode), 3, check=died, namenode_log=tmp_path / "namenode.log")


def test_wait_ready_outside_hdfs_mode_asks_nothing(tmp_path: Path) -> None:
    def never() -> None:
        raise AssertionError("asked")

    assert HdfsMode(enabled=False).wait_ready("http://127.0.0.1:9", 3, check=never,
                                              namenode_log=tmp_path / "namenode.log") == 0.0
