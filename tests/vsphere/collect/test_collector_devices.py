"""The second retrieval: device lists only for the VMs that may hold a GPU.

Unit tests judge plain first-pass properties, one rule at a time; a fake
property collector shows a VM deleted between the two reads being stepped round;
the live test serves GPUs that graphicsInfo does not list, so only the memory
reservation can point the collector at the VMs that hold them.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyVmomi import vim, vmodl

from gpuaudit.vsphere import connect
from gpuaudit.vsphere.collect import _read_devices, collect
from gpuaudit.vsphere.collect.paths import device_paths
from gpuaudit.vsphere.collect.retrieve import ObjectProps, retrieve_objects
from gpuaudit.vsphere.collect.vms import device_candidates, needs_devices

HOST = vim.HostSystem("host-1")


def _vm(moref: str = "vm-1", **props: Any) -> ObjectProps:
    values = {
        "name": moref,
        "runtime.powerState": "poweredOn",
        "runtime.host": HOST,
        "config.template": False,
        "config.hardware.memoryMB": 8192,
        "config.memoryReservationLockedToMax": False,
        "resourceConfig.memoryAllocation.reservation": 0,
    }
    values.update({k.replace("__", "."): v for k, v in props.items()})
    return ObjectProps(moref=moref, kind="VirtualMachine", props=values)


def _host(
    moref: str = "host-1", vms: tuple[str, ...] = (), state: str = "connected"
) -> ObjectProps:
    info = vim.host.GraphicsInfo(
        pciId="0000:3b:00.0", graphicsType="sharedDirect", vm=[vim.VirtualMachine(v) for v in vms]
    )
    props = {"name": moref, "runtime.connectionState": state, "config.graphicsInfo": [info]}
    return ObjectProps(moref=moref, kind="HostSystem", props=props)


def test_a_powered_on_vm_without_reservation_or_graphics_is_not_read() -> None:
    assert not needs_devices(_vm(), set(), set())


@pytest.mark.parametrize(
    ("vm", "why"),
    [
        (_vm(runtime__powerState="poweredOff"), "powered off: it may hold anything"),
        (_vm(runtime__powerState="suspended"), "suspended"),
        (_vm(resourceConfig__memoryAllocation__reservation=8192), "all memory reserved"),
        (_vm(config__memoryReservationLockedToMax=True), "reservation locked to max"),
        (_vm(runtime__host=None), "no host"),
        (_vm(resourceConfig__memoryAllocation__reservation=None), "reservation unread"),
    ],
)
def test_a_vm_that_may_hold_a_gpu_is_read(vm: ObjectProps, why: str) -> None:
    assert needs_devices(vm, set(), set()), why


def test_a_withheld_property_means_read_it() -> None:
    vm = _vm()
    vm.missing["resourceConfig.memoryAllocation.reservation"] = "NoPermission"
    assert needs_devices(vm, set(), set())


def test_templates_are_never_read() -> None:
    assert not needs_devices(
        _vm(config__template=True, runtime__powerState="poweredOff"), set(), set()
    )


def test_graphics_users_and_unread_hosts_are_read() -> None:
    objects = {
        "host-1": _host("host-1", vms=("vm-vgpu",)),
        "host-2": _host("host-2", state="notResponding"),
        "vm-vgpu": _vm("vm-vgpu"),  # unreserved, but a graphics device lists it
        "vm-plain": _vm("vm-plain"),
        "vm-on-lost-host": _vm("vm-on-lost-host", runtime__host=vim.HostSystem("host-2")),
    }
    assert device_candidates(objects) == ["vm-vgpu", "vm-on-lost-host"]
    objects["host-1"].missing["config.graphicsInfo"] = "NoPermission"
    assert device_candidates(objects) == ["vm-vgpu", "vm-plain", "vm-on-lost-host"]


class _Collector:
    """A property collector whose VM ``gone`` was deleted after the first read."""

    def __init__(self, gone: str = "") -> None:
        self.gone = gone
        self.asked: list[list[str]] = []
        self.paths: list[list[str]] = []
        self._stub = None

    def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
        keys = [spec.obj._moId for spec in specSet[0].objectSet]
        self.asked.append(keys)
        self.paths.append(list(specSet[0].propSet[0].pathSet))
        if self.gone in keys:
            raise vmodl.fault.ManagedObjectNotFound(obj=vim.VirtualMachine(self.gone))
        pc = vmodl.query.PropertyCollector
        objects = [
            pc.ObjectContent(
                obj=vim.VirtualMachine(k),
                propSet=[vmodl.DynamicProperty(name="config.hardware.device", val=[])],
            )
            for k in keys
        ]
        return pc.RetrieveResult(objects=objects)


def test_a_vm_deleted_between_the_reads_is_stepped_round() -> None:
    collector = _Collector(gone="vm-2")
    content = type("Content", (), {"propertyCollector": collector})()
    found = retrieve_objects(
        content, vim.VirtualMachine, ["vm-1", "vm-2", "vm-3"], ["config.hardware.device"]
    )
    assert sorted(found) == ["vm-1", "vm-3"]
    assert collector.asked == [["vm-1", "vm-2", "vm-3"], ["vm-1", "vm-3"]]
    # In a collection, the deleted VM keeps what the first read found, and a gap.
    objects = {k: _vm(k, runtime__powerState="poweredOff") for k in ("vm-1", "vm-2", "vm-3")}
    content.propertyCollector = _Collector(gone="vm-2")
    _read_devices(content, objects, lambda _message: None)
    assert objects["vm-2"].missing == {"config.hardware.device": "ManagedObjectNotFound"}
    assert objects["vm-2"].name == "vm-2"
    assert objects["vm-1"].props["config.hardware.device"] == [] and not objects["vm-1"].missing


def test_vendor_device_groups_are_read_with_the_devices_from_api_8_0_0_1() -> None:
    # VirtualMachineConfigInfo.deviceGroups is "Since vSphere API Release 8.0.0.1"; a
    # server negotiating an older API does not know the path.
    base = ("config.hardware.device", "config.extraConfig")
    assert device_paths("vim.version.v8_0_0_0") == base
    assert device_paths("vim.version.v7_0_3_0") == base
    for api in ("vim.version.v8_0_0_1", "vim.version.v8_0_3_0", "vim.version.v9_0_0_0"):
        assert device_paths(api) == (*base, "config.deviceGroups")
    collector = _Collector()
    content = type("Content", (), {"propertyCollector": collector})()
    objects = {"vm-1": _vm("vm-1", runtime__powerState="poweredOff")}
    _read_devices(content, objects, lambda _message: None, device_paths("vim.version.v8_0_3_0"))
    assert collector.paths == [
        ["config.deviceGroups", "config.extraConfig", "config.hardware.device"]
    ]


@pytest.mark.live
def test_passthrough_vms_are_found_by_their_reservation(lab_factory: Any) -> None:
    # graphics_type none: no graphicsInfo entry lists these GPUs or their VMs, as on
    # a host whose GPUs are all in passthrough. vSphere ran the GPU VMs only because
    # all their memory is reserved; that is what the collector goes by.
    gpu = {"device_id": 0x27B8, "passthrough": {"enabled": True}, "graphics_type": "none"}
    scenario = {
        "datacenters": [
            {
                "name": "dc",
                "clusters": [
                    {
                        "name": "pt",
                        "hosts": [
                            {
                                "name": "esx-pt.lab.local",
                                "gpus": [
                                    {**gpu, "pci_id": "0000:3b:00.0"},
                                    {**gpu, "pci_id": "0000:5e:00.0"},
                                ],
                            }
                        ],
                    }
                ],
                "datastores": [{"name": "ds", "mounts": [{"host": "esx-pt.lab.local"}]}],
                "vms": [
                    {
                        "name": "vm-fixed",
                        "host": "esx-pt.lab.local",
                        "memory_locked_to_max": True,
                        "gpus": [{"passthrough": "0000:3b:00.0"}],
                    },
                    {
                        "name": "vm-reserved",
                        "host": "esx-pt.lab.local",
                        "memory_mb": 4096,
                        "memory_reservation_mb": 4096,
                        "gpus": [{"passthrough": "0000:5e:00.0"}],
                    },
                    {"name": "vm-plain", "host": "esx-pt.lab.local"},
                    {"name": "vm-off", "host": "esx-pt.lab.local", "power": "poweredOff"},
                ],
            }
        ]
    }
    lab = lab_factory(scenario)
    with connect.session(connect.parse_server(lab.url), lab.user, lab.password) as si:
        inventory = collect(si, source=lab.url)
    (host,) = inventory.hosts
    assert len(host.gpus) == 2
    gpus = {vm.name: [g.pci_id for g in vm.gpus] for vm in inventory.vms}
    assert gpus == {
        "vm-fixed": ["0000:3b:00.0"],
        "vm-reserved": ["0000:5e:00.0"],
        "vm-plain": [],
        "vm-off": [],
    }
