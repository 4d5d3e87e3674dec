"""Check built distributions as PyPI would take them and as `pip install leaderboard-action` gives them.

    python scripts/check_dist.py DIST_DIR     (run with the repository's venv: it is the reference)

The wheel holds every module of leaderboard/ and py.typed, and nothing else (no tests, benchmarks or
scripts); its metadata has the package's version, the runtime dependencies only (the test tools behind
the `test` extra) and the `leaderboard` command. The sdist holds the sources to rebuild it. Then the
wheel is installed into a fresh venv from the package index, as a user installs it: only the runtime
dependencies arrive, every module imports, `leaderboard --version` prints the version, and the CLI's
output on the bundled example (the document and the JSON report) is byte-identical to the repository's.
Exits 1 naming every failure.
"""

from __future__ import annotations

import email.parser
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from release_tags import package_version  # noqa: E402

EXAMPLE = ROOT / "examples" / "mteb-eng-v2-sample.jsonl"


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(specs: list[str]) -> set[tuple[str, SpecifierSet]]:
    return {(normalise(r.name), r.specifier) for r in map(Requirement, specs)}


def source_files() -> set[str]:
    """What the wheel must hold of leaderboard/: every module and py.typed."""
    files = {p for p in (ROOT / "leaderboard").rglob("*.py") if "__pycache__" not in p.parts}
    return {p.relative_to(ROOT).as_posix() for p in files} | {"leaderboard/py.typed"}


def check_wheel(wheel: Path, version: str) -> list[str]:
    problems = []
    names = set(zipfile.ZipFile(wheel).namelist())
    dist_info = f"leaderboard_action-{version}.dist-info/"
    if missing := source_files() - names:
        problems.append(f"the wheel lacks {sorted(missing)}")
    if stray := {n for n in names if not n.startswith(("leaderboard/", dist_info))}:
        problems.append(f"the wheel holds files outside leaderboard/: {sorted(stray)}")
    if extra := {n for n in names if n.startswith("leaderboard/")} - source_files():
        problems.append(f"the wheel holds files leaderboard/ does not have: {sorted(extra)}")
    with zipfile.ZipFile(wheel) as z:
        meta = email.parser.Parser().parsestr(z.read(dist_info + "METADATA").decode())
        entry_points = z.read(dist_info + "entry_points.txt").decode()
    if meta["Name"] != "leaderboard-action" or meta["Version"] != version:
        problems.append(f"the wheel is {meta['Name']} {meta['Version']}, not leaderboard-action {version}")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = sorted(d for d in meta.get_all("Requires-Dist") or [] if "extra ==" not in d)
    if requirements(runtime) != requirements(project["dependencies"]):
        problems.append(f"runtime dependencies {runtime} are not pyproject.toml's {project['dependencies']}")
    if meta["Requires-Python"] != ">=3.11":
        problems.append(f"Requires-Python is {meta['Requires-Python']}")
    if "leaderboard = leaderboard.cli:main" not in entry_points:
        problems.append("the wheel has no `leaderboard` command")
    if meta["Description-Content-Type"] != "text/markdown":
        problems.append(f"the README is described as {meta['Description-Content-Type']}, not text/markdown")
    return problems


def check_sdist(sdist: Path, version: str) -> list[str]:
    top = f"leaderboard_action-{version}/"
    with tarfile.open(sdist) as tar:
        names = {n.removeprefix(top) for n in tar.getnames()}
    needed = source_files() | {"pyproject.toml", "README.md", "PKG-INFO"}
    return [f"the sdist lacks {sorted(missing)}"] if (missing := needed - names) else []


def check_install(wheel: Path, version: str) -> list[str]:
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        venv = work / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py, cli = venv / "bin" / "python", venv / "bin" / "leaderboard"
        # With the parquet extra, as the image installs it: requirements.txt is compiled with it.
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"{wheel}[parquet]"], check=True, cwd=work)

        listed = json.loads(subprocess.run([str(py), "-m", "pip", "list", "--format", "json"], check=True,
                                           capture_output=True, text=True, cwd=work).stdout)  # fmt: skip
        installed = {normalise(p["name"]) for p in listed} - {"pip", "setuptools", "wheel", "leaderboard-action"}
        pinned = {
            normalise(line.split("==")[0])
            for line in (ROOT / "requirements.txt").read_text().splitlines()
            if re.match(r"^[A-Za-z0-9]", line)
        }
        if installed != pinned:
            problems.append(
                f"`pip install` of the wheel brought {sorted(installed - pinned)} beyond the runtime "
                f"dependencies, or lacks {sorted(pinned - installed)}"
            )

        # Every module imports from the venv (cwd outside the repository, so nothing comes from the checkout).
        modules = sorted(
            p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
            for p in (ROOT / "leaderboard").rglob("*.py")
            if "__pycache__" not in p.parts and p.name != "__main__.py"
        )
        probe = (
            "import importlib, sys, leaderboard\n"
            "assert leaderboard.__file__.startswith(sys.prefix), leaderboard.__file__\n"
            f"for m in {modules!r}: importlib.import_module(m)"
        )
        done = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, cwd=work)
        if done.returncode != 0:
            problems.append(f"a module of the installed wheel does not import: {done.stderr.strip()[-500:]}")

        done = subprocess.run([str(cli), "--version"], capture_output=True, text=True, cwd=work)
        if done.stdout.strip() != f"leaderboard {version}":
            problems.append(f"`leaderboard --version` printed {done.stdout.strip()!r}, not 'leaderboard {version}'")

        def board(command: list[str], out: Path) -> tuple[int, str, bytes]:
            args = [*command, str(EXAMPLE), "--json", str(out), "--seed", "0"]
            done = subprocess.run(args, capture_output=True, text=True, cwd=work)
            return done.returncode, done.stdout, out.read_bytes() if out.exists() else b""

        wheel_run = board([str(cli)], work / "wheel.json")
        repo_run = board([sys.executable, "-m", "leaderboard"], work / "repo.json")
        if wheel_run[0] != 0 or repo_run[0] != 0:
            problems.append(f"the CLI exited {wheel_run[0]} from the wheel, {repo_run[0]} from the repository")
        elif wheel_run[1] != repo_run[1]:
            problems.append("the installed CLI's document differs from the repository's")
        elif wheel_run[2] != repo_run[2]:
            problems.append("the installed CLI's JSON report differs from the repository's")
    return problems


def main() -> int:
    dist = Path(sys.argv[1]).resolve()
    version = package_version()
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        print(f"DIST CHECK FAILED: expected one wheel and one sdist in {dist}, found {wheels + sdists}")
        return 1
    problems = check_wheel(wheels[0], version) + check_sdist(sdists[0], version)
    problems += check_install(wheels[0], version)
    for problem in problems:
        print(f"DIST CHECK FAILED: {problem}")
    if not problems:
        print(
            f"dist check passed: {wheels[0].name} and {sdists[0].name}; every module, py.typed, runtime "
            "dependencies only; the CLI from a fresh venv prints what the repository prints"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
