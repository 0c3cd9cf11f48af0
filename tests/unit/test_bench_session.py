"""launcher.runner.ClusterRun builds job-client steps on a plan without starting anything (the cluster parts
run in tests/integration/test_bench.py)."""

from __future__ import annotations

from pathlib import Path

from launcher.runner import ClusterRun, materialize, prepare
from launcher.schedulers import get_scheduler
from launcher.spec import load_spec


def test_java_steps_are_numbered_and_carry_the_extra_classpath(tmp_path: Path) -> None:
    spec, _ = load_spec(None, data={"name": "bench", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    allocation = get_scheduler("local").allocation(spec)
    plan, _ = prepare(spec, allocation)
    materialize(plan)
    session = ClusterRun(plan)
    first = session.java_step("dfsio write", ["-write"], main_class="org.apache.hadoop.fs.TestDFSIO",
                              extra_classpath=["/x/tests.jar"], outputs=[tmp_path / "out"])
    second = session.java_step("teragen", ["examples.jar", "teragen", "10", "/o"])
    assert first.log.name == "01-dfsio_write.log" and second.log.name == "02-teragen.log"
    cp = first.argv[first.argv.index("-cp") + 1]
    assert cp.startswith(str(session.plan.conf_dir)) and cp.endswith(":/x/tests.jar")
    assert first.argv[-2:] == ["org.apache.hadoop.fs.TestDFSIO", "-write"]
    assert second.argv[-5] == "org.apache.hadoop.util.RunJar" and first.outputs == (str(tmp_path / "out"),)
    assert session.bringup_s is None
