"""scripts/screenshot.py makes the comments it photographs as the action does (the pictures need Chromium)."""

from __future__ import annotations

import importlib.util

from conftest import ROOT


def test_the_history_screenshot_is_a_comment_with_the_trend_the_noise_and_the_run_that_expired() -> None:
    spec = importlib.util.spec_from_file_location("screenshot", ROOT / "scripts" / "screenshot.py")
    assert spec is not None and spec.loader is not None
    screenshot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screenshot)
    body = screenshot.with_history()
    assert "### Trend on `main`" in body
    assert "History: read 9 of 10 earlier runs on `main`: 1 expired." in body
    assert "| Model | Mean by run (9 earlier → this run), pts | Run to run |" in body
