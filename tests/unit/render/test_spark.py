"""Spark steps and the cluster's Spark configuration (launcher/render/spark.py, the Spark parts of
launcher/steps/commands.py): the
``spark-submit`` command line, executors sized from the plan, ``spark-defaults.conf`` for a ``file://`` default
filesystem, and the job-file errors. A fake Spark install (empty files where Spark has them); nothing runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from launcher.config.load import load_spec
from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render import spark as spark_module
from launcher.render.clients import client_environment
from launcher.render.spark import (
    discover_spark,
    size_executors,
    spark_defaults,
    spark_variables,
    uses_spark,
    write_spark_conf,
)
from launcher.steps.commands import ResolvedStep, resolve_steps
from launcher.util.errors import UserError

SpecFactory = Callable[..., JobSpec]
PlanFactory = Callable[..., ClusterPlan]


@pytest.fixture
def spark_home(tmp_path: Path) -> Path:
    """A Spark install as PyPI's pyspark lays it out, plus our examples jar beside it."""
    home = tmp_path / "spark-runtime" / "pyspark"
    for name in ("bin/spark-submit", "jars/spark-core_2.13-4.1.1.jar", "jars/spark-yarn_2.13-4.1.1.jar",
                 "python/lib/pyspark.zip", "python/lib/py4j-0.10.9.9-src.zip"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")
    (home.parent / "hpc-hadoop-spark-examples.jar").write_bytes(b"")
    return home


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "wc.py"
    path.write_text("print('hi')\n")
    return path


@pytest.fixture
def plan_with(make_spec: SpecFactory, make_test_plan: PlanFactory, spark_home: Path) -> Callable[..., ClusterPlan]:
    """``plan_with(steps, **fields)``: a 3-node plan (8 cores, 64 GiB per node) whose job uses the fake Spark."""

    def build(steps: list[dict[str, Any]], **fields: Any) -> ClusterPlan:
        fields["spark"] = {"home": str(spark_home), **fields.get("spark", {})}
        return make_test_plan(make_spec(steps=steps, **fields))

    return build


def resolve(plan: ClusterPlan) -> list[ResolvedStep]:
    return resolve_steps(plan.spec, plan, overwrite=False, job_file="job.yaml")


def test_pyspark_step_is_spark_submit_on_yarn_with_executors_from_the_plan(plan_with: Callable[..., ClusterPlan],
                                                                         spark_home: Path, script: Path,
                                                                         tmp_path: Path) -> None:
    plan = plan_with([{"pyspark": {"script": str(script), "args": ["${fs_root}/in", 7]},
                       "properties": {"spark.sql.shuffle.partitions": 4, "spark.speculation": False}}])
    [step] = resolve(plan)
    assert step.kind == "pyspark" and step.name == "wc"
    # 8 vcores: 4 cores per executor (the largest divisor up to 5), 2 per node, 3 nodes; a node's 9216 MiB less the
    # AM's 1024 MiB container (512 + 384 rounded up to 256) is 4096 per executor: heap 3712 + overhead 384.
    assert step.argv == [str(spark_home / "bin" / "spark-submit"), "--master", "yarn", "--deploy-mode", "client",
                         "--name", "t-wc", "--num-executors", "6", "--executor-cores", "4",
                         "--executor-memory", "3712m", "--conf", "spark.executor.memoryOverhead=384m",
                         "--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.speculation=false",
                         str(script), str(tmp_path / "pfs") + "/in", "7"]
    assert plan.memory.nodemanager_mb == 9216 and plan.memory.nodemanager_vcores == 8


def test_spark_jar_step_with_the_examples_jar_and_a_number_of_executors(plan_with: Callable[..., ClusterPlan],
                                                                       spark_home: Path) -> None:
    plan = plan_with([{"spark": {"jar": "${spark_examples_jar}", "class": "org.hpchadoop.spark.examples.SparkPi",
                                 "args": [100], "executors": 2}}])
    [step] = resolve(plan)
    assert step.kind == "spark" and step.name == "SparkPi"
    assert step.argv[step.argv.index("--num-executors") + 1] == "2"
    assert step.argv[-4:] == ["--class", "org.hpchadoop.spark.examples.SparkPi",
                              str(spark_home.parent / "hpc-hadoop-spark-examples.jar"), "100"]


def test_executor_sizing_on_two_cores(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                      make_allocation: Callable[..., Any], spark_home: Path, script: Path) -> None:
    """The local backend here: 2 cores, NodeManager 2 × 1024 + 1024 MiB: one executor of 2 cores, 1664 + 384 MiB."""
    spec = make_spec(scheduler="local", nodes=1, spark={"home": str(spark_home)},
                     steps=[{"pyspark": {"script": str(script)}}])
    plan = make_test_plan(spec, make_allocation(1, cores=2, memory=24 << 30, scheduler="local"))
    size = size_executors(plan)
    assert (size.instances, size.cores, size.memory_mb, size.overhead_mb, size.per_node) == (1, 2, 1664, 384, 1)


def test_executor_memory_and_cores_from_the_job_file(plan_with: Callable[..., ClusterPlan], script: Path) -> None:
    plan = plan_with([{"pyspark": {"script": str(script)}}],
                     spark={"executor_cores": 2, "executor_memory": "2g"})
    size = size_executors(plan)
    assert (size.instances, size.cores, size.memory_mb, size.overhead_mb) == (12, 2, 2048, 384)


def test_an_executor_that_cannot_fit_names_the_field(plan_with: Callable[..., ClusterPlan], script: Path) -> None:
    plan = plan_with([{"pyspark": {"script": str(script)}}], spark={"executor_memory": "20g"})
    with pytest.raises(UserError) as err:
        size_executors(plan)
    assert err.value.field == "spark.executor_memory" and "no executor of 20480 MiB" in str(err.value)


def test_nodes_too_small_for_spark_are_refused_except_in_a_preview(make_spec: SpecFactory,
                                                                   make_test_plan: PlanFactory,
                                                                   make_allocation: Callable[..., Any],
                                                                   spark_home: Path, script: Path) -> None:
    """One core, 512 MiB containers: a 1024 MiB NodeManager has room for the Spark AM only (what submit's stand-in
    allocation of one core looked like: refused there, it stopped a Slurm job whose nodes have 4 cores)."""
    spec = make_spec(spark={"home": str(spark_home)}, steps=[{"pyspark": {"script": str(script)}}],
                     hadoop={"map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m"})
    small = make_allocation(3, cores=1, memory=8 << 30)
    with pytest.raises(UserError) as err:
        size_executors(make_test_plan(spec, small))
    assert err.value.field == "hadoop.nodemanager_memory" and "less than Spark's minimum 450 MiB" in str(err.value)
    assert "at least 1858 (MiB)" in str(err.value)
    preview = make_test_plan(spec, dataclasses.replace(small, preview=True))
    assert preview.preview and size_executors(preview).memory_mb == 450
    assert [s.kind for s in resolve(preview)] == ["pyspark"]


def test_spark_defaults_for_a_file_default_filesystem(plan_with: Callable[..., ClusterPlan], spark_home: Path,
                                                      script: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    shim = tmp_path / "hpc-hadoop-fs-shim-0.1.0.jar"
    monkeypatch.setattr(spark_module, "shim_jar", lambda: shim)
    plan = plan_with([{"pyspark": {"script": str(script)}}], spark={"conf": {"spark.eventLog.enabled": False,
                                                                             "spark.task.cpus": 1}})
    props = spark_defaults(plan, discover_spark(plan.spec))
    assert props["spark.master"] == "yarn" and props["spark.submit.deployMode"] == "client"
    assert props["spark.yarn.stagingDir"] == f"file://{plan.run_dir}/staging"
    assert props["spark.yarn.jars"] == f"local:{spark_home}/jars/*"
    assert props["spark.eventLog.dir"] == f"file://{plan.run_dir}/spark-events"
    assert props["spark.driver.host"] == plan.master.address == "10.0.0.1"
    assert props["spark.driver.extraClassPath"] == props["spark.executor.extraClassPath"] == str(shim)
    assert props["spark.pyspark.python"] == "/usr/bin/python3"
    for role in ("driver", "executor", "yarn.am"):  # JDK 17's cgroup v1 detection fails inside Slurm jobs
        assert props[f"spark.{role}.extraJavaOptions"].startswith("-XX:-UseContainerSupport")
    assert props["spark.eventLog.enabled"] == "false" and props["spark.task.cpus"] == "1"  # the job file wins
    assert "spark.local.dir" not in props  # executors use their container's LOCAL_DIRS (the NodeManager's)


def test_per_cluster_spark_reads_the_realm_and_authenticates_its_rpc_simple_does_not(
        plan_with: Callable[..., ClusterPlan], spark_home: Path, script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compares the two modes (so ``security: simple`` is explicit here). Under ``per-cluster`` (the default) the
    driver, the executors and the ApplicationMaster get the realm's krb5.conf, the driver also through
    ``SPARK_SUBMIT_OPTS``, and its environment names the owner's ticket cache; Spark's RPC is authenticated, the
    Hive and HBase token providers and the UI's kill links are off; no keytab or principal is named. Under
    ``simple`` none of it."""
    monkeypatch.delenv("KRB5CCNAME", raising=False)
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    steps = [{"pyspark": {"script": str(script)}}]
    plan = plan_with(steps)
    assert plan.spec.security == "per-cluster"
    krb = Path(plan.run_dir) / "krb"
    runtime = discover_spark(plan.spec)
    props = spark_defaults(plan, runtime)
    for role in ("driver", "executor", "yarn.am"):
        assert props[f"spark.{role}.extraJavaOptions"] == \
            f"-XX:-UseContainerSupport -Djava.security.krb5.conf={krb}/krb5.conf"
    assert props["spark.authenticate"] == "true"
    assert props["spark.security.credentials.hive.enabled"] == props["spark.security.credentials.hbase.enabled"] \
        == "false"
    assert props["spark.ui.killEnabled"] == "false"  # the UI trusts the RM's host: no kill links for its users
    env = spark_module.spark_env(plan, runtime)
    assert env["SPARK_SUBMIT_OPTS"] == f"-Djava.security.krb5.conf={krb}/krb5.conf"
    assert env["KRB5CCNAME"] == f"FILE:{plan.security.ccache}"  # the realm's own, else its copy for other nodes
    assert not plan.security.ccache.is_relative_to(plan.run_dir)  # never on the shared filesystem (issue 36)
    (step,) = resolve(plan)
    text = " ".join([*step.argv, *(f"{k}={v}" for k, v in props.items()), *env.values()])
    assert "keytab" not in text and "spark.kerberos.principal" not in text
    Path(plan.run_dir).mkdir(parents=True)
    write_spark_conf(plan)
    assert client_environment(plan)["SPARK_SUBMIT_OPTS"] == env["SPARK_SUBMIT_OPTS"]  # hpc-hadoop env and exec

    simple = plan_with(steps, security="simple")
    props = spark_defaults(simple, runtime)
    for role in ("driver", "executor", "yarn.am"):
        assert props[f"spark.{role}.extraJavaOptions"] == "-XX:-UseContainerSupport"
    assert not [key for key in props if key.startswith(("spark.authenticate", "spark.security", "spark.kerberos",
                                                         "spark.ui.killEnabled"))]
    env = spark_module.spark_env(simple, runtime)
    assert "SPARK_SUBMIT_OPTS" not in env and "KRB5CCNAME" not in env


def test_a_users_java_options_keep_the_clusters_flags(plan_with: Callable[..., ClusterPlan], script: Path) -> None:
    """``spark.conf`` of the job file and a step's ``properties`` that set a JVM options property add to the
    cluster's flags instead of dropping them (executors without the realm's krb5.conf fail under per-cluster)."""
    plan = plan_with([{"pyspark": {"script": str(script)}, "properties": {"spark.yarn.am.extraJavaOptions": "-Da=1"}}],
                     spark={"conf": {"spark.executor.extraJavaOptions": "-Dfoo=1 -XX:-UseContainerSupport",
                                     "spark.driver.memory": "2g"}})
    flags = f"-XX:-UseContainerSupport -Djava.security.krb5.conf={plan.run_dir}/krb/krb5.conf"
    props = spark_defaults(plan, discover_spark(plan.spec))
    assert props["spark.executor.extraJavaOptions"] == \
        f"-Djava.security.krb5.conf={plan.run_dir}/krb/krb5.conf -Dfoo=1 -XX:-UseContainerSupport"
    assert props["spark.driver.extraJavaOptions"] == flags and props["spark.driver.memory"] == "2g"
    (step,) = resolve(plan)
    assert f"spark.yarn.am.extraJavaOptions={flags} -Da=1" in step.argv


def test_shim_mode_stages_on_pfs_and_checksums_drop_the_shim(plan_with: Callable[..., ClusterPlan], script: Path,
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(spark_module, "shim_jar", lambda: tmp_path / "shim.jar")
    steps = [{"pyspark": {"script": str(script)}}]
    shim_plan = plan_with(steps, filesystem={"root": str(tmp_path / "pfs"), "mode": "shim"})
    assert spark_defaults(shim_plan, discover_spark(shim_plan.spec))["spark.yarn.stagingDir"] == \
        f"pfs://{shim_plan.run_dir}/staging"
    crc_plan = plan_with(steps, filesystem={"root": str(tmp_path / "pfs"), "checksums": True})
    assert "spark.executor.extraClassPath" not in spark_defaults(crc_plan, discover_spark(crc_plan.spec))


def test_spark_conf_and_client_environment(plan_with: Callable[..., ClusterPlan], spark_home: Path,
                                           script: Path) -> None:
    plan = plan_with([{"pyspark": {"script": str(script)}}])
    Path(plan.run_dir).mkdir(parents=True)
    assert "SPARK_HOME" not in client_environment(plan)  # no spark-conf/ yet: a Hadoop-only cluster
    directory = write_spark_conf(plan)
    text = (directory / "spark-defaults.conf").read_text()
    assert f"spark.yarn.jars local:{spark_home}/jars/*\n" in text and (Path(plan.run_dir) / "spark-events").is_dir()
    env = client_environment(plan)
    assert env["SPARK_HOME"] == str(spark_home) and env["SPARK_CONF_DIR"] == str(directory)
    assert env["PATH"].endswith(f"{spark_home}/bin:$PATH")
    assert env["PYSPARK_ARCHIVES_PATH"] == (f"local:{spark_home}/python/lib/pyspark.zip,"
                                            f"local:{spark_home}/python/lib/py4j-0.10.9.9-src.zip")
    assert env["PYTHONPATH"] == f"{spark_home}/python/lib/pyspark.zip:{spark_home}/python/lib/py4j-0.10.9.9-src.zip"
    # issue 40: the jar ${spark_examples_jar} names in a job file, as $SPARK_EXAMPLES_JAR
    assert env["SPARK_EXAMPLES_JAR"] == str(spark_home.parent / "hpc-hadoop-spark-examples.jar") == \
        spark_variables(discover_spark(plan.spec))["spark_examples_jar"]


def test_a_job_without_spark_never_looks_for_it(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                 tmp_path: Path) -> None:
    spec = make_spec(steps=[{"example": "pi", "args": [2, 10]}])
    assert not uses_spark(spec)
    assert [s.kind for s in resolve(make_test_plan(spec))] == ["example"]


def test_a_spark_home_that_is_not_spark_is_refused(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                   script: Path, tmp_path: Path) -> None:
    spec = make_spec(spark={"home": str(tmp_path)}, steps=[{"pyspark": {"script": str(script)}}])
    with pytest.raises(UserError) as err:
        resolve(make_test_plan(spec))
    assert err.value.field == "spark.home" and "is not a Spark install" in str(err.value)


def test_a_missing_script_or_jar_names_the_field(plan_with: Callable[..., ClusterPlan], tmp_path: Path) -> None:
    with pytest.raises(UserError) as err:
        resolve(plan_with([{"pyspark": {"script": str(tmp_path / "nope.py")}}]))
    assert err.value.field == "steps.1.pyspark.script" and "does not exist" in str(err.value)
    with pytest.raises(UserError) as err:
        resolve(plan_with([{"spark": {"jar": str(tmp_path / "app.jar"), "class": "A"}}]))
    assert err.value.field == "steps.1.spark.jar"


def test_an_empty_spark_examples_jar_says_none_is_installed(plan_with: Callable[..., ClusterPlan],
                                                           spark_home: Path) -> None:
    """Issue 39: a Spark without our examples jar beside it (a prefix whose `runtime install` predates Spark) gives an
    empty ``${spark_examples_jar}``; the error says so and names the install command, not "jar (empty)"."""
    (spark_home.parent / "hpc-hadoop-spark-examples.jar").unlink()
    with pytest.raises(UserError) as err:
        resolve(plan_with([{"spark": {"jar": "${spark_examples_jar}", "class": "SparkPi"}}]))
    assert err.value.field == "steps.1.spark.jar"
    assert err.value.message == (f"${{spark_examples_jar}} is empty: no Spark examples jar is installed beside the "
                                 f"Spark at {spark_home}")
    assert err.value.fix == "hpc-hadoop runtime install, or ./install.sh in a checkout"


def test_an_existing_output_is_refused(plan_with: Callable[..., ClusterPlan], script: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(UserError) as err:
        resolve(plan_with([{"pyspark": {"script": str(script), "output": str(out)}}]))
    assert "already exists" in str(err.value) and err.value.field == "steps.1"


def test_relative_script_and_jar_are_the_job_files_directory(tmp_path: Path, write_yaml: Callable[..., Path]) -> None:
    job = write_yaml(tmp_path / "project" / "job.yaml", {
        "name": "p", "steps": [{"pyspark": {"script": "wc.py", "output": "out"}},
                               {"spark": {"jar": "lib/app.jar", "class": "A"}}]})
    spec, _ = load_spec(job)
    assert spec.steps[0].pyspark.script == str(tmp_path / "project" / "wc.py")  # type: ignore[union-attr]
    assert spec.steps[0].pyspark.output == str(tmp_path / "project" / "out")  # type: ignore[union-attr]
    assert spec.steps[1].spark.jar == str(tmp_path / "project" / "lib" / "app.jar")  # type: ignore[union-attr]


@pytest.mark.parametrize(("step", "message"), [
    ({"pyspark": {"script": "a.py", "executor": 2}}, "executor"),
    ({"pyspark": {"script": "a.py", "executors": 0}}, "executors"),
    ({"spark": {"jar": "a.jar"}}, "class"),
    ({"spark": {"jar": "a.jar", "class": "A"}, "pyspark": {"script": "a.py"}}, "has both `spark` and `pyspark`"),
])
def test_job_file_mistakes_in_spark_steps(tmp_path: Path, write_yaml: Callable[..., Path], step: dict[str, Any],
                                          message: str) -> None:
    job = write_yaml(tmp_path / "job.yaml", {"name": "p", "steps": [step]})
    with pytest.raises(UserError) as err:
        load_spec(job)
    text = str(err.value)
    assert text.startswith(f"{job}: steps") and message in text and "\n" not in text


def test_spark_kmeans_clusters_the_points_mahout_gets(tmp_path: Path) -> None:
    """The spark-kmeans workload's input is the kmeans workload's points (same generator, parameters and seed), dealt
    over the files alike: file f of each holds points f, f + files, ... in that order (text lines for MLlib,
    ``VectorWritable`` records for Mahout)."""
    from benchmarks.profiles import profile
    from benchmarks.seqfile import vector_writable
    from benchmarks.workloads import Context
    from benchmarks.workloads.kmeans import KMeans, SparkKMeans, gaussian_points

    params = profile("tiny", "spark-kmeans")
    assert params == profile("tiny", "kmeans")
    figures = SparkKMeans().prepare(Context(work_dir=tmp_path, params=params, nodes=["n1"]))
    mahout = KMeans().prepare(Context(work_dir=tmp_path, params=params, nodes=["n1"]))
    texts, vectors = sorted((tmp_path / "points").glob("part-*")), sorted((tmp_path / "samples").glob("part-*"))
    assert len(texts) == len(vectors) == params["files"] and figures["input_bytes"] > 0 and mahout["input_bytes"] > 0
    expected = gaussian_points(params["samples"], params["dimensions"], params["k"], params["std"])
    for f, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        mine = expected[f::params["files"]]
        assert [[float(x) for x in line.split(" ")] for line in text.read_text().splitlines()] == mine
        data, at = vector.read_bytes(), 0
        for point in mine:  # each point's VectorWritable, in order
            at = data.index(vector_writable(point), at) + 1


def test_render_shows_spark_defaults_and_the_spark_submit_line(tmp_path: Path, pfs_root: Path, spark_home: Path,
                                                                script: Path, write_yaml: Callable[..., Path]) -> None:
    from tests.unit.cli.test_main import assert_one_line_error, invoke

    job = write_yaml(tmp_path / "job.yaml", {"name": "sp", "filesystem": {"root": str(pfs_root)},
                                             "spark": {"home": str(spark_home)},
                                             "steps": [{"pyspark": {"script": str(script), "args": ["x"]}}]})
    result = invoke(["render", str(job)])
    assert result.exit_code == 0, result.output
    assert "==> spark-conf/spark-defaults.conf <==\n# Spark 4.1.1 on the YARN of cluster sp-" in result.stdout
    assert f"\nspark.yarn.jars local:{spark_home}/jars/*\n" in result.stdout
    assert f"\n1. wc: {spark_home}/bin/spark-submit --master yarn --deploy-mode client --name sp-wc " in result.stdout
    assert result.stdout.rstrip().endswith(f"{script} x") and list(pfs_root.iterdir()) == []
    write_yaml(job, {"name": "sp", "filesystem": {"root": str(pfs_root)}, "spark": {"home": str(spark_home)},
                     "steps": [{"pyspark": {"script": "missing.py"}}]})
    result = invoke(["render", str(job)])
    assert_one_line_error(result.exit_code, result.stdout, result.stderr,
                          f"steps.1.pyspark.script: script {tmp_path / 'missing.py'} does not exist")
