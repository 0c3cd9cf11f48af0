"""Parsing of sizes and durations as they appear in job files.

Sizes follow Hadoop's and Slurm's convention: suffixes are binary, ``1k`` = 1 KiB = 1024 bytes,
``1m`` = 1 MiB, ``1g`` = 1 GiB, ``1t`` = 1 TiB; ``KB``/``KiB`` and friends mean the same. A bare
number is bytes for a plain size (:func:`parse_size`: stripe and split sizes, as ``lfs setstripe -S``
takes them) but MiB for a memory size (:func:`parse_memory`: Hadoop's ``*.memory.mb`` and Slurm's
``--mem`` convention). Walltimes follow Slurm's ``--time`` formats (``MM``, ``MM:SS``, ``HH:MM:SS``,
``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``; a bare number is minutes) plus ``30s``, ``90m``, ``2h``, ``1d``.
"""

from __future__ import annotations

import re

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?\s*$", re.IGNORECASE)
_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}

MiB = 1 << 20
GiB = 1 << 30

_MEMORY_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kmgtp])(?:i?b)?|(b))?\s*$", re.IGNORECASE)
_WALLTIME_UNIT_RE = re.compile(r"^(\d+)\s*([smhd])$", re.IGNORECASE)
_WALLTIME_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_WALLTIME_FORMS = "use HH:MM:SS, D-HH:MM:SS, minutes, or 90m/2h/1d"


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


def parse_memory(value: object, *, minimum: int = 0, what: str = "memory") -> int:
    """Return a memory size in bytes; a bare number is MiB (Hadoop's ``*.memory.mb``, Slurm's ``--mem``).

    Args:
        value: an int or float (MiB) or a string: ``"2048"`` (MiB), ``"2g"``, ``"2G"``, ``"2GB"``, ``"2 G"``,
            ``"2048m"``, ``"2048MiB"``, ``"1.5g"``; ``"1073741824b"`` gives bytes explicitly.
        minimum: the smallest acceptable size in bytes (0 = no bound).
        what: what the value is, for the message of a value below ``minimum`` (``"a container"``).

    Returns:
        The size in bytes (int).

    Raises:
        ValueError: not a memory size, negative, or below ``minimum`` (the message gives the bound).
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size (use 512m, 2g or a number of MiB)")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"{value} is negative")
        nbytes = int(value * MiB)
    else:
        match = _MEMORY_RE.match(str(value))
        if not match:
            raise ValueError(f"{value!r} is not a size (use 512m, 2g or a number of MiB)")
        number, unit, byte = match.groups()
        factor = 1 if byte else _FACTORS[unit.lower()] if unit else MiB
        nbytes = int(float(number) * factor)
    if nbytes < minimum:
        raise ValueError(f"{value!r} is {format_size(nbytes)}, below the {format_size(minimum)} minimum of {what} "
                         f"(a bare number is MiB: write e.g. 2048 or 2g)")
    return nbytes


def format_memory(nbytes: int) -> int | str:
    """A memory size as :func:`parse_memory` reads it back: whole MiB as a bare number, else ``"<n>b"``."""
    return nbytes // MiB if nbytes % MiB == 0 else f"{nbytes}b"


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
            ``"30:00"`` (MM:SS), ``"01:30:00"``, ``"2-00:00:00"``, ``"1-12"`` (D-HH), ``"1-12:30"``
            (D-HH:MM), or a number with a unit: ``"30s"``, ``"90m"``, ``"2h"``, ``"1d"``.

    Returns:
        Seconds (int, > 0).

    Raises:
        ValueError: the value is not a walltime.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a walltime")
    if isinstance(value, int):
        seconds = value * 60
    elif _WALLTIME_UNIT_RE.match(str(value).strip()):
        number, unit = _WALLTIME_UNIT_RE.match(str(value).strip()).groups()  # type: ignore[union-attr]
        seconds = int(number) * _WALLTIME_UNITS[unit.lower()]
    else:
        seconds = _clock_seconds(value)
    if seconds <= 0:
        raise ValueError(f"{value!r} is not a positive walltime")
    return seconds


def _clock_seconds(value: object) -> int:
    """Seconds of Slurm's ``[D-]HH:MM:SS`` forms (a single number without a day is minutes).

    Raises:
        ValueError: not one of those forms.
    """
    text = str(value).strip()
    days = 0
    if "-" in text:
        day_text, text = text.split("-", 1)
        if not day_text.isdigit():
            raise ValueError(f"{value!r} is not a walltime ({_WALLTIME_FORMS})")
        days = int(day_text)
    parts = text.split(":")
    if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
        raise ValueError(f"{value!r} is not a walltime ({_WALLTIME_FORMS})")
    nums = [int(p) for p in parts]
    if days or "-" in str(value):  # D-HH, D-HH:MM, D-HH:MM:SS
        hms = nums + [0] * (3 - len(nums))
    else:  # MM, MM:SS, HH:MM:SS
        hms = {1: [0, nums[0], 0], 2: [0, *nums], 3: nums}[len(nums)]
    return days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2]


def format_walltime(seconds: int) -> str:
    """Format seconds as Slurm/PBS ``HH:MM:SS`` (hours may exceed 24)."""
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
