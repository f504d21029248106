"""gpuaudit.vsphere.collect.licences on LicenseManager answers built in memory, by hand.

The shapes are the vSphere API's: LicenseManagerLicenseInfo (licenseKey, editionKey,
name, properties of KeyAnyValue: "feature" holding a KeyValue, "expirationDate" a
dateTime) and LicenseAssignmentManagerLicenseAssignment (entityId: a host's moref id,
or the vCenter's instance uuid). The evaluation key is five groups of zeros.
"""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from pyVmomi import vim

from gpuaudit.inventory import Gap, Host, Inventory, Licence, Licensing, VCenter
from gpuaudit.vsphere.collect.licences import collect_licences, licence_from
from gpuaudit.vsphere.collect.managers import ManagerProps

ENTERPRISE_KEY = "AAAAA-BBBBB-CCCCC-DDDDD-12345"
VCENTER_KEY = "FFFFF-GGGGG-HHHHH-JJJJJ-67890"
EVALUATION_KEY = "00000-00000-00000-00000-00000"
UUID = "4f1c5e3a-vc"


def _info(key: str, edition: str = "", name: str = "", props: list[Any] | None = None) -> Any:
    # The fields of a LicenseManagerLicenseInfo the collector reads. Plain objects:
    # pyVmomi's own refuse the unset values (a feature without a name) tested here.
    return SimpleNamespace(licenseKey=key, editionKey=edition, name=name, properties=props)


def _prop(key: str, value: Any) -> Any:
    return SimpleNamespace(key=key, value=value)


def _feature(key: str, name: str | None) -> Any:
    return _prop("feature", SimpleNamespace(key=key, value=name))


def _expires(value: Any) -> Any:
    return _prop("expirationDate", value)


def test_a_licence_with_its_features_and_expiry() -> None:
    info = _info(
        ENTERPRISE_KEY,
        "esx.enterprisePlus.cpuPackageCoreLimited",
        "vSphere 8 Enterprise Plus",
        [
            _feature("drs", "vSphere DRS"),
            _feature("vgpu", None),
            _prop("feature", None),
            _expires(dt.datetime(2027, 1, 31, 23, 59, tzinfo=dt.UTC)),
            _prop("ProductName", "VMware ESX Server"),
        ],
    )
    assert licence_from(info) == Licence(
        edition_key="esx.enterprisePlus.cpuPackageCoreLimited",
        name="vSphere 8 Enterprise Plus",
        key_tail="12345",
        expires="2027-01-31",
        evaluation=False,
        features={"drs": "vSphere DRS", "vgpu": ""},
    )


def test_expiry_dates_in_every_form_the_server_may_send() -> None:
    def expires(value: Any) -> str | None:
        return licence_from(_info(ENTERPRISE_KEY, "x", "x", [_expires(value)])).expires

    assert expires(dt.date(2026, 7, 4)) == "2026-07-04"
    assert expires("2026-07-04T00:00:00Z") == "2026-07-04"
    assert expires("2026-07-04") == "2026-07-04"
    assert expires("never") is None
    info = _info(ENTERPRISE_KEY, "x", "x", [_expires(None)])
    assert licence_from(info).expires is None


def test_evaluation_by_edition_or_by_key() -> None:
    assert licence_from(_info(EVALUATION_KEY, "esx.enterprisePlus", "Evaluation")) == Licence(
        edition_key="esx.enterprisePlus", name="Evaluation", key_tail="00000", evaluation=True
    )
    assert licence_from(_info(ENTERPRISE_KEY, "eval", "Evaluation Mode")).evaluation
    assert licence_from(_info("", "")) == Licence()


def test_what_an_assignment_leaves_out_comes_from_the_licence_manager() -> None:
    known = {
        ENTERPRISE_KEY: _info(
            ENTERPRISE_KEY, "esx.vsphere8ent", "Enterprise", [_feature("vmotion", "vMotion")]
        )
    }
    bare = _info(ENTERPRISE_KEY)
    assert licence_from(bare, known) == Licence(
        edition_key="esx.vsphere8ent", key_tail="12345", features={"vmotion": "vMotion"}
    )
    # What the assignment carries wins.
    own = _info(ENTERPRISE_KEY, "esx.own", "Own", [_feature("drs", "DRS")])
    assert licence_from(own, known) == Licence(
        edition_key="esx.own", name="Own", key_tail="12345", features={"drs": "DRS"}
    )
    assert licence_from(_info(VCENTER_KEY), known) == Licence(key_tail="67890")
    # Neither names an edition: none.
    assert licence_from(_info(ENTERPRISE_KEY), {ENTERPRISE_KEY: _info(ENTERPRISE_KEY)}) == (
        Licence(key_tail="12345")
    )
    # A key without groups is its own tail.
    assert licence_from(_info("LOCALKEY", "x")) == Licence(edition_key="x", key_tail="LOCALKEY")


class _Assignments:
    def __init__(self, answer: Any = None, fault: Exception | None = None) -> None:
        self.answer, self.fault = answer, fault

    def QueryAssignedLicenses(self) -> Any:
        if self.fault is not None:
            raise self.fault
        return self.answer


def _assignment(entity: str | None, info: Any) -> Any:
    # The API declares both required; a server that leaves one out is read all the same.
    return SimpleNamespace(entityId=entity, assignedLicense=info)


def _inventory(*morefs: str) -> Inventory:
    inv = Inventory(vcenter=VCenter(instance_uuid=UUID))
    inv.hosts = [Host(name=f"esx-{m}", moref=m) for m in morefs]
    return inv


def _managers(manager: Any = None, licences: list[Any] | None = None) -> ManagerProps:
    props = ManagerProps()
    props.values = {"licenses": licences or [], "licenseAssignmentManager": manager}
    return props


def test_each_assignment_lands_on_its_host_or_the_vcenter() -> None:
    host_info = _info(ENTERPRISE_KEY, "esx.enterprisePlus", "Enterprise Plus")
    vc_info = _info(VCENTER_KEY, "vc.standard", "vCenter Standard")
    manager = _Assignments(
        [
            _assignment("host-2", None),  # nothing assigned
            _assignment("host-1", host_info),
            _assignment(UUID, _info(VCENTER_KEY)),  # its details from the manager's list
            _assignment("host-99", host_info),  # not in the inventory
            _assignment("", host_info),
        ]
    )
    inv = _inventory("host-1", "host-2")
    # An unkeyed licence in the manager's list is left out.
    collect_licences(None, inv, _managers(manager, [_info("", "x"), vc_info]))
    assert inv.licensing == Licensing(
        collected=True,
        vcenter=Licence(edition_key="vc.standard", key_tail="67890"),
    )
    assert [h.licence for h in inv.hosts] == [
        Licence(edition_key="esx.enterprisePlus", name="Enterprise Plus", key_tail="12345"),
        None,
    ]
    assert inv.gaps == []


def test_an_empty_instance_uuid_matches_no_unnamed_assignment() -> None:
    inv = _inventory("host-1")
    inv.vcenter.instance_uuid = ""
    manager = _Assignments([_assignment(None, _info(VCENTER_KEY, "vc.standard"))])
    collect_licences(None, inv, _managers(manager))
    assert inv.licensing == Licensing(collected=True)
    # No assignments, and a manager that lists no licences at all.
    managers = ManagerProps()
    managers.values = {"licenseAssignmentManager": _Assignments(None)}
    collect_licences(None, inv, managers)
    assert inv.licensing == Licensing(collected=True)
    assert inv.hosts[0].licence is None


def test_unreadable_licences_are_a_note_and_gaps() -> None:
    inv = _inventory("host-1")
    failed = ManagerProps()
    failed.error = "NoPermission"
    collect_licences(None, inv, failed)
    assert inv.licensing == Licensing(
        collected=True, note="the licences could not be read (NoPermission)"
    )
    assert inv.gaps == []

    inv = _inventory("host-1")
    withheld = _managers(_Assignments(fault=vim.fault.NoPermission(privilegeId="Global.Licenses")))
    withheld.missing = {"licenses": "NoPermission"}
    collect_licences(None, inv, withheld)
    assert inv.licensing == Licensing(
        collected=True, note="QueryAssignedLicenses failed (NoPermission)"
    )
    assert inv.gaps == [
        Gap("vCenter", "LicenseManager", "licenses", "NoPermission"),
        Gap("vCenter", "LicenseAssignmentManager", "assignedLicense", "NoPermission"),
    ]
    assert inv.hosts[0].licence is None


def test_a_standalone_host_owns_its_licence() -> None:
    inv = _inventory("ha-host")
    own = _info(ENTERPRISE_KEY, "esx.enterprisePlus", "Enterprise Plus")
    collect_licences(None, inv, _managers(None, [own, _info(VCENTER_KEY, "other")]))
    assert inv.hosts[0].licence == Licence(
        edition_key="esx.enterprisePlus", name="Enterprise Plus", key_tail="12345"
    )
    assert inv.licensing == Licensing(collected=True)
    # Without licences, or with more than one host, no assignment manager is a note.
    for inv, known in ((_inventory("ha-host"), []), (_inventory("h1", "h2"), [own])):
        collect_licences(None, inv, _managers(None, known))
        assert inv.licensing == Licensing(collected=True, note="no licence assignment manager")
        assert all(h.licence is None for h in inv.hosts)
