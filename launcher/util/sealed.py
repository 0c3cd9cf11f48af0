"""Sealed files: what a cluster must hand to its other nodes through the shared filesystem, encrypted and
authenticated with a key that never touches a filesystem (issue 36 item 5).

Why: a shared FUSE mount whose one client serves every user of the node may cache a permission answer across
users (real OrangeFS 2.10 ``pvfs2fuse``: another user read the owner's 0600 file in a 0700 directory within a
fraction of a second after the owner touched it; a loop of ``cat`` got the services keytab 8 times out of 43). So
modes do not keep the realm's keys private there: a node gets them from a sealed file it opens with the key.

The key reaches each node's agent in its process environment (``/proc/<pid>/environ`` is readable by its owner
only): :data:`KEY_ENV`, set by the launcher on the fan-out's command for the launchers that pass their caller's
environment on (``srun``, ``qrsh -V``, the local one). PBS's task interface does not (Torque's ``pbsdsh.c`` and
OpenPBS's ``pbs_tmrsh.c`` call ``tm_spawn`` with no environment of theirs: the task gets the *job's*); there the key
is derived from the job's ``PBS_JOBCOOKIE``, the secret every task of the job has because ``tm_init`` needs it
(:func:`job_cookie_key`).

AES-256-GCM (the ``cryptography`` package's ``AESGCM``): a sealed file is a 12-byte random nonce, then the
ciphertext of a JSON object ``{name: base64 of the bytes}``, authenticated with the cluster id and the node's name
(a file sealed for one node or cluster opens nowhere else).
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

#: The variable that carries the cluster's key (URL-safe Base64 of :data:`KEY_BYTES` bytes) to the agents.
KEY_ENV = "HPC_HADOOP_SEAL_KEY"
#: The PBS job's own secret in every task's environment (``tm_init`` reads it: Torque's and OpenPBS's ``tm.c``).
JOB_COOKIE_ENV = "PBS_JOBCOOKIE"
#: Bytes of a key (AES-256).
KEY_BYTES = 32
#: Bytes of a nonce (GCM's recommended 96 bits).
NONCE_BYTES = 12


class SealError(Exception):
    """A sealed file cannot be opened: no key, the wrong key, another node's or cluster's file, or changed."""


def new_key() -> str:
    """A random key, URL-safe Base64 of :data:`KEY_BYTES` bytes (for :data:`KEY_ENV`)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def job_cookie_key(cookie: str, cluster_id: str) -> str:
    """The key derived from a PBS job's ``PBS_JOBCOOKIE`` for one cluster (HKDF-SHA256, the cluster id as its info):
    every task of the job can derive it, nobody else can."""
    derived = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None,
                   info=f"hpc-hadoop sealed files {cluster_id}".encode()).derive(cookie.encode())
    return base64.urlsafe_b64encode(derived).decode()


def key_from_environment(env: Mapping[str, str], cluster_id: str) -> str | None:
    """The cluster's key as an agent finds it: :data:`KEY_ENV`, else derived from :data:`JOB_COOKIE_ENV`
    (:func:`job_cookie_key`), else ``None``."""
    if env.get(KEY_ENV):
        return env[KEY_ENV]
    cookie = env.get(JOB_COOKIE_ENV)
    return job_cookie_key(cookie, cluster_id) if cookie else None


def _aes(key: str) -> AESGCM:
    try:
        raw = base64.urlsafe_b64decode(key.encode())
    except (binascii.Error, ValueError):
        raise SealError("the key is not URL-safe Base64") from None
    if len(raw) != KEY_BYTES:
        raise SealError(f"the key has {len(raw)} bytes, not {KEY_BYTES}")
    return AESGCM(raw)


def seal(files: Mapping[str, bytes], key: str, context: str) -> bytes:
    """``files`` (name → content) sealed with ``key`` for ``context`` (``<cluster id>/<node>``).

    Raises:
        SealError: the key is malformed.
    """
    plain = json.dumps({name: base64.b64encode(data).decode() for name, data in files.items()}).encode()
    nonce = secrets.token_bytes(NONCE_BYTES)
    return nonce + _aes(key).encrypt(nonce, plain, context.encode())


def unseal(blob: bytes, key: str, context: str) -> dict[str, bytes]:
    """The files of a sealed ``blob`` (:func:`seal`).

    Raises:
        SealError: the wrong key or context, a malformed key, or a changed or truncated blob.
    """
    try:
        plain = _aes(key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], context.encode())
    except InvalidTag:
        raise SealError("it does not open with this cluster's key (another cluster's or node's file, or "
                        "changed)") from None
    return {name: base64.b64decode(data) for name, data in json.loads(plain).items()}
