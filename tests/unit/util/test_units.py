"""Sizes and walltimes as they appear in job files (launcher/util/units.py)."""

from __future__ import annotations

import pytest

from launcher.util.units import GiB, MiB, format_size, format_walltime, parse_memory, parse_size, parse_walltime


@pytest.mark.parametrize(("text", "expected"), [
    ("512m", 512 * MiB),
    ("512M", 512 * MiB),
    ("2g", 2 * GiB),
    ("2 GiB", 2 * GiB),
    ("2GB", 2 * GiB),
    ("1MiB", MiB),
    ("1k", 1024),
    ("1t", 1 << 40),
    ("1.5g", 3 * GiB // 2),
    ("0.5k", 512),
    ("4096", 4096),
    ("  64m  ", 64 * MiB),
    (4096, 4096),
    (0, 0),
])
def test_parse_size_accepts_hadoop_and_slurm_forms(text: object, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["lots", "", "m", "2x", "2 g b", "-5", "1,5g", "1e3", "g2"])
def test_parse_size_rejects_non_sizes_and_says_what_works(bad: str) -> None:
    with pytest.raises(ValueError, match="not a size.*512m"):
        parse_size(bad)


def test_parse_size_rejects_negative_int() -> None:
    with pytest.raises(ValueError, match="negative"):
        parse_size(-1)


@pytest.mark.parametrize("flag", [True, False])
def test_parse_size_rejects_bool_although_bool_is_an_int(flag: bool) -> None:
    with pytest.raises(ValueError, match="not a size"):
        parse_size(flag)


@pytest.mark.parametrize(("nbytes", "text"), [(10, "10 B"), (512 * MiB, "512 MiB"), (3 * GiB // 2, "1.5 GiB"),
                                              (2 * GiB, "2 GiB"), (2048, "2 KiB")])
def test_format_size(nbytes: int, text: str) -> None:
    assert format_size(nbytes) == text


@pytest.mark.parametrize(("value", "seconds"), [
    ("90", 90 * 60),              # a bare number is minutes, as in Slurm
    (30, 30 * 60),                # an int too
    ("30:00", 30 * 60),           # MM:SS
    ("00:30", 30),
    ("01:30:00", 90 * 60),        # HH:MM:SS
    ("2-00:00:00", 2 * 86400),    # D-HH:MM:SS
    ("1-12", 86400 + 12 * 3600),  # D-HH
    ("1-02:30", 86400 + 2 * 3600 + 30 * 60),  # D-HH:MM
    (" 10 ", 600),
    ("48:00:00", 48 * 3600),
])
def test_parse_walltime_slurm_formats(value: object, seconds: int) -> None:
    assert parse_walltime(value) == seconds


@pytest.mark.parametrize("bad", ["abc", "", "1:2:3:4", "1.5", "1-", "x-01:00:00", "-5", "1-aa", "01:xx:00",
                                 "1-1:2:3:4", True])
def test_parse_walltime_rejects_bad_values(bad: object) -> None:
    with pytest.raises(ValueError, match="not a walltime"):
        parse_walltime(bad)


@pytest.mark.parametrize("zero", [0, "0", "00:00:00", "0-00:00:00", -5])
def test_parse_walltime_rejects_zero_and_negative(zero: object) -> None:
    with pytest.raises(ValueError, match="positive"):
        parse_walltime(zero)


@pytest.mark.parametrize("seconds", [1, 59, 60, 90, 3599, 3600, 5400, 86399, 86400, 2 * 86400 + 61, 100 * 3600])
def test_format_walltime_round_trips(seconds: int) -> None:
    text = format_walltime(seconds)
    assert len(text.split(":")) == 3
    assert parse_walltime(text) == seconds


def test_format_walltime_hours_may_exceed_a_day() -> None:
    assert format_walltime(2 * 86400 + 3661) == "49:01:01"


# -- issue 11, folded from tests/unit/test_real_site.py: Issue #11, "right on a real site": YAML 1.2 reading,
# memory in MiB, one teardown lead, our own walltime exception, batch names checked before they reach a batch
# script.


@pytest.mark.parametrize(("value", "seconds"), [
    ("90m", 5400), ("2h", 7200), ("1d", 86400), ("30s", 30), ("1-12:30", 86400 + 45000), ("1-02:03:04", 93784),
    (90, 5400), ("45:30", 2730),
])
def test_walltime_accepts_slurm_forms_and_units(value: object, seconds: int) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    assert parse_walltime(value) == seconds


@pytest.mark.parametrize("value", [2048, "2048", "2g", "2G", "2GB", "2 G", "2048m", "2048M", "2048MiB", "2 GiB"])
def test_memory_forms_all_mean_2_gib(value: object) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    assert parse_memory(value) == 2 * GiB
