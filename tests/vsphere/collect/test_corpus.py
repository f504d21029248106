"""The corpus of real shapes: each sample in tests/corpus/ replayed through the collector.

A sample is one shape a public source shows (a host's PCI devices, a VM's vGPU
device, a profile name, a counter list, counter instances), with the source named
beside it and the reading gpuaudit must make of it written out by hand under
``expected``. A sample the parsing does not read correctly yet names the issue item
under ``xfail``: it is strict, so it turns into a pass, and the mark must go, when
the parsing is fixed. tests/corpus/README.md indexes the samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pyVmomi import vim

from gpuaudit.inventory import Gpu
from gpuaudit.knowledge import catalog
from gpuaudit.vsphere.collect.hosts import build_host
from gpuaudit.vsphere.collect.retrieve import ObjectProps
from gpuaudit.vsphere.collect.telemetry import match_instances, resolve_counters
from gpuaudit.vsphere.collect.vms import gpu_attachment

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
SOURCE_KEYS = {"repository", "path", "commit", "licence", "document", "section", "url"}


def samples() -> list[Path]:
    return sorted(CORPUS.glob("*.yaml"))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text("utf-8"))
    return data


def params() -> list[Any]:
    out = []
    for path in samples():
        data = load(path)
        marks = []
        if data.get("xfail"):
            marks.append(pytest.mark.xfail(strict=True, reason=str(data["xfail"])))
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


def _pci_device(d: dict[str, Any]) -> Any:
    return vim.host.PciDevice(
        id=d["id"],
        classId=d["classId"],
        vendorId=d["vendorId"],
        deviceId=d["deviceId"],
        subVendorId=d.get("subVendorId", 0),
        subDeviceId=d.get("subDeviceId", 0),
        vendorName=d.get("vendorName", ""),
        deviceName=d.get("deviceName", ""),
    )


def _graphics(d: dict[str, Any]) -> Any:
    return vim.host.GraphicsInfo(
        pciId=d["pciId"],
        graphicsType=d["graphicsType"],
        deviceName=d.get("deviceName", ""),
        vendorName=d.get("vendorName", ""),
        memorySizeInKB=d.get("memorySizeInKB", 0),
    )


def replay_host(shape: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {"name": "esx-corpus"}
    props["hardware.pciDevice"] = [_pci_device(d) for d in shape.get("hardware.pciDevice", [])]
    props["config.graphicsInfo"] = [_graphics(g) for g in shape.get("config.graphicsInfo", [])]
    if "config.sharedPassthruGpuTypes" in shape:
        props["config.sharedPassthruGpuTypes"] = shape["config.sharedPassthruGpuTypes"] or []
    host = build_host(ObjectProps("host-1", "HostSystem", props), {})
    return {
        "gpus": [
            {
                "pci_id": g.pci_id,
                "model": g.model,
                "known_model": g.known_model,
                "memory_mb": g.memory_mb,
                "sub_ids": [g.sub_vendor_id, g.sub_device_id],
            }
            for g in host.gpus
        ],
        "profiles": [p.name for p in host.vgpu_profiles],
    }


def replay_vm_device(shape: dict[str, Any]) -> dict[str, Any] | None:
    backing = shape["backing"]
    kind = backing.pop("type")
    classes = {
        "VmiopBackingInfo": vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo,
        "DeviceBackingInfo": vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo,
    }
    device = vim.vm.device.VirtualPCIPassthrough(
        key=shape.get("key", 13000),
        backing=classes[kind](**backing),
        deviceInfo=vim.Description(**shape.get("deviceInfo", {"label": "", "summary": ""})),
    )
    attachment = gpu_attachment(device)
    if attachment is None:
        return None
    return {
        "kind": attachment.kind,
        "label": attachment.label,
        "profile": attachment.profile,
        "pci_id": attachment.pci_id,
        "device_id": attachment.device_id,
    }


def replay_profile(shape: dict[str, Any]) -> dict[str, Any] | None:
    info = catalog.parse_profile(shape["name"])
    if info is None:
        return None
    return {
        "gpu": info.gpu,
        "memory_mb": info.memory_mb,
        "series": info.series,
        "mig_slices": info.mig_slices,
    }


def replay_counters(shape: dict[str, Any]) -> dict[str, Any]:
    counters = [
        vim.PerformanceManager.CounterInfo(
            key=c["key"],
            nameInfo=vim.ElementDescription(key=c["name"], label="", summary=""),
            groupInfo=vim.ElementDescription(key=c["group"], label="", summary=""),
            unitInfo=vim.ElementDescription(key=c["unit"], label="", summary=""),
            rollupType=c["rollup"],
            statsType="absolute",
            level=c.get("level", 0),
            perDeviceLevel=c.get("perDeviceLevel", 0),
        )
        for c in shape["perfCounter"]
    ]
    found = resolve_counters(counters)
    return {field: [c.key, c.unit] for field, c in sorted(found.items())}


def replay_instances(shape: dict[str, Any]) -> dict[str, Any]:
    gpus = [
        Gpu(
            pci_id=g["pci_id"],
            vendor_id=0x10DE,
            device_id=g.get("device_id", 0x1EB8),
            graphics_type=g.get("graphics_type"),
        )
        for g in shape["gpus"]
    ]
    matches, unmatched = match_instances(gpus, list(shape["instances"]))
    return {
        "matched": {i: g.pci_id for i, (g, _) in sorted(matches.items())},
        "unmatched": sorted(unmatched),
    }


REPLAY = {
    "host": replay_host,
    "vm_device": replay_vm_device,
    "profile": replay_profile,
    "counters": replay_counters,
    "instances": replay_instances,
}


@pytest.mark.parametrize("path", params())
def test_each_sample_reads_as_written(path: Path) -> None:
    sample = load(path)
    assert REPLAY[sample["kind"]](sample["shape"]) == sample["expected"]


def test_each_sample_names_its_source_and_whether_it_is_inferred() -> None:
    for path in samples():
        sample = load(path)
        source = sample["source"]
        assert set(source) <= SOURCE_KEYS, path.name
        assert ("repository" in source and "path" in source) or "document" in source, path.name
        if "repository" in source:
            assert source.get("licence"), f"{path.name}: copied from a repository, no licence"
        assert isinstance(sample.get("inferred"), bool), path.name
        assert sample["kind"] in REPLAY, path.name


def test_the_corpus_is_large_and_varied_enough() -> None:
    sources = {
        load(p)["source"].get("repository") or load(p)["source"]["document"] for p in samples()
    }
    assert len(samples()) >= 30
    assert len(sources) >= 5


def test_the_index_lists_every_sample() -> None:
    index = (CORPUS / "README.md").read_text("utf-8")
    for path in samples():
        assert f"({path.name})" in index, path.name
