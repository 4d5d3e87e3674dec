"""The action's settings, parsed once from the environment into a frozen dataclass."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

from ..formats import FORMAT_NAMES, ReadOptions
from ..limits import MAX_BOOTSTRAP_SAMPLES
from ..numbers import parse_decimal, parse_integer
from ..report.document import COMMENT_KEY
from ..stats.aggregation import RANK_BY, RankBy, min_resamples, resample_advice
from ..stats.clustering import CLUSTER_BY, ClusterBy
from ..stats.family import CORRECTIONS, DEFAULT_CORRECTION, Correction
from ..stats.weights import TASK_WEIGHTS, TaskWeights

# Defaults for inputs the runner did not pass (a local run); action.yml declares the same
# (tests/test_settings.py holds the two together).
DEFAULTS: dict[str, str] = {
    "github-token": "${{ github.token }}",
    "comment": "update",
    "comment-key": "leaderboard",
    "title": "Model leaderboard",
    "alpha": "0.05",
    "bootstrap-samples": "500",
    "seed": "0",
    "rank-by": "mean",
    "pairwise-correction": DEFAULT_CORRECTION,
    # Issue 15: clustered inference and task weights.
    "cluster-by": "none",
    "task-weights": "ignore",
    "pr-number": "",
    "format": "auto",
    "metric": "",
    "filter": "",
    # Issue 9: the baseline and the regression gate.
    "baseline": "",
    "baseline-artifact": "",
    "fail-on-regression": "false",
    "regression-tolerance": "0",
    # Issue 10: the composite ranking's configuration, used only if the file exists.
    "config": ".github/leaderboard.yml",
    # Issue 16: tasks every model must pass.
    "required-tasks": "",
    "required-score": "1",
}
INPUTS = ("runs", *DEFAULTS)
COMMENT_MODES = ("update", "off")
N = TypeVar("N", int, float)
# What actions/upload-artifact refuses in a name: " : < > | * ? \r \n \\ /
_ARTIFACT_NAME = re.compile(r'[^":<>|*?\r\n\\/]{1,255}')
_BOOLEANS = {"true": True, "false": False}


class SettingsError(Exception):
    """Every invalid input, each message naming its input."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Settings:
    runs: tuple[str, ...]
    github_token: str
    comment: Literal["update", "off"]
    comment_key: str
    title: str
    alpha: float
    bootstrap_samples: int
    seed: int
    rank_by: RankBy
    correction: Correction
    cluster_by: ClusterBy
    task_weights: TaskWeights
    pr_number: int | None
    format: str
    metric: str | None
    filter: str | None
    baseline: tuple[str, ...]
    baseline_artifact: str
    fail_on_regression: bool
    regression_tolerance: float
    config: str
    # From the runner's environment.
    workspace: str
    event_name: str
    event_path: str | None
    repository: str | None
    api_url: str
    server_url: str
    sha: str | None
    run_id: str | None
    output_path: str | None
    summary_path: str | None
    on_runner: bool
    debug: bool = False  # RUNNER_DEBUG=1: tracebacks of unexpected failures in the log
    workflow_ref: str | None = None  # GITHUB_WORKFLOW_REF: owner/repo/.github/workflows/x.yml@refs/...
    required_tasks: tuple[str, ...] = ()  # issue 16: task-id globs every model must pass
    required_score: float = 1.0

    @property
    def read_options(self) -> ReadOptions:
        return ReadOptions(self.format, self.metric, self.filter)

    @property
    def config_is_default(self) -> bool:
        """``config`` left at its default: the file is optional (used only if it exists)."""
        return self.config in ("", DEFAULTS["config"])

    @property
    def run_url(self) -> str | None:
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"

    def __repr__(self) -> str:  # the token must never reach a log through a repr
        return f"Settings(runs={self.runs!r}, comment={self.comment!r}, comment_key={self.comment_key!r}, ...)"


def _input(environ: Mapping[str, str], name: str) -> str:
    # The runner passes inputs as INPUT_<NAME>, upper-cased, hyphens kept.
    value = environ.get(f"INPUT_{name.upper()}")
    if value is None:
        value = DEFAULTS.get(name, "")
        if value.startswith("${{"):
            value = ""
    return value.strip()


def _number(text: str, kind: Callable[[str], N | None], valid: Callable[[N], bool]) -> N | None:
    """``kind(text)`` when it is plain decimal text and ``valid``, else None."""
    value = kind(text)
    return value if value is not None and valid(value) else None


def _token_problem(token: str) -> str | None:
    # HTTP headers are Latin-1 and a token is ASCII: anything else could only fail inside the
    # HTTP client, after the inputs were read. The token itself is never echoed.
    if token and not all("!" <= ch <= "~" for ch in token):
        return "input 'github-token' holds characters no GitHub token has (spaces, control or non-ASCII characters)"
    return None


def split_patterns(text: str) -> tuple[str, ...]:
    """Newline- or comma-separated paths and globs."""
    return tuple(p.strip() for p in re.split(r"[\n,]", text) if p.strip())


def parse_settings(environ: Mapping[str, str]) -> Settings:
    """Read and check every input; raise :class:`SettingsError` naming each bad one."""
    problems: list[str] = []

    runs = split_patterns(_input(environ, "runs"))
    if not runs:
        problems.append("input 'runs' is required: newline- or comma-separated paths or globs of EvalRun files")

    comment = _input(environ, "comment")
    if comment not in COMMENT_MODES:
        problems.append(f"input 'comment' must be one of {', '.join(COMMENT_MODES)}, got {comment!r}")

    key = _input(environ, "comment-key")
    if not COMMENT_KEY.fullmatch(key):
        problems.append(
            "input 'comment-key' must be 1-100 characters of letters, digits, '.', '_', '-' or '/', "
            f"starting with a letter or digit, got {key!r}"
        )

    alpha_text = _input(environ, "alpha")
    alpha = _number(alpha_text, parse_decimal, lambda v: 0.0 < v < 1.0)
    if alpha is None:
        problems.append(f"input 'alpha' must be a number between 0 and 1 (exclusive), got {alpha_text!r}")

    samples_text = _input(environ, "bootstrap-samples")
    samples = _number(samples_text, parse_integer, lambda v: 1 <= v <= MAX_BOOTSTRAP_SAMPLES)
    if samples is None:
        problems.append(
            f"input 'bootstrap-samples' must be an integer from 1 to {MAX_BOOTSTRAP_SAMPLES}, got {samples_text!r}"
        )

    seed_text = _input(environ, "seed")
    seed = _number(seed_text, parse_integer, lambda v: v >= 0)
    if seed is None:
        problems.append(f"input 'seed' must be a non-negative integer, got {seed_text!r}")

    rank_by = _input(environ, "rank-by")
    if rank_by not in RANK_BY:
        problems.append(f"input 'rank-by' must be one of {', '.join(RANK_BY)}, got {rank_by!r}")

    if alpha is not None and samples is not None and samples < min_resamples(alpha):
        advice = resample_advice(alpha, "input 'bootstrap-samples'", "input 'alpha'")
        problems.append(f"{advice}, got {samples}")

    correction = _input(environ, "pairwise-correction")
    if correction not in CORRECTIONS:
        problems.append(f"input 'pairwise-correction' must be one of {', '.join(CORRECTIONS)}, got {correction!r}")

    cluster_by = _input(environ, "cluster-by")
    if cluster_by not in CLUSTER_BY:
        problems.append(f"input 'cluster-by' must be one of {', '.join(CLUSTER_BY)}, got {cluster_by!r}")
    weights_mode = _input(environ, "task-weights")
    if weights_mode not in TASK_WEIGHTS:
        problems.append(f"input 'task-weights' must be one of {', '.join(TASK_WEIGHTS)}, got {weights_mode!r}")

    pr_text = _input(environ, "pr-number")
    pr_number = _number(pr_text, parse_integer, lambda v: v >= 1) if pr_text else None
    if pr_text and pr_number is None:
        problems.append(f"input 'pr-number' must be a positive integer (or empty), got {pr_text!r}")

    fmt = _input(environ, "format")
    if fmt not in FORMAT_NAMES:
        problems.append(f"input 'format' must be one of {', '.join(FORMAT_NAMES)}, got {fmt!r}")

    token = _input(environ, "github-token")
    token_problem = _token_problem(token)
    if token_problem:
        problems.append(token_problem)

    baseline, baseline_artifact, fail_on_regression, tolerance = _baseline_inputs(environ, problems)

    required_tasks = split_patterns(_input(environ, "required-tasks"))
    required_text = _input(environ, "required-score")
    required_score = _number(required_text, parse_decimal, lambda v: 0.0 <= v <= 1.0)
    if required_score is None:
        problems.append(f"input 'required-score' must be a number from 0 to 1 (score units), got {required_text!r}")

    config = _input(environ, "config")
    if "\n" in config or "\x00" in config:
        problems.append("input 'config' must be one path (of a YAML file), relative to the workspace")

    if problems:
        raise SettingsError(problems)
    assert alpha is not None and samples is not None and seed is not None and tolerance is not None
    assert required_score is not None
    return Settings(
        runs=runs,
        github_token=token,
        comment=comment,  # type: ignore[arg-type]
        comment_key=key,
        title=_input(environ, "title"),
        alpha=alpha,
        bootstrap_samples=samples,
        seed=seed,
        rank_by=rank_by,  # type: ignore[arg-type]
        correction=correction,  # type: ignore[arg-type]
        cluster_by=cluster_by,  # type: ignore[arg-type]
        task_weights=weights_mode,  # type: ignore[arg-type]
        pr_number=pr_number,
        format=fmt,
        metric=_input(environ, "metric") or None,
        filter=_input(environ, "filter") or None,
        baseline=baseline,
        baseline_artifact=baseline_artifact,
        fail_on_regression=fail_on_regression,
        regression_tolerance=tolerance,
        config=config,
        workspace=environ.get("GITHUB_WORKSPACE") or ".",
        event_name=environ.get("GITHUB_EVENT_NAME", ""),
        event_path=environ.get("GITHUB_EVENT_PATH") or None,
        repository=environ.get("GITHUB_REPOSITORY") or None,
        api_url=environ.get("GITHUB_API_URL") or "https://api.github.com",
        server_url=environ.get("GITHUB_SERVER_URL") or "https://github.com",
        sha=environ.get("GITHUB_SHA") or None,
        run_id=environ.get("GITHUB_RUN_ID") or None,
        output_path=environ.get("GITHUB_OUTPUT") or None,
        summary_path=environ.get("GITHUB_STEP_SUMMARY") or None,
        on_runner=environ.get("GITHUB_ACTIONS") == "true",
        debug=environ.get("RUNNER_DEBUG") == "1",
        workflow_ref=environ.get("GITHUB_WORKFLOW_REF") or None,
        required_tasks=required_tasks,
        required_score=required_score,
    )


def _baseline_inputs(
    environ: Mapping[str, str], problems: list[str]
) -> tuple[tuple[str, ...], str, bool, float | None]:
    """``baseline``, ``baseline-artifact``, ``fail-on-regression``, ``regression-tolerance`` (issue 9)."""
    baseline = split_patterns(_input(environ, "baseline"))
    artifact = _input(environ, "baseline-artifact")
    if artifact and not _ARTIFACT_NAME.fullmatch(artifact):
        problems.append(
            "input 'baseline-artifact' must be an artifact name (1-255 characters, none of "
            f'" : < > | * ? \\ / or a line break), got {artifact!r}'
        )
    if baseline and artifact:
        problems.append("input 'baseline' and input 'baseline-artifact' are exclusive: set one of them")

    fail_text = _input(environ, "fail-on-regression")
    fail = _BOOLEANS.get(fail_text.lower())
    if fail is None:
        problems.append(f"input 'fail-on-regression' must be true or false, got {fail_text!r}")

    tolerance_text = _input(environ, "regression-tolerance")
    tolerance = _number(tolerance_text, parse_decimal, lambda v: 0.0 <= v <= 1.0)
    if tolerance is None:
        problems.append(
            f"input 'regression-tolerance' must be a number from 0 to 1 (score units), got {tolerance_text!r}"
        )
    return baseline, artifact, bool(fail), tolerance
