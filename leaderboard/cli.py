"""``leaderboard FILE_OR_GLOB...``: the same leaderboard as the action, on a laptop."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .config import Config, parse_weights, read_config, with_weights
from .formats import FORMAT_NAMES, ReadOptions, Session, comment_note, load_summary
from .limits import MAX_BOOTSTRAP_SAMPLES
from .loading import load_runs
from .numbers import parse_decimal, parse_integer
from .options import DEFAULT_ALPHA, DEFAULT_RESAMPLES
from .pipeline import BaselineProblems, Options, Outcome, run
from .report.comparison import gate_line
from .report.document import COMMENT_KEY, Commit, comment_body, full_markdown
from .report.failures import failures_line
from .report.json_report import write_json
from .report.plan import Compared, files_described, plan
from .required import DEFAULT_REQUIRED_SCORE, UnmatchedPatterns
from .required import split_patterns as split_required
from .stats.aggregation import CORRECTIONS, RANK_BY, min_resamples, resample_advice
from .stats.clustering import CLUSTER_BY
from .stats.weights import TASK_WEIGHTS
from .validation import InvalidEvalRuns, Problem, printable


def _alpha(text: str) -> float:
    value = parse_decimal(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a plain decimal number: {text!r}")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (exclusive), got {text}")
    return value


def _samples(text: str) -> int:
    value = parse_integer(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a plain integer: {text!r}")
    # The action's bound: beyond it the resamples alone outgrow a runner's memory.
    if not 1 <= value <= MAX_BOOTSTRAP_SAMPLES:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to {MAX_BOOTSTRAP_SAMPLES}, got {text}")
    return value


def _tolerance(text: str) -> float:
    value = parse_decimal(text)
    if value is None or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1 (score units), got {text!r}")
    return value


def _required_score(text: str) -> float:
    value = parse_decimal(text)
    if value is None or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1 (score units), got {text!r}")
    return value


def _seed(text: str) -> int:
    value = parse_integer(text)
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def _weights(text: str) -> dict[str, float]:
    try:
        return parse_weights(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="leaderboard",
        description="Rank models from EvalRun files (.json, .jsonl, .csv) or eval harnesses' own output "
        "(lm-evaluation-harness, Inspect, HELM, promptfoo, OpenAI evals) with bootstrap CIs, "
        "win-rates, category means and pairwise significance.",
    )
    p.add_argument("files", nargs="+", metavar="FILE_OR_GLOB", help="input files or globs (quote globs)")
    p.add_argument("--json", metavar="PATH", type=Path, help="also write the JSON report here")
    # None: not given, so a configuration's statistics block (else the default) decides.
    p.add_argument("--alpha", type=_alpha, default=None, help="1 - confidence level (default 0.05: 95%% CIs)")
    p.add_argument(
        "--b",
        type=_samples,
        default=None,
        help=f"bootstrap resamples, at least 20 / alpha and at most {MAX_BOOTSTRAP_SAMPLES} (default 500)",
    )
    p.add_argument("--seed", type=_seed, default=None, help="random seed, a non-negative integer (default 0)")
    p.add_argument(
        "--config",
        metavar="YAML",
        type=Path,
        help="rank on a composite of accuracy, cost, latency, errors and custom metrics, with constraints "
        "(the action's configuration file, e.g. .github/leaderboard.yml)",
    )
    p.add_argument(
        "--weights",
        metavar="M=W,...",
        type=_weights,
        help="re-rank with these weights instead of the configuration's, e.g. accuracy=0.6,cost=0.4",
    )
    p.add_argument("--rank-by", choices=RANK_BY, default="mean", help="ranking (default mean)")
    p.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default=None,
        help="multiple comparisons: holm (family-wise alpha over all pairs, and over the models compared; "
        "default) or none (each pair at alpha: per-pair, exploratory claims)",
    )
    p.add_argument(
        "--cluster-by",
        choices=CLUSTER_BY,
        default=None,
        help="the unit of every interval and test: none (tasks, default), category or cluster (each record's "
        "cluster field); a configuration's statistics.cluster_by applies when not given",
    )
    p.add_argument(
        "--task-weights",
        choices=TASK_WEIGHTS,
        default=None,
        help="ignore (default: every task counts equally) or apply (weighted means, bootstrap and test)",
    )
    p.add_argument("--title", default=None, help="a heading for the markdown")
    p.add_argument("--format", choices=FORMAT_NAMES, default="auto", help="input format (default auto: by content)")
    p.add_argument("--metric", default=None, help="per-instance metric of harness outputs (default: per format)")
    p.add_argument("--filter", default=None, help="lm-evaluation-harness filter (default: each task's first)")
    p.add_argument(
        "--comment",
        metavar="PATH",
        type=Path,
        help="also write the exact PR comment body the action would post here (marker included)",
    )
    p.add_argument("--comment-key", default="leaderboard", help="the comment key for --comment (default leaderboard)")
    p.add_argument("--commit", metavar="SHA", help="the commit the results describe, named in the documents")
    p.add_argument(
        "--baseline",
        nargs="+",
        metavar="FILE_OR_GLOB",
        help="baseline EvalRun files: compare each model with its baseline scores (put it after the run files)",
    )
    p.add_argument(
        "--regression-tolerance",
        type=_tolerance,
        default=0.0,
        help="a drop in mean score up to this much (score units, 0 to 1) is not a regression (default 0)",
    )
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 when a model regressed against --baseline")
    p.add_argument(
        "--required-tasks",
        metavar="GLOBS",
        help="newline- or comma-separated task-id globs every model must pass: exit 1 when a model scores below "
        "--required-score on a matching task or did not run it (a glob matching no task is an error)",
    )
    p.add_argument(
        "--required-score",
        type=_required_score,
        default=DEFAULT_REQUIRED_SCORE,
        help="the score each model needs on every required task (0 to 1, default 1)",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    if not COMMENT_KEY.fullmatch(args.comment_key):
        cli.error("--comment-key must be 1-100 letters, digits, '.', '_', '-' or '/', starting with a letter or digit")
    if args.fail_on_regression and not args.baseline:
        cli.error("--fail-on-regression needs --baseline")
    if args.required_tasks is not None and not split_required(args.required_tasks):
        cli.error("--required-tasks needs at least one task-id glob")
    b = args.b if args.b is not None else DEFAULT_RESAMPLES
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
        b=args.b, alpha=args.alpha, seed=args.seed, rank_by=args.rank_by, correction=args.correction,
        cluster_by=args.cluster_by, task_weights=args.task_weights, regression_tolerance=args.regression_tolerance,
        fail_on_regression=args.fail_on_regression, required_tasks=split_required(args.required_tasks or ""),
        required_score=args.required_score,
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
    try:
        outcome = run(options, runs, config=config, baseline=baseline)
    except BaselineProblems as exc:
        return _problems(exc.problems, "baseline: ", " in the baseline")
    except InvalidEvalRuns as exc:
        return _problems(exc.problems, "")
    except UnmatchedPatterns as exc:
        for pattern in exc.patterns:
            print(f"--required-tasks: the pattern {pattern!r} matches no task in the runs", file=sys.stderr)
        return 1
    # stderr: stdout is the leaderboard itself, byte for byte the same for the same records.
    print(load_summary(session.report()), file=sys.stderr)
    if (failed_line := failures_line(outcome.failures)) is not None:
        print(failed_line, file=sys.stderr)
    described = None
    if baseline is not None:
        files = sorted({r.source.file for r in baseline if r.source is not None})
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
            board, key=args.comment_key, title=args.title or "Model leaderboard", run_url=None, commit=commit,
            sections=sections.comment, lead=sections.lead,
        )  # fmt: skip
        try:
            args.comment.write_text(body.text, encoding="utf-8")
        except OSError as exc:
            print(f"cannot write {args.comment}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    sys.stdout.write(full_markdown(board, title=args.title, commit=commit, sections=sections.full, lead=sections.lead))
    return _gates(args, outcome)


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
