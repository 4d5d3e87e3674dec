"""Documents made from an analysis: markdown tables, the PR comment and summary, the JSON report.

Pure: nothing here reads the environment or talks to GitHub.
"""

from .document import render_markdown, render_report
from .json_report import render_json, report_dict

__all__ = ["render_json", "render_markdown", "render_report", "report_dict"]
