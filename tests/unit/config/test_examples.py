"""The job files in examples/: what they leave where (issue 28 item 5: results outside the cluster directory, which
``hpc-hadoop clean`` deletes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.load import load_spec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.steps.commands import resolve_steps
from tests.conftest import REPO


@pytest.mark.parametrize("example", sorted(p.name for p in (REPO / "examples").glob("*.yaml")))
def test_every_example_writes_its_results_outside_the_cluster_directory(
        example: str, tmp_path: Path, spark_home: Path, make_test_plan: Callable[..., ClusterPlan]) -> None:
    """Each output no later step reads (a result) is in ``<root>/<user>/results/<cluster id>/``; only data a later step
    reads (TeraGen's) may stay in the cluster directory, which ``clean`` deletes."""
    spec, _ = load_spec(REPO / "examples" / example, sets=[f"filesystem.root={tmp_path / 'pfs'}",
                                                           f"spark.home={spark_home}"])
    plan = make_test_plan(spec)
    steps = resolve_steps(spec, plan, overwrite=False, job_file=example, check_inputs=False)
    results = f"{tmp_path / 'pfs'}/{plan.user}/results/{plan.cluster_id}/"
    assert any(step.outputs for step in steps)
    for i, step in enumerate(steps):
        read_later = {path for later in steps[i + 1:] for path in later.inputs}
        for output in step.outputs:
            if output in read_later:
                continue
            assert output.startswith(results) and not Path(output).is_relative_to(plan.run_dir), (step.name, output)
