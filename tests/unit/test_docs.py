"""The docs a user reads: every relative link and image of README.md and docs/ exists (a user cannot open what the
repository does not ship), and the reproduction figures are what the shipped bench rows give."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

#: Markdown links and images: ``[text](target)`` and ``![alt](target)``, the target up to a space or ``)``.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "benchmarks").glob("*.md"))]


def _relative_targets(doc: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)  # code blocks hold commands, not links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_image_exists(doc: Path) -> None:
    missing = [t for t in _relative_targets(doc) if not (doc.parent / t.split("#", 1)[0]).exists()]
    assert not missing, f"{doc.relative_to(REPO)} links to what the repository does not have: {missing}"


def test_the_link_check_sees_links_and_images(tmp_path: Path) -> None:
    """The pattern finds both kinds and leaves web addresses, anchors and code blocks alone (else the test above
    could pass by finding nothing)."""
    doc = tmp_path / "d.md"
    doc.write_text("see [a](a.md#x) and ![fig](figures/f.png \"t\"), [web](https://x.org), [here](#top)\n"
                   "```\n[not](a link.md)\n```\n")
    assert _relative_targets(doc) == ["a.md#x", "figures/f.png"]
