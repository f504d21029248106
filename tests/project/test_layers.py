"""One-way layers: the policy loader is given the rule ids; import contracts hold and can fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuaudit.model.policy_file import PolicyError, parse_policy


def test_policy_loader_knows_only_the_rule_ids_it_is_given() -> None:
    policy = parse_policy("severity: {XX-01: low}\n", rule_ids=["XX-01"])
    assert policy.severity == {"XX-01": "low"}
    with pytest.raises(PolicyError, match="<policy>:1: severity: unknown rule id 'HA-01'"):
        parse_policy("severity: {HA-01: low}\n", rule_ids=["XX-01"])


ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ROOT / ".importlinter"


def lint_imports(folder: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the gpuaudit package found in ``folder``, with the project's contracts."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
            "--no-logo",
            "--no-cache",
            str(CONTRACTS),
        ],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_import_contracts_hold() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "statement", "contracts", "illegal"),
    [
        (
            "model/policy.py",
            "from gpuaudit.rules import catalogue",
            "The pipeline runs one way",
            "gpuaudit.model.policy -> gpuaudit.rules",
        ),
        (
            "inventory.py",
            "import gpuaudit.report",
            ("The pipeline runs one way", "The collector builds an inventory"),
            "gpuaudit.inventory -> gpuaudit.report",
        ),
        (
            "rules/ha.py",
            "from gpuaudit.verdict import check",
            "The pipeline runs one way",
            "gpuaudit.rules.ha -> gpuaudit.verdict.check",
        ),
        (
            "vsphere/collect/vms.py",
            "from gpuaudit.model import facts",
            "The collector builds an inventory",
            "gpuaudit.vsphere.collect.vms -> gpuaudit.model.facts",
        ),
        # A package is one layer, whichever of its modules imports: the simulation's
        # sharing rules may no more ask the rules than its search may.
        (
            "simulation/sharing.py",
            "from gpuaudit.rules import catalogue",
            "The pipeline runs one way",
            "gpuaudit.simulation.sharing -> gpuaudit.rules",
        ),
        # The common helpers are the lowest layer: every layer may use them, they use none.
        (
            "common/files.py",
            "from gpuaudit import inventory",
            "The pipeline runs one way",
            "gpuaudit.common.files -> gpuaudit.inventory",
        ),
        # Within the job: the history records scans and never starts one.
        (
            "jobs/history/store.py",
            "from gpuaudit.jobs import scan",
            "Within a job",
            "gpuaudit.jobs.history.store -> gpuaudit.jobs.scan",
        ),
        ("model/facts.py", "import pyVmomi", "speak pyVmomi", "gpuaudit.model.facts -> pyVmomi"),
        ("report/html.py", "import click", "speaks click", "gpuaudit.report.html -> click"),
        ("model/policy.py", "import pydantic", "use pydantic", "gpuaudit.model.policy -> pydantic"),
        # The package gpuaudit.kubernetes is not the Kubernetes client library
        # ``kubernetes``: the contracts tell them apart, and each of its modules keeps
        # its own layer.
        (
            "kubernetes/simulate.py",
            "import kubernetes",
            "speaks the Kubernetes client",
            "gpuaudit.kubernetes.simulate -> kubernetes",
        ),
        (
            "kubernetes/model.py",
            "from gpuaudit.kubernetes import simulate",
            "The pipeline runs one way",
            "gpuaudit.kubernetes.model -> gpuaudit.kubernetes.simulate",
        ),
        # NVIDIA's and VMware's published facts sit below everything but the common
        # helpers: not even the inventory is below them (which reaches
        # gpuaudit.common.files, so both contracts break), and a contract of their own
        # forbids them the helpers too, and the collector, which no layer holds whole.
        (
            "knowledge/catalog.py",
            "from gpuaudit import inventory",
            ("The pipeline runs one way", "published facts import nothing else"),
            "gpuaudit.knowledge.catalog -> gpuaudit.inventory",
        ),
        (
            "knowledge/evc.py",
            "from gpuaudit.common import files",
            "published facts import nothing else",
            "gpuaudit.knowledge.evc -> gpuaudit.common.files",
        ),
        # gpuaudit.vsphere talks to vCenter: the whole package knows nothing of what is
        # done with an inventory, and only the modules that call vCenter or record its
        # answers may speak pyVmomi, not every module of the package.
        (
            "vsphere/anonymize.py",
            "from gpuaudit.model import facts",
            "The collector builds an inventory",
            "gpuaudit.vsphere.anonymize -> gpuaudit.model.facts",
        ),
        (
            "vsphere/credentials.py",
            "import pyVmomi",
            "speak pyVmomi",
            "gpuaudit.vsphere.credentials -> pyVmomi",
        ),
    ],
)
def test_a_contract_breaks_when_a_module_imports_what_it_must_not(
    tmp_path: Path, module: str, statement: str, contracts: str | tuple[str, ...], illegal: str
) -> None:
    shutil.copytree(
        ROOT / "gpuaudit", tmp_path / "gpuaudit", ignore=shutil.ignore_patterns("__pycache__")
    )
    changed = tmp_path / "gpuaudit" / module
    changed.write_text(f"{statement}\n{changed.read_text(encoding='utf-8')}", encoding="utf-8")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    verdicts = [line for line in result.stdout.splitlines() if " KEPT" in line or " BROKEN" in line]
    names = (contracts,) if isinstance(contracts, str) else contracts
    assert [v for v in verdicts if " BROKEN" in v] == [
        v for v in verdicts if any(name in v for name in names)
    ], result.stdout
    assert f"{illegal} (l.1)" in result.stdout, result.stdout
    assert f"{len(names)} broken" in result.stdout
