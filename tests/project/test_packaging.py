"""gpuaudit runs the demo both from its wheel, installed, and from a checkout that is not.

The templates and the demo cassette live in the checkout's top-level folders;
setup.cfg maps them into gpuaudit.templates and gpuaudit.cassettes, a mapping
only an install sees. Both ways must find them from any working directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a source distribution of gpuaudit holds: all a wheel is built from.
SOURCES = ("setup.cfg", "pyproject.toml", "README.md", "gpuaudit", "templates", "cassettes")
SITE_PACKAGES = sysconfig.get_paths()["purelib"]  # where this interpreter finds the deps
SHIPPED = {
    "gpuaudit/cassettes/demo.yaml",
    "gpuaudit/templates/report.html.j2",
    "gpuaudit/templates/fleet.html.j2",
    "gpuaudit/templates/report.css",
    "gpuaudit/templates/report.js",
    "gpuaudit/schemas/report.schema.json",
    "gpuaudit/py.typed",
}


def run(args: list[str | Path], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_demo_reports(done: subprocess.CompletedProcess[str], out: Path) -> None:
    """The demo's three default reports, drawn from the shipped template and cassette."""
    assert done.returncode == 1, done.stdout + done.stderr  # the demo fails high (HA-01)
    reports = sorted(p.suffix for p in out.iterdir())
    assert reports == [".html", ".json", ".xlsx"], reports
    report = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))
    assert ("HA-01", "edge-inference") in {(f["rule"], f["object"]) for f in report["findings"]}
    assert "Content-Security-Policy" in next(out.glob("*.html")).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gpuaudit's wheel, built from a copy of the checkout so that no build output lands in it."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    dist = tmp_path_factory.mktemp("dist")
    pip_wheel: list[str | Path] = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
    ]
    done = run([*pip_wheel, "--no-index", "-w", dist, source], cwd=dist)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = dist.glob("gpuaudit-*.whl")
    return built


def test_the_wheel_ships_the_templates_and_only_the_demo_cassette(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert names >= SHIPPED, sorted(SHIPPED - names)
    cassettes = {n for n in names if n.startswith("gpuaudit/cassettes/") and n.endswith(".yaml")}
    assert cassettes == {"gpuaudit/cassettes/demo.yaml"}


def test_the_installed_wheel_runs_the_demo_from_anywhere(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    install: list[str | Path] = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--no-deps",
    ]
    done = run([*install, "--no-index", wheel], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # The dependencies come from this interpreter, added only after the install so
    # that pip never sees another gpuaudit there.
    purelib = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path
    )
    Path(purelib.stdout.strip(), "deps.pth").write_text(SITE_PACKAGES + "\n", encoding="utf-8")
    where = run([python, "-c", "import gpuaudit; print(gpuaudit.__file__)"], cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr

    out = tmp_path / "reports"
    done = run([venv / "bin" / "gpuaudit", "scan", "--demo", "-o", out], cwd=tmp_path)
    assert_demo_reports(done, out)


def uninstalled(*args: str | Path) -> list[str | Path]:
    """A command line for this interpreter without its site-packages' start-up files: no
    installed or editable gpuaudit, only the dependencies (given by PYTHONPATH)."""
    return [sys.executable, "-S", *args]


def test_a_checkout_that_is_not_installed_runs_the_demo(tmp_path: Path) -> None:
    path = f"{ROOT}{os.pathsep}{SITE_PACKAGES}"
    probe = "import gpuaudit, importlib.util as u; print(gpuaudit.__file__)"
    probe += "; print(u.find_spec('gpuaudit.cassettes'))"
    where = run(uninstalled("-c", probe), cwd=tmp_path, PYTHONPATH=path)
    assert where.stdout.split() == [str(ROOT / "gpuaudit" / "__init__.py"), "None"], where

    out = tmp_path / "reports"
    done = run(
        uninstalled("-m", "gpuaudit", "scan", "--demo", "-o", out), tmp_path, PYTHONPATH=path
    )
    assert_demo_reports(done, out)


def test_pytest_runs_on_a_checkout_that_is_not_installed(tmp_path: Path) -> None:
    test = "tests/cli/test_commands.py::test_demo_writes_default_formats"
    args = uninstalled("-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", tmp_path, test)
    done = run(args, cwd=ROOT, PYTHONPATH=f".{os.pathsep}{SITE_PACKAGES}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
