"""The ``hadoop.auth`` cookie the launcher signs itself, to reach a ``security: per-cluster`` cluster's web servers.

Under ``per-cluster`` every web server of the cluster (ResourceManager, NodeManagers, JobHistoryServer) runs Hadoop's
``AuthenticationFilter`` with ``hadoop.http.authentication.type=kerberos`` and anonymous requests refused; a request
that carries a ``hadoop.auth`` cookie signed with the cluster's secret (``<run dir>/krb/http-signature.secret``,
mode 0600, written by the launcher: :func:`write_secret`) is let through as the user the cookie names, with no SPNEGO
round trip. The launcher's own HTTP calls (bring-up polls, failure diagnosis, job history reads of the benchmarks)
sign such a cookie for the owner (:class:`HadoopAuthCookie`, :func:`web_client`); nobody else can read the secret.

The format is Hadoop 3.4.2's, read from its source and checked against its byte code
(``org.apache.hadoop.security.authentication.util.AuthToken`` and ``Signer``; ``tests/unit/plan/test_webauth.py``
runs Hadoop's own parser on our cookie):

- the token: ``u=<user>&p=<principal>&t=<type>&e=<expiry, epoch ms>`` (``AuthToken.generateToken``; ``i=`` for a
  maximum inactive interval is left out, as the filter does unless ``token.max-inactive-interval`` is set);
- signed: ``<token>&s=<signature>``, the signature the standard Base64 (with padding, no line breaks: commons-codec
  ``new Base64(0)``) of the HMAC-SHA256 of the token's UTF-8 bytes, keyed with the secret file's bytes
  (``FileSignerSecretProvider`` reads the file as UTF-8 text and keys with its UTF-8 bytes: the secret is ASCII);
- the filter compares ``t`` with its handler's type (``kerberos``) and refuses an expired token.

Under ``security: simple`` nothing is signed: requests stay anonymous (Hadoop's ``dr.who``).

Imports :mod:`launcher.plan.security`, ``httpx`` and the standard library.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx

from launcher.plan.security import SecurityPlan

#: The cookie's name (``AuthenticatedURL.AUTH_COOKIE``).
AUTH_COOKIE = "hadoop.auth"
#: The token type of ``hadoop.http.authentication.type=kerberos`` (``KerberosAuthenticationHandler.TYPE``): the
#: filter refuses a token of another type ("Invalid AuthenticationToken type").
KERBEROS_TYPE = "kerberos"
#: Seconds a cookie the launcher signs is valid; a fresh one is signed for every request (HMAC: microseconds).
COOKIE_LIFETIME_S = 600
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
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(fd, 0o600)
        handle.write(new_secret())


class HadoopAuthCookie(httpx.Auth):
    """An ``httpx`` authentication that sends, with every request, a ``hadoop.auth`` cookie signed now for the
    cluster's owner (valid :data:`COOKIE_LIFETIME_S` seconds); nothing under ``security: simple``.

    The secret is read from ``security.http_secret`` at the first request that finds it (the launcher writes it when
    the cluster's KDC is up, before any daemon starts); until then requests go without the cookie (the daemons are
    not up yet either).
    """

    def __init__(self, security: SecurityPlan, lifetime_s: int = COOKIE_LIFETIME_S) -> None:
        self.security = security
        self.lifetime_s = lifetime_s
        self._secret: bytes | None = None

    def secret(self) -> bytes | None:
        """The cluster's secret, or ``None`` outside ``per-cluster`` or while the file is not there."""
        if self._secret is None and self.security.kerberos:
            try:
                self._secret = self.security.http_secret.read_bytes() or None
            except OSError:
                return None
        return self._secret

    def header(self, now_s: float | None = None) -> str | None:
        """The ``Cookie`` header to send now (``None``: send none)."""
        secret = self.secret()
        if secret is None:
            return None
        expires_ms = int(((time.time() if now_s is None else now_s) + self.lifetime_s) * 1000)
        return cookie_header(cookie_value(secret, self.security.user, self.security.user_principal, expires_ms))

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        header = self.header()
        if header is not None:
            request.headers["Cookie"] = header
        yield request


def web_auth(security: SecurityPlan) -> HadoopAuthCookie | None:
    """The ``auth=`` of the launcher's HTTP clients: :class:`HadoopAuthCookie` under ``per-cluster``, else ``None``
    (anonymous, as Hadoop's ``simple`` web UIs expect)."""
    return HadoopAuthCookie(security) if security.kerberos else None


def web_client(security: SecurityPlan, **kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` for the cluster's web servers: no proxies from the environment (``trust_env=False``) and,
    under ``per-cluster``, the owner's signed cookie with every request (:func:`web_auth`). ``kwargs`` go to
    ``httpx.Client`` (``timeout``, ``headers``)."""
    return httpx.Client(trust_env=False, auth=web_auth(security), **kwargs)
