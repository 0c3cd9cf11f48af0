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


FIGURES = REPO / "docs" / "figures"


def _figure_dirs() -> list[Path]:
    return sorted(p.parent for p in FIGURES.glob("*/results.jsonl"))


def test_the_reproduction_ships_its_rows_and_figures() -> None:
    """docs/reproduction.md shows figures of real runs: every figure directory has its rows and a summary."""
    dirs = _figure_dirs()
    assert len(dirs) >= 8, dirs
    for directory in dirs:
        assert (directory / "summary.csv").is_file() and list(directory.glob("*.png")), directory


@pytest.mark.parametrize("directory", _figure_dirs(), ids=lambda p: p.name)
def test_each_shipped_figure_is_what_its_shipped_rows_give(directory: Path, tmp_path: Path) -> None:
    """``hpc-hadoop bench plot`` of the shipped ``results.jsonl`` draws exactly the figures shipped beside it (task
    flows where the job histories are shipped too), so no figure of the page is stale or hand-made."""
    from benchmarks.plots import plot_all
    from benchmarks.results import read_rows

    rows = read_rows(directory / "results.jsonl")
    assert rows and all(r["state"] == "succeeded" for r in rows)
    work = tmp_path / directory.name
    work.mkdir()
    if (directory / "history").is_dir():
        (work / "history").symlink_to(directory / "history")
    drawn = {p.name for p in plot_all(rows, work)}
    shipped = {p.name for p in directory.glob("*.png")}
    flows = {name for name in drawn if name.startswith("taskflow_")}
    assert shipped - flows == drawn - flows, f"{directory.name}: shipped {sorted(shipped)}, drawn {sorted(drawn)}"
    assert {name for name in shipped if name.startswith("taskflow_")} <= flows
