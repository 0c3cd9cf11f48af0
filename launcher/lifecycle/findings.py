"""What a step's end tells, read after it ran: the first cause line of a failed job (diagnosis), whether a MapReduce
job's history was kept, and its shuffle figures.

Owns: :func:`read_findings` and its parts. Imports the steps (diagnosis, job history, shuffle) and the plan.
"""

from __future__ import annotations

from dataclasses import asdict

from launcher.plan.cluster_plan import ClusterPlan
from launcher.steps import shuffle
from launcher.steps.commands import ResolvedStep
from launcher.steps.jobhistory import history_not_kept
from launcher.steps.jobs import StepResult
from launcher.util.states import StepState


def read_findings(plan: ClusterPlan, step: ResolvedStep, result: StepResult) -> None:
    """Complete ``result`` of ``step``: a step that failed after YARN accepted its application gets the first cause
    line of its failed container's log (:func:`diagnose_failure`); a MapReduce job that succeeded and keeps its history
    in the cluster directory (:func:`history_in_cluster_dir`) fails when its history was lost, else gets its shuffle
    figures (:func:`shuffle_figures`)."""
    if result.returncode != 0 and result.application_id:
        diagnose_failure(plan, step, result, result.application_id)
    elif result.returncode == 0 and result.job_id and history_in_cluster_dir(plan, step):
        # Never a success whose history was lost (issue 25: a .jhist whose name the filesystem cut short
        # never reached done/): wait for it there (a second or two: the JobHistoryServer's next scan).
        result.history_error = history_not_kept(plan.path("history"), result.job_id)
        if result.history_error:
            result.state = StepState.FAILED
        elif result.reduce_shuffle_bytes is not None:  # only a job whose reducers shuffled
            shuffle_figures(plan, result, result.job_id)


def diagnose_failure(plan: ClusterPlan, step: ResolvedStep, result: StepResult, application_id: str) -> None:
    """Set ``result.cause`` of ``step``, which failed after YARN accepted its application ``application_id``
    (:func:`launcher.steps.diagnosis.diagnose`: the first error of the process that failed first, or ``None``; the
    log file that holds it kept beside the step's client log, ``steps/<n>-<name>.<container>.<file>``; imported
    here, as only a failed step needs it)."""
    from launcher.steps.diagnosis import diagnose

    cause = diagnose(plan, application_id, step.log.read_text(errors="replace"), keep=step.log.with_suffix(""))
    result.cause = asdict(cause) if cause else None


def shuffle_figures(plan: ClusterPlan, result: StepResult, job_id: str) -> None:
    """Set ``result.shuffle`` from the history file of MapReduce job ``job_id`` in ``history/``
    (:func:`launcher.steps.shuffle.step_shuffle`)."""
    result.shuffle = shuffle.step_shuffle(shuffle.find_jhist(plan.path("history"), job_id))


#: The job-history properties that move a job's history out of the cluster directory's ``history/``.
HISTORY_DIR_PROPERTIES = ("mapreduce.jobhistory.done-dir", "mapreduce.jobhistory.intermediate-done-dir")


def history_in_cluster_dir(plan: ClusterPlan, step: ResolvedStep) -> bool:
    """Whether a MapReduce job of ``step`` keeps its history in the cluster directory's ``history/`` (where
    :func:`launcher.steps.jobhistory.history_not_kept` looks): not in ``hdfs`` mode (it is on HDFS), not when the job
    file's ``hadoop.properties`` or the step's ``-D`` options move it (:data:`HISTORY_DIR_PROPERTIES`)."""
    if not plan.hdfs.history_in_cluster_dir:
        return False
    mapred = plan.spec.hadoop.properties.get("mapred-site", {})
    moved = [key for key in HISTORY_DIR_PROPERTIES if key in mapred]
    return not moved and not any(arg.removeprefix("-D").startswith(f"{key}=") for arg in step.argv
                                 for key in HISTORY_DIR_PROPERTIES)
