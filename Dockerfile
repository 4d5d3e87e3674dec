# The action's image: Debian bookworm's Python 3.11, the pinned dependencies, the leaderboard package.
#
# The base is pinned by digest (the multi-platform index of python:3.11-slim-bookworm), so every build of a
# commit starts from the same bytes on amd64 and arm64. BASE_IMAGE is overridden only where no registry is
# reachable: scripts/container-test.sh then builds on a local Debian bookworm stand-in.
ARG BASE_IMAGE=python:3.11-slim-bookworm@sha256:2e32f7d302adc1c37428355c1e646897c0c53f4fd60b6a551245fb90ee129f91
FROM ${BASE_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/action

WORKDIR /action

# Dependencies first: this layer is rebuilt only when requirements.txt changes. Wheels only, so nothing is
# compiled (the image has no compiler); each file checked against its pinned hash; exactly the pinned set.
# The packages' own test suites (numpy's: 17 MB) are never run here.
# DuckDB (the parquet extra, compiled into requirements.txt) is here so the action reads Parquet inputs
# and baselines and writes --export-parquet: 71 MB more image, 25 MB more to pull (measured: docs/parquet.md).
COPY requirements.txt /action/requirements.txt
RUN python -m pip install --no-cache-dir --root-user-action=ignore --only-binary=:all: --require-hashes --no-deps \
        -r /action/requirements.txt \
    && find /usr/local/lib -path '*-packages/*' -type d -name tests -prune -exec rm -rf {} +

COPY leaderboard/ /action/leaderboard/
COPY entrypoint.py /action/entrypoint.py
# Byte-compiled once here rather than on every run (the container is thrown away after each step); keyed
# by the sources' hashes, not their timestamps, which a checkout does not keep.
RUN python -m compileall -q --invalidation-mode unchecked-hash /action/leaderboard

# No USER: GitHub runs Docker actions as the image's default user and documents that it must be root
# ("Dockerfile support for GitHub Actions", USER): the workspace and file-command directories it mounts
# belong to the runner's user, which a user made here would not be.
# Exec form: no shell in between, so INPUT_GITHUB-TOKEN and the other hyphenated
# variables reach Python (POSIX shells drop names with hyphens).
ENTRYPOINT ["python", "/action/entrypoint.py"]
