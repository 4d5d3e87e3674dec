"""``leaderboard FILE_OR_GLOB...``: the same leaderboard as the action, on a laptop."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .config import Config, parse_weights, read_config, with_weights
from .engine import DEFAULT_ALPHA, DEFAULT_RESAMPLES, evaluate
from .formats import FORMAT_NAMES, ReadOptions, Session, comment_note, load_summary
from .formats.parquet import export as export_parquet
from .limits import MAX_BOOTSTRAP_SAMPLES
from .loading import load_runs
from .numbers import parse_decimal, parse_integer
from .report.comparison import comment_section, comparison_dict, full_section, gate_line
from .report.composite import ACCURACY_HEADING, composite_dict, composite_section, composite_verdict
from .report.document import COMMENT_KEY, Commit, comment_body, render_report
from .report.failures import failures_dict, failures_line, failures_markdown
from .report.json_report import write_json
from .report.markdown import md_text
from .report.task_changes import comment_section as tasks_comment_section
from .report.task_changes import full_section as tasks_full_section
from .report.task_changes import required_markdown, task_changes_dict
from .required import DEFAULT_REQUIRED_SCORE, RequiredCheck, UnmatchedPatterns, check_required, required_dict
from .required import split_patterns as split_required
from .stats.aggregation import CORRECTIONS, RANK_BY, min_resamples, resample_advice
from .stats.clustering import CLUSTER_BY
from .stats.comparison import compare
from .stats.task_changes import task_changes
from .stats.weights import TASK_WEIGHTS
from .trials import failures
from .validation import InvalidEvalRuns, printable

BASELINE_TITLE = "Compared with the baseline"


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
    p.add_argument(
        "--export-parquet",
        metavar="PATH",
        type=Path,
        help="also write the validated records here as Parquet (a baseline that loads fast next time)",
    )
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
    try:
        config = _config(args)
        runs = load_runs(args.files, session=session)
        board, result = evaluate(
            runs, config, b=args.b, alpha=args.alpha, seed=args.seed, rank_by=args.rank_by, correction=args.correction,
            cluster_by=args.cluster_by, task_weights=args.task_weights,
        )  # fmt: skip
    except InvalidEvalRuns as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"{len(exc.problems)} problem(s): no leaderboard was made.", file=sys.stderr)
        return 1
    # stderr: stdout is the leaderboard itself, byte for byte the same for the same records.
    print(load_summary(session.report()), file=sys.stderr)
    if args.export_parquet is not None and (failure := export_parquet(runs, args.export_parquet)) is not None:
        print(failure, file=sys.stderr)
        return 1
    failed = failures(runs)  # calls left out as failed: counted in the output, the report and here
    if (failed_line := failures_line(failed)) is not None:
        print(failed_line, file=sys.stderr)
    failed_note = [note] if (note := failures_markdown(failed)) is not None else []
    baseline = None
    if args.baseline:
        try:
            baseline = load_runs(args.baseline, session=Session(session.options))
        except InvalidEvalRuns as exc:
            for problem in exc.problems:
                print(f"baseline: {problem}", file=sys.stderr)
            print(f"{len(exc.problems)} problem(s) in the baseline: no leaderboard was made.", file=sys.stderr)
            return 1
    comparison = None
    if baseline is not None:
        # With the leaderboard's parameters, which a configuration's statistics block may have set.
        try:
            comparison = compare(
                baseline, runs, b=board.b, alpha=board.alpha, seed=board.seed, tolerance=args.regression_tolerance,
                correction=board.correction, fail_on_regression=args.fail_on_regression,
                cluster_by=board.clustering.by if board.clustering else "none",
                weights=board.task_weights,
            )  # fmt: skip
        except InvalidEvalRuns as exc:
            for problem in exc.problems:
                print(f"baseline: {problem}", file=sys.stderr)
            print(f"{len(exc.problems)} problem(s) in the baseline: no leaderboard was made.", file=sys.stderr)
            return 1
    required: RequiredCheck | None = None
    if args.required_tasks is not None:
        try:
            required = check_required(runs, split_required(args.required_tasks), args.required_score)
        except UnmatchedPatterns as exc:
            for pattern in exc.patterns:
                print(f"--required-tasks: the pattern {pattern!r} matches no task in the runs", file=sys.stderr)
            return 1
    # Issue 16: the tasks behind each model's change.
    changes = task_changes(baseline or (), runs, models=[m.model_id for m in comparison.models]) if comparison else None
    baseline_json: dict[str, object] | None = None
    if comparison is not None and changes is not None:
        baseline_json = {**comparison_dict(comparison), "task_changes": task_changes_dict(changes)}
    composite = composite_dict(result) if result is not None else None
    if args.json is not None:
        try:
            with args.json.open("w", encoding="utf-8") as handle:
                write_json(
                    board,
                    handle,
                    baseline=baseline_json,
                    composite=composite,
                    required=required_dict(required) if required else None,
                    failures=failures_dict(failed),
                )
        except OSError as exc:
            print(f"cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    commit = Commit(args.commit) if args.commit else None
    described = ""
    if comparison is not None:
        described = f"**Baseline:** {md_text(', '.join(args.baseline))} ({len(baseline or ()):,} records)."
    # The composite ranking after the comparison, as in the action's documents.
    ranking = [composite_section(result), ACCURACY_HEADING] if result is not None else []
    lead = composite_verdict(result) if result is not None else None
    top = [required_markdown(required)] if required else []
    if args.comment is not None:
        sections = [*top, comment_section(comparison, described, title=BASELINE_TITLE)] if comparison else top
        if changes is not None and comparison is not None:
            sections = [*sections, tasks_comment_section(changes, comparison)]
        sections = [s for s in sections if s]
        read = comment_note(session.report())  # last, as the action puts it in the comment
        body = comment_body(
            board,
            key=args.comment_key,
            title=args.title or "Model leaderboard",
            run_url=None,
            commit=commit,
            sections=[*sections, *ranking, *([md_text(read)] if read else []), *failed_note],
            lead=lead,
        )
        try:
            args.comment.write_text(body.text, encoding="utf-8")
        except OSError as exc:
            print(f"cannot write {args.comment}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    # The comparison right under the verdict, as in the action's documents.
    full = [required_markdown(required, limit=None)] if required else []
    if comparison is not None:
        full.append(full_section(comparison, described, title=BASELINE_TITLE))
    if changes is not None:
        full.append(tasks_full_section(changes, comparison))
    sections = [s for s in full if s]
    sections = [*sections, *ranking, *failed_note]
    sys.stdout.write(render_report(board, title=args.title, commit=commit, sections=sections, lead=lead))
    status = 0
    if comparison is not None and args.fail_on_regression and comparison.regressions:
        for m in comparison.regressions:
            print(f"regressed: {gate_line(m, board.alpha)}", file=sys.stderr)
        print(f"{len(comparison.regressions)} model(s) regressed: failing (--fail-on-regression).", file=sys.stderr)
        status = 1
    if required is not None and not required.passed:
        for f in required.failures:
            print(f"required task failed: {printable(f.model_id)} on {printable(f.task_id)}: {f.why}", file=sys.stderr)
        print(f"{len(required.failures)} required-task failure(s): failing (--required-tasks).", file=sys.stderr)
        status = 1
    return status
