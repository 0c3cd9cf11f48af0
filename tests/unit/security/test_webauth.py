"""The launcher's own ``hadoop.auth`` cookie (launcher/security/webauth.py), checked by Hadoop 3.4.2's own code.

The cookie must be what Hadoop's ``AuthenticationFilter`` accepts: :func:`hadoop_verdicts` runs, in a JVM with the
built runtime's jars, Jetty's cookie parser (as the web servers parse a ``Cookie`` header), Hadoop's
``FileSignerSecretProvider`` (the secret file, as ``hadoop.http.authentication.signature.secret.file`` reads it),
``Signer.verifyAndExtract`` and ``AuthenticationToken.parse``: the steps of ``AuthenticationFilter.getToken``.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.daemon_sockets import Verdict
from launcher.security.kdc import make_realm_dir
from launcher.security.webauth import (
    AUTH_COOKIE,
    COOKIE_LIFETIME_S,
    HadoopAuthCookie,
    cookie_header,
    cookie_value,
    signature,
    token_text,
    web_auth,
    web_client,
    write_secret,
    write_secrets,
)

#: Parses each ``Cookie`` header (args 2...) as the cluster's web servers do and prints one verdict line for each.
CHECK_COOKIE_JAVA = """
import java.util.Properties;
import javax.servlet.http.Cookie;
import org.apache.hadoop.security.authentication.server.AuthenticationFilter;
import org.apache.hadoop.security.authentication.server.AuthenticationToken;
import org.apache.hadoop.security.authentication.util.FileSignerSecretProvider;
import org.apache.hadoop.security.authentication.util.Signer;
import org.apache.hadoop.security.authentication.util.SignerException;
import org.eclipse.jetty.http.CookieCompliance;
import org.eclipse.jetty.server.CookieCutter;

public class CheckCookie {
  public static void main(String[] args) throws Exception {
    Properties config = new Properties();
    config.setProperty(AuthenticationFilter.SIGNATURE_SECRET_FILE, args[0]);
    FileSignerSecretProvider secrets = new FileSignerSecretProvider();
    secrets.init(config, null, 36000L * 1000);
    Signer signer = new Signer(secrets);
    for (int i = 1; i < args.length; i++) {
      CookieCutter cutter = new CookieCutter(CookieCompliance.RFC6265);
      cutter.addCookieField(args[i]);
      String value = null;
      for (Cookie cookie : cutter.getCookies()) {
        if (cookie.getName().equals("hadoop.auth")) {
          value = cookie.getValue();
        }
      }
      if (value == null) {
        System.out.println("NO COOKIE");
        continue;
      }
      try {
        AuthenticationToken token = AuthenticationToken.parse(signer.verifyAndExtract(value));
        System.out.println("ACCEPTED u=" + token.getUserName() + " p=" + token.getName() + " t=" + token.getType()
            + " e=" + token.getExpires() + " expired=" + token.isExpired());
      } catch (SignerException e) {
        System.out.println("REFUSED " + e.getMessage());
      }
    }
  }
}
"""


def hadoop_verdicts(runtime: Path, work: Path, secret_file: Path, headers: list[str]) -> list[str]:
    """One line per ``Cookie`` header from Hadoop's own parser (:data:`CHECK_COOKIE_JAVA`, run as a Java source file
    with ``<runtime>/lib/*``): ``ACCEPTED u=.. p=.. t=.. e=.. expired=..``, ``REFUSED <reason>`` or ``NO COOKIE``."""
    source = work / "CheckCookie.java"
    source.write_text(CHECK_COOKIE_JAVA)
    java = shutil.which("java") or "java"
    done = subprocess.run([java, "-cp", f"{runtime}/lib/*", str(source), str(secret_file), *headers],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_hadoops_own_parser_accepts_our_cookie_and_refuses_another_secrets(tmp_path: Path,
                                                                           built_runtime: Path) -> None:
    ours, theirs = tmp_path / "http-signature.secret", tmp_path / "other.secret"
    write_secret(ours)
    write_secret(theirs)
    assert ours.read_bytes() != theirs.read_bytes()
    now_ms = int(time.time() * 1000)
    expires, past = now_ms + 600_000, now_ms - 1000
    principal = "alice@WC-20261128-090000-AB12.HPC-HADOOP"
    good = cookie_value(ours.read_bytes(), "alice", principal, expires)
    forged = cookie_value(theirs.read_bytes(), "alice", principal, expires)
    renamed = good.replace("u=alice&", "u=mallory&", 1)  # mallory's name under alice's signature
    expired = cookie_value(ours.read_bytes(), "alice", principal, past)
    verdicts = hadoop_verdicts(built_runtime, tmp_path, ours, [
        cookie_header(good), f"{AUTH_COOKIE}={good}", f"JSESSIONID=x; {cookie_header(good)}",
        cookie_header(forged), cookie_header(renamed), cookie_header(expired)])
    accepted = f"ACCEPTED u=alice p={principal} t=kerberos e={expires} expired=false"
    assert verdicts == [accepted, accepted, accepted,  # quoted (as Hadoop sets it), unquoted, among other cookies
                        "REFUSED Invalid signature", "REFUSED Invalid signature",
                        f"ACCEPTED u=alice p={principal} t=kerberos e={past} expired=true"], verdicts


def test_the_token_and_signature_have_hadoops_layout() -> None:
    assert token_text("alice", "alice@R.HPC-HADOOP", 1764320400000) == \
        "u=alice&p=alice@R.HPC-HADOOP&t=kerberos&e=1764320400000"
    value = cookie_value(b"s3cret", "alice", "alice@R", 5)
    text, sig = value.rsplit("&s=", 1)
    assert text == "u=alice&p=alice@R&t=kerberos&e=5" and sig == signature(b"s3cret", text)
    assert len(sig) == 44 and sig.endswith("=")  # 32 bytes of HMAC-SHA256, standard Base64, padded
    with pytest.raises(ValueError, match="contains '&'"):
        cookie_value(b"s", "alice&u=root", "alice@R", 5)


def test_the_secret_is_private_random_ascii_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "http-signature.secret"
    write_secret(path)
    first = path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and first.isascii() and len(first) >= 43 and "\n" not in first
    write_secret(path)
    assert path.read_text() != first and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_per_cluster_clients_send_a_fresh_cookie_and_simple_ones_none(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan]) -> None:
    """The cookie is the daemon's own (its secret), fresh, short-lived; only to a socket that is ours: here every
    check says yes (``tests/unit/plan/test_daemon_sockets.py`` tries the checks themselves)."""
    secure = make_test_plan(make_spec(security="per-cluster"))
    auth = web_auth(secure)
    assert isinstance(auth, HadoopAuthCookie)
    auth.sockets.check = lambda endpoint: Verdict(True)  # type: ignore[method-assign]
    rm = auth.sockets.endpoint(secure.master.address, secure.ports.rm_web)
    assert rm is not None
    assert auth.header_for(rm) is None  # before the launcher writes the secrets: no cookie (no daemon is up either)
    make_realm_dir(secure)
    write_secrets(secure)
    header = auth.header_for(rm, now_s=1000.0)
    assert header is not None
    value = header.removeprefix(f'{AUTH_COOKIE}="').removesuffix('"')
    own = secure.security.http_secret_of("resourcemanager", secure.master.name).read_bytes()
    assert value == cookie_value(own, secure.user, secure.security.user_principal, (1000 + COOKIE_LIFETIME_S) * 1000)
    assert COOKIE_LIFETIME_S <= 30
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Cookie"))
        return httpx.Response(200, headers={"Set-Cookie": f"{AUTH_COOKIE}=; Path=/; HttpOnly"})

    transport = httpx.MockTransport(answer)
    nm = secure.nodemanagers[1]
    with httpx.Client(auth=auth, transport=transport) as http:
        http.get(f"http://{secure.master.address}:{secure.ports.rm_web}/ws/v1/cluster/nodes")
        http.get(f"http://{nm.name}:{secure.ports.nm_web}/ws/v1/node")
        http.get(f"http://{nm.address}:{secure.ports.nm}/")  # an RPC port: not a web server, no cookie
    simple = make_test_plan(make_spec(security="simple"))
    with web_client(simple, transport=transport) as http:
        http.get(f"http://{simple.master.address}:{simple.ports.rm_web}/ws/v1/cluster/nodes")
    assert [s is not None and s.startswith(f'{AUTH_COOKIE}="u={secure.user}&p={secure.security.user_principal}'
                                           '&t=kerberos&e=') for s in seen] == [True, True, False, False]
    assert seen[1] != seen[0] and web_auth(simple) is None
