"""The ``hpc-hadoop ui`` proxy (:mod:`launcher.cli.webproxy`) against real HTTP servers on 127.0.0.1 standing in
for a ResourceManager and a NodeManager: the token and its cookie, 403 without them, 404 for a ``host:port`` that is
not a web endpoint of the cluster, links rewritten in HTML and in ``Location``, the per-request upstream cookie."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import sys
import threading
import types
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from launcher.cli.webproxy import (
    TOKEN_BYTES,
    Endpoint,
    UpstreamRefused,
    WebProxy,
    base_path,
    cluster_endpoints,
    cookie_name,
    cookie_under,
    login_host,
    read_password_file,
    rewrite_links,
    rewrite_location,
    split_target,
    ssh_command,
    upstream_auth,
)
from launcher.util.errors import UserError
from tests.conftest import read_http_head

if TYPE_CHECKING:
    from launcher.config.spec import JobSpec
    from launcher.plan.cluster_plan import ClusterPlan


class Upstream:
    """A real HTTP server on 127.0.0.1 that answers like a Hadoop daemon's pages and records each request."""

    def __init__(self, page: str = "") -> None:
        self.page = page
        self.requests: list[dict[str, object]] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                upstream.requests.append({"method": self.command, "path": self.path,
                                          "cookie": self.headers.get("Cookie"), "host": self.headers.get("Host")})
                if self.path == "/redirect-absolute":
                    self.send_response(302)
                    self.send_header("Location", upstream.page_link("/node/allApplications"))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path == "/redirect-path":
                    self.send_response(302)
                    self.send_header("Location", "/cluster/apps")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path.startswith("/logs"):
                    body = b"plain log line http://127.0.0.1:1/\n" * 3
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                body = upstream.page.encode() if self.path.startswith("/cluster") else json.dumps(
                    upstream.requests[-1]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8" if self.path.startswith("/cluster")
                                 else "application/json")
                self.send_header("Set-Cookie", "checked_app=true; Domain=127.0.0.1; Path=/")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_PUT = do_GET  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def page_link(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[Upstream, Upstream, Upstream]]:
    """An RM stand-in, an NM stand-in (both endpoints of the cluster) and a server that is NOT an endpoint (the RM's
    RPC port, say)."""
    rm, nm, foreign = Upstream(), Upstream(), Upstream()
    rm.page = (f"<a href='{nm.page_link('/node/containerlogs/container_1/u')}'>Logs</a>"
               f"<a href=\"/cluster/app/application_1\">app</a><script src='/static/yarn.js'></script>"
               f"<script>var t=[[\"<a href=\\\"/cluster/app/application_2\\\">a2</a>\"]];"
               f"var u='http:\\/\\/127.0.0.1:{nm.port}\\/node';"
               f"var v=[\"<a href=\\'\\/cluster\\/app\\/application_3\\'>a3</a>\"];</script>"
               f"<a href='http://127.0.0.1:{foreign.port}/secret'>rpc</a><a href='//example.org/x'>ext</a>")
    yield rm, nm, foreign
    for server in (rm, nm, foreign):
        server.close()


@contextlib.contextmanager
def running_proxy(rm: Upstream, nm: Upstream, **kwargs: object) -> Iterator[WebProxy]:
    """A started proxy whose endpoints are the RM and NM stand-ins (the NM under two names), closed on exit."""
    endpoints = {f"127.0.0.1:{rm.port}": Endpoint("ResourceManager", "127.0.0.1", rm.port),
                 f"localhost:{nm.port}": Endpoint("NodeManager n1", "127.0.0.1", nm.port),
                 f"127.0.0.1:{nm.port}": Endpoint("NodeManager n1", "127.0.0.1", nm.port)}
    proxy = WebProxy(endpoints, f"127.0.0.1:{rm.port}", **kwargs).start()  # type: ignore[arg-type]
    try:
        yield proxy
    finally:
        proxy.close()


def client(proxy: WebProxy) -> httpx.Client:
    return httpx.Client(base_url=f"http://127.0.0.1:{proxy.port}", trust_env=False, follow_redirects=False)


@contextlib.contextmanager
def logged_in(proxy: WebProxy) -> Iterator[httpx.Client]:
    """A client that has opened the printed URL (``?token=``) once: the proxy's cookie stands for the token."""
    with client(proxy) as browser:
        answer = browser.get(f"/?token={proxy.token}")
        assert answer.status_code == 302 and answer.headers["Location"] == "/"
        yield browser


@pytest.fixture
def proxy(servers: tuple[Upstream, Upstream, Upstream]) -> Iterator[WebProxy]:
    """The proxy of :func:`running_proxy` in front of ``servers``' RM and NM."""
    rm, nm, _ = servers
    with running_proxy(rm, nm) as started:
        yield started


@pytest.fixture
def browser(proxy: WebProxy) -> Iterator[httpx.Client]:
    """A client logged in to ``proxy`` (:func:`logged_in`)."""
    with logged_in(proxy) as logged:
        yield logged


def test_token_sets_a_cookie_named_after_the_port_and_redirects_without_it(
        servers: tuple[Upstream, Upstream, Upstream], proxy: WebProxy) -> None:
    rm, nm, _ = servers
    assert len(proxy.token) >= 43 and TOKEN_BYTES == 32  # 32 random bytes, URL-safe base64
    assert proxy.url == f"http://127.0.0.1:{proxy.port}/?token={proxy.token}"
    with client(proxy) as browser:
        first = browser.get(f"/_/127.0.0.1:{rm.port}/cluster?x=1&token={proxy.token}")
        assert first.status_code == 302
        assert first.headers["Location"] == f"/_/127.0.0.1:{rm.port}/cluster?x=1"
        cookie = first.headers["Set-Cookie"]
        assert cookie.startswith(f"{cookie_name(proxy.port)}={proxy.token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        home = browser.get("/")  # the cookie now stands for the token
        assert home.status_code == 302 and home.headers["Location"] == f"/_/127.0.0.1:{rm.port}/cluster"
        page = browser.get(home.headers["Location"])
        assert page.status_code == 200 and "Logs" in page.text
        # The proxy's own cookie never reaches the daemon.
        assert proxy.token not in str(rm.requests[-1]["cookie"])


def test_without_the_token_or_its_cookie_every_request_is_403(servers: tuple[Upstream, Upstream, Upstream],
                                                              proxy: WebProxy) -> None:
    rm, nm, _ = servers
    with client(proxy) as stranger:
        for path in ("/", f"/_/127.0.0.1:{rm.port}/cluster", f"/_/127.0.0.1:{rm.port}/ws/v1/cluster/apps"):
            assert stranger.get(path).status_code == 403, path
        assert stranger.put(f"/_/127.0.0.1:{rm.port}/ws/v1/cluster/apps/application_1/state",
                            content=b'{"state":"KILLED"}').status_code == 403
        assert stranger.get(f"/?token={proxy.token[:-1]}x").status_code == 403
        assert stranger.get("/", headers={"Cookie": f"{cookie_name(proxy.port)}=guess"}).status_code == 403
        # The token of another proxy (another port's cookie) does not open this one.
        assert stranger.get("/", headers={"Cookie": f"{cookie_name(proxy.port + 1)}={proxy.token}"}
                            ).status_code == 403
    assert rm.requests == [] and nm.requests == []  # nothing reached a daemon


def test_a_host_port_outside_the_cluster_endpoints_is_404(servers: tuple[Upstream, Upstream, Upstream],
                                                          browser: httpx.Client) -> None:
    rm, nm, foreign = servers
    for target in (f"127.0.0.1:{foreign.port}", f"localhost:{rm.port}", "example.org:80",
                   f"10.0.0.1:{rm.port}"):
        answer = browser.get(f"/_/{target}/cluster")
        assert answer.status_code == 404 and "not a web server of this cluster" in answer.text, target
    assert browser.get("/_/no-port/cluster").status_code == 404  # no Referer to go by either
    assert foreign.requests == [] and rm.requests == []
    # Under an endpoint's other name: the same daemon.
    assert browser.get(f"/_/localhost:{nm.port}/ws/v1/node").status_code == 200
    assert nm.requests[-1]["path"] == "/ws/v1/node"


def test_links_in_html_and_location_are_rewritten(servers: tuple[Upstream, Upstream, Upstream], proxy: WebProxy,
                                                  browser: httpx.Client) -> None:
    rm, nm, foreign = servers
    page = browser.get(f"/_/127.0.0.1:{rm.port}/cluster").text
    assert f"href='/_/127.0.0.1:{nm.port}/node/containerlogs/container_1/u'" in page
    assert f"href=\"/_/127.0.0.1:{rm.port}/cluster/app/application_1\"" in page
    assert f"src='/_/127.0.0.1:{rm.port}/static/yarn.js'" in page
    assert f"href=\\\"/_/127.0.0.1:{rm.port}/cluster/app/application_2\\\"" in page  # inside a JS string
    assert f"'\\/_\\/127.0.0.1:{nm.port}\\/node'" in page  # JavaScript-escaped slashes
    assert f"href=\\'\\/_\\/127.0.0.1:{rm.port}\\/cluster\\/app\\/application_3\\'" in page
    assert f"href='http://127.0.0.1:{foreign.port}/secret'" in page  # not an endpoint: left alone
    assert "href='//example.org/x'" in page
    moved = browser.get(f"/_/127.0.0.1:{nm.port}/redirect-absolute")
    assert moved.status_code == 302
    assert moved.headers["Location"] == f"/_/127.0.0.1:{nm.port}/node/allApplications"
    moved = browser.get(f"/_/127.0.0.1:{rm.port}/redirect-path")
    assert moved.headers["Location"] == f"/_/127.0.0.1:{rm.port}/cluster/apps"
    # A daemon's cookie comes back without its Domain (the browser's host is 127.0.0.1:<proxy port>).
    cookie = browser.get(f"/_/127.0.0.1:{rm.port}/cluster").headers["Set-Cookie"]
    assert cookie == "checked_app=true; Path=/"
    # Plain text is passed through untouched, byte for byte.
    log = browser.get(f"/_/127.0.0.1:{nm.port}/logs/stderr")
    assert log.content == b"plain log line http://127.0.0.1:1/\n" * 3
    # An absolute path built by a script goes to the endpoint of the page it came from.
    script = browser.get("/ws/v1/cluster/apps?states=RUNNING",
                         headers={"Referer": f"http://127.0.0.1:{proxy.port}/_/127.0.0.1:{rm.port}/cluster"})
    assert script.status_code == 307
    assert script.headers["Location"] == f"/_/127.0.0.1:{rm.port}/ws/v1/cluster/apps?states=RUNNING"


def test_upstream_auth_is_minted_for_every_request(servers: tuple[Upstream, Upstream, Upstream]) -> None:
    rm, nm, _ = servers
    counter = itertools.count(1)
    asked: list[tuple[str, int]] = []

    def mint(address: str, port: int) -> dict[str, str]:
        asked.append((address, port))
        return {"hadoop.auth": f"u=owner&s={next(counter)}"}

    with (running_proxy(rm, nm, auth=mint) as proxy,
          logged_in(proxy) as browser):
        browser.cookies.set("checked_application_1", "true")
        first = browser.get(f"/_/127.0.0.1:{rm.port}/ws/v1/cluster").json()
        second = browser.get(f"/_/127.0.0.1:{rm.port}/ws/v1/cluster").json()
    # The browser's cookies (a daemon's own among them) go on; the proxy's token does not; the auth cookie is new
    # for each request.
    assert first["cookie"] == "checked_application_1=true; hadoop.auth=u=owner&s=1"
    assert second["cookie"] == "checked_app=true; checked_application_1=true; hadoop.auth=u=owner&s=2"
    assert first["host"] == f"127.0.0.1:{rm.port}"
    assert asked == [("127.0.0.1", rm.port)] * 2  # minted for the daemon the request goes to


def test_nothing_goes_to_a_daemon_port_that_is_not_the_owners(servers: tuple[Upstream, Upstream, Upstream]) -> None:
    """A port another user holds (the check raises UpstreamRefused): 502 with the reason, and the upstream gets no
    request at all, so neither the minted cookie nor the browser's own cookies reach it."""
    rm, nm, _ = servers

    def refuse(address: str, port: int) -> dict[str, str]:
        raise UpstreamRefused(f"not forwarded to the NodeManager of n2 ({address}:{port}): held by uid 1001")

    before = len(nm.requests)
    with running_proxy(rm, nm, auth=refuse) as proxy, logged_in(proxy) as browser:
        browser.cookies.set("hadoop.auth", "u=owner&s=daemon-issued")
        answer = browser.get(f"/_/127.0.0.1:{nm.port}/node")
    assert answer.status_code == 502 and "held by uid 1001" in answer.text
    assert len(nm.requests) == before


def test_a_port_in_use_is_refused(servers: tuple[Upstream, Upstream, Upstream]) -> None:
    rm, nm, _ = servers
    with pytest.raises(OSError):
        WebProxy({}, "x:1", port=rm.port)


def test_pure_helpers() -> None:
    assert split_target("/_/N2:8042/node/x") == ("n2:8042", "/node/x")
    assert split_target("/_/n2:8042") == ("n2:8042", "/")
    assert split_target("/cluster") is None and split_target("/_/n2/x") is None
    known = ["n2:8042", "10.77.0.12:8042"]
    assert rewrite_links("see http://N2:8042/node and https://n2:80420/x", known) == \
        "see /_/N2:8042/node and https://n2:80420/x"
    # Protocol-relative, as the ResourceManager's nodes page links a NodeManager (``href='//' + httpAddress``, Hadoop
    # 3.4.2's NodesPage), also JavaScript-escaped; not inside another URL.
    assert rewrite_links("<a href='//n2:8042'>n2:8042</a> '\\/\\/n2:8042\\/node'", known) == \
        "<a href='/_/n2:8042'>n2:8042</a> '\\/_\\/n2:8042\\/node'"
    assert rewrite_links("<a href='//n2:8042'>", known, prefix="/rnode/n1/9/_/") == "<a href='/rnode/n1/9/_/n2:8042'>"
    assert rewrite_links("file://n2:8042/x ftp://n2:8042 a//n2:8042 //n3:8042", known) == \
        "file://n2:8042/x ftp://n2:8042 a//n2:8042 //n3:8042"
    assert rewrite_location("http://10.77.0.12:8042/jobhistory", known, "n1:1") == "/_/10.77.0.12:8042/jobhistory"
    assert rewrite_location("http://elsewhere:8042/x", known, "n1:1") == "http://elsewhere:8042/x"
    assert ssh_command(18080, "login1") == "ssh -N -L 18080:127.0.0.1:18080 login1"
    assert login_host().split(".")[0] == socket.gethostname().split(".")[0] != "localhost"


def test_cluster_endpoints_of_a_plan(make_spec: Callable[..., JobSpec],
                                     make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(make_spec(nodes=3))
    endpoints = cluster_endpoints(plan)
    master, other = plan.nodes[0], plan.nodes[2]
    p = plan.ports
    assert endpoints[f"{master.name}:{p.rm_web}"] == Endpoint("ResourceManager", master.address, p.rm_web)
    assert endpoints[f"{master.address}:{p.jhs_web}"].role == "JobHistoryServer"
    assert endpoints[f"{other.name}:{p.nm_web}"] == Endpoint(f"NodeManager {other.name}", other.address, p.nm_web)
    assert endpoints[f"{other.address}:{p.nm_web}"].address == other.address == "10.0.0.3"
    for port in (p.rm, p.rm_scheduler, p.rm_admin, p.nm, p.shuffle, p.jhs):  # RPC ports: never
        assert not any(key.endswith(f":{port}") for key in endpoints), port
    assert {e.port for e in endpoints.values()} == {p.rm_web, p.jhs_web, p.nm_web}
    assert {e.address for e in endpoints.values()} == {"10.0.0.1", "10.0.0.2", "10.0.0.3"}


def test_upstream_auth_of_a_plan(make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``simple``: nothing sent (the daemons see dr.who); ``per-cluster``: the owner's cookie that
    ``launcher.security.webauth`` signs (here a stand-in module with its interface), a new one for every request."""
    assert upstream_auth(make_test_plan(make_spec(security="simple"))) is None
    secure = make_test_plan(make_spec(security="per-cluster"))
    signed = itertools.count(1)

    class Signer:
        refused: dict[object, object] = {}

        def header(self, address: str, port: int) -> str:
            return f'hadoop.auth="u={secure.user}&s={next(signed)}&to={address}:{port}"'

    seen = []
    fake = types.ModuleType("launcher.security.webauth")
    fake.web_auth = lambda plan: seen.append(plan) or Signer()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "launcher.security.webauth", fake)
    mint = upstream_auth(secure)
    assert mint is not None and seen == [secure]
    assert mint("10.0.0.1", 7) == {"hadoop.auth": f'"u={secure.user}&s=1&to=10.0.0.1:7"'}
    assert mint("10.0.0.2", 8) == {"hadoop.auth": f'"u={secure.user}&s=2&to=10.0.0.2:8"'}


def raw_get(proxy: WebProxy, target: str) -> tuple[int, dict[str, str]]:
    """``GET target`` sent byte for byte (an HTTP client would normalize ``\\`` and ``//``): status and headers."""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\nConnection: close\r\n\r\n".encode())
        answer = read_http_head(sock)
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in head[1:])
    return int(head[0].split()[1]), headers


@pytest.mark.parametrize(("path", "location"), [
    ("/\\evil.example/", "/evil.example/"),
    ("//evil.example/", "/evil.example/"),
    ("/\\/\\evil.example/x", "/evil.example/x"),
    ("///evil.example", "/evil.example"),
    ("/_/127.0.0.1:1/cluster", "/_/127.0.0.1:1/cluster"),
    ("/", "/"),
])
def test_the_token_redirect_stays_on_the_proxy(proxy: WebProxy, path: str, location: str) -> None:
    """Issue 36: with a valid token, ``/\\evil.example/?token=...`` redirected to ``/\\evil.example/``, which a browser
    reads as ``//evil.example/`` (another host: an open redirect). The ``Location`` keeps exactly one leading ``/``."""
    status, headers = raw_get(proxy, f"{path}?a=1&token={proxy.token}")
    assert (status, headers["Location"]) == (302, f"{location}?a=1")
    assert headers["Location"][1:2] not in ("/", "\\")


# -- JupyterLab through the proxy (issue 40 item 1) -------------------------------------------------------------------

def test_websocket_and_notebook_decisions() -> None:
    """What makes a request a WebSocket handshake, whose ``Origin`` may open one, the path sent to JupyterLab (its
    ``base_url`` is the proxy's prefix: the whole path) and to Hadoop's daemons (the rest), the token cut out."""
    from launcher.cli.webproxy import is_websocket, portal_origins, same_origin, strip_secret, upstream_path

    assert is_websocket("websocket", "Upgrade") and is_websocket("WebSocket", "keep-alive, Upgrade")
    assert not is_websocket("websocket", "keep-alive") and not is_websocket(None, "Upgrade")
    assert not is_websocket("h2c", "Upgrade") and not is_websocket("", None)
    assert same_origin("http://127.0.0.1:8080", 8080) and same_origin("http://localhost:8080/", 8080)
    assert same_origin(None, 8080)  # no browser: the cookie is checked as for any request
    assert not same_origin("http://127.0.0.1:8081", 8080) and not same_origin("https://evil.example", 8080)
    assert not same_origin("null", 8080)
    lab = Endpoint("JupyterLab", "10.0.0.1", 9017, notebook=True, base_url="/_/10.0.0.1:9017/")
    rm = Endpoint("ResourceManager", "10.0.0.1", 9004)
    assert upstream_path(lab, "10.0.0.1:9017", "/lab/tree/x.ipynb") == "/_/10.0.0.1:9017/lab/tree/x.ipynb"
    assert upstream_path(rm, "10.0.0.1:9004", "/cluster") == "/cluster"
    # Behind Open OnDemand, JupyterLab serves under the portal's base too: /rnode/ sent the rest only.
    portal = Endpoint("JupyterLab", "10.0.0.1", 9017, notebook=True, base_url="/rnode/n1/4567/_/10.0.0.1:9017/")
    assert upstream_path(portal, "10.0.0.1:9017", "/api/kernels") == "/rnode/n1/4567/_/10.0.0.1:9017/api/kernels"
    # A page of the portal (its origin as its proxy forwards it) may open a WebSocket, another site's may not.
    forwarded = {"Host": "10.0.0.1:4567", "X-Forwarded-Host": "ood.example.org, inner", "X-Forwarded-Proto": "https"}
    origins = portal_origins(forwarded)  # type: ignore[arg-type]
    assert origins == {"https://ood.example.org", "http://10.0.0.1:4567"}
    assert same_origin("https://ood.example.org", 4567, origins) and same_origin("http://10.0.0.1:4567", 4567, origins)
    assert not same_origin("http://ood.example.org", 4567, origins)  # the scheme is part of the origin
    assert not same_origin("https://evil.example", 4567, origins) and not same_origin("https://evil.example", 4567)
    assert portal_origins({"Host": "h:1", "X-Forwarded-Host": "p", "X-Forwarded-Proto": "gopher"}) == {"http://h:1"}
    assert strip_secret(b'{"token": "s3cr3t", "x": "s3cr3ts3cr3t"}', "s3cr3t") == b'{"token": "", "x": ""}'
    assert strip_secret(b"body", None) == b"body" and strip_secret(b"body", "") == b"body"


class LabUpstream:
    """A real HTTP and WebSocket-handshake server on 127.0.0.1 answering as JupyterLab under ``base_url``
    ``/_/127.0.0.1:<port>/``: a page whose configuration holds its token, and a ``101`` after which it echoes every
    byte in upper case; each request's head recorded."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.heads: list[dict[str, str]] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            data = read_http_head(conn)
            if b"\r\n\r\n" not in data:
                return
            head = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
            fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
            fields["request"] = head[0]
            self.heads.append(fields)
            target = head[0].split()[1]
            if target.endswith("/redirect-me"):  # as JupyterLab redirects: to a path under its base_url
                conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                             % target.replace("/redirect-me", "/lab").encode())
                return
            if fields.get("upgrade") == "websocket":
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
                while chunk := conn.recv(4096):
                    conn.sendall(chunk.upper())
                return
            body = json.dumps({"token": self.token, "path": head[0].split()[1]}).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self) -> None:
        self.sock.close()


@contextlib.contextmanager
def lab_proxy(lab: LabUpstream, headers: Callable[[str, int], dict[str, str]], base: str = "/",
              **kwargs: object) -> Iterator[WebProxy]:
    """A started proxy (under ``base``, with ``kwargs``) whose one endpoint is ``lab``, JupyterLab serving under
    ``base``, closed on exit."""
    key = f"127.0.0.1:{lab.port}"
    endpoint = Endpoint("JupyterLab", "127.0.0.1", lab.port, notebook=True, base_url=f"{base}_/{key}/")
    proxy = WebProxy({key: endpoint}, key, notebook=headers, base=base, **kwargs).start()  # type: ignore[arg-type]
    try:
        yield proxy
    finally:
        proxy.close()


def test_jupyterlab_gets_its_token_from_the_proxy_and_the_browser_never_sees_it() -> None:
    """The browser has the proxy's cookie only: the request reaches JupyterLab with its whole path (``base_url``) and
    ``Authorization: token`` added by the proxy (not the browser's own ``Authorization`` nor the proxy's cookie), the
    answer has the token cut out; 403 without the proxy's cookie, 502 and nothing sent when the port is not the
    owner's JupyterLab's."""
    lab = LabUpstream("jupyter-s3cr3t")
    asked: list[tuple[str, int]] = []

    def ours(address: str, port: int) -> dict[str, str]:
        asked.append((address, port))
        return {"Authorization": "token jupyter-s3cr3t"}

    try:
        with lab_proxy(lab, ours) as proxy:
            assert proxy.notebook_url == f"http://127.0.0.1:{proxy.port}/_/127.0.0.1:{lab.port}/lab?token={proxy.token}"
            with client(proxy) as stranger:
                assert stranger.get(f"/_/127.0.0.1:{lab.port}/api/kernels").status_code == 403
            assert lab.heads == []
            with logged_in(proxy) as browser:
                page = browser.get(f"/_/127.0.0.1:{lab.port}/lab/tree/a.ipynb", headers={"Authorization": "x"})
            assert page.status_code == 200 and page.json() == {"token": "", "path": f"/_/127.0.0.1:{lab.port}/lab"
                                                                                    "/tree/a.ipynb"}
            assert "jupyter-s3cr3t" not in page.text and asked == [("127.0.0.1", lab.port)]
            (head,) = lab.heads
            assert head["authorization"] == "token jupyter-s3cr3t" and proxy.cookie not in head.get("cookie", "")

        def refused(address: str, port: int) -> dict[str, str]:
            raise UpstreamRefused(f"not forwarded to 127.0.0.1:{port}: held by another user's process (mallory)")

        with lab_proxy(lab, refused) as proxy, logged_in(proxy) as browser:
            answer = browser.get(f"/_/127.0.0.1:{lab.port}/lab")
        assert answer.status_code == 502 and "mallory" in answer.text and len(lab.heads) == 1
    finally:
        lab.close()


def handshake(proxy: WebProxy, path: str, origin: str, cookie: str, **extra: str) -> socket.socket:
    """A WebSocket handshake to ``proxy`` (``extra``: more headers, ``X_Forwarded_Host`` → ``X-Forwarded-Host``)."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    more = "".join(f"{name.replace('_', '-')}: {value}\r\n" for name, value in extra.items())
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\nCookie: {cookie}\r\n{more}\r\n").encode())
    return sock


def test_a_websocket_is_relayed_both_ways_after_the_handshake() -> None:
    """``Upgrade: websocket`` (a kernel's channels): the handshake goes to JupyterLab with its token and without the
    browser's cookie and origin, its ``101`` comes back, then bytes flow both ways as they are; from another origin,
    403 and nothing reaches JupyterLab."""
    lab = LabUpstream("t0k")
    try:
        with lab_proxy(lab, lambda a, p: {"Authorization": "token t0k"}) as proxy:
            cookie = f"{proxy.cookie}={proxy.token}"
            path = f"/_/127.0.0.1:{lab.port}/api/kernels/k1/channels?session_id=s"
            with handshake(proxy, path, "http://evil.example", cookie) as sock:
                assert read_http_head(sock).startswith(b"HTTP/1.1 403")
            assert lab.heads == []
            with handshake(proxy, path, f"http://127.0.0.1:{proxy.port}", cookie) as sock:
                assert read_http_head(sock).startswith(b"HTTP/1.1 101")
                sock.sendall(b"frame one")
                echoed = b""
                while len(echoed) < len(b"FRAME ONE"):
                    echoed += sock.recv(4096)
                assert echoed == b"FRAME ONE"
            (head,) = lab.heads
            assert head["request"] == f"GET {path} HTTP/1.1" and head["authorization"] == "token t0k"
            assert "cookie" not in head and "origin" not in head and head["host"] == f"127.0.0.1:{lab.port}"
    finally:
        lab.close()


def test_the_notebook_token_file_is_read_only_when_it_is_private(make_spec: Callable[..., JobSpec],
                                                                  make_test_plan: Callable[..., ClusterPlan]) -> None:
    """JupyterLab's token file (the master's agent writes it, :func:`launcher.render.notebook.write_token`): in the
    owner's state directory, never in the cluster directory on the shared filesystem; none before JupyterLab starts,
    no JupyterLab endpoint then; read when 0600 (then the endpoint is there, under the master's address only);
    refused when others may read it."""
    import os
    from pathlib import Path

    from launcher.cli.webproxy import notebook_endpoint, notebook_token
    from launcher.render.notebook import token_path, write_token

    plan = make_test_plan(make_spec(nodes=2))
    assert notebook_token(plan) is None and notebook_endpoint(cluster_endpoints(plan)) is None
    path = write_token(plan, "abc\n")
    assert path == token_path(plan) and path.parent == plan.security.client_dir
    assert not path.is_relative_to(Path(plan.run_dir))
    assert os.stat(path).st_mode & 0o777 == 0o600 and os.stat(path.parent).st_mode & 0o777 == 0o700
    assert notebook_token(plan) == "abc"
    key = notebook_endpoint(cluster_endpoints(plan))
    assert key == f"{plan.master.address}:{plan.ports.notebook_web}"
    os.chmod(path, 0o644)
    with pytest.raises(UpstreamRefused, match="mode 0644"):
        notebook_token(plan)


# -- behind Open OnDemand (issue 40 item 2): --bind, --base-url, --password-file -------------------------------------

#: The base path Open OnDemand's proxy serves the app under (``/rnode/<host>/<port>/``).
BASE = "/rnode/n1/34567/"
PASSWORD = "k3yOfTheSession0123456789abcdefX"


@pytest.fixture
def portal_proxy(servers: tuple[Upstream, Upstream, Upstream]) -> Iterator[WebProxy]:
    """The proxy as the OnDemand app starts it: under :data:`BASE`, opened with :data:`PASSWORD`."""
    rm, nm, _ = servers
    with running_proxy(rm, nm, base=BASE, password=PASSWORD) as started:
        yield started


def login(browser: httpx.Client, password: str | None, path: str = f"{BASE}login", **form: str) -> httpx.Response:
    """What view.html.erb's form sends: a POST of ``password`` (when given) to ``path``."""
    return browser.post(path, data={**({"password": password} if password is not None else {}), **form})


def test_the_password_posted_to_login_sets_a_cookie_for_the_base_path_and_redirects(
        servers: tuple[Upstream, Upstream, Upstream], portal_proxy: WebProxy) -> None:
    rm, nm, _ = servers
    assert portal_proxy.url == f"http://127.0.0.1:{portal_proxy.port}{BASE}"  # no token in it
    with client(portal_proxy) as browser:
        answer = login(browser, PASSWORD)
        assert answer.status_code == 303 and answer.headers["Location"] == BASE
        cookie = answer.headers["Set-Cookie"]
        # The cookie is the proxy's random token, never the password, and goes only to the base path.
        assert cookie == f"{cookie_name(portal_proxy.port)}={portal_proxy.token}; Path={BASE}; HttpOnly; " \
                         "SameSite=Strict"
        assert PASSWORD not in cookie
        browser.cookies.set(cookie_name(portal_proxy.port), portal_proxy.token)
        # OnDemand's /rnode/ proxy takes the base off and puts it in front of the answer's Location itself; its
        # /node/ proxy sends the whole path and passes the Location on: both are the same page.
        for home, base in (("/", "/"), (BASE, BASE)):
            moved = browser.get(home)
            assert moved.status_code == 302 and moved.headers["Location"] == f"{base}_/127.0.0.1:{rm.port}/cluster"
        for page in (f"/_/127.0.0.1:{rm.port}/cluster", f"{BASE}_/127.0.0.1:{rm.port}/cluster"):
            shown = browser.get(page)
            assert shown.status_code == 200 and "Logs" in shown.text
        assert rm.requests[-1]["path"] == "/cluster"
        # `next`: a page of the proxy, given with the base or without; never another host.
        nodes = f"{BASE}_/127.0.0.1:{rm.port}/cluster/nodes"
        for wanted, location in ((nodes, nodes), ("/_/x:1/y", f"{BASE}_/x:1/y"),
                                 ("//evil.example/", f"{BASE}evil.example/"),
                                 ("/\\evil.example", f"{BASE}evil.example"), (f"{BASE}../../x", BASE)):
            answer = login(browser, PASSWORD, f"{BASE}login?next={wanted}")
            assert (answer.status_code, answer.headers["Location"]) == (303, location), wanted


def test_without_the_password_or_with_a_wrong_one_the_login_and_every_page_are_403(
        servers: tuple[Upstream, Upstream, Upstream], portal_proxy: WebProxy) -> None:
    rm, nm, _ = servers
    with client(portal_proxy) as stranger:
        for password in (None, "", PASSWORD[:-1], PASSWORD + "x", PASSWORD.lower()):
            answer = login(stranger, password)
            assert answer.status_code == 403 and "Set-Cookie" not in answer.headers, password
            assert "wrong or missing password" in answer.text
        rnode = login(stranger, PASSWORD, "/login", password2="x")  # /rnode/ sends it so, and adds the base itself
        assert (rnode.status_code, rnode.headers["Location"]) == (303, "/")
        stranger.cookies.clear()
        assert stranger.get(f"{BASE}login").status_code == 403  # only a POST logs in
        assert stranger.post(f"{BASE}login", content=b"password=" + b"x" * 5000,
                             headers={"Content-Type": "application/x-www-form-urlencoded"}).status_code == 403
        for path in ("/", BASE, f"{BASE}_/127.0.0.1:{rm.port}/cluster", f"/_/127.0.0.1:{rm.port}/cluster"):
            answer = stranger.get(path)
            assert answer.status_code == 403 and "Open OnDemand" in answer.text, path
        # The token of the printed-URL mode opens nothing here (nobody was shown it, but it must not count).
        assert stranger.get(f"{BASE}?token={portal_proxy.token}").status_code == 403
    assert rm.requests == [] and nm.requests == []


def test_behind_a_base_path_links_redirects_and_cookies_stay_under_it(
        servers: tuple[Upstream, Upstream, Upstream], portal_proxy: WebProxy) -> None:
    rm, nm, foreign = servers
    with client(portal_proxy) as browser:
        browser.cookies.set(cookie_name(portal_proxy.port), portal_proxy.token)
        page = browser.get(f"/_/127.0.0.1:{rm.port}/cluster").text
        assert f"href='{BASE}_/127.0.0.1:{nm.port}/node/containerlogs/container_1/u'" in page
        assert f"href=\"{BASE}_/127.0.0.1:{rm.port}/cluster/app/application_1\"" in page
        assert f"src='{BASE}_/127.0.0.1:{rm.port}/static/yarn.js'" in page
        assert f"href=\\\"{BASE}_/127.0.0.1:{rm.port}/cluster/app/application_2\\\"" in page
        escaped = BASE.replace("/", "\\/")
        assert f"'{escaped}_\\/127.0.0.1:{nm.port}\\/node'" in page
        assert f"href=\\'{escaped}_\\/127.0.0.1:{rm.port}\\/cluster\\/app\\/application_3\\'" in page
        assert f"href='http://127.0.0.1:{foreign.port}/secret'" in page and "href='//example.org/x'" in page
        assert (page.count(BASE), page.count(escaped)) == (4, 2)  # each link once: never a base under the base
        # A redirect: under the base when the request came with it (/node/), else without (/rnode/ adds it).
        moved = browser.get(f"/_/127.0.0.1:{nm.port}/redirect-absolute")
        assert moved.headers["Location"] == f"/_/127.0.0.1:{nm.port}/node/allApplications"
        moved = browser.get(f"{BASE}_/127.0.0.1:{nm.port}/redirect-absolute")
        assert moved.headers["Location"] == f"{BASE}_/127.0.0.1:{nm.port}/node/allApplications"
        moved = browser.get(f"{BASE}_/127.0.0.1:{rm.port}/redirect-path")
        assert moved.headers["Location"] == f"{BASE}_/127.0.0.1:{rm.port}/cluster/apps"
        # A daemon's cookie: no Domain, and the base path instead of the portal's root.
        assert browser.get(f"/_/127.0.0.1:{rm.port}/cluster").headers["Set-Cookie"] == f"checked_app=true; Path={BASE}"
        script = browser.get("/ws/v1/x", headers={"Referer": f"https://ood.example{BASE}_/127.0.0.1:{rm.port}/cluster"})
        assert script.status_code == 307 and script.headers["Location"] == f"/_/127.0.0.1:{rm.port}/ws/v1/x"


def test_behind_a_base_path_only_cookies_a_daemon_set_go_upstream(servers: tuple[Upstream, Upstream, Upstream],
                                                                  portal_proxy: WebProxy) -> None:
    """The browser sends the portal's cookies (its session, its single sign-on) to every path of the portal: none of
    them reaches a daemon, only the proxy's own stays behind too, and a cookie a daemon set goes back to it."""
    rm, _, _ = servers
    with client(portal_proxy) as browser:
        browser.cookies.set(cookie_name(portal_proxy.port), portal_proxy.token)
        browser.cookies.set("_ood_session", "portal-secret")
        browser.cookies.set("mod_auth_openidc_session", "sso-secret")
        first = browser.get(f"/_/127.0.0.1:{rm.port}/ws/v1/cluster").json()
        assert first["cookie"] is None
        browser.get(f"/_/127.0.0.1:{rm.port}/cluster")  # sets checked_app
        browser.cookies.set("checked_app", "true")
        second = browser.get(f"/_/127.0.0.1:{rm.port}/ws/v1/cluster").json()
    assert second["cookie"] == "checked_app=true"
    assert "secret" not in json.dumps(rm.requests) and portal_proxy.token not in json.dumps(rm.requests)


@pytest.mark.parametrize(("value", "path"), [("/", "/"), ("", "/"), ("/rnode/n1/34567", "/rnode/n1/34567/"),
                                             ("/rnode/n1.ib/1/", "/rnode/n1.ib/1/"), ("rnode/x/", None),
                                             ("/a//b/", None), ("/a/../b/", None), ("/a/?x=1", None),
                                             ("/a b/", None), ("//evil.example/", None)])
def test_base_path(value: str, path: str | None) -> None:
    if path is None:
        with pytest.raises(ValueError, match="not a base path"):
            base_path(value)
    else:
        assert base_path(value) == path


def test_the_password_file_is_read_only_when_private_and_ours(tmp_path: Path) -> None:
    good = tmp_path / "pw"
    good.write_text(PASSWORD + "\n")
    good.chmod(0o600)
    assert read_password_file(good) == PASSWORD
    good.chmod(0o400)
    assert read_password_file(good) == PASSWORD
    cases: list[tuple[Path, str]] = []
    loose = tmp_path / "loose"
    loose.write_text(PASSWORD)
    loose.chmod(0o640)
    cases.append((loose, "has mode 0640: others could read the password"))
    link = tmp_path / "link"
    link.symlink_to(good)
    cases.append((link, "a symbolic link"))
    short = tmp_path / "short"
    short.write_text("abc\n" + PASSWORD)
    short.chmod(0o600)
    cases.append((short, "holds a password of 3 characters"))
    cases.append((tmp_path / "missing", "does not exist"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    cases.append((fifo, "not a regular file"))
    for path, message in cases:
        with pytest.raises(UserError, match=message) as refused:
            read_password_file(path)
        assert refused.value.field == "--password-file" and str(path) in str(refused.value), path


def test_the_password_file_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the file to another user")  # the suite runs as root in CI
    theirs = tmp_path / "theirs"
    theirs.write_text(PASSWORD)
    theirs.chmod(0o600)
    os.chown(theirs, 65534, 65534)
    with pytest.raises(UserError, match=r"is not yours \(owner nobody, mode 0600\)"):
        read_password_file(theirs)


def test_jupyterlab_behind_open_ondemand_serves_under_the_portals_base_with_the_password_only() -> None:
    """The OnDemand app's JupyterLab (``notebook --base-url /rnode/<host>/<port>/``): its requests, which OnDemand's
    /rnode/ proxy sends without the base, reach it under its base_url (base and all) with its token, only after the
    password's login; its redirects come back without the base (OnDemand adds it: ood-portal.conf.erb's ``Header
    edit Location``), under it to a request that carried it (/node/); the cookie is ``Secure`` behind https
    (``X-Forwarded-Proto``, mod_ood_proxy's); a WebSocket from the portal's origin is relayed, from another site's
    refused; and a proxy under another base says JupyterLab's pages would not load there."""
    lab = LabUpstream("t0k")
    key = f"127.0.0.1:{lab.port}"
    portal = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "ood.example.org"}
    try:
        with lab_proxy(lab, lambda a, p: {"Authorization": "token t0k"}, base=BASE, password=PASSWORD) as proxy:
            assert proxy.notebook_url == f"{BASE}_/{key}/lab" and proxy.notebook_mismatch() is None
            with client(proxy) as browser:
                assert browser.get(f"/_/{key}/api/kernels").status_code == 403 and lab.heads == []
                wrong = browser.post(f"/login?next={BASE}_/{key}/lab", data={"password": PASSWORD[1:]}, headers=portal)
                assert wrong.status_code == 403 and lab.heads == []
                login = browser.post(f"/login?next={BASE}_/{key}/lab", data={"password": PASSWORD}, headers=portal)
                assert (login.status_code, login.headers["Location"]) == (303, f"/_/{key}/lab")
                assert login.headers["Set-Cookie"] == f"{proxy.cookie}={proxy.token}; Path={BASE}; HttpOnly; " \
                                                      "SameSite=Strict; Secure"
                browser.cookies.set(proxy.cookie, proxy.token)
                kernels = browser.get(f"/_/{key}/api/kernels")
                assert kernels.json() == {"token": "", "path": f"{BASE}_/{key}/api/kernels"}
                assert lab.heads[-1]["authorization"] == "token t0k"
                assert browser.get(f"/_/{key}/redirect-me").headers["Location"] == f"/_/{key}/lab"
                assert browser.get(f"{BASE}_/{key}/redirect-me").headers["Location"] == f"{BASE}_/{key}/lab"
            cookie = f"{proxy.cookie}={proxy.token}"
            channels = f"/_/{key}/api/kernels/k1/channels"
            with handshake(proxy, channels, "https://evil.example", cookie, X_Forwarded_Host="ood.example.org",
                           X_Forwarded_Proto="https") as sock:
                assert read_http_head(sock).startswith(b"HTTP/1.1 403")
            with handshake(proxy, channels, "https://ood.example.org", cookie, X_Forwarded_Host="ood.example.org",
                           X_Forwarded_Proto="https") as sock:
                assert read_http_head(sock).startswith(b"HTTP/1.1 101")
            assert lab.heads[-1]["request"] == f"GET {BASE}_/{key}/api/kernels/k1/channels HTTP/1.1"
        with lab_proxy(lab, lambda a, p: {"Authorization": "token t0k"}, base=BASE) as proxy:
            proxy.endpoints[key] = Endpoint("JupyterLab", "127.0.0.1", lab.port, notebook=True, base_url=f"/_/{key}/")
            assert proxy.notebook_mismatch() == (f"JupyterLab serves under the base path /, this proxy under {BASE}: "
                                                 "give `--base-url /`")
    finally:
        lab.close()


def test_cookie_under_a_base_path() -> None:
    assert cookie_under("a=1; Path=/; HttpOnly", BASE) == f"a=1; HttpOnly; Path={BASE}"
    assert cookie_under("a=1", BASE) == f"a=1; Path={BASE}"
    assert cookie_under("a=1; path=/cluster; Secure", BASE) == f"a=1; Secure; Path={BASE}"
