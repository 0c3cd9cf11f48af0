"""The ``hadoop.auth`` cookie the launcher signs itself, to reach a ``security: per-cluster`` cluster's web servers.

Under ``per-cluster`` every web server of the cluster (ResourceManager, NodeManagers, JobHistoryServer) runs Hadoop's
``AuthenticationFilter`` with ``hadoop.http.authentication.type=kerberos`` and anonymous requests refused; a request
that carries a ``hadoop.auth`` cookie signed with the cluster's secret (``<run dir>/krb/http-signature.secret``,
mode 0600, written by the launcher: :func:`write_secret`) is let through as the user the cookie names, with no SPNEGO
round trip. The launcher's own HTTP calls (bring-up polls, failure diagnosis, job history reads of the benchmarks)
sign such a cookie for the owner (:class:`HadoopAuthCookie`, :func:`web_client`); nobody else can read the secret.

The format is Hadoop 3.4.2's, read from its source and checked against its byte code
(``org.apache.hadoop.security.authentication.util.AuthToken`` and ``Signer``; ``tests/unit/security/test_webauth.py``
runs Hadoop's own parser on our cookie):

- the token: ``u=<user>&p=<principal>&t=<type>&e=<expiry, epoch ms>`` (``AuthToken.generateToken``; ``i=`` for a
  maximum inactive interval is left out, as the filter does unless ``token.max-inactive-interval`` is set);
- signed: ``<token>&s=<signature>``, the signature the standard Base64 (with padding, no line breaks: commons-codec
  ``new Base64(0)``) of the HMAC-SHA256 of the token's UTF-8 bytes, keyed with the secret file's bytes
  (``FileSignerSecretProvider`` reads the file as UTF-8 text and keys with its UTF-8 bytes: the secret is ASCII);
- the filter compares ``t`` with its handler's type (``kerberos``) and refuses an expired token.

Under ``security: simple`` nothing is signed: requests stay anonymous (Hadoop's ``dr.who``).

Each web server has a secret of its own (:func:`write_secrets`), and a cookie is sent only to a socket that is the
owner's daemon's (:mod:`launcher.plan.daemon_sockets`): a second user who binds a daemon's port first gets nothing.

Imports :mod:`launcher.plan.daemon_sockets`, ``httpx`` and the standard library.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from launcher.plan.daemon_sockets import DaemonSockets, Verdict, WebEndpoint
from launcher.util.files import replace_private

if TYPE_CHECKING:
    from launcher.plan.cluster_plan import ClusterPlan

#: The cookie's name (``AuthenticatedURL.AUTH_COOKIE``).
AUTH_COOKIE = "hadoop.auth"
#: The token type of ``hadoop.http.authentication.type=kerberos`` (``KerberosAuthenticationHandler.TYPE``): the
#: filter refuses a token of another type ("Invalid AuthenticationToken type").
KERBEROS_TYPE = "kerberos"
#: Seconds a cookie the launcher signs is valid; a fresh one is signed for every request (HMAC: microseconds), so a
#: cookie that reached the wrong socket all the same (a remote daemon dead within its agent's last second) opens its
#: one web server for this long, not ten minutes (issue 36). Covers the clock skew of NTP-synced nodes.
COOKIE_LIFETIME_S = 15
#: Random bytes of the secret (URL-safe Base64 text of them is written: 43 ASCII characters, 256 bits).
SECRET_BYTES = 32


def signature(secret: bytes, text: str) -> str:
    """Hadoop's ``Signer.computeSignature``: the standard Base64 (padded) of HMAC-SHA256 of ``text`` (UTF-8) keyed
    with ``secret`` (the secret file's bytes)."""
    return base64.b64encode(hmac.new(secret, text.encode("utf-8"), hashlib.sha256).digest()).decode("ascii")


def token_text(user: str, principal: str, expires_ms: int, auth_type: str = KERBEROS_TYPE) -> str:
    """Hadoop's ``AuthToken.toString``: ``u=<user>&p=<principal>&t=<type>&e=<expires_ms>``.

    Raises:
        ValueError: a field is empty or holds ``&`` (Hadoop's ``AuthToken`` refuses it too).
    """
    for name, value in (("user", user), ("principal", principal), ("type", auth_type)):
        if not value or "&" in value:
            raise ValueError(f"hadoop.auth cookie: {name} {value!r} is empty or contains '&'")
    return f"u={user}&p={principal}&t={auth_type}&e={expires_ms}"


def cookie_value(secret: bytes, user: str, principal: str, expires_ms: int, auth_type: str = KERBEROS_TYPE) -> str:
    """The signed ``hadoop.auth`` value (unquoted): ``u=..&p=..&t=..&e=..&s=<signature>``, as Hadoop's
    ``AuthenticationFilter`` signs it (``Signer.sign`` of the token's text).

    Args:
        secret: the cluster's signature secret (the bytes of ``http-signature.secret``).
        user: the short user name the daemons see (``getRemoteUser``), the owner.
        principal: the Kerberos principal, ``<user>@<REALM>``.
        expires_ms: when the cookie expires, epoch milliseconds.

    Raises:
        ValueError: a field is empty or holds ``&``.
    """
    text = token_text(user, principal, expires_ms, auth_type)
    return f"{text}&s={signature(secret, text)}"


def cookie_header(value: str) -> str:
    """The ``Cookie`` header of a signed value, quoted as Hadoop's ``createAuthCookie`` sets it (and a browser sends
    it back)."""
    return f'{AUTH_COOKIE}="{value}"'


def new_secret() -> str:
    """A random signature secret: URL-safe Base64 of :data:`SECRET_BYTES` random bytes (ASCII, no newline)."""
    return secrets.token_urlsafe(SECRET_BYTES)


def write_secret(path: Path) -> None:
    """Write a new random secret (:func:`new_secret`) to ``path``, mode 0600 from its creation (its directory is the
    realm's, 0700); an existing file is replaced.

    Raises:
        OSError: the directory is missing or not writable.
    """
    replace_private(path, new_secret())


def write_secrets(plan: ClusterPlan) -> None:
    """Write the cluster's cookie secrets: one per web server (:meth:`SecurityPlan.http_secret_of`, which the daemon
    names by ``-Dhpc.http.secret``), so that a cookie caught on one port opens nothing else, and the shared
    :attr:`SecurityPlan.http_secret` that a process without that property (an ApplicationMaster's web server) reads.

    Raises:
        OSError: the realm's directory is missing or not writable.
    """
    write_secret(plan.security.http_secret)
    for endpoint in DaemonSockets(plan).endpoints.values():
        write_secret(plan.security.http_secret_of(endpoint.daemon, endpoint.node))


class HadoopAuthCookie(httpx.Auth):
    """An ``httpx`` authentication that sends a ``hadoop.auth`` cookie, signed now for the cluster's owner with the
    secret of the one web server the request goes to (valid :data:`COOKIE_LIFETIME_S` seconds), and only when that
    server's socket is the owner's daemon's (:class:`~launcher.plan.daemon_sockets.DaemonSockets`); a request to an
    address that is not one of the cluster's web servers, or to a port held by someone else or by nobody, goes
    without it. Nothing under ``security: simple``.

    Attributes:
        refused: the last :class:`~launcher.plan.daemon_sockets.Verdict` of each web server a request went to
            without the cookie, by endpoint (a caller says why a daemon does not answer: another user holds its
            port); removed once a request there carries it.

    The secrets are read at the first request that finds them (the launcher writes them when the cluster's KDC is
    up, before any daemon starts).
    """

    def __init__(self, plan: ClusterPlan, lifetime_s: int = COOKIE_LIFETIME_S, uid: int | None = None) -> None:
        self.plan = plan
        self.security = plan.security
        self.sockets = DaemonSockets(plan, uid)
        self.lifetime_s = lifetime_s
        self.refused: dict[WebEndpoint, Verdict] = {}
        self._secrets: dict[Path, bytes] = {}

    def secret(self, path: Path) -> bytes | None:
        """The secret in ``path``, or ``None`` outside Kerberos or while the file is not there."""
        if path not in self._secrets and self.security.kerberos:
            try:
                secret = path.read_bytes()
            except OSError:
                return None
            if secret:
                self._secrets[path] = secret
        return self._secrets.get(path)

    def header_for(self, endpoint: WebEndpoint, now_s: float | None = None) -> str | None:
        """The ``Cookie`` header for ``endpoint``, signed with its own secret, without any check of who holds it
        (``None``: its secret is not there)."""
        secret = self.secret(self.security.signing_secret(endpoint.daemon, endpoint.node))
        if secret is None:
            return None
        expires_ms = int(((time.time() if now_s is None else now_s) + self.lifetime_s) * 1000)
        return cookie_header(cookie_value(secret, self.security.user, self.security.user_principal, expires_ms))

    def header(self, host: str, port: int) -> str | None:
        """The ``Cookie`` header to send to ``host:port`` now, or ``None`` (send none: not a web server of the
        cluster, not held by the owner's daemon, its secret not there); records a refusal in :attr:`refused`."""
        endpoint = self.sockets.endpoint(host, port)
        if endpoint is None or not self.security.kerberos:
            return None
        verdict = self.sockets.check(endpoint)
        if not verdict.ours:
            self.refused[endpoint] = verdict
            return None
        self.refused.pop(endpoint, None)
        return self.header_for(endpoint)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        url = request.url
        header = self.header(url.host, url.port or (443 if url.scheme == "https" else 80))
        if header is not None:
            request.headers["Cookie"] = header
        yield request

    def foreign(self) -> list[tuple[WebEndpoint, Verdict]]:
        """The web servers whose port another user's process held at the last request (:attr:`refused`)."""
        return [(endpoint, verdict) for endpoint, verdict in self.refused.items() if verdict.foreign]


def web_auth(plan: ClusterPlan, uid: int | None = None) -> HadoopAuthCookie | None:
    """The ``auth=`` of the launcher's HTTP clients: :class:`HadoopAuthCookie` under ``per-cluster`` and ``site``,
    else ``None`` (anonymous, as Hadoop's ``simple`` web UIs expect). ``uid``: the owner's, whose sockets the daemons'
    are (default: this process's; :class:`~launcher.plan.daemon_sockets.DaemonSockets`)."""
    return HadoopAuthCookie(plan, uid=uid) if plan.security.kerberos else None


def web_client(plan: ClusterPlan, uid: int | None = None, **kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` for the cluster's web servers: no proxies from the environment (``trust_env=False``) and,
    under Kerberos, the owner's signed cookie with each request that goes to the owner's daemon (:func:`web_auth`).
    ``kwargs`` go to ``httpx.Client`` (``timeout``, ``headers``)."""
    return httpx.Client(trust_env=False, auth=web_auth(plan, uid), **kwargs)
