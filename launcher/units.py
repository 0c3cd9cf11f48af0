"""Parsing of sizes and durations as they appear in job files.

Sizes follow Hadoop's and Slurm's convention: suffixes are binary, ``1k`` = 1 KiB = 1024 bytes,
``1m`` = 1 MiB, ``1g`` = 1 GiB, ``1t`` = 1 TiB; ``KB``/``KiB`` and friends mean the same. A bare
number is bytes. Walltimes follow Slurm's ``--time`` formats (``MM``, ``MM:SS``, ``HH:MM:SS``,
``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``).
"""

from __future__ import annotations

import re

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?\s*$", re.IGNORECASE)
_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}

MiB = 1 << 20
GiB = 1 << 30


def parse_size(value: object) -> int:
    """Return a size in bytes.

    Args:
        value: an int (bytes) or a string such as ``"512m"``, ``"2 GiB"``, ``"1.5g"``, ``"4096"``.

    Returns:
        The size in bytes (int, ≥ 0).

    Raises:
        ValueError: the value is not a size; the message says which forms are accepted.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative")
        return value
    match = _SIZE_RE.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a size (use a number with a unit: 512m, 2g, 1MiB)")
    number, unit = match.groups()
    return int(float(number) * _FACTORS[unit.lower()])


def format_size(nbytes: int) -> str:
    """Format bytes the way Hadoop and humans read them: ``1.5 GiB``, ``512 MiB``, ``10 B``."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", GiB), ("MiB", MiB), ("KiB", 1 << 10)):
        if nbytes >= factor:
            value = nbytes / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{nbytes} B"


def parse_walltime(value: object) -> int:
    """Return a walltime in seconds, from Slurm's ``--time`` formats.

    Args:
        value: an int (minutes, as Slurm reads a bare number) or a string: ``"90"`` (minutes),
            ``"30:00"`` (MM:SS), ``"01:30:00"``, ``"2-00:00:00"``, ``"1-12"`` (D-HH).

    Returns:
        Seconds (int, > 0).

    Raises:
        ValueError: the value is not a walltime.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a walltime")
    if isinstance(value, int):
        seconds = value * 60
    else:
        text = str(value).strip()
        days = 0
        if "-" in text:
            day_text, text = text.split("-", 1)
            if not day_text.isdigit():
                raise ValueError(f"{value!r} is not a walltime (use HH:MM:SS or D-HH:MM:SS)")
            days = int(day_text)
            parts = text.split(":")
            if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
                raise ValueError(f"{value!r} is not a walltime (use HH:MM:SS or D-HH:MM:SS)")
            hms = [int(p) for p in parts] + [0] * (3 - len(parts))
        else:
            parts = text.split(":")
            if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
                raise ValueError(f"{value!r} is not a walltime (use HH:MM:SS or D-HH:MM:SS)")
            nums = [int(p) for p in parts]
            hms = {1: [0, nums[0], 0], 2: [0, *nums], 3: nums}[len(nums)]
        seconds = days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2]
    if seconds <= 0:
        raise ValueError(f"{value!r} is not a positive walltime")
    return seconds


def format_walltime(seconds: int) -> str:
    """Format seconds as Slurm/PBS ``HH:MM:SS`` (hours may exceed 24)."""
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
