"""Every option, declared once: the action's input, the CLI's flag, the configuration's key, its kind, its default.

The action's settings (:mod:`leaderboard.action.settings`), the CLI's parser, the configuration's
``statistics`` block (:mod:`leaderboard.config`) and the agreement of action.yml and the README
(tests/test_settings.py) are all read from :data:`OPTIONS`, so an option cannot be checked one way
in one place and another way elsewhere.

An option with a configuration key is *not given* when its input is left empty (or its flag is
not passed): the configuration's ``statistics`` block decides, else :attr:`Option.default`. That is
why action.yml gives such inputs an empty default and states the real one in their description.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from .formats import FORMAT_NAMES
from .limits import MAX_BOOTSTRAP_SAMPLES
from .numbers import parse_decimal, parse_integer
from .stats.aggregation import RANK_BY, RankBy
from .stats.clustering import CLUSTER_BY, ClusterBy
from .stats.family import CORRECTIONS, DEFAULT_CORRECTION
from .stats.history import MAX_HISTORY_RUNS
from .stats.weights import TASK_WEIGHTS, TaskWeights
from .trials import DEFAULT_FAILED_CALLS, FAILED_CALLS

Kind = Literal["decimal", "integer", "choice", "boolean", "text", "globs"]
C = TypeVar("C", bound=str)

DEFAULT_RESAMPLES = 500
DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 0
DEFAULT_RANK_BY: RankBy = "mean"
DEFAULT_CLUSTER_BY: ClusterBy = "none"
DEFAULT_TASK_WEIGHTS: TaskWeights = "ignore"
DEFAULT_HISTORY_RUNS = 10
ScoreFormat = Literal["percent", "fraction"]
SCORE_FORMATS: tuple[ScoreFormat, ...] = ("percent", "fraction")
CommentMode = Literal["update", "off"]
COMMENT_MODES: tuple[CommentMode, ...] = ("update", "off")
BOOLEANS = {"true": True, "false": False}
# What a comment key may be: it goes into the marker (an HTML comment) and a directory name.
COMMENT_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")
# What actions/upload-artifact refuses in a name: " : < > | * ? \r \n \\ /
ARTIFACT_NAME = re.compile(r'[^":<>|*?\r\n\\/]{1,255}')


def _always(value: Any) -> bool:
    return True


@dataclass(frozen=True)
class Option:
    """One option. ``input``: the action's; ``flag``: the CLI's; ``key``: under the configuration's
    ``statistics`` (None: that side has none). ``default``: the real default, spelled as an input
    (empty: none). ``what``: a valid value, as every message says it ("an integer from 1 to 100000")."""

    input: str | None
    flag: str | None
    key: str | None
    kind: Kind
    default: str
    help: str
    what: str = ""
    choices: tuple[str, ...] = ()
    valid: Callable[[Any], bool] = _always
    metavar: str | None = None

    @property
    def name(self) -> str:
        """The Python name (the settings' field, the parser's dest)."""
        return (self.input or self.key or "").replace("-", "_")

    @property
    def configurable(self) -> bool:
        """Left empty, the configuration's ``statistics`` block decides."""
        return self.key is not None

    @property
    def manifest_default(self) -> str:
        """The default action.yml declares: empty where the configuration may decide."""
        return "" if self.configurable else self.default

    def read(self, text: str) -> Any:
        """The value of ``text`` (stripped), or None when it is not valid."""
        value: Any
        if self.kind == "decimal":
            value = parse_decimal(text)
        elif self.kind == "integer":
            value = parse_integer(text)
        elif self.kind == "choice":
            value = text if text in self.choices else None
        elif self.kind == "boolean":
            value = BOOLEANS.get(text.lower())
        else:
            value = text
        return value if value is not None and self.valid(value) else None

    def problem(self, text: str) -> str:
        """Why ``text`` is not a valid value (without the option's name)."""
        return f"must be {self.what}, got {text!r}"


def one_of(choices: tuple[str, ...]) -> str:
    return "one of " + ", ".join(choices)


def pick(text: str | None, choices: tuple[C, ...]) -> C | None:
    """``text`` as the choice it spells (typed as the choice set's), or None."""
    return next((c for c in choices if c == text), None)


_FRACTION = "a number from 0 to 1 (score units)"

OPTIONS: tuple[Option, ...] = (
    Option("runs", None, None, "globs", "", "EvalRun or harness output files: paths or globs (required)"),
    Option("github-token", None, None, "text", "${{ github.token }}", "token for the PR comment"),
    Option("comment", None, None, "choice", "update", "update the PR's comment, or write none",
           what=one_of(COMMENT_MODES), choices=COMMENT_MODES),
    Option("comment-key", "--comment-key", None, "text", "leaderboard", "the comment key (one comment per key)",
           what="1-100 characters of letters, digits, '.', '_', '-' or '/', starting with a letter or digit",
           valid=lambda v: COMMENT_KEY.fullmatch(v) is not None),
    Option("title", "--title", None, "text", "Model leaderboard", "a heading for the documents"),
    # The configuration states the level as a confidence (statistics.confidence = 1 - alpha).
    Option("alpha", "--alpha", "confidence", "decimal", f"{DEFAULT_ALPHA}", "1 - confidence level of every interval",
           what="a number between 0 and 1 (exclusive)", valid=lambda v: 0.0 < v < 1.0),
    Option("bootstrap-samples", "--b", "resamples", "integer", f"{DEFAULT_RESAMPLES}",
           "bootstrap resamples per interval, at least 20 / alpha",
           what=f"an integer from 1 to {MAX_BOOTSTRAP_SAMPLES}", valid=lambda v: 1 <= v <= MAX_BOOTSTRAP_SAMPLES),
    Option("seed", "--seed", "seed", "integer", f"{DEFAULT_SEED}", "random seed",
           what="a non-negative integer", valid=lambda v: v >= 0),
    Option("rank-by", "--rank-by", None, "choice", DEFAULT_RANK_BY, "ranking", what=one_of(RANK_BY), choices=RANK_BY),
    Option("pairwise-correction", "--correction", "correction", "choice", DEFAULT_CORRECTION,
           "multiple comparisons: holm (family-wise over all pairs and the models compared) or none (per pair)",
           what=one_of(CORRECTIONS), choices=CORRECTIONS),
    Option("cluster-by", "--cluster-by", "cluster_by", "choice", DEFAULT_CLUSTER_BY,
           "the unit of every interval and test: tasks (none), category or cluster (each record's cluster field)",
           what=one_of(CLUSTER_BY), choices=CLUSTER_BY),
    Option("task-weights", "--task-weights", "task_weights", "choice", DEFAULT_TASK_WEIGHTS,
           "ignore (every task counts equally) or apply (weighted means, bootstrap and test)",
           what=one_of(TASK_WEIGHTS), choices=TASK_WEIGHTS),
    Option("failed-calls", "--failed-calls", "failed_calls", "choice", DEFAULT_FAILED_CALLS,
           "a failed call (error set): zero (scored 0, so failing the hard tasks buys no better rank) or "
           "exclude (left out: the model is scored on the calls that completed)",
           what=one_of(FAILED_CALLS), choices=FAILED_CALLS),
    Option(None, None, "enabled", "boolean", "true", "pairwise comparisons at all", what="true or false"),
    Option("score-format", "--score-format", None, "choice", "percent",
           "how scores in [0, 1] are shown: percent (74.4%, differences in points) or fraction (0.744); "
           "the JSON report always holds fractions",
           what=one_of(SCORE_FORMATS), choices=SCORE_FORMATS),
    Option("pr-number", None, None, "integer", "", "the pull request to comment on (empty: from the event)",
           what="a positive integer (or empty)", valid=lambda v: v >= 1),
    Option("format", "--format", None, "choice", "auto",
           "input format: auto (by each file's content) or one format for all",
           what=one_of(FORMAT_NAMES), choices=FORMAT_NAMES),
    Option("metric", "--metric", None, "text", "", "per-instance metric of harness outputs (empty: per format)"),
    Option("filter", "--filter", None, "text", "", "lm-evaluation-harness filter (empty: each task's first)"),
    Option("baseline", "--baseline", None, "globs", "", "baseline EvalRun files to compare each model with",
           metavar="FILE_OR_GLOB"),
    Option("baseline-artifact", None, None, "text", "", "the artifact of the base branch's run to compare with",
           what="an artifact name (1-255 characters, none of \" : < > | * ? \\ / or a line break)",
           valid=lambda v: v == "" or ARTIFACT_NAME.fullmatch(v) is not None),
    Option("fail-on-regression", "--fail-on-regression", None, "boolean", "false",
           "fail when a model regressed against the baseline", what="true or false"),
    Option("regression-tolerance", "--regression-tolerance", None, "decimal", "0",
           "a drop in mean score up to this much (score units, 0 to 1) is not a regression",
           what=_FRACTION, valid=lambda v: 0.0 <= v <= 1.0),
    Option("min-effect", "--min-effect", None, "decimal", "",
           "a difference worth detecting (score units): the documents say how many tasks detect it with 80% power",
           what="a number above 0 and at most 1 (score units), or empty", valid=lambda v: 0.0 < v <= 1.0),
    Option("config", "--config", None, "text", ".github/leaderboard.yml",
           "the YAML configuration: composite ranking, constraints, statistics", metavar="YAML"),
    Option("required-tasks", "--required-tasks", None, "globs", "",
           "newline- or comma-separated task-id globs every model must pass", metavar="GLOBS"),
    Option("required-score", "--required-score", None, "decimal", "1",
           "the score each model needs on every required task (0 to 1)", what=_FRACTION,
           valid=lambda v: 0.0 <= v <= 1.0),
    # The action counts earlier runs of the base branch; the CLI is given their files (oldest first).
    Option("history", "--history", None, "integer", f"{DEFAULT_HISTORY_RUNS}",
           "earlier successful runs of this workflow on the base branch to read for trends, noise and flaky tasks "
           "(0: none); the CLI takes the earlier runs' files or directories named by commit, oldest first",
           what=f"an integer from 0 to {MAX_HISTORY_RUNS}", valid=lambda v: 0 <= v <= MAX_HISTORY_RUNS,
           metavar="FILE_OR_DIR"),
    Option("export-parquet", "--export-parquet", None, "text", "",
           "also write the validated records here as Parquet, a baseline that loads fast next time (empty: none)",
           metavar="PATH"),
)  # fmt: skip
INPUTS = {o.input: o for o in OPTIONS if o.input is not None}
STATISTICS = {o.key: o for o in OPTIONS if o.key is not None}
