"""The job-file reference in docs/ is what the schema generates (so the docs cannot drift)."""

from __future__ import annotations

from launcher.docgen import reference
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
