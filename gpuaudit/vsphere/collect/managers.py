"""The service managers' properties that telemetry and licensing need, in one call.

PerformanceManager's counter catalogue and historical intervals, and
LicenseManager's licences and assignment manager, come back in a single
RetrievePropertiesEx: reading them as pyVmomi attributes would cost one
RetrieveProperties call each.
"""

from __future__ import annotations

from typing import Any

from pyVmomi import vim, vmodl

PERF_PATHS = ("perfCounter", "historicalInterval")
LICENCE_PATHS = ("licenses", "licenseAssignmentManager")


class ManagerProps:
    """Property values by path, and the paths the server withheld (path -> fault)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.missing: dict[str, str] = {}
        self.error: str = ""  # the whole retrieval failed

    def get(self, path: str, default: Any = None) -> Any:
        value = self.values.get(path)
        return default if value is None else value


def read_managers(content: Any) -> tuple[ManagerProps, ManagerProps]:
    """(PerformanceManager, LicenseManager) properties; either may be empty."""
    perf, licences = ManagerProps(), ManagerProps()
    pc = vmodl.query.PropertyCollector
    objects, props = [], []
    if content.perfManager is not None:
        objects.append(pc.ObjectSpec(obj=content.perfManager, skip=False))
        props.append(pc.PropertySpec(type=vim.PerformanceManager, pathSet=list(PERF_PATHS)))
    if content.licenseManager is not None:
        objects.append(pc.ObjectSpec(obj=content.licenseManager, skip=False))
        props.append(pc.PropertySpec(type=vim.LicenseManager, pathSet=list(LICENCE_PATHS)))
    if not objects:
        return perf, licences
    spec = pc.FilterSpec(objectSet=objects, propSet=props)
    try:
        result = content.propertyCollector.RetrievePropertiesEx(
            specSet=[spec], options=pc.RetrieveOptions()
        )
    except vmodl.MethodFault as exc:
        perf.error = licences.error = _fault(exc)
        return perf, licences
    for obj in getattr(result, "objects", None) or []:
        target = perf if isinstance(obj.obj, vim.PerformanceManager) else licences
        for prop in obj.propSet or []:
            target.values[prop.name] = prop.val
        for missing in obj.missingSet or []:
            target.missing[missing.path] = _fault(missing.fault)
    return perf, licences


def _fault(fault: Any) -> str:
    return fault.__class__.__name__.split(".")[-1] if fault is not None else "?"
