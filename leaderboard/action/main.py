"""The GitHub Action: a thin shell that loads, analyses, renders and publishes.

Computing (load, analyse, render) is the library's; this module only reads the
runner's environment, has the files a later step reads written (:mod:`leaderboard.action.documents`),
sets the outputs, and hands the comment to :mod:`leaderboard.action.publish`.
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..baseline import Baseline, NoBaseline
from ..config import Config, read_config
from ..formats import Session, comment_note, load_summary
from ..loading import load_runs
from ..options import INPUTS
from ..pipeline import Options, run
from ..records import EvalRun
from ..report.baseline import describe_markdown
from ..report.comparison import TITLE
from ..report.document import (
    SUMMARY_LIMIT,
    Commit,
    comment_body,
    log_text,
    problems_markdown,
    rejected_body,
    summary_markdown,
)
from ..report.failures import failures_line
from ..report.formatting import score_format
from ..report.history import flaky_tasks_output
from ..report.markdown import md_text
from ..report.plan import BASELINE_TITLE, Compared, Missing, files_described, plan
from ..required import UnmatchedPatterns
from ..stats.history import Earlier
from ..validation import InvalidEvalRuns, Problem, printable
from .baseline import resolve_baseline
from .documents import export_records, write_documents
from .event import head_sha, pull_request_number
from .github_api import make_client
from .history import resolve_history
from .outputs import OutputRefused
from .publish import STALE, ClientFactory, publish
from .redact import hidden, log_redacted
from .settings import Settings, SettingsError, parse_settings
from .verdicts import (
    regression_gate,
    report_baseline,
    report_comparison,
    report_tasks,
    required_gate,
    warn_unmatched_cards,
)
from .workflow import add_mask, annotate, append_summary, commands_stopped, set_outputs

MAX_SUMMARY_PROBLEMS = 2_000


def main(environ: Mapping[str, str] | None = None, *, client_factory: ClientFactory = make_client) -> int:
    """Run the action; return the exit status. Never raises."""
    env = os.environ if environ is None else environ
    token = env.get("INPUT_GITHUB-TOKEN", "").strip()
    add_mask(token)
    with log_redacted(token), hidden(token):  # the log, and every document and output
        return _guarded(env, client_factory, token)


def _guarded(env: Mapping[str, str], client_factory: ClientFactory, token: str) -> int:
    try:
        return _run(env, client_factory)
    except Exception as exc:  # the last line of defence: one clear line, no traceback
        message = f"{type(exc).__name__}: {exc}"
        annotate("error", f"leaderboard-action failed unexpectedly: {message}", title="Unexpected error")
        if env.get("RUNNER_DEBUG") == "1":
            traceback.print_exc()
        else:
            print("Re-run with debug logging (RUNNER_DEBUG=1) for the traceback.")
        return 1


def _run(env: Mapping[str, str], client_factory: ClientFactory) -> int:
    try:
        settings = parse_settings(env)
    except SettingsError as exc:
        for problem in exc.problems:
            annotate("error", problem, title="Invalid input")
        return 1
    # From here on every failure, expected or not, ends the same way: the problems annotated
    # and the PR's leaderboard comment (if any) turned into a notice, so that no reviewer
    # reads a stale table as the result of this run.
    try:
        return _leaderboard(settings, client_factory)
    except InvalidEvalRuns as exc:
        return _reject(settings, exc.problems, client_factory)
    except OutputRefused as exc:
        refused = Problem(message=exc.reason, file=exc.path)
        return _reject(settings, [refused], client_factory, what="writing the output files")
    except Exception as exc:  # MemoryError, RecursionError, a bug: still never a stale leaderboard
        if settings.debug:
            traceback.print_exc()
        failure = Problem(message=f"leaderboard-action failed unexpectedly: {type(exc).__name__}: {exc}")
        return _reject(settings, [failure], client_factory, what="making the leaderboard (not in the data)")


def _leaderboard(settings: Settings, client_factory: ClientFactory) -> int:
    event = _event(settings)  # read once: the PR, the commit and the baseline lookup all need it
    session = Session(settings.read_options)
    # The configuration's problems and the files' are reported together.
    problems: list[Problem] = []
    config: Config | None = None
    runs: Sequence[EvalRun] = []
    try:
        config = _config(settings)
    except InvalidEvalRuns as exc:
        problems.extend(exc.problems)
    try:
        runs = load_runs(settings.runs, root=settings.workspace, session=session)
    except InvalidEvalRuns as exc:
        problems.extend(exc.problems)
    if problems:
        raise InvalidEvalRuns(problems)
    read_note = load_summary(session.report())
    # The baseline, before any computing; its files' problems are reported like those of `runs`.
    baseline = _baseline(settings, client_factory, event)
    history = _history(settings, client_factory, event, baseline)
    try:
        outcome = run(
            _options(settings), runs, config=config, baseline=baseline.runs if isinstance(baseline, Baseline) else None,
            history=history,
        )  # fmt: skip
    except UnmatchedPatterns as exc:
        problems = [
            Problem(message=f"input 'required-tasks': the pattern {p!r} matches no task in the runs")
            for p in exc.patterns
        ]
        return _reject(settings, problems, client_factory, what="in the input 'required-tasks'")
    board, result = outcome.board, outcome.composite
    with score_format(outcome.unit_scores and settings.score_format != "fraction"):
        # Unscored samples and averaged trials: the comment says so.
        sections = plan(outcome, baseline=_shown(baseline), left_out=comment_note(session.report()))
        commit = _commit(settings, event)
        summary = summary_markdown(
            board,
            title=settings.title,
            commit=commit,
            sections=sections.summary,
            framing=sections.framing,
        )
        written = bool(settings.summary_path)  # appended below, once the files are written
        body = comment_body(
            board,
            key=settings.comment_key,
            title=settings.title,
            run_url=settings.run_url,
            commit=commit,
            sections=sections.comment,
            framing=sections.framing,
            summary=summary if written else None,  # so the comment says truly what the summary holds
        ).text
        report, markdown = write_documents(settings, board, comment=body, commit=commit, sections=sections)
        export_records(settings, runs)
        outputs = {
            "report": report,
            "markdown": markdown,
            "top-model": outcome.top_model,
            "disqualified": json.dumps([r.model_id for r in result.disqualified] if result is not None else []),
            "models": str(board.n_models),
            "tasks": str(board.n_tasks),
            "comment-id": "",
            "comment-url": "",
            "history-runs": str(len(outcome.history.runs) if outcome.history is not None else 0),
            "flaky-tasks": flaky_tasks_output(outcome.history),
        }
        where = "the job summary" if append_summary(settings.summary_path, summary.text) else outputs["markdown"]
        append_summary(settings.summary_path, f"\n{md_text(read_note)}")
        with commands_stopped(settings.on_runner):  # file names and model ids are data, not commands
            print(read_note)
            if (failed_line := failures_line(outcome.failures)) is not None:
                print(failed_line)
        print(f"{board.n_models} models, {board.n_tasks} tasks, {board.n_runs} runs.")
        with commands_stopped(settings.on_runner):
            print(log_text(board, framing=sections.framing))
            if result is not None:  # model ids are data
                # On one line each, escapes shown: an id's newline or ANSI sequence must not forge or paint a line.
                top = printable(result.top_model) if result.top_model else "(none: every model is disqualified)"
                print(f"Top model on the composite: {top}")
                for entry in result.disqualified:
                    print(f"DISQUALIFIED {printable(entry.model_id)}: {printable('; '.join(entry.reasons))}")
        if result is not None:
            warn_unmatched_cards(result)
        print(f"Report: {outputs['report']}; markdown: {outputs['markdown']}")
        report_baseline(settings, baseline, outputs)
        report_comparison(settings, outcome.comparison, outputs)
        report_tasks(settings, outcome.changes, outcome.required, outputs)

        status = 0
        number = _pull_request(settings, event)
        if number is None:
            annotate("notice", f"No pull request for this event: the leaderboard is in {where}.", title="Leaderboard")
        elif settings.comment == "off":
            print("comment: off — no PR comment written.")
        else:
            posted, status = publish(settings, number, client_factory, lambda t: t.upsert(body), stale=STALE)
            if posted is not None and posted.comment_id is not None:
                outputs["comment-id"] = str(posted.comment_id)
                outputs["comment-url"] = posted.url or ""
        set_outputs(settings.output_path, outputs)
        # The gates, once the comment (and the outputs) say what regressed and what failed.
        return max(status, regression_gate(settings, outcome.comparison), required_gate(settings, outcome.required))


def _options(settings: Settings) -> Options:
    return Options(
        b=settings.bootstrap_samples,
        alpha=settings.alpha,
        seed=settings.seed,
        rank_by=settings.rank_by,
        correction=settings.correction,
        cluster_by=settings.cluster_by,
        task_weights=settings.task_weights,
        failed_calls=settings.failed_calls,
        regression_tolerance=settings.regression_tolerance,
        min_effect=settings.min_effect,
        fail_on_regression=settings.fail_on_regression,
        required_tasks=settings.required_tasks,
        required_score=settings.required_score,
    )


def _config(settings: Settings) -> Config | None:
    """The configuration file (None: the default path and no file there).

    The workspace holds the PR's checkout, so the file is read only if it is a regular
    file inside it (a link out, a FIFO or a device is refused by name).
    """
    name = settings.config or INPUTS["config"].default
    base = Path(settings.workspace).resolve()
    path = base / name
    if not os.path.lexists(path):
        if settings.config_is_default:
            return None
        raise InvalidEvalRuns([Problem(message="no such file (input 'config')", file=name)])
    if not Path(os.path.realpath(path)).is_relative_to(base):
        raise InvalidEvalRuns([Problem(message="resolves outside the workspace and is refused", file=name)])
    if not path.is_file():
        raise InvalidEvalRuns([Problem(message="is not a regular file: refused", file=name)])
    return read_config(path, name=Path(name).as_posix())


def _commit(settings: Settings, event: dict[str, Any]) -> Commit | None:
    sha = head_sha(event, settings.sha)
    if sha is None:
        return None
    url = f"{settings.server_url.rstrip('/')}/{settings.repository}/commit/{sha}" if settings.repository else None
    return Commit(sha, url)


def _event(settings: Settings) -> dict[str, Any]:
    """The event payload ({} with a warning when it cannot be read)."""
    payload: Any = {}
    if settings.event_path:
        try:
            payload = json.loads(Path(settings.event_path).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            annotate("warning", f"cannot read the event payload {settings.event_path}: {exc}", title="Event")
    return payload if isinstance(payload, dict) else {}


def _pull_request(settings: Settings, event: dict[str, Any]) -> int | None:
    return pull_request_number(settings.event_name, event, settings.pr_number)


def _reject(
    settings: Settings,
    problems: Sequence[Problem],
    client_factory: ClientFactory,
    *,
    what: str = "in the EvalRun files",
) -> int:
    """A failed run: an annotation per problem, the list in log and summary, the comment a notice, exit 1."""
    if settings.github_token:  # an error's text may echo the token; the comment and summary must not
        secret = settings.github_token
        problems = [replace(p, message=p.message.replace(secret, "***")) for p in problems]
    config_name = settings.config or INPUTS["config"].default
    for p in problems:
        title = "Invalid EvalRun" if what == "in the EvalRun files" else "Leaderboard not made"
        if p.file == config_name:
            title = "Invalid configuration"
        annotate("error", p.message, file=p.file, line=p.line, title=f"{title}{f': {p.field}' if p.field else ''}")
    print(f"{len(problems)} problem(s) {what}:")
    with commands_stopped(settings.on_runner):
        for p in problems:
            print(f"  {p}")
    shown = problems[:MAX_SUMMARY_PROBLEMS]
    heading = md_text(settings.title or "Leaderboard")
    summary = f"## {heading}: eval run rejected\n\n{len(problems)} problem(s) {what}.\n\n" + problems_markdown(
        shown, limit=None
    )
    if len(summary.encode()) > SUMMARY_LIMIT - 1024:
        summary = summary.encode()[: SUMMARY_LIMIT - 1024].decode("utf-8", "ignore").rsplit("\n", 1)[0]
        summary += "\n\n…the full list is in the step log."
    # The files may be what failed: a second failure must not stop the comment from being replaced.
    _best_effort("writing the job summary", lambda: append_summary(settings.summary_path, summary))

    number = _pull_request(settings, _event(settings))
    outputs = {"comment-id": "", "comment-url": ""}
    if number is not None and settings.comment == "update":
        body = rejected_body(
            problems, key=settings.comment_key, title=settings.title, run_url=settings.run_url, what=what
        )
        stale = "; a leaderboard comment already on the PR, if any, was left as it was and is now stale"
        outcome, _ = publish(settings, number, client_factory, lambda t: t.replace_existing(body), stale=stale)
        if outcome is not None and outcome.comment_id is not None:
            outputs = {"comment-id": str(outcome.comment_id), "comment-url": outcome.url or ""}
    _best_effort("writing the step outputs", lambda: set_outputs(settings.output_path, outputs))
    return 1


def _best_effort(what: str, act: Callable[[], object]) -> None:
    try:
        act()
    except Exception as exc:
        annotate("warning", f"{what} failed: {type(exc).__name__}: {exc}", title="Leaderboard")


def _baseline(settings: Settings, client_factory: ClientFactory, event: dict[str, Any]) -> Baseline | NoBaseline | None:
    """The baseline the inputs ask for (None: none asked for). Raises InvalidEvalRuns for bad files."""
    if not (settings.baseline or settings.baseline_artifact):
        return None
    number = _pull_request(settings, event) if settings.baseline_artifact else None
    client = client_factory(settings.github_token, settings.api_url) if settings.github_token else None
    return resolve_baseline(settings, client, number, datetime.now(UTC), payload=event)


def _history(
    settings: Settings, client_factory: ClientFactory, event: dict[str, Any], baseline: Baseline | NoBaseline | None
) -> Earlier | None:
    """The base branch's earlier runs the input ``history`` asks for (None: off, or not about a pull request).

    The baseline's run, when it is among them, is not downloaded again.
    """
    if settings.history == 0 or not settings.baseline_artifact:
        return None
    number = _pull_request(settings, event)
    client = client_factory(settings.github_token, settings.api_url) if settings.github_token else None
    known = {baseline.run_id: baseline.runs} if isinstance(baseline, Baseline) and baseline.run_id is not None else {}
    found = resolve_history(settings, client, number, datetime.now(UTC), payload=event, known=known)
    with commands_stopped(settings.on_runner):  # commit names and reasons come from GitHub's answers
        for note in found.notes:
            print(note)
    return found.earlier


def _shown(baseline: Baseline | NoBaseline | None) -> Compared | Missing | None:
    """How the documents name the baseline (None: none asked for, or nothing wrong in having none)."""
    if baseline is None or (isinstance(baseline, NoBaseline) and baseline.quiet):
        return None
    if isinstance(baseline, NoBaseline):
        return Missing(describe_markdown(baseline), baseline.reason, baseline.fix)
    source = {
        "origin": baseline.origin,
        "branch": baseline.branch,
        "sha": baseline.sha,
        "run_id": baseline.run_id,
        "run_url": baseline.run_url,
        "artifact": baseline.artifact,
        "is_merge_base": baseline.is_merge_base,
        "age_days": baseline.age_days,
        "notes": list(baseline.notes),
        "files": list(baseline.files),
    }
    if baseline.origin == "artifact":
        return Compared(describe_markdown(baseline), TITLE, source)
    return Compared(files_described(baseline.files, len(baseline.runs)), BASELINE_TITLE, source)
