"""Tests of launcher/util/yamlio.py."""

from __future__ import annotations

from launcher.util.yamlio import dump_yaml, load_yaml

# -- issue 11, folded from tests/unit/test_real_site.py: Issue #11, "right on a real site": YAML 1.2 reading,
# memory in MiB, one teardown lead, our own walltime exception, batch names checked before they reach a batch
# script.


def test_yaml_1_2_has_no_yes_no_booleans_and_no_sexagesimal() -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    data = load_yaml("a: 1:30:00\nb: yes\nc: off\nd: 0o17\ne: true\nf: 2048\ng:\nh: 2024-01-01\n")
    assert data == {"a": "1:30:00", "b": "yes", "c": "off", "d": 15, "e": True, "f": 2048, "g": None,
                    "h": "2024-01-01"}


def test_dump_yaml_quotes_what_either_yaml_version_would_misread() -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    data = {"a": "1:30:00", "b": "yes", "c": "0o17", "d": 2048, "e": True}
    text = dump_yaml(data)
    assert "'1:30:00'" in text and "'yes'" in text and "'0o17'" in text
    assert load_yaml(text) == data
