"""The per-cluster KDC (launcher/security/kdc.py), with the real ClusterKdc of the built runtime, and the checks of
what secure mode needs made before it starts (issue 27 item 5: launcher/security/checks.py)."""

from __future__ import annotations

import dataclasses
import json
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.config.load import load_spec
from launcher.lifecycle.runner import ClusterRun, materialize, prepare
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.daemon_sockets import WEB_DAEMONS
from launcher.schedulers import get_scheduler
from launcher.schedulers.allocation import Node
from launcher.security.kdc import (
    DEFAULT_TICKET_LIFETIME_S,
    TICKET_MARGIN_S,
    Kdc,
    probe_nodes,
    require_secure_mode,
    secure_mode_checks,
    ticket_end_times,
    ticket_lifetime,
)
from launcher.util.errors import UserError

#: A walltime longer than the 24 h Kerby's client asks for by default (what limited the owner's ticket before).
LONG_WALLTIME = "30:00:00"


def _plan(root: Path, *, security: str = "per-cluster", walltime: str = LONG_WALLTIME,
          nodes: tuple[Node, ...] | None = None, kerberos: dict[str, str] | None = None,
          interface: str | None = None) -> ClusterPlan:
    spec, _ = load_spec(None, data={"name": "krb", "security": security, "walltime": walltime,
                                    "filesystem": {"root": str(root)}, "kerberos": kerberos, "interface": interface,
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    allocation = get_scheduler("local").allocation(spec)
    if nodes is not None:
        allocation = dataclasses.replace(allocation, nodes=nodes)
    plan, _ = prepare(spec, allocation)
    materialize(plan)
    return plan


@pytest.fixture
def running_kdc(tmp_path: Path, built_runtime: Path) -> Iterator[tuple[Kdc, float]]:
    """The KDC of a 1-node ``security: per-cluster`` plan with a 30 h walltime, started (with the seconds its start
    took); stopped after the test, whatever the test asserted."""
    kdc = Kdc(_plan(tmp_path))
    seconds = kdc.start()
    try:
        yield kdc, seconds
    finally:
        kdc.stop()


def test_the_kdc_writes_private_keys_answers_and_leaves_nothing_behind(running_kdc: tuple[Kdc, float]) -> None:
    kdc, seconds = running_kdc
    plan = kdc.plan
    assert kdc.process is not None
    pid = kdc.process.pid
    assert kdc.ready is not None and kdc.ready["realm"] == plan.security.realm and kdc.ready["port"] > 0
    realm, krb = plan.security.realm_dir, plan.security.krb_dir
    assert not realm.is_relative_to(plan.run_dir)  # node-local, never the shared filesystem (issue 36 item 5)
    assert stat.S_IMODE(realm.stat().st_mode) == stat.S_IMODE(krb.stat().st_mode) == 0o700
    files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in realm.iterdir() if p.is_file()}
    own_secrets = {f"http-{daemon}-{node.name}.secret": 0o600 for node in plan.nodes for daemon in node.roles
                   if daemon in WEB_DAEMONS}  # one cookie secret per web server (issue 36)
    assert own_secrets and files == {"krb5.conf": 0o600, "services.keytab": 0o600, f"{plan.user}.keytab": 0o600,
                                     f"{plan.user}.ccache": 0o600, "http-signature.secret": 0o600, **own_secrets}
    shared = sorted(str(p.relative_to(krb)) for p in krb.rglob("*") if p.is_file())
    assert shared == ["krb5.conf", *sorted(f"sealed/{n.name}.bin" for n in plan.nodes)]  # nothing in the clear
    assert plan.security.http_secret.read_text().isascii()  # the web servers' cookie secret
    conf = plan.security.krb5_conf.read_text()
    assert f"default_realm = {plan.security.realm}" in conf
    assert f"kdc = {plan.master.address}:{kdc.ready['port']}" in conf
    assert 0 < seconds < 30
    kdc.stop()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert sorted(p.name for p in plan.security.krb_dir.iterdir()) == ["krb5.conf"]
    assert not plan.security.realm_dir.exists()


def test_keys_on_a_lost_filesystem_are_said_left_and_the_kdc_still_ends(running_kdc: tuple[Kdc, float],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25 item 4 under per-cluster: teardown on a mount whose FUSE client died, where every call answers
    ``ENOTCONN`` (tests/integration/test_lost_filesystem.py does it for real). The KDC ends, stopping raises
    nothing, and the keys are said to be left, not taken for removed."""
    kdc, _ = running_kdc
    assert kdc.process is not None
    pid = kdc.process.pid
    krb = kdc.plan.security.krb_dir / "sealed"  # on the shared filesystem (the realm's own is node-local)

    def gone(self: Path) -> bool:
        if self == krb:
            raise OSError(107, "Transport endpoint is not connected")
        return original(self)

    original = Path.is_dir
    monkeypatch.setattr(Path, "is_dir", gone)
    kdc.stop()
    monkeypatch.undo()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert kdc.keys_left == f"{krb}: Transport endpoint is not connected"
    assert list(krb.glob("*.bin"))  # indeed not removed: nothing claims it was
    assert not kdc.plan.security.realm_dir.exists()  # the node-local keys went all the same


def test_tickets_live_until_the_walltimes_end_plus_an_hour(running_kdc: tuple[Kdc, float]) -> None:
    """Issue 27, item 6: the owner's ticket-granting ticket, read from the ticket cache the clients use, ends an hour
    after the walltime (30 h here), not after the 24 h Kerby's client asks for by default; ``krb5.conf`` tells Java's
    and MIT's clients (the daemons' keytab logins) the same lifetime, and the KDC grants no more (Kerby reads
    ``max.ticket.lifetime`` in seconds)."""
    kdc, _ = running_kdc
    plan = kdc.plan
    assert plan.deadline is not None
    realm = plan.security.realm
    ends = ticket_end_times(plan.security.ccache)
    assert list(ends) == [f"krbtgt/{realm}@{realm}"]
    [end] = ends.values()
    # Whole seconds on the wire; the lifetime was counted from the KDC's start, a few seconds after the plan's.
    assert plan.deadline + TICKET_MARGIN_S - 2 <= end <= plan.deadline + TICKET_MARGIN_S + 60
    assert end - time.time() > 30 * 3600
    assert kdc.tickets_until == end
    lifetime = int(next(line.split("=")[1] for line in plan.security.krb5_conf.read_text().splitlines()
                        if "ticket_lifetime" in line))
    assert abs(time.time() + lifetime - end) < 60


def test_the_daemons_keytab_logins_get_tickets_until_the_walltimes_end_plus_an_hour(
        running_kdc: tuple[Kdc, float]) -> None:
    """The services' side of item 6: a keytab login as Hadoop's daemons make it (JAAS's ``Krb5LoginModule``,
    ``KeytabLogin.java`` run as a single-file program by the runtime's JDK) with the realm's ``krb5.conf`` gets a
    ticket-granting ticket that ends an hour after the walltime (it would be the KDC's maximum otherwise: 1000 days
    with MiniKdc's default read in seconds)."""
    kdc, _ = running_kdc
    plan = kdc.plan
    assert plan.deadline is not None
    security = plan.security
    done = subprocess.run([plan.runtime.java, f"-Djava.security.krb5.conf={security.krb5_conf}",
                           str(Path(__file__).with_name("KeytabLogin.java")), str(security.services_keytab),
                           f"rm/{plan.master.name}@{security.realm}"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    [(server, end)] = [line.split() for line in done.stdout.splitlines()]
    assert server == f"krbtgt/{security.realm}@{security.realm}"
    assert plan.deadline + TICKET_MARGIN_S - 2 <= int(end) <= plan.deadline + TICKET_MARGIN_S + 60


def test_the_lifetime_follows_the_walltime(tmp_path: Path) -> None:
    plan = _plan(tmp_path, walltime="2:00:00")
    assert plan.deadline is not None
    assert ticket_lifetime(plan, now=plan.deadline - 7200) == 7200 + TICKET_MARGIN_S
    assert ticket_lifetime(plan, now=plan.deadline - 0.5) == 1 + TICKET_MARGIN_S
    assert ticket_lifetime(plan, now=plan.deadline + 10) == TICKET_MARGIN_S
    assert ticket_lifetime(plan.model_copy(update={"deadline": None})) == DEFAULT_TICKET_LIFETIME_S


def test_ticket_end_times_refuses_what_is_not_a_ticket_cache(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"\x01\x02rest")
    with pytest.raises(ValueError, match="not a ticket cache of version 3 or 4"):
        ticket_end_times(tmp_path / "x")
    (tmp_path / "y").write_bytes(b"\x05\x03\x00\x00\x00\x01\x00\x00\x00\x09")
    with pytest.raises(ValueError, match="not a readable ticket cache"):
        ticket_end_times(tmp_path / "y")


def test_without_per_cluster_there_is_no_kdc(tmp_path: Path) -> None:
    kdc = Kdc(_plan(tmp_path, security="simple"))
    assert kdc.start() == 0.0 and kdc.process is None
    kdc.stop()


# -- issue 27 item 5: what secure mode needs, asked of every node before any daemon starts ----------------------------

def test_the_local_nodes_pass_the_secure_mode_checks(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    checks = secure_mode_checks(plan)
    assert [(c.name, c.ok) for c in checks] == [("krb host names", True), ("krb KDC port", True),
                                                ("krb clock skew", True)]
    require_secure_mode(plan)  # nothing raised


def test_the_probe_answers_through_the_local_fanout_with_this_hosts_clock() -> None:
    before = time.time()
    [probe], first, last = probe_nodes([("localhost", "127.0.0.1")], "local")
    assert before <= first <= probe.time <= last <= time.time()
    assert probe.node == "localhost" and probe.bind_error is None


def test_a_node_name_that_does_not_resolve_stops_bring_up_before_any_daemon(tmp_path: Path) -> None:
    """A one-line error naming the node, what is wrong and the fix (or ``security: simple``), exit code 2, before the
    KDC or any agent starts; ``run.json`` says so."""
    plan = _plan(tmp_path, nodes=(Node("nonexistent.invalid", "127.0.0.1"),))
    with pytest.raises(UserError) as caught, ClusterRun(plan):
        pass
    error = caught.value
    assert error.exit_code == 2 and error.field == "security"
    assert error.message == "on nonexistent.invalid, the node name nonexistent.invalid does not resolve"
    assert error.fix is not None and "security: simple" in error.fix
    assert "\n" not in str(error)
    assert not plan.security.krb_dir.exists()  # no KDC
    run_dir = Path(plan.run_dir)
    assert not list(run_dir.glob("logs/fanout-*.log")) and not list(run_dir.glob("agents/*.json"))  # no agent
    report = json.loads(Path(plan.run_dir, "run.json").read_text())
    assert report["state"] == "bringup_failed" and "nonexistent.invalid does not resolve" in report["error"]


def test_under_an_interface_the_nodes_report_where_their_daemons_bind_and_the_realm_names_it(
        tmp_path: Path, built_runtime: Path) -> None:
    """Issue 37 item 9: under ``interface:`` the secure-mode probe returns each node's address on the interface (the
    local one: ``lo``, 127.0.0.1), and the KDC makes the service principals of the name that address resolves back
    to; an address that does not resolve back (TEST-NET-1, 192.0.2.1) gets principals of its own, as Java names it."""
    plan = _plan(tmp_path, interface="lo")
    assert require_secure_mode(plan) == {plan.master.name: "127.0.0.1"}
    kdc = Kdc(plan)
    kdc.start(addresses={plan.master.name: "192.0.2.1"})
    try:
        keytab = plan.security.services_keytab.read_bytes()
    finally:
        kdc.stop()
    assert b"192.0.2.1" in keytab and plan.master.name.lower().encode() in keytab


def test_simple_clusters_are_not_probed(tmp_path: Path) -> None:
    require_secure_mode(_plan(tmp_path, security="simple", nodes=(Node("nonexistent.invalid", "127.0.0.1"),)))


def test_doctor_prints_each_secure_mode_check(tmp_path: Path, write_yaml: Callable[..., Path]) -> None:
    job = write_yaml(tmp_path / "job.yaml", {"name": "sec", "security": "per-cluster",
                                             "filesystem": {"root": str(tmp_path)},
                                             "steps": [{"example": "pi", "args": [1, 10]}]})
    result = CliRunner().invoke(main, ["doctor", str(job)])
    lines = {line.split()[1] + " " + line.split()[2] + " " + line.split()[3]: line
             for line in result.stdout.splitlines() if line.split()[1:2] == ["krb"] and line.split()[2] != "keys"}
    assert list(lines) == ["krb host names", "krb KDC port", "krb clock skew"], result.stdout
    assert all(line.split()[0] == "ok" for line in lines.values()), result.stdout
    assert "localhost → 127.0.0.1 → localhost" in lines["krb host names"]
    assert "Kerberos allows 300 s" in lines["krb clock skew"]


def test_doctor_outside_an_allocation_asks_this_host_and_says_so(tmp_path: Path, write_yaml: Callable[..., Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NODELIST", "SLURM_NODELIST"):
        monkeypatch.delenv(variable, raising=False)
    job = write_yaml(tmp_path / "job.yaml", {"name": "sec", "security": "per-cluster", "scheduler": "slurm",
                                             "filesystem": {"root": str(tmp_path), "shared": True},
                                             "steps": [{"example": "pi", "args": [1, 10]}]})
    result = CliRunner().invoke(main, ["doctor", str(job)])
    lines = [line for line in result.stdout.splitlines() if line.split()[1:3] in (["krb", "host"], ["krb", "KDC"],
                                                                                   ["krb", "clock"])]
    assert len(lines) == 3 and all(line.endswith("(this host only: run doctor inside an allocation to ask every node)")
                                   for line in lines), result.stdout


def test_site_starts_no_kdc_copies_the_keytab_privately_and_removes_the_copy(tmp_path: Path) -> None:
    """``security: site``: no KDC process; the user's keytab copied into the realm's node-local directory (0700) as
    ``site.keytab`` (0600) with the cookie secrets, sealed for the nodes in ``krb/sealed``; at stop all are gone and
    the user's own keytab is as it was."""
    keytab, conf = tmp_path / "me.keytab", tmp_path / "krb5.conf"
    keytab.write_bytes(b"\x05\x02 the site's keys")
    keytab.chmod(0o600)
    before = keytab.stat()
    conf.write_text("[libdefaults]\n")
    spec, _ = load_spec(None, data={"name": "krb", "security": "site", "filesystem": {"root": str(tmp_path)},
                                    "kerberos": {"service_principal": "me/hadoop@SITE.TEST", "keytab": str(keytab),
                                                 "krb5_conf": str(conf)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    materialize(plan)
    kdc = Kdc(plan)
    seconds = kdc.start()
    copy = plan.security.realm_dir / "site.keytab"
    try:
        assert kdc.process is None and kdc.ready is None and seconds >= 0
        assert stat.S_IMODE(plan.security.realm_dir.stat().st_mode) == 0o700
        assert [p.name for p in plan.security.krb_dir.iterdir()] == ["sealed"]
        files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in plan.security.realm_dir.iterdir()}
        own_secrets = {f"http-{daemon}-{node.name}.secret": 0o600 for node in plan.nodes for daemon in node.roles
                       if daemon in WEB_DAEMONS}
        assert files == {"site.keytab": 0o600, "http-signature.secret": 0o600, **own_secrets}
        assert copy.read_bytes() == keytab.read_bytes()
    finally:
        kdc.stop()
    assert not copy.exists() and not plan.security.http_secret.exists()
    assert not plan.security.realm_dir.exists() and not list(plan.security.krb_dir.iterdir())
    after = keytab.stat()
    assert (after.st_mode, after.st_size, after.st_mtime_ns) == (before.st_mode, before.st_size, before.st_mtime_ns)


def test_site_without_its_krb5_conf_is_refused_before_any_daemon(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    keytab = tmp_path / "me.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    monkeypatch.setenv("KRB5_CONFIG", str(tmp_path / "nosuch.conf"))
    spec, _ = load_spec(None, data={"name": "krb", "security": "site", "filesystem": {"root": str(tmp_path)},
                                    "kerberos": {"service_principal": "me/hadoop@SITE.TEST", "keytab": str(keytab)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    materialize(plan)
    with pytest.raises(UserError) as info:
        Kdc(plan).start()
    assert info.value.field == "kerberos.krb5_conf" and str(tmp_path / "nosuch.conf") in info.value.message
    assert not (plan.security.realm_dir / "site.keytab").exists()


def test_the_default_principal_of_a_real_ticket_cache_is_read(running_kdc: tuple[Kdc, float]) -> None:
    """``security: site``'s default ``kerberos.principal``: the ticket cache's own (the one Kerby wrote here,
    version 3), as ``klist`` shows it on its first line."""
    from launcher.security.kerberos import ccache_principal

    security = running_kdc[0].plan.security
    assert ccache_principal(f"FILE:{security.ccache}") == security.user_principal
    assert ccache_principal(str(security.ccache)) == security.user_principal  # KRB5CCNAME may be a bare path
    assert ccache_principal(f"FILE:{security.services_keytab}") is None  # not a ticket cache


def test_the_site_note_says_when_the_users_ticket_cache_would_not_do(tmp_path: Path) -> None:
    from launcher.config.spec import KerberosSpec
    from launcher.lifecycle.bringup import site_ccache_warning
    from launcher.security.kerberos import security_plan
    from tests.unit.security.test_kerberos import ccache_bytes

    keytab, cache = tmp_path / "me.keytab", tmp_path / "cc"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    site = KerberosSpec(service_principal="me/hadoop@SITE.TEST", keytab=str(keytab), principal="me@SITE.TEST")

    def warning(env: dict[str, str]) -> str:
        return site_ccache_warning(security_plan("site", "me", "c-1", tmp_path, site, env=env))

    assert "none there" in warning({"KRB5CCNAME": str(cache)})
    assert "none there" in warning({"KRB5CCNAME": "KCM:1000"})
    cache.write_bytes(ccache_bytes("bob@SITE.TEST"))
    assert warning({"KRB5CCNAME": str(cache)}) == (": it holds bob@SITE.TEST, which does not map to you; "
                                                   "kinit me@SITE.TEST")
    cache.write_bytes(ccache_bytes("me@SITE.TEST"))
    assert warning({"KRB5CCNAME": f"FILE:{cache}"}) == ""


def test_site_asks_the_nodes_only_for_their_clocks(tmp_path: Path) -> None:
    """``security: site`` names no host in a principal and starts no KDC: a node name that does not resolve (which
    stops ``per-cluster``, above) is no reason to stop it; the clocks still count."""
    keytab = tmp_path / "me.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    plan = _plan(tmp_path, security="site", nodes=(Node("nonexistent.invalid", "127.0.0.1"),),
                 kerberos={"service_principal": "me/hadoop@SITE.TEST", "keytab": str(keytab)})
    assert [check.name for check in secure_mode_checks(plan)] == ["krb host names", "krb KDC port", "krb clock skew"]
    assert not secure_mode_checks(plan)[0].ok
    require_secure_mode(plan)  # passes: only the clocks are asked of a site
