"""A minimal writer of Hadoop SequenceFiles (version 6, uncompressed) of ``Text`` → Mahout ``VectorWritable``.

Mahout's KMeans driver reads its points from such files; HiBench writes them with a MapReduce generator.
Writing them here keeps the generator a few lines of Python (no extra Mahout jar: its ``InputDriver`` is in
``mahout-integration``, which drags Lucene and Solr in).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Sequence
from typing import BinaryIO

KEY_CLASS = "org.apache.hadoop.io.Text"
VALUE_CLASS = "org.apache.mahout.math.VectorWritable"
#: VectorWritable flags (``org.apache.mahout.math.VectorWritable``).
FLAG_DENSE, FLAG_SEQUENTIAL = 0x01, 0x02
#: Records between sync markers (Hadoop writes one every ~2000 bytes; input splits start at a marker).
SYNC_EVERY = 64


def hadoop_vint(value: int) -> bytes:
    """Hadoop's ``WritableUtils.writeVLong`` encoding of ``value``."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length = -112
    if value < 0:
        value ^= -1
        length = -120
    tmp, size = value, 0
    while tmp != 0:
        tmp >>= 8
        size += 1
    length -= size
    return struct.pack(">b", length) + value.to_bytes(size, "big")


def text(value: str) -> bytes:
    """A ``org.apache.hadoop.io.Text`` as written by ``Text.write``: vint length, UTF-8 bytes."""
    data = value.encode()
    return hadoop_vint(len(data)) + data


def unsigned_varint(value: int) -> bytes:
    """Mahout's ``Varint.writeUnsignedVarInt``: 7 bits a byte, least significant first."""
    out = bytearray()
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def vector_writable(values: Sequence[float]) -> bytes:
    """A dense ``VectorWritable`` (doubles, full precision)."""
    return bytes([FLAG_DENSE | FLAG_SEQUENTIAL]) + unsigned_varint(len(values)) + \
        struct.pack(f">{len(values)}d", *values)


def write_vectors(out: BinaryIO, rows: Iterable[tuple[str, Sequence[float]]]) -> int:
    """Write ``(key, vector)`` rows as a SequenceFile to ``out``; returns the number of rows."""
    sync = os.urandom(16)
    out.write(b"SEQ" + bytes([6]) + text(KEY_CLASS) + text(VALUE_CLASS) + b"\x00\x00" + struct.pack(">i", 0) + sync)
    count = 0
    for key, values in rows:
        if count and count % SYNC_EVERY == 0:
            out.write(struct.pack(">i", -1) + sync)
        k, v = text(key), vector_writable(values)
        out.write(struct.pack(">ii", len(k) + len(v), len(k)) + k + v)
        count += 1
    return count
