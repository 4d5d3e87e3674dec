# The action's image. Debian's Python 3.11 (bookworm), as on the runners' own images.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/action

WORKDIR /action

# Dependencies first: this layer is rebuilt only when requirements.txt changes.
COPY requirements.txt /action/requirements.txt
RUN python -m pip install --no-cache-dir -r /action/requirements.txt

COPY leaderboard/ /action/leaderboard/
COPY entrypoint.py /action/entrypoint.py

# Exec form: no shell in between, so INPUT_GITHUB-TOKEN and the other hyphenated
# variables reach Python (POSIX shells drop names with hyphens).
ENTRYPOINT ["python", "/action/entrypoint.py"]
