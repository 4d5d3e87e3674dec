"""The environment the Actions runner gives a Docker action's entrypoint."""

from __future__ import annotations

from leaderboard.action.settings import DEFAULTS

TOKEN = "test-token"
# What the runner passes when a workflow gives only `runs`: action.yml's defaults, the token expanded.
INPUT_DEFAULTS = {**DEFAULTS, "runs": "results/*.jsonl", "github-token": TOKEN}


def runner_env(
    *, workspace: str, event_path: str, output: str, summary: str, api_url: str, event: str = "pull_request",
    **overrides: str,
) -> dict[str, str]:  # fmt: skip
    """Inputs as INPUT_<NAME> (upper case, hyphens kept), then the GITHUB_* variables.

    ``overrides``: a lower_case name is an input (``bootstrap_samples`` -> INPUT_BOOTSTRAP-SAMPLES),
    an UPPER_CASE name a variable of its own.
    """
    env = {f"INPUT_{name.upper()}": value for name, value in INPUT_DEFAULTS.items()}
    env.update(
        {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": event_path,
            "GITHUB_REPOSITORY": "octo/evals",
            "GITHUB_API_URL": api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": "4242",
            "GITHUB_WORKFLOW_REF": "octo/evals/.github/workflows/leaderboard.yml@refs/pull/7/merge",
            "GITHUB_WORKSPACE": workspace,
            "GITHUB_OUTPUT": output,
            "GITHUB_STEP_SUMMARY": summary,
            "GITHUB_ACTIONS": "true",
        }
    )
    for name, value in overrides.items():
        env[name if name.isupper() else f"INPUT_{name.upper().replace('_', '-')}"] = value
    return env
