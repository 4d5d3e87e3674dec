"""Workflow commands, escaped as the runner parses them; outputs and the summary file."""

from __future__ import annotations

from pathlib import Path

from leaderboard.action.workflow import command, escape_data, escape_property, set_outputs


def test_message_escaping_encodes_percent_and_line_breaks() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"


def test_property_escaping_also_encodes_colon_and_comma() -> None:
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_an_annotation_carries_file_line_and_title() -> None:
    line = command("error", "score 1.5\nis out", {"file": "evals/r,1.jsonl", "line": 3, "title": "Bad: score"})
    assert line == "::error file=evals/r%2C1.jsonl,line=3,title=Bad%3A score::score 1.5%0Ais out"


def test_an_injected_command_in_data_stays_inside_the_message() -> None:
    line = command("error", "x\n::add-mask::boom", {"file": "f"})
    assert "\n" not in line and line.count("::") == 4


def test_outputs_use_a_heredoc_for_multiline_values(tmp_path: Path) -> None:
    out = tmp_path / "out"
    set_outputs(str(out), {"one": "x", "two": "a\nb"})
    lines = out.read_text().splitlines()
    assert lines[0] == "one=x"
    assert lines[1].startswith("two<<ghadelimiter_") and lines[2:4] == ["a", "b"] and lines[4] == lines[1][5:]
