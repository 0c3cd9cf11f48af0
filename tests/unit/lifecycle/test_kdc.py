"""The per-cluster KDC (launcher/lifecycle/kdc.py), with the real ClusterKdc of the built runtime."""

from __future__ import annotations

import stat
from pathlib import Path

import psutil

from launcher.config.spec import load_spec
from launcher.lifecycle.kdc import Kdc
from launcher.lifecycle.runner import materialize, prepare
from launcher.schedulers import get_scheduler


def test_the_kdc_writes_private_keys_answers_and_leaves_nothing_behind(tmp_path: Path, built_runtime: Path) -> None:
    spec, _ = load_spec(None, data={"name": "krb", "security": "per-cluster", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    materialize(plan)
    kdc = Kdc(plan)
    seconds = kdc.start()
    assert kdc.process is not None
    pid = kdc.process.pid
    try:
        assert kdc.ready is not None and kdc.ready["realm"] == plan.security.realm and kdc.ready["port"] > 0
        krb = plan.security.krb_dir
        assert stat.S_IMODE(krb.stat().st_mode) == 0o700
        files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in krb.iterdir() if p.is_file()}
        assert files == {"krb5.conf": 0o600, "services.keytab": 0o600, f"{plan.user}.keytab": 0o600,
                         f"{plan.user}.ccache": 0o600, "http-signature.secret": 0o600}
        assert plan.security.http_secret.read_text().isascii()  # the web servers' cookie secret
        conf = plan.security.krb5_conf.read_text()
        assert f"default_realm = {plan.security.realm}" in conf
        assert f"kdc = {plan.master.address}:{kdc.ready['port']}" in conf
        assert 0 < seconds < 30
    finally:
        kdc.stop()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert sorted(p.name for p in plan.security.krb_dir.iterdir() if p.is_file()) == ["krb5.conf"]


def test_without_per_cluster_there_is_no_kdc(tmp_path: Path) -> None:
    spec, _ = load_spec(None, data={"name": "plain", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    kdc = Kdc(plan)
    assert kdc.start() == 0.0 and kdc.process is None
    kdc.stop()
