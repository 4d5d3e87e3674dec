"""``leaderboard FILE_OR_GLOB...``: the same leaderboard as the action, on a laptop."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from . import __version__
from .config import Config, parse_weights, read_config, with_weights
from .formats import ReadOptions, Session, comment_note, load_summary
from .formats.parquet import export as export_parquet
from .history_files import read_history
from .loading import load_runs
from .options import DEFAULT_ALPHA, DEFAULT_RESAMPLES, INPUTS, OPTIONS, Option
from .pipeline import BaselineProblems, Options, Outcome, run
from .records import EvalRun
from .report.comparison import gate_line
from .report.document import Commit, comment_body, full_markdown
from .report.failures import failures_line
from .report.formatting import score_format
from .report.json_report import write_json
from .report.plain import plain_text
from .report.plan import Compared, files_described, plan
from .required import UnmatchedPatterns
from .required import split_patterns as split_required
from .run_columns import RunColumns
from .stats.aggregation import min_resamples, resample_advice
from .stats.history import MAX_HISTORY_RUNS, Earlier
from .validation import InvalidEvalRuns, Problem, printable

# The CLI's own: what it writes, and the what-if weights; every other flag is in the options table.
ONLY_THE_CLI_READS = {"runs", "github-token", "comment", "pr-number", "baseline-artifact"}


def _typed(option: Option) -> Callable[[str], object]:
    def convert(text: str) -> object:
        value = option.read(text)
        if value is None:
            raise argparse.ArgumentTypeError(option.problem(text))
        return value

    return convert


def _weights(text: str) -> dict[str, float]:
    try:
        return parse_weights(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _help(option: Option) -> str:
    text = option.help
    if option.default and option.kind not in ("boolean", "text"):
        text += f" (default {option.default})"
    if option.key is not None:
        text += f"; a configuration's statistics.{option.key} applies when not given"
    return text.replace("%", "%%")


def _option(p: argparse.ArgumentParser, option: Option) -> None:
    """The flag of ``option``. Not given: None where the configuration decides or the CLI has no default."""
    assert option.flag is not None
    dest, help_text = option.name, _help(option)
    if option.kind == "boolean":
        p.add_argument(option.flag, action="store_true", dest=dest, help=help_text)
    elif option.input == "history":  # the action counts earlier runs; the CLI is given them, oldest first
        help_text = "earlier runs, oldest first: files or directories named by commit (trend, noise, flaky tasks)"
        p.add_argument(option.flag, nargs="+", metavar=option.metavar, default=None, dest=dest, help=help_text)
    elif option.kind == "globs":
        many = "+" if option.input == "baseline" else None  # --baseline goes after the run files
        p.add_argument(option.flag, nargs=many, metavar=option.metavar, default=None, dest=dest, help=help_text)
    elif option.kind == "text":
        p.add_argument(
            option.flag, type=_typed(option), metavar=option.metavar, default=None, dest=dest, help=help_text
        )
    else:
        default = None if option.configurable else option.read(option.default)
        choices = option.choices or None
        p.add_argument(option.flag, type=_typed(option), choices=choices, default=default, dest=dest, help=help_text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="leaderboard",
        description="Rank models from EvalRun files (.json, .jsonl, .csv) or eval harnesses' own output "
        "(lm-evaluation-harness, Inspect, HELM, promptfoo, OpenAI evals) with bootstrap CIs, "
        "win-rates, category means and pairwise significance.",
    )
    p.add_argument("files", nargs="+", metavar="FILE_OR_GLOB", help="input files or globs (quote globs)")
    p.add_argument("--json", metavar="PATH", type=Path, help="also write the JSON report here")
    p.add_argument(
        "--weights",
        metavar="M=W,...",
        type=_weights,
        help="re-rank with these weights instead of the configuration's, e.g. accuracy=0.6,cost=0.4",
    )
    p.add_argument(
        "--comment",
        metavar="PATH",
        type=Path,
        help="also write the exact PR comment body the action would post here (marker included)",
    )
    p.add_argument("--commit", metavar="SHA", help="the commit the results describe, named in the documents")
    for option in OPTIONS:
        if option.flag is not None:
            _option(p, option)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    if args.fail_on_regression and not args.baseline:
        cli.error("--fail-on-regression needs --baseline")
    if args.required_tasks is not None and not split_required(args.required_tasks):
        cli.error("--required-tasks needs at least one task-id glob")
    b = args.bootstrap_samples if args.bootstrap_samples is not None else DEFAULT_RESAMPLES
    alpha = args.alpha if args.alpha is not None else DEFAULT_ALPHA
    if args.config is None and b < min_resamples(alpha):
        cli.error(f"{resample_advice(alpha, '--b', '--alpha')}, got {b}")
    try:
        return _run(args)
    except Exception as exc:  # the last line of defence: one line, never a traceback
        print(f"leaderboard: failed unexpectedly: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def _config(args: argparse.Namespace) -> Config | None:
    """The configuration asked for (None: none), with ``--weights`` in place of its weights."""
    if args.config is None and args.weights is None:
        return None
    config = read_config(args.config) if args.config is not None else Config()
    return with_weights(config, args.weights) if args.weights is not None else config


def _run(args: argparse.Namespace) -> int:
    session = Session(ReadOptions(args.format, args.metric or None, args.filter or None))
    options = Options(
        b=args.bootstrap_samples, alpha=args.alpha, seed=args.seed, rank_by=args.rank_by,
        correction=args.pairwise_correction, cluster_by=args.cluster_by, task_weights=args.task_weights,
        failed_calls=args.failed_calls,
        regression_tolerance=args.regression_tolerance, fail_on_regression=args.fail_on_regression,
        min_effect=args.min_effect,
        required_tasks=split_required(args.required_tasks or ""), required_score=args.required_score,
    )  # fmt: skip
    try:
        config = _config(args)
        runs = load_runs(args.files, session=session)
    except InvalidEvalRuns as exc:
        return _problems(exc.problems, "")
    baseline = None
    if args.baseline:
        try:
            baseline = load_runs(args.baseline, session=Session(session.options))
        except InvalidEvalRuns as exc:
            return _problems(exc.problems, "baseline: ", " in the baseline")
    history = _history(args, session.options)
    try:
        outcome = run(options, runs, config=config, baseline=baseline, history=history)
    except BaselineProblems as exc:
        return _problems(exc.problems, "baseline: ", " in the baseline")
    except InvalidEvalRuns as exc:
        return _problems(exc.problems, "")
    except UnmatchedPatterns as exc:
        for pattern in exc.patterns:
            print(f"--required-tasks: the pattern {pattern!r} matches no task in the runs", file=sys.stderr)
        return 1
    with score_format(outcome.unit_scores and args.score_format != "fraction"):
        # stderr: stdout is the leaderboard itself, byte for byte the same for the same records.
        print(load_summary(session.report()), file=sys.stderr)
        if args.export_parquet and (failure := export_parquet(runs, args.export_parquet)) is not None:
            print(failure, file=sys.stderr)
            return 1
        if (failed_line := failures_line(outcome.failures)) is not None:
            print(failed_line, file=sys.stderr)
        described = None
        if baseline is not None:
            files = _files(baseline)
            described = Compared(files_described(files, len(baseline)))
        sections = plan(outcome, baseline=described, left_out=comment_note(session.report()))
        board = outcome.board
        if args.json is not None:
            try:
                with args.json.open("w", encoding="utf-8") as handle:
                    write_json(board, handle, **sections.report)
            except OSError as exc:
                print(f"cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
                return 1
        commit = Commit(args.commit) if args.commit else None
        if args.comment is not None:
            body = comment_body(
                board, key=args.comment_key or INPUTS["comment-key"].default,
                title=args.title or INPUTS["title"].default, run_url=None, commit=commit,
                sections=sections.comment, framing=sections.framing,
            )  # fmt: skip
            try:
                args.comment.write_text(body.text, encoding="utf-8")
            except OSError as exc:
                print(f"cannot write {args.comment}: {exc.strerror or exc}", file=sys.stderr)
                return 1
        document = full_markdown(
            board, title=args.title, commit=commit, sections=sections.full, framing=sections.framing,
        )  # fmt: skip
        # A terminal reads plain text; piped, or beside --comment, the markdown itself.
        sys.stdout.write(plain_text(document) if args.comment is None and sys.stdout.isatty() else document)
    return _gates(args, outcome)


def _files(runs: Sequence[EvalRun]) -> list[str]:
    """The files the runs were read from, sorted (the columns know theirs: no record is built)."""
    if isinstance(runs, RunColumns):
        return sorted(set(runs.files))
    return sorted({r.source.file for r in runs if r.source is not None})


def _history(args: argparse.Namespace, options: ReadOptions) -> Earlier | None:
    """The earlier runs of ``--history`` (None: not given); a run that cannot be read is said and skipped."""
    if not args.history:
        return None
    read = read_history(args.history, limit=MAX_HISTORY_RUNS, options=options)
    for problem in read.problems:
        print(f"history: {problem}", file=sys.stderr)
    return Earlier(read.runs, read.coverage)


def _problems(problems: Sequence[Problem], prefix: str, where: str = "") -> int:
    for problem in problems:
        print(f"{prefix}{problem}", file=sys.stderr)
    print(f"{len(problems)} problem(s){where}: no leaderboard was made.", file=sys.stderr)
    return 1


def _gates(args: argparse.Namespace, outcome: Outcome) -> int:
    """Exit 1 when a model regressed (``--fail-on-regression``) or failed a required task."""
    status = 0
    comparison, required = outcome.comparison, outcome.required
    if comparison is not None and args.fail_on_regression and comparison.regressions:
        for m in comparison.regressions:
            print(f"regressed: {gate_line(m, outcome.parameters.alpha)}", file=sys.stderr)
        print(f"{len(comparison.regressions)} model(s) regressed: failing (--fail-on-regression).", file=sys.stderr)
        status = 1
    if required is not None and not required.passed:
        for f in required.failures:
            print(f"required task failed: {printable(f.model_id)} on {printable(f.task_id)}: {f.why}", file=sys.stderr)
        print(f"{len(required.failures)} required-task failure(s): failing (--required-tasks).", file=sys.stderr)
        status = 1
    return status
