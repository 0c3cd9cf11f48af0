"""``hpc-hadoop ui``: every web UI of a running cluster through one port of the login node (issue 27 item 3).

A small HTTP proxy (the standard library's :class:`~http.server.ThreadingHTTPServer`; upstream requests with
``httpx``) bound to ``127.0.0.1`` on the login node. One ``ssh -N -L P:127.0.0.1:P <login node>`` tunnel from a
laptop serves every page of the cluster:

- **Only the owner gets in.** Each proxy has a random token of :data:`TOKEN_BYTES` bytes; the printed URL carries
  it once (``?token=...``), the proxy answers with a cookie named after its port (:func:`cookie_name`, so that two
  proxies on one laptop do not overwrite each other's) and a redirect to the same page without it. A request with
  neither a valid token nor that cookie gets 403, whoever sends it (another user of the login node reaches
  ``127.0.0.1`` too).
- **Only the cluster's web servers are reached.** ``/_/<host>:<port>/<path>`` is forwarded to that daemon only when
  ``host:port`` is one of the cluster's web endpoints (:func:`cluster_endpoints`: the ResourceManager, whose
  ``/proxy/`` also serves the ApplicationMasters' and Spark drivers' UIs, every NodeManager, the
  JobHistoryServer), under any of the names its node goes by (the scheduler's name, the address, the reverse
  lookup of the address); anything else (an RPC port, an address outside the cluster) gets 404.
- **Links stay inside the tunnel.** Hadoop's pages link by node name and port (``http://n2:18207/node/...``) and by
  absolute path (``href='/cluster/app/...'``): in HTML and JavaScript (:data:`REWRITTEN_TYPES`) and in ``Location``
  headers, such links to a cluster endpoint become ``/_/<host>:<port>/...`` (:func:`rewrite_links`); a request for
  an absolute path that a script built (``/static/...``, ``/ws/v1/...``) is redirected under the endpoint of the page
  it came from (its ``Referer``).
- **Upstream authentication is per request**: :data:`UpstreamAuth` gives the cookies to send with each forwarded
  request (under ``security: per-cluster``, a signed ``hadoop.auth`` minted for that request; under ``simple``
  none, and the daemons see Hadoop's anonymous ``dr.who``).
- **JupyterLab** (``hpc-hadoop notebook``, :mod:`launcher.render.notebook`) is one more endpoint, marked
  ``notebook``: it runs with ``base_url`` ``/_/<address>:<port>/``, so its requests are forwarded with their whole
  path and nothing in its pages is rewritten; each carries ``Authorization: token <JupyterLab's token>``, added here
  (:data:`UpstreamHeaders`, :func:`notebook_headers`) only once the port is known to be held by the owner's JupyterLab
  (:class:`launcher.plan.daemon_sockets.DaemonSockets`, whatever ``security:`` says); the token is cut out of what
  JupyterLab answers (its page configuration carries it), so the browser only ever has the proxy's cookie. A
  WebSocket (``Upgrade: websocket``: the kernels' channels) is relayed as raw bytes both ways after the handshake
  (:func:`is_websocket`, :meth:`_Handler.relay_websocket`), and only from a page of this proxy (its ``Origin``:
  :func:`same_origin`).
- **Behind Open OnDemand** (issue 40 item 2, the ``ondemand/`` app): bound to the node's address (``bind``), served
  under a base path (``base``: ``/rnode/<host>/<port>/``, :func:`base_path`; every link, redirect and cookie path the
  proxy writes stays under it, and a request that still carries it, as ``/node/`` sends them, has it taken off), and
  opened with OnDemand's password instead of the printed token (``password``, :func:`read_password_file`): a POST of
  ``password`` to ``<base>login`` (:data:`LOGIN_PATH`) sets the proxy's cookie and redirects; anything else without
  that cookie gets 403. The portal's own cookies (its session, its single sign-on), which the browser sends to every
  path of the portal, are not forwarded there: only those a daemon set through the proxy (:meth:`WebProxy.learn`).
"""

from __future__ import annotations

import functools
import hmac
import os
import re
import secrets
import socket
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from launcher.util.errors import UserError
from launcher.util.network import base_path

if TYPE_CHECKING:
    from launcher.plan.cluster_plan import ClusterPlan

#: Bytes of randomness in a proxy's token (``secrets.token_urlsafe``: 43 URL-safe characters).
TOKEN_BYTES = 32
#: Prefix of every forwarded path: ``/_/<host>:<port>/<path>``.
PREFIX = "/_/"
#: Content types whose links are rewritten (Hadoop's pages: HTML with inline JavaScript; its scripts).
REWRITTEN_TYPES = ("text/html", "javascript", "application/xhtml")
#: Seconds an upstream daemon may take to answer one request (a container log page of a busy NodeManager).
UPSTREAM_TIMEOUT = 60.0
#: The path (under the base) a browser POSTs the password to: Open OnDemand's convention (``view.html.erb``'s form).
LOGIN_PATH = "/login"
#: Bytes of a login form's body read at most (``password=<32 characters>`` is 41).
LOGIN_MAX_BYTES = 4096
#: Characters a password file's password has at least (Open OnDemand's ``create_passwd`` default is 8).
PASSWORD_MIN_CHARS = 8
#: Request and response headers that belong to one connection, not to the message (RFC 9110 §7.6.1), or that
#: the proxy sets itself.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
                        "content-encoding", "cookie", "referer", "origin"})

#: The cookies to send upstream with one request to ``(address, port)``: called once per forwarded request (a signed
#: cookie is minted for that request and that daemon, never reused); ``{}`` for none. Raises :class:`UpstreamRefused`
#: when the port is not held by the owner's daemon: then nothing at all is sent there.
UpstreamAuth = Callable[[str, int], Mapping[str, str]]


#: The headers to send upstream with one request to a ``notebook`` endpoint ``(address, port)`` (JupyterLab's
#: ``Authorization``); raises :class:`UpstreamRefused` when the port is not the owner's JupyterLab's.
UpstreamHeaders = Callable[[str, int], Mapping[str, str]]
#: Headers of a WebSocket handshake that are not passed on (the proxy's own cookie and the browser's origin stay here;
#: ``Host`` is the upstream's).
WEBSOCKET_DROPPED = frozenset({"host", "cookie", "origin", "referer", "authorization", "proxy-authorization",
                               "connection", "upgrade"})
#: Bytes read at a time when relaying a WebSocket.
RELAY_CHUNK = 65536


class UpstreamRefused(Exception):
    """A forwarded request was not sent: the daemon's port is not the owner's daemon's socket (the message says
    whose it is, or that nothing listens)."""


def cookie_name(port: int) -> str:
    """The proxy's cookie on ``port``: ``hpc-hadoop-ui-<port>`` (browsers keep cookies per host, not per port)."""
    return f"hpc-hadoop-ui-{port}"


#: What a browser skips or reads as a slash at the start of a path (WHATWG URL parsing: a backslash is a slash in an
#: ``http`` URL, and tabs and newlines are removed wherever they are), with the C0 controls and the space.
_LEADING_NOT_PATH = re.compile(r"^[/\\\x00-\x20]+")


def local_path(path: str) -> str:
    """``path`` as a path of this proxy for a ``Location``: exactly one leading ``/``, never ``//`` or ``/\\`` (which
    a browser reads as another host: ``/\\evil.example/`` is ``//evil.example/``, an open redirect), the rest as it
    came (``/_/host:port/page``); ``/`` for an empty one."""
    return "/" + _LEADING_NOT_PATH.sub("", path)


def read_password_file(path: Path) -> str:
    """The password in ``path`` (its first line, without the line break): a regular file of this user's, not a
    symbolic link, that neither its group nor others may read (mode 0600 or stricter), opened without following a
    link and checked on the open file, so that what is checked is what is read. A password is never taken from a
    command line, which every user of the node reads in ``/proc``.

    Raises:
        UserError: the file is missing, a link, not a regular file, not this user's, readable by others, or holds
            fewer than :data:`PASSWORD_MIN_CHARS` characters (one line naming the file, its owner and mode, the fix).
    """
    field = "--password-file"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UserError(f"{path} does not exist", field=field, fix="write the password there first "
                        "(umask 077; the OnDemand app's before.sh does)") from None
    except OSError as exc:
        raise UserError(f"{path} cannot be opened: {exc.strerror}" + (" (a symbolic link: no link is followed)"
                        if os.path.islink(path) else ""), field=field,
                        fix="give the password file itself, a regular file of yours") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        mode = stat.S_IMODE(info.st_mode)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{path} is not a regular file", field=field, fix="give a regular file of yours")
        if info.st_uid != os.geteuid():
            from launcher.util.safedirs import owner_name

            raise UserError(f"{path} is not yours (owner {owner_name(info.st_uid)}, mode {mode:04o})", field=field,
                            fix="write the password into a file of your own")
        if mode & 0o077:
            raise UserError(f"{path} has mode {mode:04o}: others could read the password", field=field,
                            fix=f"chmod 600 {path}")
        text = handle.read(LOGIN_MAX_BYTES).decode("utf-8", errors="replace")
    password = text.split("\n", 1)[0].rstrip("\r")
    if len(password) < PASSWORD_MIN_CHARS:
        raise UserError(f"{path} holds a password of {len(password)} characters", field=field,
                        fix=f"write one of at least {PASSWORD_MIN_CHARS} random characters on its first line")
    return password


@dataclass(frozen=True)
class Endpoint:
    """One web server of the cluster.

    Attributes:
        role: what it is, for people (``ResourceManager``, ``NodeManager n2``, ``JobHistoryServer``).
        address: the IPv4 address the proxy connects to (the node's, from the plan).
        port: its web port (from the cluster's port block).
        notebook: JupyterLab's: its requests keep their path (under ``base_url``) and carry its token.
        base_url: JupyterLab's ``base_url`` (:func:`launcher.render.notebook.base_url`), the path its requests are
            sent under; empty for Hadoop's daemons.
    """

    role: str
    address: str
    port: int
    notebook: bool = False
    base_url: str = ""


def is_websocket(upgrade: str | None, connection: str | None) -> bool:
    """True for a WebSocket handshake (RFC 6455 §4.1): the ``Upgrade`` header ``websocket`` and the ``Connection``
    header naming ``upgrade`` among its tokens (both compared without case)."""
    tokens = {token.strip().lower() for token in (connection or "").split(",")}
    return (upgrade or "").strip().lower() == "websocket" and "upgrade" in tokens


def same_origin(origin: str | None, port: int, portal: Iterable[str] = ()) -> bool:
    """True when a WebSocket's ``Origin`` is a page of the proxy on ``port`` (``http://127.0.0.1:<port>`` or
    ``http://localhost:<port>``, what the tunnel gives the laptop) or, behind a portal, one of ``portal``
    (:func:`portal_origins`: the portal's own origin, whose pages the proxy's are); a handshake without ``Origin``
    (no browser) is let through, its cookie checked as any request's. A page of another site opening a WebSocket
    here (cross-site WebSocket hijacking: the browser would send the cookie) is refused."""
    if origin is None:
        return True
    allowed = {f"http://127.0.0.1:{port}", f"http://localhost:{port}", *(o.lower() for o in portal)}
    return origin.rstrip("/").lower() in allowed


class _Headers(Protocol):
    """What :func:`portal_origins` reads of a request's headers (``http.server``'s message, or a mapping)."""

    def get(self, name: str, /) -> str | None: ...


def portal_origins(headers: _Headers) -> set[str]:
    """The origins a request's pages have behind a portal's reverse proxy: ``<X-Forwarded-Proto>://<X-Forwarded-Host>``
    (Apache's mod_proxy adds ``X-Forwarded-Host``, the browser's ``Host``; Open OnDemand's mod_ood_proxy sets
    ``X-Forwarded-Proto``: OSC/ondemand ``mod_ood_proxy/lib/ood/proxy.lua``), the first of each when a chain of
    proxies gave several, and ``http://<Host>`` (the node's address, reached without the portal). Lower case."""
    origins: set[str] = set()
    host = (headers.get("X-Forwarded-Host") or "").split(",")[0].strip()
    scheme = (headers.get("X-Forwarded-Proto") or "http").split(",")[0].strip().lower()
    if host and scheme in ("http", "https"):
        origins.add(f"{scheme}://{host}".lower())
    own = headers.get("Host")
    if own:
        origins.add(f"http://{own.strip()}".lower())
    return origins


def upstream_path(endpoint: Endpoint, host_port: str, rest: str) -> str:
    """The path sent upstream for ``<prefix><host_port><rest>``: ``rest`` under JupyterLab's ``base_url`` for a
    ``notebook`` endpoint (its requests keep the path it serves under), ``rest`` for Hadoop's daemons."""
    return f"{endpoint.base_url}{rest[1:]}" if endpoint.notebook else rest


def strip_secret(body: bytes, secret: str | None) -> bytes:
    """``body`` with every occurrence of ``secret`` (JupyterLab's token, in its page configuration) removed."""
    return body.replace(secret.encode(), b"") if secret else body


def _names(name: str, address: str) -> list[str]:
    """The host names a node's links may use, lower case: its scheduler name, its address, the reverse lookup of the
    address (what a Hadoop daemon calls itself: ``InetAddress.getHostName``) when there is one."""
    names = [name.lower(), address.lower()]
    try:
        names.append(socket.gethostbyaddr(address)[0].lower())
    except OSError:
        pass
    return list(dict.fromkeys(names))


def cluster_endpoints(plan: ClusterPlan) -> dict[str, Endpoint]:
    """The web endpoints of ``plan``'s cluster, keyed by every ``host:port`` that names one (lower case): the
    ResourceManager (``yarn.resourcemanager.webapp.address``; its web proxy ``/proxy/<application>/`` serves each
    running ApplicationMaster's and Spark driver's UI), the JobHistoryServer (``mapreduce.jobhistory.webapp.address``),
    and the NodeManager of every node that runs one (``yarn.nodemanager.webapp.address``), and JupyterLab once the
    master's agent started it (under the base path its request named). No RPC port, nothing outside the cluster. A
    node's address is where its daemons listen (under ``interface:``, as its agent recorded it:
    :func:`launcher.plan.daemon_sockets.bound_addresses`).

    Raises:
        UpstreamRefused: JupyterLab's token file is not the owner's private file.
        UserError: JupyterLab's request names a base that is not a base path.
    """
    from launcher.plan.daemon_sockets import bound_addresses

    endpoints: dict[str, Endpoint] = {}
    addresses = bound_addresses(plan)

    def add(node_name: str, address: str, port: int, role: str) -> None:
        for host in _names(node_name, address):
            endpoints[f"{host}:{port}"] = Endpoint(role=role, address=address, port=port)

    master = plan.master
    add(master.name, addresses[master.name], plan.ports.rm_web, "ResourceManager")
    add(master.name, addresses[master.name], plan.ports.jhs_web, "JobHistoryServer")
    for node in plan.nodemanagers:
        add(node.name, addresses[node.name], plan.ports.nm_web, f"NodeManager {node.name}")
    if notebook_token(plan) is not None:  # JupyterLab was started: only under the address its base_url names
        from launcher.render.notebook import base_url, server_base

        address = addresses[master.name]
        endpoints[f"{address.lower()}:{plan.ports.notebook_web}"] = Endpoint(
            role="JupyterLab", address=address, port=plan.ports.notebook_web, notebook=True,
            base_url=base_url(address, plan.ports.notebook_web, server_base(plan)))
    return endpoints


def notebook_endpoint(endpoints: Mapping[str, Endpoint]) -> str | None:
    """The ``host:port`` of the JupyterLab endpoint among ``endpoints``, or ``None``."""
    return next((key for key, endpoint in endpoints.items() if endpoint.notebook), None)


def notebook_token(plan: ClusterPlan) -> str | None:
    """JupyterLab's token as the master's agent wrote it (:func:`launcher.render.notebook.token_path`, in the owner's
    state directory), or ``None`` when there is none (no server was started); read only when the file is the
    owner's, not a link and 0600.

    Raises:
        UpstreamRefused: the file is not the owner's, a link, or readable by others.
    """
    import os
    import stat

    from launcher.render.notebook import token_path
    from launcher.util.errors import UserError

    try:
        path = token_path(plan)
    except UserError as exc:
        raise UpstreamRefused(f"{exc.message}; nothing was sent to JupyterLab") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UpstreamRefused(f"{path}: {exc.strerror}; nothing was sent to JupyterLab") from None
    with os.fdopen(fd) as file:
        info = os.fstat(file.fileno())
        if info.st_uid != os.geteuid() or not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
            raise UpstreamRefused(f"{path} is not your private file (owner uid {info.st_uid}, mode "
                                  f"{info.st_mode & 0o777:04o}); nothing was sent to JupyterLab")
        return file.read().strip() or None


def notebook_headers(plan: ClusterPlan) -> UpstreamHeaders:
    """The headers of each request to ``plan``'s JupyterLab: ``Authorization: token <its token>``
    (:func:`notebook_token`), once its port is known to be held by the owner's JupyterLab
    (:class:`launcher.plan.daemon_sockets.DaemonSockets`: from the kernel on this node, from the master's agent
    elsewhere); :class:`UpstreamRefused` otherwise, and nothing is sent there."""
    from launcher.plan.daemon_sockets import DaemonSockets, WebEndpoint

    sockets = DaemonSockets(plan)

    def headers(address: str, port: int) -> dict[str, str]:
        endpoint = WebEndpoint("jupyterlab", plan.master.name, address, port)
        verdict = sockets.check(endpoint)
        if not verdict.ours:
            raise UpstreamRefused(f"not forwarded to {endpoint}: {verdict.why}; nothing was sent there")
        token = notebook_token(plan)
        if token is None:
            raise UpstreamRefused(f"not forwarded to {endpoint}: no JupyterLab token; nothing was sent there")
        return {"Authorization": f"token {token}"}

    return headers


#: ``http://host:port`` (also with JavaScript-escaped slashes, ``http:\/\/host:port``), or protocol-relative
#: ``//host:port`` where a URL starts (the ResourceManager's nodes page links each NodeManager as ``href='//n2:8042'``),
#: followed by a path, a quote or the end of the URL.
_ABSOLUTE = re.compile(r"(?:https?:|(?<![\w:/\\]))(\\?/)\\?/([A-Za-z0-9.-]+):(\d{1,5})(?![\d])")
#: An absolute path in an HTML attribute (``href="/x"``, ``src='/x'``, also escaped in a JavaScript string:
#: ``href=\"/x\"``, ``href=\'\/x\'``) that is neither protocol-relative (``//host``) nor already the proxy's (``/_/``).
_ROOT_PATH = re.compile(r"""(\b(?:href|src|action)\s*=\s*(?:\\?["'])?)(\\?/)(?!\\?/|_\\?/)""", re.IGNORECASE)


@functools.lru_cache(maxsize=8)
def _root_path(prefix: str) -> re.Pattern[str]:
    """:data:`_ROOT_PATH` for the proxy's ``prefix`` (``/rnode/n1/34567/_/``): a path already under it is left alone."""
    if prefix == PREFIX:
        return _ROOT_PATH
    ours = r"\\?/".join(re.escape(part) for part in prefix.strip("/").split("/")) + r"\\?/"
    return re.compile(r"""(\b(?:href|src|action)\s*=\s*(?:\\?["'])?)(\\?/)(?!\\?/|""" + ours + ")", re.IGNORECASE)


def rewrite_links(text: str, endpoints: Iterable[str], base: str | None = None, prefix: str = PREFIX) -> str:
    """``text`` with its links to the cluster's endpoints made the proxy's.

    Args:
        text: an HTML page, a script, or one URL (a ``Location`` header).
        endpoints: the ``host:port`` keys that may be rewritten (:func:`cluster_endpoints`; compared lower case);
            a link to anything else is left as it is (the browser fails to follow it, nothing leaks).
        base: ``host:port`` of the endpoint that served ``text``: its absolute paths in ``href``, ``src`` and
            ``action`` attributes become ``/_/<base>/...``; ``None``: they are left alone.
        prefix: what the proxy's paths start with: :data:`PREFIX`, or under a base path ``<base path>_/``
            (``/rnode/n1/34567/_/``, :attr:`WebProxy.prefix`).

    Returns:
        ``http://n2:18207/node`` → ``/_/n2:18207/node`` (``http:\\/\\/n2:18207`` → ``\\/_\\/n2:18207``).
    """
    known = {e.lower() for e in endpoints}

    def absolute(match: re.Match[str]) -> str:
        slash, host, port = match.group(1), match.group(2), match.group(3)
        if f"{host.lower()}:{port}" not in known:
            return match.group(0)
        return f"{prefix.replace('/', slash)}{host}:{port}"

    text = _ABSOLUTE.sub(absolute, text)
    if base is not None:
        text = _root_path(prefix).sub(
            lambda m: f"{m.group(1)}{prefix.replace('/', m.group(2))}{base}{m.group(2)}", text)
    return text


def rewrite_location(location: str, endpoints: Iterable[str], base: str, prefix: str = PREFIX) -> str:
    """A ``Location`` header of a response from ``base``: a URL of a cluster endpoint, or an absolute path on
    ``base``, made the proxy's (:func:`rewrite_links`, under ``prefix``); anything else is returned as it is."""
    if location.startswith("/") and not location.startswith("//"):
        return f"{prefix}{base}{location}"
    return rewrite_links(location, endpoints, prefix=prefix)


def split_target(path: str, prefix: str = PREFIX) -> tuple[str, str] | None:
    """``/_/<host>:<port>/<rest>`` (``prefix``, then ``host:port``) → (``host:port`` lower case, ``/<rest>``);
    ``None`` if ``path`` is not of that form."""
    if not path.startswith(prefix):
        return None
    target, _, rest = path[len(prefix):].partition("/")
    if not re.fullmatch(r"[A-Za-z0-9.-]+:\d{1,5}", target):
        return None
    return target.lower(), "/" + rest


class WebProxy:
    """The proxy of one cluster: a server on ``127.0.0.1``, each request in a thread of its own.

    Args:
        endpoints: ``host:port`` → :class:`Endpoint` (:func:`cluster_endpoints`).
        home: the ``host:port`` the root URL ``/`` goes to (the ResourceManager's).
        port: the port to listen on; 0: a free one chosen by the kernel.
        token: the secret of the printed URL; default: a new one of :data:`TOKEN_BYTES` random bytes.
        auth: the cookies each forwarded request carries (:data:`UpstreamAuth`); ``None``: none.
        bind: the address to listen on (the loopback interface: only this machine, through ssh, reaches it; behind
            Open OnDemand, the node's address its proxy connects to).
        base: the path the proxy is served under (:func:`base_path`; ``/rnode/<host>/<port>/`` behind Open
            OnDemand): every path it writes starts with it.
        password: the password a browser POSTs to ``<base>login`` (:func:`read_password_file`) instead of bringing
            the token; ``None``: the token of the printed URL.

    Raises:
        OSError: the port is taken (``errno.EADDRINUSE``).
        ValueError: ``base`` is not a base path.
    """

    def __init__(self, endpoints: Mapping[str, Endpoint], home: str, *, port: int = 0, token: str | None = None,
                 auth: UpstreamAuth | None = None, notebook: UpstreamHeaders | None = None,
                 bind: str = "127.0.0.1", base: str = "/", password: str | None = None) -> None:
        self.endpoints = dict(endpoints)
        self.home = home.lower()
        self.token = token or secrets.token_urlsafe(TOKEN_BYTES)
        self.auth = auth
        self.notebook = notebook
        self.base = base_path(base)
        self.prefix = self.base + PREFIX[1:]
        self.password = password
        self.learned: set[str] = set()
        self._learned_lock = threading.Lock()
        self.http = httpx.Client(timeout=UPSTREAM_TIMEOUT, trust_env=False, follow_redirects=False)
        self.server = _Server((bind, port), self)
        self.bind = bind
        self.port = int(self.server.server_address[1])
        self.cookie = cookie_name(self.port)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The URL to open (once) in the browser: ``http://127.0.0.1:<port>/?token=<token>``; with a password, the
        base path on the bound address (``http://10.77.0.11:<port>/rnode/n1/<port>/``, no token)."""
        if self.password is not None:
            return f"http://{self.bind}:{self.port}{self.base}"
        return f"http://{self.bind}:{self.port}{self.base}?token={self.token}"

    @property
    def notebook_url(self) -> str | None:
        """JupyterLab's URL with the proxy's token (``http://127.0.0.1:<port>/_/<address>:<port>/lab?token=...``),
        when the cluster has a notebook endpoint; with a password, its path under the base
        (``/rnode/n1/<port>/_/<address>:<port>/lab``, opened through the portal after the login)."""
        key = notebook_endpoint(self.endpoints)
        if key is None:
            return None
        if self.password is not None:
            return f"{self.prefix}{key}/lab"
        return f"http://{self.bind}:{self.port}{self.prefix}{key}/lab?token={self.token}"

    def notebook_mismatch(self) -> str | None:
        """Why JupyterLab's pages would not load through this proxy: it serves under a ``base_url`` another base path
        made (``hpc-hadoop notebook --base-url``); ``None`` when it serves under this proxy's (or there is none)."""
        key = notebook_endpoint(self.endpoints)
        if key is None or self.endpoints[key].base_url == f"{self.prefix}{key}/":
            return None
        made = self.endpoints[key].base_url.removesuffix(f"{PREFIX[1:]}{key}/")
        return f"JupyterLab serves under the base path {made}, this proxy under {self.base}: give `--base-url {made}`"

    def valid(self, token: str | None) -> bool:
        """True when ``token`` is this proxy's (compared in constant time)."""
        return token is not None and hmac.compare_digest(token.encode(), self.token.encode())

    def valid_password(self, given: str | None) -> bool:
        """True when the proxy has a password and ``given`` is it (compared in constant time)."""
        return (self.password is not None and given is not None
                and hmac.compare_digest(given.encode(), self.password.encode()))

    def carries_base(self, path: str) -> bool:
        """True when a request's path starts with the base path (Open OnDemand's ``/node/`` proxy sends the whole
        path, its ``/rnode/`` proxy the rest only)."""
        return self.base != "/" and (path + "/").startswith(self.base)

    def local(self, path: str) -> str:
        """A request's path with the base path taken off when it carries it (:meth:`carries_base`):
        ``/rnode/n1/34567/_/x`` → ``/_/x``."""
        return "/" + path[len(self.base):] if self.carries_base(path) else path

    def outward(self, location: str, carried: bool) -> str:
        """A ``Location`` the proxy writes (every one under the base) as the answer to a request whose path
        ``carried`` the base or not: as it is, or without the base (``/rnode/n1/34567/_/x`` → ``/_/x``), because
        Open OnDemand's ``/rnode/`` proxy, which took the base off the request, puts it in front of every
        ``Location`` path of the answer itself (its ``Header edit Location``: OSC/ondemand
        ``ood-portal-generator/templates/ood-portal.conf.erb``)."""
        if carried or self.base == "/" or not location.startswith(self.base):
            return location
        return "/" + location[len(self.base):]

    def learn(self, set_cookie: str) -> None:
        """Remember the name of a cookie a daemon set (a ``Set-Cookie`` value): behind a base path, only such cookies
        of the browser's go upstream (:meth:`upstream_cookies`)."""
        name = set_cookie.split("=", 1)[0].strip()
        if name:
            with self._learned_lock:
                self.learned.add(name)

    def upstream_cookies(self, cookies: Mapping[str, str]) -> dict[str, str]:
        """The browser's cookies that go on to a daemon: all but the proxy's own; behind a base path (a portal's
        host, whose every path gets the portal's session cookies) only those a daemon set (:meth:`learn`)."""
        sent = {name: value for name, value in cookies.items() if name != self.cookie}
        if self.base == "/":
            return sent
        with self._learned_lock:
            return {name: value for name, value in sent.items() if name in self.learned}

    def serve_forever(self) -> None:
        """Serve until :meth:`close` (or KeyboardInterrupt in the calling thread)."""
        self.server.serve_forever(poll_interval=0.05)

    def start(self) -> WebProxy:
        """Serve on a thread of its own (tests); returns ``self``."""
        self._thread = threading.Thread(target=self.serve_forever, name="webproxy", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the listening socket and the upstream connections."""
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join()
        self.server.server_close()
        self.http.close()


class _Server(ThreadingHTTPServer):
    """The listening server of one :class:`WebProxy` (its handlers find the proxy as ``self.server.proxy``)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], proxy: WebProxy) -> None:
        self.proxy = proxy
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    """One request to the proxy (:mod:`http.server` makes one instance per request)."""

    protocol_version = "HTTP/1.1"
    server_version = "hpc-hadoop-ui"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """Quiet: the terminal shows only what ``hpc-hadoop ui`` prints."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.handle_any()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_OPTIONS = do_PATCH = do_GET  # noqa: N815

    @property
    def proxy(self) -> WebProxy:
        return self.server.proxy

    # -- answers made here -------------------------------------------------------------------
    def answer(self, status: int, text: str, headers: Mapping[str, str] | None = None) -> None:
        body = (text + "\n").encode()
        self.send_response(status)
        if status >= 400:  # a request body left unread must not be taken for the next request
            self.close_connection = True
            self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location: str, status: int = HTTPStatus.FOUND, headers: Mapping[str, str] | None = None) -> None:
        location = self.proxy.outward(location, self.carried)
        self.answer(status, f"see {location}", {"Location": location, **(headers or {})})

    #: Whether the request's path carried the proxy's base path (:meth:`WebProxy.outward`).
    carried = True

    def own_cookie(self) -> str:
        """The ``Set-Cookie`` value of the proxy's cookie: its token, for the base path only, ``HttpOnly``,
        ``SameSite=Strict``, and ``Secure`` when the browser reached the portal over https (``X-Forwarded-Proto:
        https``, which Open OnDemand's proxy sets: OSC/ondemand ``mod_ood_proxy/lib/ood/proxy.lua``), so that the
        browser never sends it over plain http."""
        proxy = self.proxy
        secure = (self.headers.get("X-Forwarded-Proto") or "").split(",")[0].strip().lower() == "https"
        return (f"{proxy.cookie}={proxy.token}; Path={proxy.base}; HttpOnly; SameSite=Strict"
                + ("; Secure" if secure else ""))

    def cookies(self) -> dict[str, str]:
        """The request's cookies, values as sent (quoted ones keep their quotes); none when the header cannot be
        parsed."""
        jar = SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie", ""))
        except CookieError:
            return {}
        return {name: morsel.coded_value for name, morsel in jar.items()}

    # -- the request -------------------------------------------------------------------------
    def handle_any(self) -> None:
        proxy = self.proxy
        parts = urlsplit(self.path)
        self.carried = proxy.carries_base(parts.path)
        path = proxy.local(parts.path)
        query = parse_qsl(parts.query, keep_blank_values=True)
        if proxy.password is not None and path == LOGIN_PATH:
            self.take_password(query)
            return
        given = [value for key, value in query if key == "token"]
        if given and proxy.password is None:
            self.take_token(given[-1], path, [(k, v) for k, v in query if k != "token"])
            return
        if not proxy.valid(self.cookies().get(proxy.cookie)):
            self.answer(HTTPStatus.FORBIDDEN, "forbidden: open the URL hpc-hadoop ui printed (it carries the "
                                              "token) in this browser first" if proxy.password is None else
                        "forbidden: connect with the button of your Open OnDemand session (it sends the password)")
            return
        if path in ("", "/"):
            self.redirect(f"{proxy.prefix}{proxy.home}/cluster")
            return
        target = split_target(path)
        if target is None:
            self.from_referer(path, parts.query)
            return
        host_port, rest = target
        endpoint = proxy.endpoints.get(host_port)
        if endpoint is None:
            self.answer(HTTPStatus.NOT_FOUND, f"not found: {host_port} is not a web server of this cluster")
            return
        self.forward(host_port, endpoint, upstream_path(endpoint, host_port, rest)
                     + (f"?{parts.query}" if parts.query else ""))

    def take_token(self, token: str, path: str, query: list[tuple[str, str]]) -> None:
        """``?token=``: the right one sets the cookie and redirects to the same page without it (:func:`local_path`:
        on this proxy, never another host); 403 otherwise."""
        if not self.proxy.valid(token):
            self.answer(HTTPStatus.FORBIDDEN, "forbidden: wrong token (use the URL hpc-hadoop ui printed)")
            return
        self.redirect(urlunsplit(("", "", self.proxy.base + local_path(path)[1:], urlencode(query), "")),
                      headers={"Set-Cookie": self.own_cookie()})

    def take_password(self, query: list[tuple[str, str]]) -> None:
        """``POST <base>login`` with ``password=`` in its form (Open OnDemand's ``view.html.erb``): the right one sets
        the cookie (the proxy's token, never the password) for the base path and redirects (303) to ``next`` when it
        is a page of the proxy, else to its home; a wrong or missing password, another method or a body over
        :data:`LOGIN_MAX_BYTES` gets 403."""
        proxy = self.proxy
        declared = self.headers.get("Content-Length") or "0"
        length = int(declared) if declared.isdigit() else -1
        if self.command != "POST" or not 0 <= length <= LOGIN_MAX_BYTES:
            self.answer(HTTPStatus.FORBIDDEN, "forbidden: connect with the button of your Open OnDemand session "
                                              "(it POSTs the password here)")
            return
        form = parse_qsl(self.rfile.read(length).decode("utf-8", errors="replace"), keep_blank_values=True)
        given = [value for key, value in form if key == "password"]
        if not proxy.valid_password(given[-1] if given else None):
            self.answer(HTTPStatus.FORBIDDEN, "forbidden: wrong or missing password")
            return
        wanted = [value for key, value in query if key == "next"]
        page = proxy.local(local_path(wanted[-1])) if wanted else "/"  # under the base, given with it or not
        target = proxy.base + (local_path(page)[1:] if ".." not in page else "")
        self.redirect(target, status=HTTPStatus.SEE_OTHER, headers={"Set-Cookie": self.own_cookie()})

    def from_referer(self, path: str, query: str) -> None:
        """An absolute path a script built (``/static/x.js``): redirected (307 keeps method and body) under the
        endpoint of the page it came from."""
        proxy = self.proxy
        referer = split_target(proxy.local(urlsplit(self.headers.get("Referer", "")).path), PREFIX)
        if referer is None or referer[0] not in proxy.endpoints:
            self.answer(HTTPStatus.NOT_FOUND, f"not found: {path} (paths are {proxy.prefix}<host>:<port>/...)")
            return
        self.redirect(f"{proxy.prefix}{referer[0]}{path}" + (f"?{query}" if query else ""),
                      status=HTTPStatus.TEMPORARY_REDIRECT)

    def upstream_credentials(self, endpoint: Endpoint) -> tuple[dict[str, str], dict[str, str]] | None:
        """The cookies and headers a request to ``endpoint`` carries (:attr:`WebProxy.auth`'s cookies for Hadoop's
        daemons, :attr:`WebProxy.notebook`'s headers for JupyterLab); ``None`` after answering 502 when they may not
        go there (:class:`UpstreamRefused`)."""
        proxy = self.proxy
        try:
            if endpoint.notebook:
                if proxy.notebook is None:
                    raise UpstreamRefused(f"no way to authenticate to {endpoint.role}; nothing was sent there")
                return {}, dict(proxy.notebook(endpoint.address, endpoint.port))
            return dict(proxy.auth(endpoint.address, endpoint.port) if proxy.auth is not None else {}), {}
        except UpstreamRefused as refused:  # not even the browser's cookies go there
            self.answer(HTTPStatus.BAD_GATEWAY, str(refused))
            return None

    def forward(self, host_port: str, endpoint: Endpoint, path: str) -> None:
        """Send the request to ``endpoint`` (its cookies but the proxy's own, plus :meth:`upstream_credentials`,
        minted for this request) and relay the answer; a WebSocket handshake is relayed as a connection
        (:meth:`relay_websocket`)."""
        proxy = self.proxy
        credentials = self.upstream_credentials(endpoint)
        if credentials is None:
            return
        minted, extra = credentials
        if is_websocket(self.headers.get("Upgrade"), self.headers.get("Connection")):
            self.relay_websocket(endpoint, path, extra)
            return
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"authorization"}]
        sent = proxy.upstream_cookies(self.cookies())
        sent.update(minted)
        if sent:
            headers.append(("Cookie", "; ".join(f"{k}={v}" for k, v in sent.items())))
        headers.extend(extra.items())
        headers.append(("Accept-Encoding", "identity"))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else None
        url = f"http://{endpoint.address}:{endpoint.port}{path}"
        try:
            response = proxy.http.send(proxy.http.build_request(self.command, url, headers=headers, content=body),
                                       stream=True)
        except httpx.HTTPError as exc:
            self.answer(HTTPStatus.BAD_GATEWAY, f"{endpoint.role} at {endpoint.address}:{endpoint.port} did not "
                                                f"answer: {exc}")
            return
        try:
            self.relay_head(host_port, endpoint, response)
            self.relay_body(host_port, response, secret=extra.get("Authorization", "").removeprefix("token ")
                            if endpoint.notebook else None)
        finally:
            response.close()

    def relay_websocket(self, endpoint: Endpoint, path: str, extra: Mapping[str, str]) -> None:
        """A WebSocket through the proxy: the handshake sent to ``endpoint`` on a connection of its own (the browser's
        headers but :data:`WEBSOCKET_DROPPED`, plus ``extra``: JupyterLab's ``Authorization``), its answer passed back
        as it came, and after a ``101`` every byte relayed both ways until either side closes. Refused (403) when its
        ``Origin`` is not this proxy's (:func:`same_origin`)."""
        import socket as sockets

        portal = portal_origins(self.headers) if self.proxy.base != "/" else set()
        if not same_origin(self.headers.get("Origin"), self.proxy.port, portal):
            self.answer(HTTPStatus.FORBIDDEN, f"forbidden: a WebSocket from {self.headers.get('Origin')}")
            return
        lines = [f"GET {path} HTTP/1.1", f"Host: {endpoint.address}:{endpoint.port}", "Connection: Upgrade",
                 "Upgrade: websocket"]
        lines += [f"{k}: {v}" for k, v in self.headers.items() if k.lower() not in WEBSOCKET_DROPPED]
        lines += [f"{k}: {v}" for k, v in extra.items()]
        try:
            upstream = sockets.create_connection((endpoint.address, endpoint.port), timeout=UPSTREAM_TIMEOUT)
        except OSError as exc:
            self.answer(HTTPStatus.BAD_GATEWAY, f"{endpoint.role} at {endpoint.address}:{endpoint.port} did not "
                                                f"answer: {exc}")
            return
        self.close_connection = True
        with upstream:
            upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            head = b""
            while b"\r\n\r\n" not in head and len(head) < RELAY_CHUNK:
                chunk = upstream.recv(RELAY_CHUNK)
                if not chunk:
                    break
                head += chunk
            self.connection.sendall(head)
            if not head.startswith((b"HTTP/1.1 101", b"HTTP/1.0 101")):
                return
            upstream.settimeout(None)
            self.connection.settimeout(None)
            back = threading.Thread(target=_pump_socket, args=(upstream, self.connection), daemon=True)
            back.start()
            try:
                while chunk := self.rfile.read1(RELAY_CHUNK):
                    upstream.sendall(chunk)
            except OSError:
                pass
            finally:
                try:
                    upstream.shutdown(sockets.SHUT_RDWR)
                except OSError:
                    pass
                back.join(timeout=5)

    def relay_head(self, host_port: str, endpoint: Endpoint, response: httpx.Response) -> None:
        """Status and headers: hop-by-hop ones dropped, ``Location`` rewritten (JupyterLab's, under its ``base_url``,
        already the proxy's) and made :meth:`WebProxy.outward`, cookies without ``Domain``."""
        self.send_response(response.status_code)
        for name, value in response.headers.multi_items():
            lower = name.lower()
            if lower in HOP_BY_HOP:
                continue
            if lower == "location":
                if not (endpoint.notebook and value.startswith(endpoint.base_url)):
                    value = rewrite_location(value, self.proxy.endpoints, host_port, self.proxy.prefix)
                value = self.proxy.outward(value, self.carried)
            elif lower == "set-cookie":
                value = re.sub(r";\s*domain=[^;]*", "", value, flags=re.IGNORECASE)
                if self.proxy.base != "/":
                    value = cookie_under(value, self.proxy.base)
                    self.proxy.learn(value)
            self.send_header(name, value)

    def relay_body(self, host_port: str, response: httpx.Response, secret: str | None = None) -> None:
        """The body: HTML and scripts with their links rewritten; anything else streamed as it comes
        (:meth:`relay_stream`). From JupyterLab (``secret``: its token), HTML and JSON with the token cut out
        (:func:`strip_secret`) and no link rewritten."""
        kind = response.headers.get("Content-Type", "").lower()
        if secret is not None and any(t in kind for t in ("text/html", "json")):
            self.send_whole(strip_secret(response.read(), secret))
        elif secret is None and any(t in kind for t in REWRITTEN_TYPES):
            encoding = response.encoding or "utf-8"
            text = response.read().decode(encoding, errors="replace")
            text = rewrite_links(text, self.proxy.endpoints, base=host_port, prefix=self.proxy.prefix)
            self.send_whole(text.encode(encoding, errors="replace"))
        else:
            self.relay_stream(response)

    def send_whole(self, body: bytes) -> None:
        """A body read whole: its length, the end of the headers, the body (none for ``HEAD``)."""
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def relay_stream(self, response: httpx.Response) -> None:
        """A body streamed as it comes: with its length when the upstream gave one, else chunked."""
        length = response.headers.get("Content-Length")
        if length is not None and "content-encoding" not in response.headers:
            self.send_header("Content-Length", length)
            self.end_headers()
            if self.command != "HEAD":
                for chunk in response.iter_raw():
                    self.wfile.write(chunk)
            return
        if self.command == "HEAD" or response.status_code in (204, 304):
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_header("Transfer-Encoding", "chunked")  # a body of unknown length (or decoded): streamed
        self.end_headers()
        for chunk in response.iter_bytes():
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")


def _pump_socket(source: socket.socket, target: socket.socket) -> None:
    """Copy what ``source`` sends to ``target`` until ``source`` closes (a WebSocket's upstream half), then shut
    ``target``'s writing down."""
    try:
        while chunk := source.recv(RELAY_CHUNK):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass

def cookie_under(set_cookie: str, base: str) -> str:
    """A daemon's ``Set-Cookie`` value with its ``Path`` made ``base`` (``Path=/`` would reach every application of
    the portal's host): ``a=1; Path=/`` → ``a=1; Path=/rnode/n1/34567/``."""
    value = re.sub(r";\s*path=[^;]*", "", set_cookie, flags=re.IGNORECASE)
    return f"{value}; Path={base}"


def login_host() -> str:
    """The name of this (login) node for the laptop's ``ssh``: the host name, or its fully qualified form when the
    resolver gives one that extends it (``login1`` → ``login1.example.org``; never ``localhost``, which
    ``socket.getfqdn`` returns where the host name maps to ``127.0.0.1``)."""
    name = socket.gethostname()
    fqdn = socket.getfqdn(name)
    return fqdn if fqdn.lower().startswith(name.lower() + ".") else name


def ssh_command(port: int, login_node: str) -> str:
    """The command to run on the laptop: ``ssh -N -L <port>:127.0.0.1:<port> <login node>`` (the same port on both
    ends, so that the cookie named after it is the one the browser sends)."""
    return f"ssh -N -L {port}:127.0.0.1:{port} {login_node}"


def upstream_auth(plan: ClusterPlan) -> UpstreamAuth | None:
    """How the proxy authenticates to ``plan``'s daemons, per request: ``None`` under ``security: simple`` (the
    daemons see Hadoop's anonymous ``dr.who``, as any browser would); under Kerberos, the ``hadoop.auth`` cookie
    :mod:`launcher.security.webauth` signs for the owner with the target daemon's own secret, minted anew for every
    request, and only once that daemon's port is known to be its socket
    (:class:`launcher.plan.daemon_sockets.DaemonSockets`; :class:`UpstreamRefused` otherwise)."""
    if not plan.security.kerberos:
        return None
    from launcher.security.webauth import web_auth

    signer = web_auth(plan)
    if signer is None:
        return None

    def mint(address: str, port: int) -> dict[str, str]:
        header = signer.header(address, port)  # 'hadoop.auth="u=...&s=..."', or None
        if not header:
            endpoint = signer.sockets.endpoint(address, port)
            verdict = signer.refused.get(endpoint) if endpoint is not None else None
            if verdict is not None:
                raise UpstreamRefused(f"not forwarded to {endpoint}: {verdict.why}; nothing was sent there")
            return {}
        name, _, value = str(header).partition("=")
        return {name: value}

    return mint
