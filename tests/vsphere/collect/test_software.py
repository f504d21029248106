"""gpuaudit.vsphere.collect.software on inventories and answers built by hand.

HostImageConfigManager.fetchSoftwarePackages (required privilege Host.Config.Image)
returns the host's VIBs as vim.host.SoftwarePackage (name, version, vendor, ...). NVIDIA's
vGPU manager VIB is NVD-VMware_ESXi_<release>_Driver (vGPU packages for vSphere 7.0 and
8.0), NVD-AIE_ESXi_<release>_Driver (NVIDIA AI Enterprise) or, before them,
NVIDIA-VMware_ESXi_<release>_Host_Driver; its version is the driver version and an OEM
suffix (550.54.16-1OEM.800.1.0.20613240). The GPU management daemon's VIB is
nvdgpumgmtdaemon.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pyVmomi import vim, vmodl

from gpuaudit.common.progress import Step
from gpuaudit.inventory import Gap, GpuAttachment, Host, Inventory, VgpuProfile, Vm
from gpuaudit.vsphere.collect.software import (
    collect_software,
    driver_version,
    is_manager_vib,
    manager_version,
    software_hosts,
)

CALL = "vGPU manager version (HostImageConfigManager.fetchSoftwarePackages)"
PRIVILEGE = "Host.Config.Image"
READ_ONLY = "needs the Host.Config.Image privilege, which the Read-only role lacks"
BASE = [
    vim.host.SoftwarePackage(name="esx-base", version="8.0.3-0.0.24022510", vendor="VMware"),
    vim.host.SoftwarePackage(name="vsan", version="8.0.3-0.0.24022510", vendor="VMware"),
]
DAEMON = vim.host.SoftwarePackage(
    name="nvdgpumgmtdaemon", version="550.54.16-1OEM.700.1.0.15843807", vendor="NVD"
)


def _vib(
    name: str = "NVD-VMware_ESXi_8.0.0_Driver", version: str = "550.54.16-1OEM.800.1.0.20613240"
) -> Any:
    return vim.host.SoftwarePackage(name=name, version=version, vendor="NVD")


def _host(name: str, profiles: bool = True, connection: str = "connected") -> Host:
    return Host(
        name=name,
        moref=f"host-{name}",
        connection_state=connection,
        vgpu_profiles=[VgpuProfile(name="grid_l4-8q")] if profiles else [],
    )


class _Manager:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls = 0

    def FetchSoftwarePackages(self) -> Any:
        self.calls += 1
        if isinstance(answer := self.answer, BaseException):
            raise answer
        return answer


class _Content:
    """A property collector that gives each host the manager of ``managers`` (None: the
    path comes back in missingSet as ``withheld``; a host left out: not returned)."""

    def __init__(self, managers: dict[str, Any], withheld: str = "NoPermission") -> None:
        self.managers = managers
        self.withheld = withheld
        self.asked: list[tuple[list[str], list[str]]] = []
        self.propertyCollector = self

    _stub = None

    def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
        spec = specSet[0]
        keys = [o.obj._moId for o in spec.objectSet]
        self.asked.append((keys, list(spec.propSet[0].pathSet)))
        objects = []
        for key in keys:
            if key not in self.managers:
                continue
            manager = self.managers[key]
            path = "configManager.imageConfigManager"
            if manager is None:
                missing = [SimpleNamespace(path=path, fault=_fault(self.withheld))]
                objects.append(
                    SimpleNamespace(obj=vim.HostSystem(key), propSet=[], missingSet=missing)
                )
            else:
                prop = SimpleNamespace(name=path, val=manager)
                objects.append(
                    SimpleNamespace(obj=vim.HostSystem(key), propSet=[prop], missingSet=[])
                )
        return SimpleNamespace(objects=objects, token=None)


def _fault(name: str) -> Any:
    return (getattr(vim.fault, name, None) or getattr(vmodl.fault, name))()


def _inventory(*hosts: Host, vms: tuple[Vm, ...] = ()) -> Inventory:
    return Inventory(hosts=list(hosts), vms=list(vms))


def _gap(host: str, reason: str, privilege: str = "") -> Gap:
    return Gap(host, "HostSystem", CALL, reason, moref=f"host-{host}", privilege=privilege)


# -- which hosts are asked ------------------------------------------------------------------


def test_the_hosts_asked_offer_profiles_or_run_a_vgpu_vm_and_are_connected() -> None:
    offers = _host("b-offers")
    runs = _host("a-runs", profiles=False)
    idle = _host("c-idle", profiles=False)
    passthrough = _host("d-passthrough", profiles=False)
    down = _host("e-down", connection="disconnected")
    vms = (
        Vm(
            name="vdi",
            moref="vm-1",
            host="a-runs",
            gpus=[GpuAttachment(kind="vgpu", profile="grid_l4-8q")],
        ),
        Vm(name="pt", moref="vm-2", host="d-passthrough", gpus=[GpuAttachment(kind="passthrough")]),
        Vm(
            name="nowhere",
            moref="vm-3",
            host=None,
            gpus=[GpuAttachment(kind="vgpu", profile="grid_l4-8q")],
        ),
    )
    inv = _inventory(offers, runs, idle, passthrough, down, vms=vms)
    assert [h.name for h in software_hosts(inv)] == ["a-runs", "b-offers"]


def test_no_vgpu_host_asks_nothing() -> None:
    content = _Content({})
    inv = _inventory(_host("esx01", profiles=False))
    said: list[Any] = []
    collect_software(content, inv, said.append)
    assert content.asked == [] and said == [] and inv.gaps == []


# -- the versions read ----------------------------------------------------------------------


def test_each_host_gets_its_version_one_call_each_with_progress() -> None:
    first = _Manager([*BASE, _vib(), DAEMON])
    second = _Manager([_vib("NVD-AIE_ESXi_8.0.0_Driver", "580.82.07-1OEM.800.1.0.20613240")])
    content = _Content({"host-esx01": first, "host-esx02": second})
    inv = _inventory(_host("esx02"), _host("esx01"))
    said: list[Any] = []
    collect_software(content, inv, said.append)
    assert content.asked == [(["host-esx01", "host-esx02"], ["configManager.imageConfigManager"])]
    assert (first.calls, second.calls) == (1, 1)
    assert {h.name: h.vgpu_manager_version for h in inv.hosts} == {
        "esx01": "550.54.16",
        "esx02": "580.82.07",
    }
    assert inv.gaps == []
    phase = "reading the vGPU managers' versions"
    assert said == [
        Step(phase, 0, 2, "hosts"),
        Step(phase, 1, 2, "hosts"),
        Step(phase, 2, 2, "hosts"),
    ]


def test_without_progress_nothing_is_said() -> None:
    content = _Content({"host-esx01": _Manager([_vib()])})
    inv = _inventory(_host("esx01"))
    collect_software(content, inv)
    assert inv.hosts[0].vgpu_manager_version == "550.54.16"


# -- what is not known is a gap, never a guess ----------------------------------------------


def test_no_permission_is_the_gap_that_names_the_privilege() -> None:
    content = _Content(
        {
            "host-esx01": _Manager(vim.fault.NoPermission(privilegeId=PRIVILEGE)),
            "host-esx02": _Manager([_vib()]),
        }
    )
    inv = _inventory(_host("esx01"), _host("esx02"))
    collect_software(content, inv)
    assert inv.gaps == [_gap("esx01", READ_ONLY, PRIVILEGE)]
    assert inv.gaps[0].uncertain is False
    # The host after the refused one is still asked.
    assert [h.vgpu_manager_version for h in inv.hosts] == [None, "550.54.16"]


@pytest.mark.parametrize(
    ("fault", "name"),
    [
        (vmodl.fault.NotSupported(), "NotSupported"),
        (vim.fault.HostConfigFault(), "HostConfigFault"),
        (vmodl.fault.ManagedObjectNotFound(), "ManagedObjectNotFound"),
    ],
)
def test_any_other_fault_is_a_gap_naming_it(fault: Any, name: str) -> None:
    content = _Content({"host-esx01": _Manager(fault)})
    inv = _inventory(_host("esx01"))
    collect_software(content, inv)
    assert inv.gaps == [_gap("esx01", name)]
    assert inv.gaps[0].uncertain is True
    assert inv.hosts[0].vgpu_manager_version is None


def test_a_manager_not_read_is_a_gap_with_the_reason() -> None:
    content = _Content({"host-esx01": None, "host-esx02": _Manager([_vib()])})
    inv = _inventory(_host("esx01"), _host("esx02"), _host("esx03"))
    collect_software(content, inv)
    assert inv.gaps == [
        _gap("esx01", "configManager.imageConfigManager not read: NoPermission"),
        _gap("esx03", "configManager.imageConfigManager not read: none reported"),
    ]
    assert [h.vgpu_manager_version for h in inv.hosts] == [None, "550.54.16", None]


def test_packages_without_a_manager_vib_say_so() -> None:
    content = _Content({"host-esx01": _Manager([*BASE, DAEMON])})
    inv = _inventory(_host("esx01"))
    collect_software(content, inv)
    reason = "none of the host's 3 software packages is an NVIDIA vGPU manager VIB"
    assert inv.gaps == [_gap("esx01", reason)]
    assert inv.hosts[0].vgpu_manager_version is None


def test_no_packages_at_all() -> None:
    content = _Content({"host-esx01": _Manager(None)})
    inv = _inventory(_host("esx01"))
    collect_software(content, inv)
    reason = "none of the host's 0 software packages is an NVIDIA vGPU manager VIB"
    assert inv.gaps == [_gap("esx01", reason)]


def test_several_manager_vibs_are_not_proven_and_named() -> None:
    packages = [
        *BASE,
        _vib(),
        _vib("NVIDIA-VMware_ESXi_7.0_Host_Driver", "470.63-1OEM.700.0.0.15525992"),
    ]
    assert manager_version(packages) == (
        None,
        "2 NVIDIA vGPU manager VIBs: NVD-VMware_ESXi_8.0.0_Driver "
        "550.54.16-1OEM.800.1.0.20613240, NVIDIA-VMware_ESXi_7.0_Host_Driver "
        "470.63-1OEM.700.0.0.15525992",
    )


def test_a_version_that_is_no_driver_version() -> None:
    assert manager_version([_vib(version="R550-1OEM.800")]) == (
        None,
        "the version of NVD-VMware_ESXi_8.0.0_Driver ('R550-1OEM.800') is not a driver version",
    )
    assert manager_version([_vib(version="")]) == (
        None,
        "the version of NVD-VMware_ESXi_8.0.0_Driver ('') is not a driver version",
    )


def test_a_package_without_a_name_is_none() -> None:
    assert manager_version([SimpleNamespace(name=None, version="550.54.16-1")]) == (
        None,
        "none of the host's 1 software packages is an NVIDIA vGPU manager VIB",
    )


# -- names and versions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "NVD-VMware_ESXi_8.0.0_Driver",
        "NVD-VMware_ESXi_7.0.2_Driver",
        "nvd-vmware_esxi_8.0.0_driver",
        "NVD-AIE_ESXi_8.0.0_Driver",
        "NVIDIA-VMware_ESXi_6.7_Host_Driver",
    ],
)
def test_nvidias_manager_vibs(name: str) -> None:
    assert is_manager_vib(name)


@pytest.mark.parametrize(
    "name",
    [
        "nvdgpumgmtdaemon",
        "NVD-VGPU-800",
        "esx-base",
        "NVD-VMware_ESXi_8.0.0_Driver-extra",
        "x-NVD-VMware_ESXi_8.0.0_Driver",
        "NVD-VMware_ESXi__Driver",
        "NVIDIA-VMware_ESXi_6.7_Host_Driver2",
        "",
    ],
)
def test_other_vibs_are_not_the_manager(name: str) -> None:
    assert not is_manager_vib(name)


@pytest.mark.parametrize(
    ("vib_version", "driver"),
    [
        ("550.54.16-1OEM.800.1.0.20613240", "550.54.16"),
        ("535.161.05-1OEM.702.0.0.17630552", "535.161.05"),
        ("470.63-1OEM.700.0.0.15525992", "470.63"),
        ("580.82.07", "580.82.07"),
        # The upstream part ends at the first hyphen, whatever follows.
        ("550.54.16-1OEM.800-2", "550.54.16"),
        ("550", None),
        ("550.-1OEM", None),
        ("v550.54.16-1OEM", None),
        ("550.54.16a-1OEM", None),
        ("", None),
    ],
)
def test_driver_version(vib_version: str, driver: str | None) -> None:
    assert driver_version(vib_version) == driver
