"""The large estate of the scale tests, checked offline: 64 clusters of 16 hosts, 10,240 VMs.

Built from tests/lab/generate.py without serving it through the lab: the scenario's
expected inventory is what the collector reads from it, and checking that is fast.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache

from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
from tests.lab import generate
from tests.lab.expected import expected_inventory
from tests.lab.scenario import normalise

CLUSTERS, HOSTS_PER_CLUSTER, GPUS_PER_HOST, VMS = 64, 16, 4, 10_240
SERVER = "vcenter-large.example.com"
SCANNED_AT = "2026-11-30T08:49:12Z"


@lru_cache(maxsize=1)
def large_estate_result() -> AuditResult:
    """The AuditResult of the large estate; built once per test session."""
    scenario = normalise(generate.generate(CLUSTERS, HOSTS_PER_CLUSTER, GPUS_PER_HOST, VMS))
    inventory = expected_inventory(scenario)
    inventory.source = SERVER  # what a scan of that server would label it
    inventory.collected_at = SCANNED_AT
    return run_checks(inventory, None, date(2027, 1, 15))
