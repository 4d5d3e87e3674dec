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
# Bytes of eval harnesses' own output over all such files of one run. Larger than
# MAX_INPUT_BYTES because a harness stores the prompt and responses on every line (1,000,000
# lm-eval lines are about 1 GiB); lines are streamed, so memory follows the records, and 4 GiB
# reads in about 25 s. A harness file read whole (a JSON document) is held to MAX_INPUT_BYTES.
MAX_HARNESS_INPUT_BYTES = 4 * 1024 * 1024 * 1024
# Bootstrap resamples per interval, for the CLI and the action alike.
MAX_BOOTSTRAP_SAMPLES = 100_000
