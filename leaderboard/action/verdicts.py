"""What a finished run tells the runner: its lines in the log, its outputs, its annotations, and the gates."""

from __future__ import annotations

import json

from ..baseline import Baseline, NoBaseline, describe
from ..composite import CompositeBoard
from ..report.comparison import gate_line, headline
from ..report.required_tasks import required_outputs
from ..report.task_changes import counts_text, newly_failing
from ..required import RequiredCheck
from ..stats.comparison import Comparison
from ..stats.task_changes import TaskChanges
from ..validation import printable
from .settings import Settings
from .workflow import annotate, commands_stopped

MAX_REQUIRED_ERRORS = 1_000  # ::error lines; the outputs and the report have every failure


def warn_unmatched_cards(result: CompositeBoard) -> None:
    """A warning at each capability card that matches no model: its constraints silently apply to nothing."""
    for name in result.unmatched_cards:
        p = result.config.problem(f"models.{name}", f"a capability card for {printable(name)}, but no model of that "
                                  "id is in the data: it applies to nothing (check the spelling)")  # fmt: skip
        annotate("warning", p.message, file=p.file, line=p.line, title="Configuration: card matches no model")


def report_baseline(settings: Settings, baseline: Baseline | NoBaseline | None, outputs: dict[str, str]) -> None:
    """The baseline in the log and the job summary; the comparison's outputs start at nothing found."""
    outputs.update({"regressions": "0", "regressed-models": "[]", "improvements": "0", "baseline-sha": ""})
    if baseline is None:
        return
    if isinstance(baseline, NoBaseline) and not baseline.quiet:
        annotate("warning", describe(baseline), title="No baseline")
    elif isinstance(baseline, NoBaseline):
        print(describe(baseline))
    else:
        with commands_stopped(settings.on_runner):  # branch and file names are data
            print(describe(baseline))
        outputs["baseline-sha"] = baseline.sha or ""


def report_comparison(settings: Settings, comparison: Comparison | None, outputs: dict[str, str]) -> None:
    """The comparison's outputs and its lines in the log."""
    if comparison is None:
        return
    regressed = comparison.regressions
    outputs["regressions"] = str(len(regressed))
    outputs["regressed-models"] = json.dumps([m.model_id for m in regressed])
    outputs["improvements"] = str(len(comparison.improvements))
    print(f"Compared with the baseline: {headline(comparison).replace('**', '')}")
    with commands_stopped(settings.on_runner):  # model ids are data
        for m in (*regressed, *comparison.having("within tolerance"), *comparison.improvements):
            print(f"  {m.verdict}: {gate_line(m, comparison.alpha)}")


def report_tasks(
    settings: Settings, changes: TaskChanges | None, required: RequiredCheck | None, outputs: dict[str, str]
) -> None:
    """The outputs ``newly-failing``, ``required-failures``, ``required-failed``, and their lines in the log."""
    outputs["newly-failing"] = json.dumps(newly_failing(changes) if changes is not None else {}, ensure_ascii=False)
    outputs.update(required_outputs(required))
    with commands_stopped(settings.on_runner):  # model and task ids are data
        for m in changes.changed if changes is not None else ():
            print(f"  tasks of {printable(m.model_id)}: {counts_text(m)}")
        if required is not None:
            print(
                f"Required tasks: {len(required.failures):,} failure(s) over {len(required.tasks):,} task(s) "
                f"and {len(required.models):,} model(s)."
            )


def required_gate(settings: Settings, check: RequiredCheck | None) -> int:
    """One error per required-task failure (up to MAX_REQUIRED_ERRORS), and exit status 1."""
    if check is None or check.passed:
        return 0
    for f in check.failures[:MAX_REQUIRED_ERRORS]:
        annotate(
            "error",
            f"{printable(f.model_id)} on required task {printable(f.task_id)}: {f.why}, below the required "
            f"{check.threshold:g}",
            title="Required task failed",
        )
    left = len(check.failures) - MAX_REQUIRED_ERRORS
    if left > 0:
        annotate("error", f"…and {left:,} more required-task failures: see the `required-failed` output.")
    print(f"required-tasks: {len(check.failures):,} failure(s); failing the step.")
    return 1


def regression_gate(settings: Settings, comparison: Comparison | None) -> int:
    """``fail-on-regression``: one error per regressed model, and exit status 1. Improvements never fail."""
    if comparison is None or not settings.fail_on_regression or not comparison.regressions:
        return 0
    tolerance = f" (more than the tolerance {comparison.tolerance:g})" if comparison.tolerance > 0 else ""
    for m in comparison.regressions:
        annotate("error", f"Regressed{tolerance}: {gate_line(m, comparison.alpha)}", title="Regression")
    count = len(comparison.regressions)
    print(f"fail-on-regression: {count} model{'s' if count != 1 else ''} regressed; failing the step.")
    return 1
