"""Container entrypoint: the runner starts this with the inputs as INPUT_* variables."""

import sys

from leaderboard.action import main

if __name__ == "__main__":
    sys.exit(main())
