"""Why a step failed (launcher/steps/diagnosis.py): the first cause line of a container log, the failed container the
job client names, ``yarn logs`` output read back, the local container logs of a cluster directory; and the names
hpc-hadoop chooses in container paths stay short (issue 17 item 7). The whole path, with real daemons, is in
tests/integration/test_orangefs.py and tests/integration/test_local_end_to_end.py.

data/streaming-nameerror*.yarn-logs are what ``yarn logs -applicationId`` printed for a real streaming job on the
local backend (Hadoop 3.4.2) whose Python mapper raises ``NameError`` on its first line of 1.2 MB of input, without
and with uber mode; trimmed: no ``launch_container.sh``, ``directory.info``, ``prelaunch.out`` sections, no CDS and
deprecation lines, lines cut at 300 characters."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import CLUSTER_ID_NAME, ClusterPlan, new_cluster_id
from launcher.schedulers.base import Allocation, Node
from launcher.steps.diagnosis import (
    container_cause,
    diagnose,
    failed_containers,
    failure_time,
    first_cause,
    parse_yarn_logs,
    python_traceback,
)

DATA = Path(__file__).parent / "data"

AM = "container_1764072000000_0001_01_000001"
SYSLOG = """2026-11-25 12:00:01,100 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created MRAppMaster
2026-11-25 12:00:01,200 WARN [main] org.apache.hadoop.util.NativeCodeLoader: Unable to load native-hadoop library
2026-11-25 12:00:02,300 ERROR [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Error starting MRAppMaster
org.apache.hadoop.yarn.exceptions.YarnRuntimeException: java.io.IOException: Mkdirs failed
\tat org.apache.hadoop.mapreduce.jobhistory.JobHistoryEventHandler.serviceInit(JobHistoryEventHandler.java:200)
\tat org.apache.hadoop.service.AbstractService.init(AbstractService.java:164)
Caused by: java.io.IOException: Mkdirs failed
\tat org.apache.hadoop.fs.RawLocalFileSystem.mkdirs(RawLocalFileSystem.java:700)
\t... 5 more
Caused by: java.io.FileNotFoundException: /ofs/u/x/tmp/abc (No such file or directory)
\tat java.base/java.io.FileOutputStream.open0(Native Method)
\t... 9 more
2026-11-25 12:00:02,400 INFO [main] org.apache.hadoop.util.ExitUtil: Exiting with status 1
2026-11-25 12:00:03,000 ERROR [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: a later error
"""


def test_first_cause_is_the_root_cause_of_the_first_error() -> None:
    assert first_cause(SYSLOG) == "java.io.FileNotFoundException: /ofs/u/x/tmp/abc (No such file or directory)"
    plain = "2026-11-25 12:00:02,300 FATAL [main] X: it broke\njava.lang.IllegalStateException: bad state\n\tat X\n"
    assert first_cause(plain) == "java.lang.IllegalStateException: bad state"
    assert first_cause("2026-11-25 12:00:02,300 ERROR [main] X: only a message\n") == \
        "2026-11-25 12:00:02,300 ERROR [main] X: only a message"
    assert first_cause('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n') == \
        'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space'
    assert first_cause("2026-11-25 12:00:01,100 INFO [main] X: all is well\n") is None


def test_the_failed_container_is_the_one_the_client_names() -> None:
    client = ("Job job_1764072000000_0001 failed with state FAILED due to: Application application_1764072000000_0001"
              " failed 1 times due to AM Container for appattempt_1764072000000_0001_000001 exited with  exitCode: 1\n"
              "Failing this attempt.Diagnostics: [2026-11-25 12:00:03.000]Exception from container-launch.\n"
              f"Container id: {AM}\nExit code: 1\n")
    assert failed_containers(client) == [AM]
    assert failed_containers("map 100% reduce 0%\ncontainer_1_2_3_4 started\n") == []


def test_the_last_attempts_container_comes_first() -> None:
    """A client that polled while the second ApplicationMaster started printed the first attempt's failure before
    the final one (CI saw the cause taken from attempt 1, one run in several)."""
    second = AM.replace("_01_000001", "_02_000001")
    client = (f"Diagnostics: AM Container for appattempt_1764072000000_0001_000001 exited\nContainer id: {AM}\n"
              f"Job failed: AM Container for appattempt_1764072000000_0001_000002 exited\nContainer id: {second}\n")
    assert failed_containers(client) == [second, AM]


def test_yarn_logs_output_is_read_back_per_container_and_file() -> None:
    output = (f"Container: {AM} on localhost_41001\nLogAggregationType: AGGREGATED\n"
              "=============================================================\n"
              "LogType:prelaunch.err\nLogLastModifiedTime:Tue Nov 25 12:00:03 +0000 2026\nLogLength:0\n"
              "LogContents:\n\nEnd of LogType:prelaunch.err\n"
              "******************************************************************************\n\n"
              f"Container: {AM} on localhost_41001\nLogAggregationType: AGGREGATED\n"
              "=============================================================\n"
              "LogType:syslog\nLogLastModifiedTime:Tue Nov 25 12:00:03 +0000 2026\nLogLength:1000\n"
              f"LogContents:\n{SYSLOG}\nEnd of LogType:syslog\n")
    logs = parse_yarn_logs(output)
    assert set(logs) == {AM} and set(logs[AM]) == {"prelaunch.err", "syslog"}
    assert first_cause(logs[AM]["syslog"]).endswith("(No such file or directory)")
    # a long log in one pass (a regular expression over the whole output once backtracked for minutes)
    long_log = "\n".join(f"2026-11-25 12:00:01,100 INFO [main] X: line {i}" for i in range(20000))
    long_output = output.replace(SYSLOG, long_log + "\n" + SYSLOG)
    assert parse_yarn_logs(long_output)[AM]["syslog"].startswith("2026-11-25 12:00:01,100 INFO [main] X: line 0")


def test_diagnose_reads_the_logs_the_nodemanager_keeps(make_spec: Callable[..., JobSpec],
                                                       make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(make_spec())
    app = "application_1764072000000_0001"
    container = Path(plan.nodes[1].log_dir, "userlogs", app, AM)
    container.mkdir(parents=True)
    (container / "stderr").write_text("log4j:WARN No appenders could be found\n")
    (container / "syslog").write_text(SYSLOG)
    cause = diagnose(plan, app, f"Container id: {AM}\n")
    assert cause is not None and (cause.container, cause.file) == (AM, "syslog")
    assert cause.line == "java.io.FileNotFoundException: /ofs/u/x/tmp/abc (No such file or directory)"
    assert cause.command == f"hpc-hadoop logs {plan.cluster_id} --app {app}"


def test_the_last_attempt_is_read_from_yarn_when_the_node_keeps_only_an_earlier_ones(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CI of 2026-12-01 23:31: the application had just failed twice and the NodeManager was aggregating its logs,
    container by container: the second attempt's ApplicationMaster log was already gone from the node, the first's
    still there, and the cause named attempt 1. When the node keeps no container of the last attempt the client
    names, YARN's aggregated logs are read first."""
    import launcher.steps.diagnosis as diagnosis

    plan = make_test_plan(make_spec())
    app = "application_1764072000000_0001"
    second = AM.replace("_01_", "_02_")
    container = Path(plan.nodes[1].log_dir, "userlogs", app, AM)
    container.mkdir(parents=True)
    (container / "syslog").write_text(SYSLOG)
    monkeypatch.setattr(diagnosis, "aggregated_logs", lambda plan, app: {AM: {"syslog": SYSLOG},
                                                                        second: {"syslog": SYSLOG}})
    cause = diagnose(plan, app, f"Exception from container-launch. Container id: {second}\n")
    assert cause is not None and cause.container == second
    kept = diagnose(plan, app, f"Container id: {AM}\n")  # the node keeps the attempt named: read there
    assert kept is not None and kept.container == AM


def test_the_resourcemanagers_last_attempt_is_searched_first_though_the_client_named_only_an_earlier_one(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CI of 2026-12-03 19:38 (tests/integration/test_orangefs.py): the client had named only attempt 1's container,
    the node still kept attempt 1's log and half of attempt 2's (aggregation under way), and the cause named attempt
    1. The last attempt is the ResourceManager's (:func:`last_attempt`), and its containers are searched alone first,
    on the node and then in YARN's aggregated logs; an earlier attempt's cause only when the last has none."""
    import launcher.steps.diagnosis as diagnosis

    plan = make_test_plan(make_spec())
    app = "application_1764072000000_0001"
    second = AM.replace("_01_", "_02_")
    userlogs = Path(plan.nodes[1].log_dir, "userlogs", app)
    (userlogs / AM).mkdir(parents=True)
    (userlogs / AM / "syslog").write_text(SYSLOG)
    (userlogs / second).mkdir()
    (userlogs / second / "prelaunch.err").write_text("")  # its syslog already uploaded and deleted
    assert diagnosis.last_attempt(plan, app) == 0  # no ResourceManager: unknown, not an answer
    later = SYSLOG.replace("/ofs/u/x/tmp/abc", "/ofs/u/x/tmp/second")
    reads: list[str] = []

    def aggregated(plan: ClusterPlan, app: str) -> dict[str, dict[str, str]]:
        reads.append(app)
        return {AM: {"syslog": SYSLOG}, second: {"syslog": later}}
    monkeypatch.setattr(diagnosis, "aggregated_logs", aggregated)
    monkeypatch.setattr(diagnosis, "last_attempt", lambda plan, app: 2)
    cause = diagnose(plan, app, f"Exception from container-launch. Container id: {AM}\n")
    assert cause is not None and cause.container == second
    assert cause.line.endswith("/second (No such file or directory)")
    monkeypatch.setattr(diagnosis, "aggregated_logs", lambda plan, app: {AM: {"syslog": SYSLOG}})
    fallback = diagnose(plan, app, f"Container id: {AM}\n")  # the last attempt has no cause anywhere: attempt 1's
    assert fallback is not None and fallback.container == AM
    monkeypatch.setattr(diagnosis, "last_attempt", lambda plan, app: 1)
    monkeypatch.setattr(diagnosis, "aggregated_logs", aggregated)
    reads.clear()
    local = diagnose(plan, app, f"Container id: {AM}\n")
    assert local is not None and local.container == AM and reads == []  # the node's logs, no yarn logs


def test_the_names_hpc_hadoop_chooses_in_container_paths_are_short(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan], make_allocation: Callable[
            ..., Allocation], pfs_root: Path) -> None:
    """Issue 17 item 7: container paths under the cluster directory were ~250 bytes. The job's name in the cluster
    id is cut to 20 characters and a node's directory under nm-local/ is its host name up to the first dot."""
    name = "a-job-name-of-forty-characters-for-test"
    cluster_id = new_cluster_id(name)
    assert cluster_id.startswith(name[:CLUSTER_ID_NAME] + "-") and len(cluster_id) == CLUSTER_ID_NAME + 21
    alloc = make_allocation(2)
    alloc = Allocation(**{**alloc.__dict__, "nodes": (Node("node0001.cluster.example.org", "10.0.0.1"),
                                                      Node("node0002.cluster.example.org", "10.0.0.2"))})
    plan = make_test_plan(make_spec(name=name, nodes=2), alloc, cluster_id=cluster_id,
                          run_dir=pfs_root / "someone" / "hpc-hadoop" / cluster_id)
    # The NodeManager's local dir when it is on the shared filesystem (`filesystem.local_dirs: shared`, or a node
    # without room for the node-local default).
    assert [n.nm_shared_dir for n in plan.nodes] == [str(plan.path("nm-local", f"node000{i}")) for i in (1, 2)]
    am_dir = Path(plan.nodes[0].nm_shared_dir, "usercache", "someone", "appcache", "application_1764072000000_0001",
                  AM)
    assert len(str(am_dir)) - len(str(pfs_root)) <= 180  # 215 with the full name and host name


def _recorded(name: str) -> dict[str, dict[str, str]]:
    return parse_yarn_logs((DATA / f"{name}.yarn-logs").read_text())


def _place(plan: ClusterPlan, app: str, logs: dict[str, dict[str, str]]) -> None:
    """Put recorded container logs where the NodeManager keeps them while the application runs."""
    for container, files in logs.items():
        directory = Path(plan.nodes[0].log_dir, "userlogs", app, container)
        directory.mkdir(parents=True)
        for name, text in files.items():
            (directory / name).write_text(text)


def test_a_streaming_mappers_traceback_is_the_cause_not_the_broken_pipe(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan], tmp_path: Path) -> None:
    """Issue 28 item 1: the task's syslog logs `java.io.IOException: Broken pipe` (then `Stream closed`) while the
    JVM still writes to the dead script, the AM reports the task later; the script's traceback in the task's stderr
    is the cause, and the file it is in is kept where the user can open it."""
    logs = _recorded("streaming-nameerror")
    task = "container_1795777941357_0001_01_000003"
    assert "java.io.IOException: Broken pipe" in logs[task]["syslog"]
    assert failure_time(logs[task]) < failure_time(logs["container_1795777941357_0001_01_000001"])
    assert failure_time(logs["container_1795777941357_0001_01_000002"]) == "~"  # killed, not failed
    plan = make_test_plan(make_spec())
    app = "application_1795777941357_0001"
    _place(plan, app, logs)
    cause = diagnose(plan, app, "Job job_1795777941357_0001 failed with state FAILED due to: Task failed\n",
                     keep=tmp_path / "01-bad-mapper")
    assert cause is not None and (cause.container, cause.file) == (task, "stderr")
    assert cause.line == "NameError: name 'x' is not defined (mapper.py, line 6)"
    assert cause.path == str(tmp_path / f"01-bad-mapper.{task}.stderr")
    assert "NameError: name 'x' is not defined" in Path(cause.path).read_text()
    assert first_cause(logs[task]["syslog"]) == \
        "java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code 1"


def test_in_uber_mode_the_traceback_in_the_am_stderr_is_the_cause() -> None:
    logs = _recorded("streaming-nameerror-uber")
    am = logs["container_1795777961591_0001_01_000001"]
    assert "java.io.IOException: Broken pipe" in am["syslog"] and "Stream closed" in am["syslog"]
    assert container_cause(am) == ("stderr", "NameError: name 'x' is not defined (mapper.py, line 6)")


def test_subprocess_failed_beats_stream_closed_when_the_script_says_nothing() -> None:
    """Issue 28 item 1, as on a real OrangeFS in uber mode: `java.io.IOException: Stream closed` was picked over
    `PipeMapRed.waitOutputThreads(): subprocess failed with code 1`. The recorded uber-mode log without the
    script's traceback (a script that exits 1 silently) and without the Broken pipe block (the JVM had written
    all its input): what is left first is Stream closed."""
    am = dict(_recorded("streaming-nameerror-uber")["container_1795777961591_0001_01_000001"])
    am["stderr"] = "\n".join(line for line in am["stderr"].splitlines()
                             if not (line.startswith(("Traceback", " ", "NameError"))))
    syslog = am["syslog"].splitlines()
    start = syslog.index("java.io.IOException: Broken pipe")
    end = next(i for i in range(start + 1, len(syslog)) if not syslog[i].startswith("\t"))
    am["syslog"] = "\n".join(syslog[:start] + syslog[end:])
    first_error = next(line for line in am["syslog"].splitlines() if line.startswith("java.io.IOException"))
    assert first_error == "java.io.IOException: Stream closed"
    assert first_cause(am["syslog"]) == \
        "java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code 1"
    assert container_cause(am) == \
        ("syslog", "java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code 1")
    # A script without a traceback that wrote to stderr: its last lines.
    am["stderr"] += "\nreading line 1\nno such column: price\n"
    assert container_cause(am) == ("stderr", "reading line 1 | no such column: price")


def test_a_python_traceback_gives_its_exception_and_innermost_frame() -> None:
    text = ("log4j:WARN No appenders\nTraceback (most recent call last):\n"
            '  File "/x/mapper.py", line 9, in <module>\n    main()\n'
            '  File "/x/lib.py", line 3, in main\n    raise ValueError("bad row")\nValueError: bad row\n')
    assert python_traceback(text) == "ValueError: bad row (lib.py, line 3)"
    assert python_traceback("log4j:WARN No appenders\n") is None


def test_the_task_that_failed_first_comes_first(make_spec: Callable[..., JobSpec],
                                                make_test_plan: Callable[..., ClusterPlan]) -> None:
    """Two failed tasks: the one whose log shows the failure first is the cause, whatever the container ids."""
    plan = make_test_plan(make_spec())
    app = "application_1764072000000_0001"
    late, early = AM.replace("_000001", "_000002"), AM.replace("_000001", "_000003")
    _place(plan, app, {
        late: {"syslog": "2026-11-25 12:00:05,000 ERROR [main] X: late\njava.lang.IllegalStateException: late\n"},
        early: {"syslog": "2026-11-25 12:00:04,000 FATAL [main] X: early\njava.lang.OutOfMemoryError: early\n"},
    })
    cause = diagnose(plan, app, "")
    assert cause is not None and (cause.container, cause.line) == (early, "java.lang.OutOfMemoryError: early")
    assert cause.path == ""


def test_the_last_attempt_comes_first_when_the_client_named_only_an_earlier_one(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan]) -> None:
    """The CI run of 2026-11-28 14:35: the ApplicationMaster failed in both attempts; the job client, polling while
    the second started, named only the first attempt's container. The cause is the last attempt's, which ended
    the step."""
    plan = make_test_plan(make_spec())
    app = "application_1764072000000_0001"
    first, second = AM, AM.replace("_01_000001", "_02_000001")
    _place(plan, app, {
        first: {"syslog": "2026-11-25 12:00:04,000 ERROR [main] X: one\njava.io.IOException: one\n"},
        second: {"syslog": "2026-11-25 12:00:09,000 ERROR [main] X: two\njava.io.IOException: two\n"},
    })
    cause = diagnose(plan, app, f"Container id: {first}\n")
    assert cause is not None and (cause.container, cause.line) == (second, "java.io.IOException: two")


#: A streaming mapper that does not compile, as the task's ``stderr`` holds it: Python 3.11's own report (no
#: ``Traceback`` line: the script never ran), after the JVM's log4j warnings (issue 40's new user).
SYNTAX_ERROR_STDERR = """\
log4j:WARN No appenders could be found for logger (org.apache.hadoop.mapred.YarnChild).
log4j:WARN Please initialize the log4j system properly.
  File "/tmp/hadoop/nm-local/usercache/ada/appcache/application_1_0001/container_1_0001_01_000002/mapper_bad.py", \
line 8
    print(f"{len(w)}\\t1"
         ^
SyntaxError: '(' was never closed
"""


def test_a_mapper_that_does_not_compile_names_its_file_and_line(tmp_path: Path) -> None:
    """Issue 40: the cause was ``print(f"{len(w)}\\t1" | ^ | SyntaxError: '(' was never closed`` (the last three
    lines): the error keeps where it is, the file's base name and the line, as a traceback's cause does; on the
    recorded stderr and on what this machine's python3 says of the same script."""
    syslog = ("2026-12-02 15:00:01,000 ERROR [main] org.apache.hadoop.streaming.PipeMapRed: "
              "java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code 1\n")
    assert container_cause({"syslog": syslog, "stderr": SYNTAX_ERROR_STDERR}) == \
        ("stderr", "SyntaxError: '(' was never closed (mapper_bad.py, line 8)")
    script = tmp_path / "mapper_bad.py"
    script.write_text('import sys\n\n\ndef main():\n    for line in sys.stdin:\n        for w in line.split():\n'
                      '            if w:\n                print(f"{len(w)}\\t1"\n\n\nmain()\n')
    said = subprocess.run(["python3", str(script)], input="a b\n", capture_output=True, text=True, check=False)
    assert said.returncode == 1 and "Traceback" not in said.stderr, said.stderr
    assert container_cause({"syslog": syslog, "stderr": "log4j:WARN x\n" + said.stderr}) == \
        ("stderr", "SyntaxError: '(' was never closed (mapper_bad.py, line 8)")
    indented = '  File "/x/reducer.py", line 3\n    return 1\nIndentationError: unexpected indent\n'
    assert python_traceback(indented) == "IndentationError: unexpected indent (reducer.py, line 3)"
    # a module the mapper imports that does not compile: a traceback whose innermost frame is the error's place
    imported = ('Traceback (most recent call last):\n  File "/x/mapper.py", line 2, in <module>\n    import lib\n'
                '  File "/x/lib.py", line 5\n    def f(:\n          ^\nSyntaxError: invalid syntax\n')
    assert python_traceback(imported) == "SyntaxError: invalid syntax (lib.py, line 5)"
