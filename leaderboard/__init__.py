"""leaderboard: turn eval runs into a model leaderboard with honest statistics."""

from .composite import CompositeBoard, rank
from .config import Config, parse_config, read_config
from .loading import load_file, load_runs
from .pipeline import evaluate
from .records import EvalRun, LeaderboardRow, PairwiseDiff, Source
from .report import render_json, render_markdown, render_report
from .stats.aggregation import (
    Leaderboard,
    aggregate,
    analyse,
    bootstrap_mean_ci,
    bootstrap_pairwise_diff,
    pairwise_diffs,
)
from .stats.comparison import Comparison, ModelChange, compare
from .validation import InvalidEvalRuns, Problem, validate_runs

__version__ = "1.0.0"

__all__ = [
    "Comparison",
    "CompositeBoard",
    "Config",
    "EvalRun",
    "InvalidEvalRuns",
    "Leaderboard",
    "LeaderboardRow",
    "ModelChange",
    "PairwiseDiff",
    "Problem",
    "Source",
    "aggregate",
    "analyse",
    "bootstrap_mean_ci",
    "bootstrap_pairwise_diff",
    "compare",
    "evaluate",
    "load_file",
    "load_runs",
    "pairwise_diffs",
    "parse_config",
    "rank",
    "read_config",
    "render_json",
    "render_markdown",
    "render_report",
    "validate_runs",
]
