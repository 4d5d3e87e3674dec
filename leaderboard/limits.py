"""The bounds every entry point (library loader, CLI, action) enforces, in one place.

They keep time and memory proportional to what a sane eval run needs: a hostile
or careless input is refused with a message rather than allowed to run the job
out of memory or past its timeout. The README's "Limits" section states them.
"""

from __future__ import annotations

# Characters in a model id, task id, metric name or category. Real ids are far shorter (the longest
# in the bundled MTEB and SWE-bench data is under 100); the bound keeps a report, an output and a
# comment from repeating megabytes of id in every row and pair.
MAX_ID_LENGTH = 512
# Bytes of input over all files of one run: about four million records of typical size, which
# load in well under a minute and a few GiB of memory.
MAX_INPUT_BYTES = 512 * 1024 * 1024
# Bootstrap resamples per interval, for the CLI and the action alike.
MAX_BOOTSTRAP_SAMPLES = 100_000
