"""The action's settings, parsed once from the environment into a frozen dataclass."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..formats import ReadOptions
from ..options import COMMENT_MODES, INPUTS, SCORE_FORMATS, CommentMode, Option, ScoreFormat, pick
from ..required import split_patterns
from ..stats.aggregation import RANK_BY, RankBy, min_resamples, resample_advice
from ..stats.clustering import CLUSTER_BY, ClusterBy
from ..stats.family import CORRECTIONS, Correction
from ..stats.weights import TASK_WEIGHTS, TaskWeights
from ..trials import FAILED_CALLS, FailedCalls

# What the runner passes for an input the workflow does not set: action.yml's defaults, derived from
# the options table (tests/test_settings.py holds the two together). Empty where the configuration decides.
DEFAULTS: dict[str, str] = {name: option.manifest_default for name, option in INPUTS.items() if name != "runs"}


class SettingsError(Exception):
    """Every invalid input, each message naming its input."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Settings:
    runs: tuple[str, ...]
    github_token: str
    comment: CommentMode
    comment_key: str
    title: str
    # None: not given, so the configuration's statistics block decides, else the options' default.
    alpha: float | None
    bootstrap_samples: int | None
    seed: int | None
    rank_by: RankBy
    correction: Correction | None
    cluster_by: ClusterBy | None
    task_weights: TaskWeights | None
    failed_calls: FailedCalls | None
    pr_number: int | None
    format: str
    metric: str | None
    filter: str | None
    baseline: tuple[str, ...]
    baseline_artifact: str
    fail_on_regression: bool
    regression_tolerance: float
    min_effect: float | None
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
    required_tasks: tuple[str, ...] = ()  # task-id globs every model must pass
    required_score: float = 1.0
    history: int = 0  # earlier base-branch runs to read (0: none); the input's default is 10
    score_format: ScoreFormat = "percent"  # scores in [0, 1] as percentages, or "fraction"
    export_parquet: str | None = None  # a path relative to the workspace: the validated records as Parquet

    @property
    def read_options(self) -> ReadOptions:
        return ReadOptions(self.format, self.metric, self.filter)

    @property
    def config_is_default(self) -> bool:
        """``config`` left at its default: the file is optional (used only if it exists)."""
        return self.config in ("", INPUTS["config"].default)

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


def _read(environ: Mapping[str, str], option: Option, problems: list[str]) -> Any:
    """The input's value; None when it is left empty (not given) or invalid (a problem naming it)."""
    assert option.input is not None
    text = _input(environ, option.input)
    if text == "" and option.input == "history":
        text = option.default  # not given: the default count, as the runner would pass it
    if text == "" and (option.configurable or option.default == ""):
        return None
    value = option.read(text)
    if value is None:
        problems.append(f"input '{option.input}' {option.problem(text)}")
    return value


def _token_problem(token: str) -> str | None:
    # HTTP headers are Latin-1 and a token is ASCII: anything else could only fail inside the
    # HTTP client, after the inputs were read. The token itself is never echoed.
    if token and not all("!" <= ch <= "~" for ch in token):
        return "input 'github-token' holds characters no GitHub token has (spaces, control or non-ASCII characters)"
    return None


def parse_settings(environ: Mapping[str, str]) -> Settings:
    """Read and check every input; raise :class:`SettingsError` naming each bad one."""
    problems: list[str] = []
    values = {name: _read(environ, option, problems) for name, option in INPUTS.items() if name != "runs"}

    runs = split_patterns(_input(environ, "runs"))
    if not runs:
        problems.append("input 'runs' is required: newline- or comma-separated paths or globs of EvalRun files")
    alpha, samples = values["alpha"], values["bootstrap-samples"]
    # Only when both are given: otherwise the configuration may set the other (the pipeline checks then).
    if alpha is not None and samples is not None and samples < min_resamples(alpha):
        advice = resample_advice(alpha, "input 'bootstrap-samples'", "input 'alpha'")
        problems.append(f"{advice}, got {samples}")
    token = values["github-token"] or ""
    token_problem = _token_problem(token)
    if token_problem:
        problems.append(token_problem)
    baseline = split_patterns(values["baseline"] or "")
    if baseline and values["baseline-artifact"]:
        problems.append("input 'baseline' and input 'baseline-artifact' are exclusive: set one of them")
    config = values["config"] or ""
    if "\n" in config or "\x00" in config:
        problems.append("input 'config' must be one path (of a YAML file), relative to the workspace")

    export = values["export-parquet"] or ""
    parts = export.replace("\\", "/").split("/")
    if export and (export.startswith("/") or "\x00" in export or any(p in ("", ".", "..") for p in parts)):
        problems.append("input 'export-parquet' must be one file path relative to the workspace, without '.' or '..'")

    if problems:
        raise SettingsError(problems)
    comment = pick(values["comment"], COMMENT_MODES)
    rank_by = pick(values["rank-by"], RANK_BY)
    assert comment is not None and rank_by is not None
    return Settings(
        runs=runs,
        github_token=token,
        comment=comment,
        comment_key=values["comment-key"],
        title=values["title"] or "",
        alpha=alpha,
        bootstrap_samples=samples,
        seed=values["seed"],
        rank_by=rank_by,
        correction=pick(values["pairwise-correction"], CORRECTIONS),
        cluster_by=pick(values["cluster-by"], CLUSTER_BY),
        task_weights=pick(values["task-weights"], TASK_WEIGHTS),
        failed_calls=pick(values["failed-calls"], FAILED_CALLS),
        pr_number=values["pr-number"],
        format=values["format"],
        metric=values["metric"] or None,
        filter=values["filter"] or None,
        baseline=baseline,
        baseline_artifact=values["baseline-artifact"] or "",
        fail_on_regression=bool(values["fail-on-regression"]),
        regression_tolerance=values["regression-tolerance"],
        min_effect=values["min-effect"],
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
        required_tasks=split_patterns(values["required-tasks"] or ""),
        required_score=values["required-score"],
        history=values["history"],
        score_format=pick(values["score-format"], SCORE_FORMATS) or "percent",
        export_parquet=export or None,
    )
