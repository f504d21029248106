"""Operations readiness: GPU telemetry and vSphere licences, read after the inventory."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpuaudit.common.progress import Progress
from gpuaudit.inventory import Inventory
from gpuaudit.vsphere.collect.licences import collect_licences
from gpuaudit.vsphere.collect.managers import read_managers
from gpuaudit.vsphere.collect.telemetry import DEFAULT_WINDOW, collect_telemetry


def collect_operations(
    si: Any,
    content: Any,
    inv: Inventory,
    window: dt.timedelta | None = None,
    progress: Progress | None = None,
) -> None:
    """GPU counters over ``window`` (ending at the server's clock) and licence assignments."""
    now = si.CurrentTime()
    perf, licences = read_managers(content)
    collect_telemetry(si, content, inv, perf, now, window or DEFAULT_WINDOW, progress)
    collect_licences(content, inv, licences)
