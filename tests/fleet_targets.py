"""Fleet summary input for the fleet report tests: one target's record as
`gpuaudit scan --targets` writes it (gpuaudit.fleet.fleet_json), written out by hand."""

from __future__ import annotations

from typing import Any


def fleet_target(name: str, verdict: str, **fields: Any) -> dict[str, Any]:
    """A target named ``name`` at vc-<name>.example that found, failed and wrote nothing,
    but for ``fields``."""
    return {
        "name": name,
        "server": f"vc-{name}.example",
        "verdict": verdict,
        "exit_code": 0,
        "error": None,
        "failed_by_severity": {},
        "passed": 0,
        "waived": 0,
        "hosts": 0,
        "gpus": 0,
        "gpu_vms": 0,
        "designs": {},
        "tolerates": {},
        "reports": [],
    } | fields
