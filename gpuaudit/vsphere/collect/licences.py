"""vSphere licences: the edition, expiry and features assigned to the vCenter and each host.

One ``QueryAssignedLicenses`` call without an entity returns every assignment
(the vCenter's and each host's, keyed by the host's moref id). The licence an
assignment carries may omit its properties; they are then taken from
``LicenseManager.licenses``, the entry with the same key. Only the last group of
a licence key is kept.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyVmomi import vmodl

from gpuaudit.inventory import Gap, Inventory, Licence, Licensing
from gpuaudit.vsphere.collect.managers import ManagerProps

EVALUATION_KEY = "00000-00000-00000-00000-00000"


def licence_from(info: Any, known: dict[str, Any] | None = None) -> Licence:
    """A LicenseManagerLicenseInfo as a Licence; properties missing from it come from
    the LicenseManager's entry for the same key."""
    key = str(getattr(info, "licenseKey", "") or "")
    props = list(getattr(info, "properties", None) or [])
    if not props and known and key in known:
        props = list(getattr(known[key], "properties", None) or [])
    edition = str(getattr(info, "editionKey", "") or "")
    if not edition and known and key in known:
        edition = str(getattr(known[key], "editionKey", "") or "")
    licence = Licence(
        edition_key=edition,
        name=str(getattr(info, "name", "") or ""),
        key_tail=key.rsplit("-", 1)[-1] if key else "",
        evaluation=edition == "eval" or key == EVALUATION_KEY,
    )
    for prop in props:
        if prop.key == "feature" and prop.value is not None:
            licence.features[str(prop.value.key)] = str(prop.value.value or "")
        elif prop.key == "expirationDate" and prop.value is not None:
            licence.expires = _day(prop.value)
    return licence


def collect_licences(content: Any, inv: Inventory, managers: ManagerProps) -> None:
    """Fill inv.licensing and each host's licence."""
    lic = inv.licensing = Licensing(collected=True)
    if managers.error:
        lic.note = f"the licences could not be read ({managers.error})"
        return
    for path, fault in managers.missing.items():
        inv.gaps.append(Gap("vCenter", "LicenseManager", path, fault))
    known = {str(i.licenseKey): i for i in managers.get("licenses", []) if i.licenseKey}
    hosts = {h.moref: h for h in inv.hosts}
    assignment_manager = managers.get("licenseAssignmentManager")
    if assignment_manager is None:
        # A standalone ESXi host has no assignment manager: its licences are its own.
        if len(inv.hosts) == 1 and known:
            inv.hosts[0].licence = licence_from(next(iter(known.values())))
        else:
            lic.note = "no licence assignment manager"
        return
    try:
        assignments = assignment_manager.QueryAssignedLicenses() or []
    except vmodl.MethodFault as exc:
        fault = type(exc).__name__.split(".")[-1]
        lic.note = f"QueryAssignedLicenses failed ({fault})"
        inv.gaps.append(Gap("vCenter", "LicenseAssignmentManager", "assignedLicense", fault))
        return
    uuid = inv.vcenter.instance_uuid
    for assignment in assignments:
        entity = str(assignment.entityId or "")
        if assignment.assignedLicense is None:
            continue
        licence = licence_from(assignment.assignedLicense, known)
        if entity in hosts:
            hosts[entity].licence = licence
        elif entity and entity == uuid:
            lic.vcenter = licence


def _day(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    try:
        return dt.date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        return None
