"""The interactive commands' client side: the client wrappers and ``env``/``exec``/``completion``/``logs --app`` at
the command line, and a cluster directory swapped for a link: no daemons (the life cycle on real daemons is in
tests/integration/test_interactive.py). The index of clusters, their states, ``stop`` and ``clean``:
tests/unit/lifecycle/clusters/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.config.load import load_spec
from launcher.config.spec import JobSpec
from launcher.lifecycle.clusters.index import index_entries, register
from launcher.lifecycle.clusters.status import status_of
from launcher.lifecycle.report import RunReport
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.clients import SUBCOMMANDS, apply_environment, client_environment, export_lines, render_wrappers
from launcher.util.errors import UserError
from launcher.util.states import RunState


def test_start_needs_no_steps_but_submit_does(tmp_path: Path) -> None:
    data = {"name": "i", "filesystem": {"root": str(tmp_path)}}
    spec, _ = load_spec(None, data=data, require_steps=False)
    assert spec.steps == []
    with pytest.raises(UserError, match="steps: required field is missing"):
        load_spec(None, data=data)


# -- client wrappers and environment ------------------------------------------------------------

@pytest.fixture
def plan(make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan]) -> ClusterPlan:
    return make_test_plan(make_spec())


def test_wrappers_map_subcommands_like_hadoops_scripts(plan: ClusterPlan, tmp_path: Path) -> None:
    texts = render_wrappers(plan)
    assert set(texts) == {"hadoop", "yarn", "mapred"}
    for name, text in texts.items():
        script = tmp_path / f"{name}.sh"
        script.write_text(text)
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
        assert f"export HADOOP_CONF_DIR={plan.conf_dir}" in text
        for sub, (main_class, _) in SUBCOMMANDS[name].items():
            assert f"  {sub}) class={main_class}" in text
    assert 'node) class=org.apache.hadoop.yarn.client.cli.NodeCLI ;;' in texts["yarn"]
    # ApplicationCLI reads its title (application, container...) from its first argument.
    assert 'application) class=org.apache.hadoop.yarn.client.cli.ApplicationCLI; set -- "$sub" "$@" ;;' \
        in texts["yarn"]


def test_wrapper_prints_classpath_and_rejects_unknown_subcommands(plan: ClusterPlan, tmp_path: Path) -> None:
    script = tmp_path / "yarn.sh"
    script.write_text(render_wrappers(plan)["yarn"])
    script.chmod(0o755)
    out = subprocess.run([str(script), "classpath"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip().startswith(str(plan.conf_dir) + ":")
    bad = subprocess.run([str(script), "nodez"], capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown subcommand 'nodez'" in bad.stderr


def test_env_lines_evaluate_in_a_shell(plan: ClusterPlan) -> None:
    lines = export_lines(client_environment(plan))
    script = "\n".join(lines) + '\necho "$HADOOP_CONF_DIR|$HPC_HADOOP_CLUSTER|$PATH"'
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    conf, cid, path = out.stdout.strip().split("|")
    assert conf == str(plan.conf_dir) and cid == plan.cluster_id
    assert path.startswith(f"{plan.run_dir}/bin:") and path.endswith(":/usr/bin:/bin")
    env = apply_environment(client_environment(plan), {"PATH": "/bin", "CLASSPATH": "/x"})
    assert env["PATH"].endswith(":/bin") and "CLASSPATH" not in env


def test_env_exports_the_jars_job_files_name(plan: ClusterPlan) -> None:
    """Issue 40: ``env`` exports ``$EXAMPLES_JAR``, ``$TESTS_JAR`` and ``$STREAMING_JAR``, the files
    ``${examples_jar}``... name in a job file (one source: the plan's variables); a cluster without Spark has no
    ``$SPARK_EXAMPLES_JAR``."""
    env = client_environment(plan)
    runtime = plan.runtime
    assert (env["EXAMPLES_JAR"], env["TESTS_JAR"], env["STREAMING_JAR"]) == \
        (str(runtime.examples_jar), str(runtime.tests_jar), str(runtime.streaming_jar))
    values = plan.variables()
    assert [env[name] for name in ("EXAMPLES_JAR", "TESTS_JAR", "STREAMING_JAR")] == \
        [values["examples_jar"], values["tests_jar"], values["streaming_jar"]]
    assert "SPARK_EXAMPLES_JAR" not in env
    out = subprocess.run(["sh", "-c", "\n".join(export_lines(env)) + '\necho "$EXAMPLES_JAR"'], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == str(runtime.examples_jar)


def test_exec_without_a_running_cluster_is_a_one_line_error() -> None:
    result = CliRunner().invoke(main, ["exec", "--", "yarn", "node", "-list"])
    assert result.exit_code == 2 and "no running cluster" in result.output
    result = CliRunner().invoke(main, ["exec", "a", "b", "--", "yarn"])
    assert result.exit_code == 2 and "at most one ID before `--`" in result.output


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_scripts(shell: str) -> None:
    result = CliRunner().invoke(main, ["completion", shell])
    assert result.exit_code == 0 and "_HPC_HADOOP_COMPLETE" in result.output and "hpc-hadoop" in result.output


def test_bash_completion_completes_subcommands() -> None:
    env = {**os.environ, "_HPC_HADOOP_COMPLETE": "bash_complete", "COMP_WORDS": "hpc-hadoop st", "COMP_CWORD": "1"}
    out = subprocess.run([sys.executable, "-c", "from launcher.cli.main import main; main(prog_name='hpc-hadoop')"],
                         capture_output=True, text=True, env=env)
    words = {line.split(",", 1)[1] for line in out.stdout.splitlines() if "," in line}
    assert {"start", "status", "stop"} <= words


def test_app_option_takes_an_id_or_a_step_of_run_json(tmp_path: Path) -> None:
    """``hpc-hadoop logs ID --app X``: X is an application id, or a step's name or number in run.json."""
    from launcher.cli.clusters import application_of
    from launcher.util.errors import UserError

    (tmp_path / "run.json").write_text(json.dumps({"steps": [
        {"name": "teragen", "application_id": "application_1_0001"},
        {"name": "terasort", "application_id": "application_1_0002"},
        {"name": "broken", "application_id": None, "log": "steps/03-broken.log"}]}))
    assert application_of(tmp_path, "application_9_0042") == "application_9_0042"
    assert application_of(tmp_path, "terasort") == "application_1_0002"
    assert application_of(tmp_path, "1") == "application_1_0001"
    with pytest.raises(UserError, match="no step 'sort'.*1 teragen, 2 terasort, 3 broken"):
        application_of(tmp_path, "sort")
    with pytest.raises(UserError, match="no YARN application") as info:
        application_of(tmp_path, "broken")
    assert "steps/03-broken.log" in str(info.value.fix)


# -- issue 36: a cluster directory that is not yours is never trusted -------------------------------------------------

def swapped_cluster(plan: ClusterPlan, tmp_path: Path) -> tuple[Path, Path]:
    """A held cluster's directory (``plan.json``, ``run.json``: ready, its holder a live process) whose place another
    hand took: the cluster directory is now a symbolic link to a farm of links back to it, but for a ``bin/`` of its
    own whose ``yarn`` leaves a mark. Returns the cluster directory (the link) and the mark."""
    run_dir = Path(plan.run_dir)
    moved = run_dir.with_name(run_dir.name + ".moved")
    moved.mkdir(parents=True)
    (moved / "plan.json").write_text(plan.to_json())
    RunReport(cluster_id=plan.cluster_id, run_dir=str(run_dir), scheduler="local", nodes=["n1"], bringup_s=2.0,
              hold=True, state=RunState.RUNNING).write(moved / "run.json")
    farm = tmp_path / "farm"
    (farm / "bin").mkdir(parents=True)
    for name in ("plan.json", "run.json"):
        (farm / name).symlink_to(moved / name)
    mark = tmp_path / "ran-the-farms-yarn"
    (farm / "bin" / "yarn").write_text(f"#!/bin/sh\ntouch {mark}\necho 'Total Nodes:1'\n")
    (farm / "bin" / "yarn").chmod(0o755)
    run_dir.symlink_to(farm)
    return run_dir, mark


def test_env_and_exec_refuse_a_cluster_directory_swapped_for_a_link(plan: ClusterPlan, tmp_path: Path) -> None:
    """Issue 36: ``exec ID -- yarn node -list`` ran the ``bin/yarn`` of whoever had swapped the cluster directory for
    a link farm; ``env`` pointed ``PATH`` there, ``logs`` showed its files. Each refuses in one line (exit 2) and runs
    nothing."""
    run_dir, mark = swapped_cluster(plan, tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        register(plan.cluster_id, run_dir, "local", holder_pid=holder.pid, interactive=True)
        line = (f"error: ID: {run_dir} is a symbolic link to {tmp_path / 'farm'} (owner root, mode 0777): hpc-hadoop "
                "follows no link here (fix: remove it, then run again)\n")
        for args in (["env", plan.cluster_id], ["exec", plan.cluster_id, "--", "yarn", "node", "-list"],
                     ["logs", plan.cluster_id]):
            result = CliRunner().invoke(main, args)
            assert (result.exit_code, result.output) == (2, line), (args, result.output)
        assert not mark.exists()
        (entry,) = index_entries()
        status = status_of(entry)  # list and status read nothing in it either
        assert (status.state, status.detail) == ("unreachable", line.removeprefix("error: ").rstrip())
    finally:
        holder.kill()
        holder.wait()
