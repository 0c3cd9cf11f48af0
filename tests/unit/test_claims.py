"""Two runs racing for one output directory (issue 13 item 8): the claim taken just before a step runs lets
exactly one of them write it (the end-to-end race is in tests/integration/test_faults.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.steps.jobs import ResolvedStep, claim_outputs, claim_path
from launcher.util.errors import UserError


def step(tmp_path: Path, *outputs: Path) -> ResolvedStep:
    return ResolvedStep(index=2, name="wc", kind="example", argv=["true"], inputs=(),
                        outputs=tuple(str(o) for o in outputs), log=tmp_path / "steps" / "02-wc.log")


def test_a_second_claim_on_the_same_output_is_the_existing_output_error(tmp_path: Path) -> None:
    out = tmp_path / "shared" / "out"
    first = claim_outputs(step(tmp_path, out), "run-a", overwrite=False)
    assert first == [claim_path(str(out))] and "run-a" in first[0].read_text()
    with pytest.raises(UserError, match="already exists: cluster run-a is writing it") as info:
        claim_outputs(step(tmp_path, out), "run-b", overwrite=True)  # not even --overwrite takes it
    assert info.value.field == "steps.2"
    assert first[0].read_text() == "cluster run-a\n"  # the holder's claim is untouched


def test_an_output_written_meanwhile_is_refused_and_every_claim_released(tmp_path: Path) -> None:
    free, written = tmp_path / "free", tmp_path / "written"
    written.mkdir()
    (written / "part-r-00000").write_text("kept\n")
    with pytest.raises(UserError, match=f"output {written} already exists"):
        claim_outputs(step(tmp_path, free, written), "run-b", overwrite=False)
    assert not claim_path(str(free)).exists() and not claim_path(str(written)).exists()
    assert (written / "part-r-00000").read_text() == "kept\n"


def test_overwrite_removes_the_old_output_once_claimed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old").write_text("x")
    claims = claim_outputs(step(tmp_path, out), "run-a", overwrite=True)
    assert not out.exists() and claims[0].exists()
