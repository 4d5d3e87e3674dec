"""The GitHub side: settings from the runner's environment, the event, workflow commands,
the comment thread through the GitHub API, and ``main`` which ties them to the library.
"""

from .main import main

__all__ = ["main"]
