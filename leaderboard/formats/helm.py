"""HELM: a run directory's ``per_instance_stats.json``, with ``run_spec.json`` beside it.

An instance may be split across several records (one per metric family): they are merged per
(instance_id, perturbation); train trials (``train_trial_index``) of an instance are trials, folded
into their mean. The task is ``<scenario>/<instance_id>[/<perturbation>]``, the scenario being the
run spec's name without its model arguments, so the same instance pairs across models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..records import EvalRun
from ._common import HELM_RUN_FILE, FileRead, ReadContext, Refused, describe, non_empty, read_whole
from ._json import BrokenJson, located_array

DEFAULT_METRIC = "exact_match"
PER_INSTANCE = "per_instance_stats.json"
# The other files HELM writes in a run directory: read with per_instance_stats.json, never alone.
RUN_FILES = frozenset(
    {
        "run_spec.json", "stats.json", "scenario.json", "scenario_state.json", "instances.json",
        "display_predictions.json", "display_requests.json", "costs.json",
    }
)  # fmt: skip
_MODEL_ARGS = ("model", "model_deployment")


def run_identity(run_spec: object) -> tuple[str, str, str]:
    """(model, scenario, category) from a run spec."""
    if not isinstance(run_spec, dict):
        raise Refused("run_spec.json beside it is not a JSON object")
    adapter = run_spec.get("adapter_spec")
    model = non_empty(adapter.get("model")) if isinstance(adapter, dict) else None
    name = non_empty(run_spec.get("name"))
    if model is None or name is None:
        raise Refused("run_spec.json beside it names no adapter_spec.model or no run name")
    head, _, args = name.partition(":")
    kept = [a for a in args.split(",") if a and a.split("=", 1)[0] not in _MODEL_ARGS]
    scenario = f"{head}:{','.join(kept)}" if kept else head
    groups = run_spec.get("groups")
    category = non_empty(groups[0]) if isinstance(groups, list) and groups else None
    return model, scenario, category or head


def _load_run_spec(path: Path) -> Any:
    spec = path.with_name("run_spec.json")
    if not spec.is_file():
        raise Refused("no run_spec.json beside this file: HELM names the model there; keep the run directory whole")
    try:
        return json.loads(read_whole(spec))
    except (OSError, ValueError) as exc:
        raise Refused(f"cannot read run_spec.json beside it: {exc}") from None


def _perturbation(record: dict[str, Any]) -> str | None:
    perturbation = record.get("perturbation")
    if isinstance(perturbation, dict):
        return non_empty(perturbation.get("name")) or json.dumps(perturbation, sort_keys=True)
    return None


def read_per_instance(read: FileRead, text: str) -> None:
    model, scenario, category = run_identity(_load_run_spec(read.path))
    metric = read.options.metric or DEFAULT_METRIC
    if not text.lstrip("\ufeff \t\r\n").startswith("["):
        raise Refused("per_instance_stats.json is a JSON array of instance records")
    try:
        records = located_array(text, ())
    except BrokenJson as exc:
        raise Refused(str(exc), exc.line) from None
    # (instance, perturbation, train trial) -> (line of its first record, the metric's stat or None)
    merged: dict[tuple[str, str | None, int], tuple[int, dict[str, Any] | None]] = {}
    names: set[str] = set()
    for line, record in records:
        instance = non_empty(record.get("instance_id")) if isinstance(record, dict) else None
        if instance is None or not isinstance(record.get("stats"), list):
            read.problem("not a HELM per-instance record (instance_id and stats)", line)
            continue
        trial = record.get("train_trial_index", 0)
        key = (instance, _perturbation(record), trial if isinstance(trial, int) else 0)
        first_line, stat = merged.get(key, (line, None))
        for candidate in record["stats"]:
            name = candidate.get("name") if isinstance(candidate, dict) else None
            if isinstance(name, dict) and isinstance(name.get("name"), str):
                names.add(name["name"])
                # A stat named with a perturbation is a worst case over variants, not this instance's own.
                if name["name"] == metric and "perturbation" not in name and stat is None:
                    stat = candidate
        merged[key] = (first_line, stat)
    if merged and metric not in names:
        raise Refused(f"no instance has the stat {metric!r}; set the input 'metric'", field="metric")
    for (instance, perturbation, trial), (line, stat) in merged.items():
        # A stat with count 0 has no mean: HELM computed nothing for it (NaN stats are dropped too).
        value = stat.get("mean") if stat is not None and stat.get("count") else None
        if value is None:
            read.unscored += 1
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise Refused(
                f"stat {metric!r} is {describe(value)} here: not a per-instance score on 0-1; choose a 0-1 stat "
                "with the input 'metric'",
                line,
                "metric",
            )
        task = f"{scenario}/{instance}" + (f"/{perturbation}" if perturbation else "")
        read.add(model, task, metric, float(value), category, read.source(line), trial)


def is_run_file(path: Path) -> bool:
    """A file HELM writes beside per_instance_stats.json, recognised as such."""
    return path.name in RUN_FILES and (
        path.with_name(PER_INSTANCE).is_file() or path.with_name("run_spec.json").is_file()
    )


def read(file: FileRead, context: ReadContext) -> list[EvalRun]:
    """The records of ``per_instance_stats.json``; a run file gives none (it is read for its run's identity)."""
    if file.format == HELM_RUN_FILE or (file.path.name != PER_INSTANCE and is_run_file(file.path)):
        file.format, file.companion = HELM_RUN_FILE, True
        return []
    read_per_instance(file, read_whole(file.path))
    return list(file.records())
