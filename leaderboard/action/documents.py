"""The files a run leaves in the workspace for later steps: the JSON report, ``leaderboard.md``, the exact
comment body, and (the ``export-parquet`` input) the records as Parquet.

Each is written through :mod:`leaderboard.action.outputs`: inside the workspace, never through a link.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import TextIO

from ..formats.parquet import export as export_parquet
from ..records import EvalRun
from ..report.document import Commit, full_markdown
from ..report.json_report import write_json
from ..report.plan import Plan
from ..stats.aggregation import Leaderboard
from .outputs import Content, OutputRefused, copy_inside, key_directory, write_inside
from .settings import Settings

OUTPUT_DIR = ".leaderboard"


def write_documents(
    settings: Settings, board: Leaderboard, *, comment: str, commit: Commit | None, sections: Plan
) -> tuple[str, str]:
    """The JSON report, the full markdown and the exact comment body, under the workspace, never through a link.

    The paths returned (the report's, the markdown's) are relative to the workspace: the container sees it
    at /github/workspace, later steps on the runner elsewhere, and both resolve these.
    """
    directories = (OUTPUT_DIR, key_directory(settings.comment_key))

    def report(handle: TextIO) -> None:
        write_json(board, handle, **sections.report)

    files: dict[str, Content] = {
        # Streamed: at millions of pairs the report is over a gigabyte, which a string would hold twice.
        "report.json": report,
        "leaderboard.md": full_markdown(
            board, title=settings.title, commit=commit, sections=sections.full, framing=sections.framing
        ),
        "comment.md": comment,
    }
    write_inside(settings.workspace, directories, files)
    relative = "/".join(directories)
    return f"{relative}/report.json", f"{relative}/leaderboard.md"


def export_records(settings: Settings, runs: Sequence[EvalRun]) -> None:
    """The ``export-parquet`` file: written outside the workspace, then copied in without following a link."""
    if settings.export_parquet is None:
        return
    with tempfile.TemporaryDirectory(prefix="leaderboard-") as folder:
        staged = os.path.join(folder, "records.parquet")
        failure = export_parquet(runs, staged, shown=settings.export_parquet)
        if failure is not None:
            raise OutputRefused(
                settings.export_parquet, failure.removeprefix(f"cannot write {settings.export_parquet}: ")
            )
        copy_inside(settings.workspace, settings.export_parquet, staged)
    print(f"Records as Parquet: {settings.export_parquet}")
