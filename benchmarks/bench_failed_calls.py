"""Failed calls and the rank: two equal models, A's calls fail on the hardest share of the tasks.

    python benchmarks/bench_failed_calls.py            # REPS replications
    python benchmarks/bench_failed_calls.py --reps 100

P(A ranks first) and A's mean minus B's, with failures left out (``failed_calls="exclude"``, the old
behaviour) and scored 0 (the default), with Monte Carlo SEs. Equal models rank first half the time
by chance; a rate above that is a rank bought by failing.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from generators import equal_models_a_failing_the_hardest  # noqa: E402

from leaderboard import analyse  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=500)
    args = parser.parse_args()
    for n, share in ((200, 0.3), (50, 0.1), (1000, 0.05)):
        for how in ("exclude", "zero"):
            first, gaps = 0, []
            for rep in range(args.reps):
                board = analyse(equal_models_a_failing_the_hardest(rep, n, share), pairs=False, failed_calls=how)  # type: ignore[arg-type]
                first += board.rows[0].model_id == "A"
                means = {r.model_id: r.mean_score for r in board.rows}
                gaps.append(means["A"] - means["B"])
            p = first / args.reps
            se = math.sqrt(max(p * (1 - p), 1e-12) / args.reps)
            g = np.asarray(gaps)
            print(
                f"n={n}, A fails the hardest {share:.0%}, failed-calls {how}: "
                f"A first {100 * p:.1f}% (SE {100 * se:.1f}); "
                f"A - B mean {g.mean():+.3f} (SE {g.std(ddof=1) / math.sqrt(g.size):.3f})",
                flush=True,
            )


if __name__ == "__main__":
    main()
