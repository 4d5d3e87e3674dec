"""Telling a file's format by its content: the first bytes, then its shape and top-level keys.

Extensions do not say enough: the older lm-eval samples file is a ``.json`` holding JSON lines,
an Inspect ``.eval`` is a zip, HELM and lm-eval results are ``.json`` like an EvalRun array.
"""

from __future__ import annotations

from pathlib import Path

from . import every_eval_ever, helm, lm_eval, parquet
from ._common import EEE_AGGREGATE, HELM_RUN_FILE, LM_EVAL_RESULTS
from ._json import read_head, sniff

_LM_EVAL_RESULTS_KEYS = frozenset({"configs", "versions", "n-shot", "group_subtasks", "higher_is_better"})
_OPENAI_EVALS_KEYS = frozenset({"spec", "final_report", "event_id"})


def detect(path: Path) -> str | None:
    """The format of the file at ``path``, or None when nothing marks it as a harness's output."""
    head, complete = read_head(path)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "inspect"  # of the formats read here, only Inspect writes zips
    if head.startswith(parquet.MAGIC):
        return parquet.FORMAT
    if path.name == helm.PER_INSTANCE:
        return "helm"
    if helm.is_run_file(path):
        return HELM_RUN_FILE
    shape = sniff(head.decode("utf-8", errors="replace"), complete)
    keys = shape.keys
    # Before EvalRun's test: an Every Eval Ever sample line has a model_id too.
    if keys >= every_eval_ever.SAMPLE_KEYS and shape.kind in ("lines", "object"):
        return every_eval_ever.FORMAT
    if keys >= every_eval_ever.AGGREGATE_KEYS and shape.kind == "object":
        return EEE_AGGREGATE
    if "model_id" in keys or "runs" in keys:
        return "evalrun"
    if shape.kind == "lines" or (shape.kind == "object" and "doc_id" in keys):
        if "doc_id" in keys:
            return "lm-eval"
        if keys & _OPENAI_EVALS_KEYS or {"run_id", "sample_id", "type"} <= keys:
            return "openai-evals"
        return None
    if shape.kind == "object":
        if "results" in keys and keys & _LM_EVAL_RESULTS_KEYS:
            return LM_EVAL_RESULTS
        if "eval" in keys and keys & {"samples", "version", "status", "results"}:
            return "inspect"
        if "evalId" in keys or {"results", "config"} <= keys:
            return "promptfoo"
        if keys & _OPENAI_EVALS_KEYS:
            return "openai-evals"
        if "adapter_spec" in keys or "scenario_spec" in keys:
            return HELM_RUN_FILE
    if shape.kind == "array" and {"instance_id", "stats"} <= keys:
        return "helm"
    if lm_eval.RESULTS_NAME.fullmatch(path.name) and shape.kind == "object" and "results" in keys:
        return LM_EVAL_RESULTS
    return None
