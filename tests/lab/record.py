"""Record the committed cassettes: each scenario served by the lab, scanned through vcrpy.

    python -m tests.lab.record              # every scenario with a cassette
    python -m tests.lab.record scenario-b   # just one

A cassette holds exactly what ``gpuaudit collect`` asks of the server, with the
password, session cookies, user agent, host and port scrubbed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from gpuaudit.inventory import Inventory
from gpuaudit.vsphere import cassette, obtain
from gpuaudit.vsphere.credentials import Credentials
from tests.lab.lab import Lab

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
CASSETTES = ROOT / "cassettes"
# Scenarios with a committed cassette; each must have one
# (tests/vsphere/test_recorded_cassettes.py).
RECORDED = (
    "scenario-a",
    "scenario-b",
    "scenario-c",
    "broken",
    "hostile",
    "demo",
    "telemetry",
    "esxi",
    "hamemory",
    "vmotion",
    "licensing",
    "hahealth",
    "corrections",
    "devices",
    "drift",
    "stuntime",
    "boards",
    "assignment",
    "mig",
    "sharing",
    "drsrules",
    "failclosed-capacity",
    "failclosed-rules",
    "failclosed-vmotion",
    "vcenter-answers",
    "failclosed-gputype",
    "failclosed-nvlink",
    "failclosed-manager",
    "real-shapes",
    "maintenance",
    "rolling",
)

# Values a server chooses afresh in every session: they differ between two
# recordings of the same estate and say nothing about it.
_VOLATILE = (
    (re.compile(r"<(loginTime|lastActiveTime)>[^<]*</\1>"), r"<\1>T</\1>"),
    (re.compile(r"session\[[^\]]*\][0-9a-fA-F-]+"), "session[]VIEW"),
    # The server's clock, and the telemetry window and sample times that follow from it.
    (re.compile(r"(<CurrentTimeResponse[^>]*><returnval>)[^<]*"), r"\1T"),
    (re.compile(r"<((?:\w+:)?(?:startTime|endTime))\b([^>]*)>[^<]*</\1>"), r"<\1\2>T</\1>"),
    (re.compile(r"(<sampleInfoCSV>)[^<]*"), r"\1T"),
)


def record(scenario: str | Path, out: Path) -> Inventory:
    """Serve ``scenario`` with the lab and record one collection into ``out``."""
    with Lab(scenario) as lab:
        creds = Credentials(server=lab.url, user=lab.user, password=lab.password)
        return obtain.obtain_inventory(obtain.Live(credentials=creds, record=out))


def normalised(path: Path) -> list[dict[str, Any]]:
    """A cassette's interactions with the session-chosen values masked, for comparison."""
    result = []
    for item in cassette.interactions(path):
        request, response = item["request"], item["response"]
        body = response.get("body", {}).get("string", "")
        if isinstance(body, bytes):
            body = body.decode("utf-8", "replace")
        for pattern, replacement in _VOLATILE:
            body = pattern.sub(replacement, body)
        call = cassette.soap_call(request.get("body"))
        this = _VOLATILE[1][0].sub("session[]VIEW", call[1])
        args = call[2]
        for pattern, replacement in _VOLATILE[1:]:
            args = pattern.sub(replacement, args)
        result.append(
            {
                "method": request["method"],
                "uri": request["uri"],
                "call": (call[0], this, args),
                "status": response["status"]["code"],
                "body": body,
            }
        )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(RECORDED), help="scenario names")
    args = parser.parse_args(argv)
    for name in args.names:
        out = CASSETTES / f"{name}.yaml"
        inventory = record(SCENARIOS / f"{name}.yaml", out)
        print(
            f"{out.relative_to(ROOT)}: {len(cassette.interactions(out))} requests, "
            f"{len(inventory.hosts)} hosts, {len(inventory.vms)} VMs"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
