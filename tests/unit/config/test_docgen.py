"""The job-file reference in docs/ is what the schema generates (so the docs cannot drift)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from launcher.config.docgen import reference
from launcher.config.load import load_spec
from tests.conftest import REPO


def test_job_file_reference_matches_the_schema() -> None:
    path = REPO / "docs" / "job-file-reference.md"
    assert path.read_text() == reference(), (
        "docs/job-file-reference.md is stale: run `hpc-hadoop reference > docs/job-file-reference.md`")


def test_reference_documents_every_field() -> None:
    text = reference()
    for field in ("`name`", "`filesystem.root`", "`hadoop.map_memory`", "`batch.extra_directives`",
                  "`steps[].streaming.mapper`", "`steps[].class`"):
        assert field in text, field


#: Strings that point outside the repository: the design notes a user cannot open. Built from parts so that
#: this file does not match itself.
OUTSIDE = tuple(s.encode() for s in ("DESIGN" + ".md", "../" + "shared", "/work/" + "shared"))
#: Directories never scanned when the repository is not a git checkout.
NOT_SHIPPED = {".git", ".venv", "target", "__pycache__", ".pytest_cache", ".ruff_cache", "build", "dist"}
#: ``[text](target)`` in markdown, outside fenced code blocks.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def shipped_files() -> list[Path]:
    """Every file git tracks (tests/cluster/ included: nothing there needs the design notes either); without
    git, every file under the repository except build outputs and caches."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60).stdout
        names = [name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        names = [str(p.relative_to(REPO)) for p in REPO.rglob("*")
                 if p.is_file() and not NOT_SHIPPED.intersection(p.relative_to(REPO).parts)]
    return [REPO / name for name in names if (REPO / name).is_file() and not (REPO / name).is_symlink()]


def test_no_shipped_file_cites_what_does_not_ship() -> None:
    offenders = []
    for path in shipped_files():
        data = path.read_bytes()
        offenders += [f"{path.relative_to(REPO)}: {s.decode()}" for s in OUTSIDE if s in data]
    assert not offenders, "cite docs/architecture.md instead of files outside the repository:\n" + "\n".join(offenders)


def anchors(markdown: Path) -> set[str]:
    """GitHub's heading anchors of a markdown file."""
    text = FENCE.sub("", markdown.read_text())
    slugs = set()
    for heading in re.findall(r"^#+\s+(.*?)\s*$", text, re.M):
        slugs.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return slugs


def test_relative_markdown_links_resolve() -> None:
    broken = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in LINK.findall(FENCE.sub("", doc.read_text())):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            path = (doc.parent / file).resolve() if file else doc
            if not path.exists():
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_docs_say_orangefs_refuses_the_sticky_bit_but_keeps_setgid() -> None:
    """Issue 25 item 6: real OrangeFS 2.10 refuses the sticky bit in ``chmod`` but accepts setgid (its
    ``PVFS_PERM_VALID`` has ``PVFS_G_SGID`` and no sticky bit; tests/standins/orangefs_fuse.py); the docs once
    said both were refused ("no sticky or setgid bit", "the sticky and setgid bits a filesystem refuses")."""
    wrong = re.compile(r"sticky (?:or|and) (?:the )?setgid bits?", re.I)
    for path in sorted((REPO / "docs").glob("*.md")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not wrong.search(line), f"docs/{path.name}:{number} calls setgid refused: {line}"


def test_every_memory_field_reads_as_a_memory_and_yes_no_as_booleans() -> None:
    """Issue 28 item 7: the reference typed ``spark.executor_memory`` as an integer (``1g`` works), and said
    ``yes``/``no`` are strings although a boolean field takes them as true/false."""
    text = reference()
    assert "| `spark.executor_memory` | memory (`512m`, `2g`; bare number = MiB) or null |" in text
    assert "a boolean field\n  takes them" in text
    spec = load_spec(None, data={"name": "x", "hadoop": {"fast_start": "no"}, "spark": {"executor_memory": "1g"},
                                 "steps": [{"example": "pi"}]})[0]
    assert spec.hadoop.fast_start is False and spec.spark.executor_memory == 1 << 30
