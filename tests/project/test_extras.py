"""The optional dependencies: the Kubernetes client (extra ``kubernetes``) and psycopg
(extra ``postgres``) are left out of a plain install, which must still run everything
but the features that need them; those stop with one line naming the extra.

The missing library is simulated in a child process (``sys.modules[name] = None``,
which makes every import of it, or of a module inside it, raise ImportError), since
this process has both installed and may have imported them already. The last test
installs the package for real, from the package index, in a fresh environment.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import IN_CI, ROOT, unused_port
from tests.project.test_packaging import SOURCES

# What a user types: the extra each library comes with (README.md, "extras").
KUBERNETES_LINE = (
    "gpuaudit: error: --kubernetes needs the Kubernetes client: pip install 'gpuaudit[kubernetes]'"
)
POSTGRES_LINE = (
    "gpuaudit: error: --history postgresql://audit:***@db.example.com/ga needs the "
    "PostgreSQL driver (psycopg): pip install 'gpuaudit[postgres]'"
)
URL = "postgresql://audit:S3cretTail@db.example.com/ga"
# An empty kubectl List: a file the client reads without any item to check.
EMPTY_LIST = '{"apiVersion": "v1", "kind": "List", "items": []}'


def gpuaudit(
    tmp_path: Path, *args: str | Path, without: tuple[str, ...] = ("kubernetes", "psycopg")
) -> subprocess.CompletedProcess[str]:
    """gpuaudit from this checkout in a child process where ``without`` cannot be imported."""
    prelude = "import sys\nfor name in sys.argv[1].split(','):\n    sys.modules[name] = None\n"
    prelude += "from gpuaudit.cli.main import main\nmain(sys.argv[2:], prog_name='gpuaudit')\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", prelude, ",".join(without), *map(str, args)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_one_line(done: subprocess.CompletedProcess[str], line: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr  # an input error
    assert done.stderr == line + "\n", done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_without_either_library_the_demo_help_and_other_commands_run(tmp_path: Path) -> None:
    shown = gpuaudit(tmp_path, "--help")
    assert shown.returncode == 0, shown.stderr
    assert "scan" in shown.stdout

    out = tmp_path / "reports"
    done = gpuaudit(tmp_path, "scan", "--demo", "-o", out)
    assert done.returncode == 1, done.stderr  # the demo fails high (HA-01)
    assert sorted(p.suffix for p in out.iterdir()) == [".html", ".json", ".xlsx"]
    assert "Traceback" not in done.stderr

    # A SQLite history needs neither library: the scan is recorded and listed.
    store = tmp_path / "history.sqlite"
    kept = gpuaudit(tmp_path, "scan", "--demo", "-o", out, "--history", store)
    assert kept.returncode == 1, kept.stderr
    assert "warning" not in kept.stderr
    listed = gpuaudit(tmp_path, "history", "--history", store)
    assert listed.returncode == 0, listed.stderr
    assert "demo" in listed.stdout

    rules = gpuaudit(tmp_path, "rules")
    assert rules.returncode == 0, rules.stderr
    assert "K8S-02" in rules.stdout  # the rules are listed even without their input's reader


def test_kubernetes_without_its_client_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    cluster = tmp_path / "prod-k8s.json"
    cluster.write_text(EMPTY_LIST, encoding="utf-8")
    out = tmp_path / "reports"
    args = ("scan", "--demo", "-o", out, "--kubernetes", cluster)
    assert_one_line(gpuaudit(tmp_path, *args, without=("kubernetes",)), KUBERNETES_LINE)
    assert not out.exists()  # stopped before the scan: no report

    # The same command with the client: the file is read and the demo scanned.
    done = gpuaudit(tmp_path, *args, without=())
    assert done.returncode == 1, done.stderr
    assert len(list(out.glob("*.json"))) == 1


@pytest.mark.parametrize(
    "command",
    [
        ("scan", "--demo", "-o", "reports", "--history", URL),
        ("history", "--history", URL),
        ("history", "prune", "--older-than", "30", "--history", URL),
        ("fleet", "report", "-o", "reports", "--history", URL),
        # postgres:// is the same driver; so is the driver named explicitly
        ("history", "--history", URL.replace("postgresql://", "postgres://")),
        ("history", "--history", URL.replace("postgresql://", "postgresql+psycopg://")),
    ],
)
def test_a_postgresql_history_without_its_driver_is_one_line_naming_the_extra(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    done = gpuaudit(tmp_path, *command, without=("psycopg",))
    scheme = command[-1].split("://")[0]
    assert_one_line(done, POSTGRES_LINE.replace("postgresql://", f"{scheme}://"))
    assert "S3cretTail" not in done.stdout + done.stderr
    assert not (tmp_path / "reports").exists()


def test_with_the_driver_a_postgresql_history_is_checked_no_further_before_the_scan(
    tmp_path: Path,
) -> None:
    # The control of the test above: with psycopg, nothing is refused before the scan;
    # the server, which does not exist, fails only when the history is used (a warning).
    url = f"postgresql://audit:S3cretTail@127.0.0.1:{unused_port()}/ga"
    args = ("scan", "--demo", "-o", "reports", "--history", url, "-f", "json")
    done = gpuaudit(tmp_path, *args, without=())
    assert done.returncode == 1, done.stderr
    assert "pip install" not in done.stderr
    masked = url.replace("S3cretTail", "***")
    assert f"warning: history: cannot open {masked}" in done.stderr


def requirement_names(lines: str) -> set[str]:
    """The distribution names of a setup.cfg requirement list (comments dropped)."""
    names = set()
    for line in lines.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            match = re.match(r"[A-Za-z0-9_.-]+", line)
            assert match is not None, line
            names.add(match.group(0).lower())
    return names


def test_the_package_declares_the_extras() -> None:
    # setup.cfg holds the metadata; pyproject.toml only the build system, so that
    # setuptools never takes a [project] table there over setup.cfg.
    with (ROOT / "pyproject.toml").open("rb") as handle:
        assert set(tomllib.load(handle)) == {"build-system"}
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    required = requirement_names(config["options"]["install_requires"])
    extras = {k: requirement_names(v) for k, v in config["options.extras_require"].items()}
    assert "kubernetes" not in required and "psycopg" not in required
    assert extras["kubernetes"] == {"kubernetes"}
    assert extras["postgres"] == {"psycopg"}
    assert extras["all"] == {"kubernetes", "psycopg"}


INSTALLED = (
    "import importlib.metadata as m, importlib.util as u; "
    "print(u.find_spec('kubernetes') is not None, u.find_spec('psycopg') is not None); "
    "print(' '.join(sorted(m.metadata('gpuaudit').get_all('Provides-Extra'))))"
)


def pip(python: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """pip in the environment of ``python``, from the package index as a user installs;
    only where the index cannot be reached at all is the test skipped, and never in CI."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [python, "-m", "pip", "install", "-q", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    unreachable = ("NewConnectionError", "Temporary failure in name resolution")
    if done.returncode and not IN_CI and any(s in done.stderr for s in unreachable):
        pytest.skip(f"the package index cannot be reached: {done.stderr.strip()[-300:]}")
    return done


@pytest.mark.install
def test_a_plain_install_has_neither_library_and_all_adds_both(tmp_path: Path) -> None:
    """The README's install, for real: `pip install .` in a fresh environment, then
    `pip install '.[all]'` in the same one (one environment, so one build of each)."""
    source = tmp_path / "gpuaudit"  # a copy, so that no build output lands in the checkout
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
    python = venv / "bin" / "python"

    done = pip(python, source)
    assert done.returncode == 0, done.stdout + done.stderr
    probe = subprocess.run([python, "-c", INSTALLED], capture_output=True, text=True, check=True)
    assert probe.stdout.split("\n")[:2] == ["False False", "all kubernetes postgres test"]

    # The real thing the simulation above stands for: the line, from the installed command.
    cluster = tmp_path / "prod-k8s.json"
    cluster.write_text(EMPTY_LIST, encoding="utf-8")
    scan = [venv / "bin" / "gpuaudit", "scan", "--demo", "-o", tmp_path / "reports"]
    plain = subprocess.run(scan, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 1, plain.stderr  # the demo fails high (HA-01)
    stopped = subprocess.run(
        [*scan, "--kubernetes", cluster], cwd=tmp_path, capture_output=True, text=True
    )
    assert (stopped.returncode, stopped.stderr) == (2, KUBERNETES_LINE + "\n")

    done = pip(python, f"{source}[all]")
    assert done.returncode == 0, done.stdout + done.stderr
    probe = subprocess.run([python, "-c", INSTALLED], capture_output=True, text=True, check=True)
    assert probe.stdout.split("\n")[0] == "True True"
