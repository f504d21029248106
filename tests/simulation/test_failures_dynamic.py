"""Dynamic DirectPath hardware labels and allowed sub ids in the host-failure simulation.

Unit tests on hand-built clusters of passthrough L4s; the replay test reads the
`labels` cluster of tests/scenarios/drsrules.yaml and takes its expectations from
the labels and sub ids written there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpuaudit.inventory import Gpu, Inventory, Vm
from gpuaudit.results import HostFailure
from gpuaudit.simulation.failures import simulate_cluster
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.support.builders import Estate

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "drsrules.yaml"
L4 = 0x27B8
NVIDIA = 0x10DE


def passthrough_hosts(labels: list[str], sub_devices: list[int]) -> tuple[Estate, list[Gpu]]:
    """Cluster d with hosts d1.. (one passthrough L4 each, with the given hardware label
    and sub device id) and dv1 on d1, holding d1's L4 by Dynamic DirectPath."""
    e = Estate()
    e.cluster("d")
    hosts = [e.host(f"d{i + 1}", "d", profiles=()) for i in range(len(labels))]
    gpus = []
    for host, label, sub in zip(hosts, labels, sub_devices, strict=True):
        g = e.gpu(host, mode="passthrough")
        g.hardware_label, g.sub_vendor_id, g.sub_device_id = label, NVIDIA, sub
        gpus.append(g)
    e.datastore("ds", hosts)
    e.vm("dv1", hosts[0], ["ds"], dynamic=gpus[0])
    return e, gpus


def the_vm(e: Estate) -> Vm:
    return next(vm for vm in e.inv.vms if vm.name == "dv1")


def failure_of(inv: Inventory, host: str) -> HostFailure:
    return next(f for f in simulate_cluster(inv, "d").failures if f.host == host)


def target(failure: HostFailure) -> str | None:
    return next((p.to_host for p in failure.placed if p.vm == "dv1"), None)


def test_a_labelled_device_only_takes_a_gpu_with_that_label() -> None:
    e, _ = passthrough_hosts(["train", "infer", "train"], [0x16CA] * 3)
    the_vm(e).gpus[0].custom_label = "train"
    assert target(failure_of(e.inv, "d1")) == "d3"


def test_no_gpu_with_the_label_leaves_the_vm_down() -> None:
    e, _ = passthrough_hosts(["train", "infer", ""], [0x16CA] * 3)
    the_vm(e).gpus[0].custom_label = "train"
    failure = failure_of(e.inv, "d1")
    assert target(failure) is None
    (p,) = failure.unplaced
    assert "no passthrough-active GPU labelled 'train'" in (p.reason or "")


def test_a_device_without_label_takes_a_labelled_gpu() -> None:
    e, _ = passthrough_hosts(["", "infer"], [0x16CA] * 2)
    assert target(failure_of(e.inv, "d1")) == "d2"


def test_allowed_sub_ids_must_match_the_gpu() -> None:
    e, _ = passthrough_hosts(["", "", ""], [0x16CA, 0x1612, 0x16CA])
    the_vm(e).gpus[0].allowed_sub_ids = [(NVIDIA, 0x16CA)]
    assert target(failure_of(e.inv, "d1")) == "d3"


def test_an_unset_sub_id_matches_any() -> None:
    e, _ = passthrough_hosts(["", "", ""], [0x16CA, 0x1612, 0x16CA])
    the_vm(e).gpus[0].allowed_sub_ids = [(-1, 0x1612)]
    assert target(failure_of(e.inv, "d1")) == "d2"


def test_no_gpu_with_the_sub_ids_leaves_the_vm_down_and_says_which() -> None:
    e, _ = passthrough_hosts(["", ""], [0x16CA, 0x1612])
    the_vm(e).gpus[0].allowed_sub_ids = [(NVIDIA, 0x16CA)]
    failure = failure_of(e.inv, "d1")
    (p,) = failure.unplaced
    assert "no passthrough-active GPU" in (p.reason or "")


def test_an_entry_without_sub_ids_beside_one_with_them_allows_its_device_on_any() -> None:
    e, _ = passthrough_hosts(["", ""], [0x16CA, 0x1612])
    att = the_vm(e).gpus[0]
    att.allowed = [(NVIDIA, 0x1EB8), (NVIDIA, L4)]  # T4 with sub ids, L4 without
    att.allowed_sub_ids = [(NVIDIA, 0x16CA), None]
    assert target(failure_of(e.inv, "d1")) == "d2"


# --- the labels cluster of the drsrules scenario, replayed ------------------------------


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SCENARIO.read_text())
    return data


def test_replay_reads_labels_and_sub_ids_and_places_by_them() -> None:
    inv = obtain.obtain_inventory(obtain.Replay(CASSETTES / "drsrules.yaml"))
    dc = scenario()["datacenters"][0]
    cluster = next(c for c in dc["clusters"] if c["name"] == "labels")
    for spec in cluster["hosts"]:
        host = inv.host(spec["name"])
        assert host is not None
        (gpu,) = host.gpus
        assert gpu.hardware_label == spec["gpus"][0]["passthrough"]["hardware_label"]
        assert gpu.sub_device_id == spec["gpus"][0]["sub_device_id"]
    vm_spec = next(v for v in dc["vms"] if v["name"] == "label-vm-01")
    wants = vm_spec["gpus"][0]["dynamic"]
    vm = next(v for v in inv.vms if v.name == "label-vm-01")
    assert vm.gpus[0].custom_label == wants["label"]
    allowed = wants["allowed"][0]
    assert vm.gpus[0].allowed_sub_ids == [(allowed["sub_vendor_id"], allowed["sub_device_id"])]
    # The only other host whose L4 has the label and the sub ids the VM asks for.
    fits = [
        h["name"]
        for h in cluster["hosts"][1:]
        if h["gpus"][0]["passthrough"]["hardware_label"] == wants["label"]
        and h["gpus"][0]["sub_device_id"] == allowed["sub_device_id"]
    ]
    sim = simulate_cluster(inv, "labels")
    failure = next(f for f in sim.failures if f.host == vm_spec["host"])
    assert [p.to_host for p in failure.placed if p.vm == "label-vm-01"] == fits


def test_a_label_its_own_gpu_does_not_report_is_not_checked() -> None:
    """Before vSphere 8.0 hosts serve no hardware label: the running VM shows the label
    holds on its GPU, so "" means unknown, not unlabelled."""
    e, _ = passthrough_hosts(["", ""], [0x16CA] * 2)
    the_vm(e).gpus[0].custom_label = "train"
    assert target(failure_of(e.inv, "d1")) == "d2"


def test_the_collector_reads_each_allowed_entrys_sub_ids() -> None:
    from pyVmomi import vim

    from gpuaudit.vsphere.collect.vms import gpu_attachment

    passthrough = vim.vm.device.VirtualPCIPassthrough
    allowed = passthrough.AllowedDevice

    def device(*entries: Any) -> Any:
        backing = passthrough.DynamicBackingInfo(allowedDevice=list(entries), customLabel="a")
        return passthrough(key=1, backing=backing, deviceInfo=vim.Description(label="PCI 0"))

    both = allowed(vendorId=NVIDIA, deviceId=L4, subVendorId=NVIDIA, subDeviceId=0x16CA)
    one = allowed(vendorId=NVIDIA, deviceId=L4, subDeviceId=0x1612)
    plain = allowed(vendorId=NVIDIA, deviceId=L4)
    att = gpu_attachment(device(both, one, plain))
    assert att is not None and att.custom_label == "a"
    assert att.allowed_sub_ids == [(NVIDIA, 0x16CA), (-1, 0x1612), None]
    att = gpu_attachment(device(plain))
    assert att is not None and att.allowed_sub_ids == []
