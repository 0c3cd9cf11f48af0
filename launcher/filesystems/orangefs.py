"""OrangeFS (PVFS2): striping by the extended attributes of a directory, which new files inherit.

``user.pvfs2.num_dfiles`` = stripe count, ``user.pvfs2.dist_name`` = ``simple_stripe``,
``user.pvfs2.dist_params`` = ``strip_size:BYTES``. Learned on OrangeFS 2.10: a value is honoured only with a
trailing NUL byte (so values are passed to ``setfattr`` hex-encoded, NUL included), and a client may cache
the parent directory's attributes until it remounts. A file has no ``user.pvfs2.*`` attribute (only a directory
has them, as hints for the files made in it): what a file really got is in ``system.pvfs2.dh``, its data file
handles (8 bytes each: 32 bytes = 4 data files), and ``system.pvfs2.md``, its distribution as OrangeFS encodes it
(a u32 length, the distribution's name, zero padding to 8 bytes, then for ``simple_stripe`` the strip size as a
little-endian int64); ``pvfs2-viewdist -f FILE`` prints the same. A file never has more data files than the file
system has data servers (a directory asking for 8 on 4 servers gives files 4, silently). OrangeFS's FUSE client
``pvfs2fuse`` answers every extended-attribute call with "Operation not supported": there, striping can be neither
set nor read (issue 17).
"""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

from launcher.config.spec import StripeSpec
from launcher.filesystems.base import Filesystem, Layout, positive_size
from launcher.util.errors import CommandError, UserError

NUM_DFILES = "user.pvfs2.num_dfiles"
DIST_NAME = "user.pvfs2.dist_name"
DIST_PARAMS = "user.pvfs2.dist_params"
SIMPLE_STRIPE = "simple_stripe"
#: A file's data file handles (``PVFS_handle``, 8 bytes each) and its encoded distribution (``PINT_dist_encode``).
DATAFILE_HANDLES = "system.pvfs2.dh"
METAFILE_DIST = "system.pvfs2.md"
#: The number of data files a file asked for, already clamped to the data servers (a little-endian u32;
#: ``NUM_DFILES_REQ_KEYSTR "nd"``, ``src/common/misc/pvfs2-internal.h``): what the file gets, stuffed or not.
REQUESTED_DFILES = "system.pvfs2.nd"
HANDLE_BYTES = 8


def attribute_values(setting: StripeSpec) -> dict[str, bytes]:
    """The attributes (value bytes, trailing NUL included) for ``setting``, in write order."""
    values: dict[str, bytes] = {}
    if setting.count is not None:
        values[NUM_DFILES] = f"{setting.count}".encode() + b"\0"
    if setting.size is not None:
        values[DIST_NAME] = SIMPLE_STRIPE.encode() + b"\0"
        values[DIST_PARAMS] = f"strip_size:{setting.size}".encode() + b"\0"
    return values


def decode_value(text: str) -> bytes:
    """A ``getfattr`` value in any of its encodings: ``0x..`` hex, ``0s..`` base64, ``"..."`` text."""
    if text.startswith(("0x", "0X")):
        return bytes.fromhex(text[2:])
    if text.startswith(("0s", "0S")):
        return base64.b64decode(text[2:])
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    # getfattr's text encoding writes bytes outside printable ASCII as \ooo octal.
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), text.encode())


def decode_distribution(value: bytes) -> tuple[str, int | None]:
    """``system.pvfs2.md`` → ``(distribution name, strip size in bytes)``: a little-endian u32 length, the name (NUL
    included, zero-padded to a multiple of 8 bytes: ``roundup8(4 + length + 1)`` in all), then the distribution's
    parameters; the strip size (a little-endian int64) only for ``simple_stripe``, else ``None``.

    Raises:
        ValueError: ``value`` is shorter than its length field says.
    """
    if len(value) < 4:
        raise ValueError(f"{METAFILE_DIST}: {len(value)} bytes")
    (length,) = struct.unpack_from("<I", value)
    start = 4 + length + 1
    start += -start % 8
    if len(value) < 4 + length:
        raise ValueError(f"{METAFILE_DIST}: {len(value)} bytes, name of {length}")
    name = value[4:4 + length].decode(errors="replace")
    if name != SIMPLE_STRIPE or len(value) < start + 8:
        return name, None
    return name, struct.unpack_from("<q", value, start)[0]


def parse_getfattr(output: str) -> dict[str, bytes]:
    """``getfattr -d`` output → ``{attribute name: value bytes}`` (the ``# file:`` lines are skipped)."""
    values: dict[str, bytes] = {}
    for line in output.splitlines():
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        values[name] = decode_value(value)
    return values


class OrangeFsFilesystem(Filesystem):
    """OrangeFS through its kernel client's extended attributes (``setfattr``/``getfattr`` on ``PATH``)."""

    name = "orangefs"
    striping = True
    unusable_fix = ("mount OrangeFS with its kernel client (the orangefs module and pvfs2-client-core), which keeps "
                    "user.pvfs2.* attributes (the FUSE client pvfs2fuse has none)")

    def check(self, setting: StripeSpec, field: str) -> None:
        """Positive stripe size and count (no -1: OrangeFS has no "all servers" value); no starting index
        (OrangeFS has no such option)."""
        positive_size(setting, field)
        if setting.count is not None and setting.count < 1:
            raise UserError(f"stripe count {setting.count} on OrangeFS", field=f"{field}.count",
                            fix="use the number of data files per file, at least 1 (a file gets at most one per "
                                "data server)")
        if setting.index is not None:
            raise UserError("OrangeFS has no starting-server option", field=f"{field}.index", fix="remove index")

    def stripe_commands(self, directory: Path, setting: StripeSpec) -> list[list[str]]:
        """One ``setfattr -n NAME -v 0xHEX DIR`` per attribute (hex keeps the trailing NUL byte)."""
        return [["setfattr", "-n", name, "-v", "0x" + value.hex(), str(directory)]
                for name, value in attribute_values(setting).items()]

    def layout_command(self, directory: Path) -> list[str]:
        """``getfattr --absolute-names -d -m ^user\\.pvfs2\\. -e hex DIR``: a directory's hints."""
        return ["getfattr", "--absolute-names", "-d", "-m", r"^user\.pvfs2\.", "-e", "hex", str(directory)]

    def file_layout_commands(self, path: Path) -> list[list[str]]:
        """``getfattr --absolute-names -n system.pvfs2.dh -e hex FILE``, then the same for ``system.pvfs2.md``: where
        OrangeFS keeps what a file really got (a file has no ``user.pvfs2.*``; ``getfattr -n`` takes one name)."""
        return [["getfattr", "--absolute-names", "-n", name, "-e", "hex", str(path)]
                for name in (DATAFILE_HANDLES, METAFILE_DIST)]

    def read_file_layout(self, path: Path) -> Layout | None:
        """:meth:`Filesystem.read_file_layout`, plus ``system.pvfs2.nd`` where the servers keep it (a server without
        it, or a client that refuses the name, leaves the count to ``system.pvfs2.dh``).

        Raises:
            CommandError: reading ``system.pvfs2.dh`` or ``.md`` failed.
        """
        output = "".join(self.run(argv) for argv in self.file_layout_commands(path))
        try:
            output += self.run(["getfattr", "--absolute-names", "-n", REQUESTED_DFILES, "-e", "hex", str(path)])
        except CommandError:
            pass
        return self.parse_file_layout(output)

    def parse_file_layout(self, output: str) -> Layout:
        """Stripe count = ``system.pvfs2.nd`` (what the file gets), else ``system.pvfs2.dh``'s bytes / 8 (what it has
        now); size = ``system.pvfs2.md``'s strip size (:func:`decode_distribution`); ``stuffed`` when the file has
        fewer data files now than it gets (OrangeFS with ``FileStuffing yes``, ``pvfs2-genconfig``'s default, makes
        every file with one data file until it grows past its first strip: ``src/server/create.c``; reading ``dh``
        alone reported ``count 1`` for files that then got 4: issue 37 item 1). An attribute missing or malformed
        leaves its field unreported."""
        values = parse_getfattr(output)
        handles = values.get(DATAFILE_HANDLES)
        now = len(handles) // HANDLE_BYTES if handles and len(handles) % HANDLE_BYTES == 0 else None
        asked = values.get(REQUESTED_DFILES)
        gets = struct.unpack("<I", asked[:4])[0] if asked is not None and len(asked) >= 4 else None
        size = None
        if METAFILE_DIST in values:
            try:
                size = decode_distribution(values[METAFILE_DIST])[1]
            except ValueError:
                size = None
        count = gets if gets else now
        stuffed = now < gets if now is not None and gets else None
        return Layout(count=count, size=size, stuffed=stuffed)

    def parse_layout(self, output: str) -> Layout:
        """Stripe count from ``num_dfiles``, size from ``dist_params`` (``strip_size:N``); NULs stripped."""
        values = {k: v.rstrip(b"\0").decode(errors="replace") for k, v in parse_getfattr(output).items()}
        count = int(values[NUM_DFILES]) if values.get(NUM_DFILES, "").strip().isdigit() else None
        match = re.search(r"strip_size:\s*(\d+)", values.get(DIST_PARAMS, ""))
        return Layout(count=count, size=int(match.group(1)) if match else None)
