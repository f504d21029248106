"""The scenario loader (tests/lab/scenario.py) and generator: no Go, no server."""

from __future__ import annotations

import io
import json
import re
import textwrap
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.lab import generate as gen
from tests.lab import scenario as sc

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*.yaml"))

# A small valid scenario; the error cases below break one thing in it.
BASE = """\
description: base
datacenters:
  - name: DC1
    clusters:
      - name: c1
        ha: {enabled: true}
        hosts:
          - name: esx01
            gpus:
              - {pci_id: "0000:3b:00.0", device_id: 0x27b8}
            vgpu_profiles: [{name: grid_l4-4q}]
            adapters:
              - {device: vmhba2, type: fc}
          - name: esx02
            gpus:
              - {pci_id: 0000:41:00.0, device_id: 0x27b8, passthrough: {enabled: true}}
    datastores:
      - name: ds1
        mounts:
          - {host: esx01, paths: [vmhba2]}
          - {host: esx02}
    vms:
      - name: vm1
        host: esx01
        gpus: [{vgpu: grid_l4-4q, on: "0000:3b:00.0"}]
      - name: vm2
        host: esx02
        gpus: [{passthrough: 0000:41:00.0}]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load(tmp_path: Path, text: str) -> dict[str, Any]:
    return sc.load_scenario(write(tmp_path, text))


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line containing needle."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_committed_scenarios_load(path: Path) -> None:
    scenario = sc.load_scenario(path)
    assert scenario["description"]
    assert scenario["datacenters"]
    # Normalising twice changes nothing: the normal form is a fixed point.
    assert sc.normalise(json.loads(json.dumps(scenario))) == scenario


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_committed_scenarios_start_with_a_comment(path: Path) -> None:
    assert path.read_text(encoding="utf-8").startswith("#")


@pytest.mark.parametrize(
    ("name", "letter"), [("scenario-a", "A"), ("scenario-b", "B"), ("scenario-c", "C")]
)
def test_seed_scenarios_expect_their_design(name: str, letter: str) -> None:
    scenario = sc.load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / f"{name}.yaml")
    ds01 = [e for e in scenario["expect"] if e["rule"] == "DS-01"]
    assert ds01 and ds01[0]["scenario"] == letter
    clusters = {c["name"] for dc in scenario["datacenters"] for c in dc["clusters"]}
    assert ds01[0]["cluster"] in clusters


def test_base_loads_with_every_default(tmp_path: Path) -> None:
    s = load(tmp_path, BASE)
    assert s["vcenter"] == {
        "kind": "vcenter",
        "name": "VMware vCenter Server",
        "version": "8.0.3",
        "build": "24022515",
        "api_version": "8.0.3.0",
        "settings": {},
        "statistics_level": 4,
        "gpu_counters": ["utilization", "mem.used", "mem.usage", "temperature", "power.used"],
        "gpu_counter_key": 1000,
        "licence": {
            "key": sc.default_licence_key("vc.standard.instance", None),
            "edition": "vc.standard.instance",
            "name": "vCenter Server 8 Standard",
            "expires": None,
            "features": [{"key": "vpxStd", "name": "vCenter Server Standard"}],
        },
    }
    dc = s["datacenters"][0]
    cluster = dc["clusters"][0]
    assert cluster["ha"] == {
        "enabled": True,
        "host_monitoring": True,
        "default_restart_priority": "medium",
        "admission_control": {
            "enabled": False,
            "policy": None,
            "failover_level": 1,
            "cpu_percent": 25,
            "memory_percent": 25,
            "failover_hosts": [],
        },
        "isolation_response": "powerOff",
        "vmcp": {"enabled": True, "apd": "restartConservative", "pdl": "restartAggressive"},
        "heartbeat": {"policy": "allFeasibleDsWithUserPreference", "datastores": []},
        "options": {},
    }
    assert cluster["config_issues"] == []
    assert [h["ha_state"] for h in cluster["hosts"]] == ["master", "connectedToMaster"]
    assert cluster["drs"] == {"enabled": False, "automation": "fullyAutomated", "options": {}}
    assert cluster["evc_mode"] is None
    assert (cluster["groups"], cluster["rules"]) == ([], [])
    esx01, esx02 = cluster["hosts"]
    assert {k: esx01[k] for k in ("version", "build", "vendor", "model")} == {
        "version": "8.0.3",
        "build": "24022510",
        "vendor": "Dell Inc.",
        "model": "PowerEdge R760",
    }
    assert (esx01["cpu_cores"], esx01["cpu_mhz"], esx01["memory_gb"]) == (32, 2800, 512)
    assert (esx01["connection"], esx01["maintenance"]) == ("connected", False)
    assert esx01["graphics"] == {"default_type": "shared", "assignment_policy": "performance"}
    gpu = esx01["gpus"][0]
    assert gpu == {
        "pci_id": "0000:3b:00.0",
        "vendor_id": 0x10DE,
        "device_id": 0x27B8,
        "sub_vendor_id": 0x10DE,
        # The L4's own subsystem, 10de:16ca (NVIDIA's open GPU kernel modules README,
        # "Compatible GPUs"): a physical board never reports 0x0000.
        "sub_device_id": 0x16CA,
        "vendor_name": "NVIDIA Corporation",
        "device_name": "NVIDIA L4",  # from the catalogue
        "class_id": 0x0302,
        "memory_mb": 24 * 1024,
        "passthrough": {"capable": True, "enabled": False, "active": False, "hardware_label": ""},
        "graphics_type": "sharedDirect",  # the host offers vGPU profiles
        "vgpu_mode": None,
        "telemetry": None,
        "device_type": "sharedDirect",  # its own setting, of its graphics type
        # An Ada GPU serving vGPUs reports SR-IOV with every virtual function active.
        "sriov": {
            "reported": True,
            "capable": True,
            "enabled": True,
            "active": True,
            "vfs": 16,
            "max_vfs": 16,
            "listed": False,  # its virtual functions are not among its PCI devices
        },
    }
    assert esx01["gpu_counter_instances"] == "pci"
    assert esx01["licence"]["edition"] == "esx.enterprisePlus.cpuPackageCoreLimited"
    assert esx01["max_evc_mode"] == "intel-sapphirerapids"
    assert esx01["device_groups"] == []
    assert "vgpu" in [f["key"] for f in esx01["licence"]["features"]]
    # An unquoted PCI id stays a string (YAML 1.1 would read a sexagesimal float).
    assert esx02["gpus"][0]["pci_id"] == "0000:41:00.0"
    assert esx02["gpus"][0]["graphics_type"] == "direct"  # passthrough enabled
    assert esx02["gpus"][0]["passthrough"]["active"] is True  # follows enabled
    assert esx01["vgpu_profiles"] == [
        {
            "name": "grid_l4-4q",
            "migrate": True,
            "suspend": True,
            # vgpuProfileInfo as the name gives it: 4 GiB, time-sliced, Q series.
            "fb_gib": 4,
            "sharing": "timeSliced",
            "class": "quadro",
            "device_vendor_id": 0x27B8 << 16 | 0x10DE,  # the host's L4, 10de:27b8
            "capacity": None,  # an 8.0.3 vCenter has no DirectPathProfileManager
        }
    ]
    local, fc = esx01["adapters"]
    assert local == {
        "device": "vmhba0",
        "type": "block",
        "model": "PCIe NVMe Controller",
        "driver": "nvme_pcie",
        "status": "online",
        "port_wwn": None,
        "node_wwn": None,
        "software": None,
    }
    assert (fc["model"], fc["driver"]) == ("LPe35002", "lpfc")
    assert fc["port_wwn"].startswith("10:00:00:10:9b:")
    assert fc["node_wwn"] == "20" + fc["port_wwn"][2:]
    assert esx01["vmotion"] == []

    ds = dc["datastores"][0]
    assert (ds["type"], ds["capacity_gb"], ds["free_gb"]) == ("VMFS", 2048, 1024)
    assert ds["lun"] == sc.default_lun("ds1") and ds["lun"].startswith("naa.6")
    assert ds["local"] is False  # two mounts
    assert ds["mounts"][0]["paths"] == [{"adapter": "vmhba2", "state": "active"}]
    # A mount with no paths reaches the LUN through the host's local adapter.
    assert ds["mounts"][1] == {
        "host": "esx02",
        "mounted": True,
        "accessible": True,
        "paths": [{"adapter": "vmhba0", "state": "active"}],
    }
    vm1, vm2 = dc["vms"]
    assert vm1 == {
        "name": "vm1",
        "host": "esx01",
        "power": "poweredOn",
        "memory_mb": 8192,
        "memory_reservation_mb": 0,
        "memory_locked_to_max": False,
        "datastores": ["ds1"],  # the first datastore its host mounts
        "restart_priority": None,
        "gpus": [{"vgpu": "grid_l4-4q", "migrate_supported": None, "on": "0000:3b:00.0"}],
        "isolation_response": None,
        "firmware": "efi",
        "extra_config": {},
        "min_evc_mode": None,
        "device_groups": [],
    }
    assert vm2["gpus"] == [{"passthrough": "0000:41:00.0"}]
    assert s["expect"] == []


def test_vgpu_placement_and_dynamic_assignment_are_filled_in(tmp_path: Path) -> None:
    text = BASE.replace(
        'gpus: [{vgpu: grid_l4-4q, on: "0000:3b:00.0"}]', "gpus: [{vgpu: grid_l4-4q}]"
    )
    text = text.replace(
        "gpus: [{passthrough: 0000:41:00.0}]",
        "gpus: [{dynamic: {allowed: [{device_id: 0x27b8}], label: l4}}]",
    )
    text += textwrap.indent(
        textwrap.dedent("""\
        - name: vm3
          host: esx01
          power: poweredOff
          gpus: [{vgpu: grid_l4-4q, on: "0000:3b:00.0"}]
        """),
        "      ",
    )
    vms = load(tmp_path, text)["datacenters"][0]["vms"]
    assert vms[0]["gpus"][0]["on"] == "0000:3b:00.0"
    assert vms[1]["gpus"][0] == {
        "dynamic": {
            "allowed": [
                {
                    "vendor_id": 0x10DE,
                    "device_id": 0x27B8,
                    "sub_vendor_id": None,
                    "sub_device_id": None,
                }
            ],
            "assigned": "0000:41:00.0",
            "label": "l4",
        }
    }
    assert vms[2]["gpus"][0]["on"] is None  # only a powered-on VM runs on a GPU


def test_locked_memory_reserves_all_of_it(tmp_path: Path) -> None:
    text = BASE.replace(
        "        host: esx02\n", "        host: esx02\n        memory_locked_to_max: true\n"
    )
    vm2 = load(tmp_path, text)["datacenters"][0]["vms"][1]
    assert vm2["memory_locked_to_max"] is True
    assert vm2["memory_reservation_mb"] == vm2["memory_mb"] == 8192


def test_on_is_a_key_not_a_boolean(tmp_path: Path) -> None:
    s = load(tmp_path, BASE)
    assert "on" in s["datacenters"][0]["vms"][0]["gpus"][0]


# (what to replace in BASE, with what, the message, the text on the reported line)
ERRORS = [
    pytest.param(
        "          - name: esx01\n",
        "          - name: esx01\n            gpuz: 1\n",
        "unknown key 'gpuz' in host esx01",
        "gpuz: 1",
        id="unknown-key",
    ),
    pytest.param(
        "        host: esx01\n        gpus: [{vgpu",
        "        host: esx09\n        gpus: [{vgpu",
        "VM vm1 is on host 'esx09', which is not in datacenter DC1",
        "host: esx09",
        id="vm-host-missing",
    ),
    pytest.param(
        "        host: esx02\n",
        "        host: esx02\n        datastores: [ds9]\n",
        "VM vm2 uses datastore 'ds9', which is not in datacenter DC1",
        "datastores: [ds9]",
        id="vm-datastore-missing",
    ),
    pytest.param(
        "          - {host: esx02}",
        "          - {host: esx03}",
        "names host 'esx03', which is not in datacenter DC1",
        "{host: esx03}",
        id="mount-host-missing",
    ),
    pytest.param(
        "paths: [vmhba2]}",
        "paths: [vmhba7]}",
        "has a path through 'vmhba7', which host esx01 does not have",
        "paths: [vmhba7]",
        id="path-adapter-missing",
    ),
    pytest.param(
        "gpus: [{passthrough: 0000:41:00.0}]",
        "gpus: [{passthrough: 0000:42:00.0}]",
        "is bound to 0000:42:00.0, which host esx02 does not have",
        "passthrough: 0000:42:00.0",
        id="passthrough-device-missing",
    ),
    pytest.param(
        "          - name: esx02\n",
        "          - name: esx01\n",
        "two hosts are named 'esx01'",
        "- name: esx01",
        id="duplicate-host",
    ),
    pytest.param(
        "      - name: vm2\n",
        "      - name: vm1\n",
        "two VMs are named 'vm1'",
        "- name: vm1",
        id="duplicate-vm",
    ),
    pytest.param(
        '{pci_id: "0000:3b:00.0", device_id: 0x27b8}',
        '{pci_id: "3b:00.0", device_id: 0x27b8}',
        "must be a PCI address like 0000:3b:00.0, not '3b:00.0'",
        'pci_id: "3b:00.0"',
        id="pci-id-format",
    ),
    pytest.param(
        "        ha: {enabled: true}\n",
        "        ha: {enabled: true}\n        ha: {enabled: false}\n",
        "duplicate key 'ha'",
        "ha: {enabled: false}",
        id="duplicate-yaml-key",
    ),
    pytest.param(
        "        host: esx02\n",
        "        host: esx02\n        memory_mb: lots\n",
        "'memory_mb' of VM vm2 must be a whole number, not a string",
        "memory_mb: lots",
        id="wrong-type",
    ),
    pytest.param(
        "        host: esx02\n",
        "        host: esx02\n        power: on\n",
        "'power' of VM vm2 must be one of poweredOn, poweredOff, suspended, not 'on'",
        "power: on",
        id="bad-choice",
    ),
    pytest.param(
        "{vgpu: grid_l4-4q, on:",
        "{vgpu: grid_l4-24q, on:",
        "powered on with vGPU grid_l4-24q, which its host esx01 does not offer",
        "vgpu: grid_l4-24q",
        id="vgpu-not-offered",
    ),
    pytest.param(
        "              - {device: vmhba2, type: fc}\n",
        "              - {device: vmhba2, type: sas, port_wwn: '10:00:00:10:9b:00:00:01'}\n",
        "'port_wwn' of adapter vmhba2 of host esx01 is for fc and fcoe adapters only",
        "type: sas",
        id="wwn-on-sas",
    ),
    pytest.param(
        "      - name: vm2\n        host: esx02\n",
        "      - name: vm2\n        host: esx02\n"
        "        gpus: [{passthrough: 0000:41:00.0}]\n"
        "      - name: vm3\n        host: esx02\n",
        "VM vm3 and VM vm2 are powered on with 0000:41:00.0 of host esx02",
        "passthrough: 0000:41:00.0",
        id="passthrough-twice",
    ),
    pytest.param(
        "vgpu_profiles: [{name: grid_l4-4q}]",
        "vgpu_profiles: {name: grid_l4-4q}",
        "'vgpu_profiles' of host esx01 must be a list, not a mapping",
        "vgpu_profiles: {name: grid_l4-4q}",
        id="not-a-list",
    ),
    pytest.param(
        "vgpu_profiles: [{name: grid_l4-4q}]",
        "vgpu_profiles: [{name: grid_l4-4q, capacity: {max: 6}}]",
        "'capacity' of vGPU profile grid_l4-4q of host esx01 needs a vCenter of api_version "
        "9.0.0.0 or later",
        "capacity: {max: 6}",
        id="capacity-before-9",
    ),
    pytest.param(
        "vgpu_profiles: [{name: grid_l4-4q}]",
        "vgpu_profiles: [{name: grid_l4-4q, sharing: shared}]",
        "'sharing' of vGPU profile grid_l4-4q of host esx01 must be one of timeSliced, mig",
        "sharing: shared",
        id="profile-sharing",
    ),
    pytest.param(
        "description: base\n",
        "description: base\nrole: {privileges: [Host.Config.Storage]}\n",
        "privilege #1 of 'role' must be one of Host.Config.Image, not 'Host.Config.Storage'",
        "Host.Config.Storage",
        id="role-privilege",
    ),
    pytest.param(
        "description: base\n",
        "description: base\nrole: {privileges: [Host.Config.Image, Host.Config.Image]}\n",
        "'role' grants Host.Config.Image twice",
        "privileges",
        id="role-twice",
    ),
    pytest.param(
        "vgpu_profiles: [{name: grid_l4-4q}]",
        "vgpu_profiles: [{name: grid_l4-4q}]\n            vgpu_manager: R550",
        "'version' of the vgpu_manager of host esx01 must be like 550.54.16",
        "vgpu_manager: R550",
        id="manager-version",
    ),
    pytest.param(
        "vgpu_profiles: [{name: grid_l4-4q}]",
        "vgpu_profiles: [{name: grid_l4-4q}]\n            vgpu_manager: {vib: x}",
        "the vgpu_manager of host esx01 has no 'version'",
        "vgpu_manager: {vib: x}",
        id="manager-no-version",
    ),
    pytest.param(
        "  - name: DC1\n",
        "  - name: DC1\n    [broken\n",
        "not valid YAML",
        None,
        id="yaml-syntax",
    ),
]


@pytest.mark.parametrize(("old", "new", "message", "on_line"), ERRORS)
def test_errors_name_file_and_line(
    tmp_path: Path, old: str, new: str, message: str, on_line: str | None
) -> None:
    assert old in BASE
    text = BASE.replace(old, new, 1)
    path = write(tmp_path, text)
    with pytest.raises(sc.ScenarioError) as info:
        sc.load_scenario(path)
    error = str(info.value)
    assert error.startswith(f"{path}:"), error
    assert message in error
    assert "\n" not in error
    if on_line is not None:
        # The reported line is the one that holds the problem.
        line = int(error[len(str(path)) + 1 :].split(":", 1)[0])
        assert on_line in text.splitlines()[line - 1], (line, error)


def test_missing_datacenters(tmp_path: Path) -> None:
    with pytest.raises(
        sc.ScenarioError, match=r"scenario.yaml:1: the scenario has no 'datacenters'"
    ):
        load(tmp_path, "description: nothing\n")


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(sc.ScenarioError, match="the file is empty"):
        load(tmp_path, "")


def test_name_with_an_escape_sequence_is_refused(tmp_path: Path) -> None:
    with pytest.raises(sc.ScenarioError, match="escape sequence"):
        load(tmp_path, BASE.replace("name: ds1", "name: ds%2f1"))


def test_vgpu_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    text = BASE.replace(
        "vgpu_profiles: [{name: grid_l4-4q}]",
        "vgpu_profiles: [{name: grid_l4-4q}, {name: grid_l4-24q}]",
    )
    text += "      - {name: vm3, host: esx01, gpus: [{vgpu: grid_l4-24q, on: '0000:3b:00.0'}]}\n"
    with pytest.raises(sc.ScenarioError, match="equal-size mode allows one profile per GPU"):
        load(tmp_path, text)


def test_normalise_without_yaml_names_the_source() -> None:
    with pytest.raises(sc.ScenarioError) as info:
        sc.normalise({"datacenters": [{"name": "x", "gpuz": 1}]}, source="generated")
    assert str(info.value) == "generated: unknown key 'gpuz' in datacenter x"


def test_cli_prints_the_normal_form(tmp_path: Path) -> None:
    path = write(tmp_path, BASE)
    out = io.StringIO()
    with redirect_stdout(out):
        assert sc.main([str(path)]) == 0
    assert json.loads(out.getvalue()) == sc.load_scenario(path)


def test_cli_reports_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, BASE.replace("name: esx01\n", "name: esx01\n            gpuz: 1\n", 1))
    assert sc.main([str(path)]) == 1
    assert "unknown key 'gpuz' in host esx01" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [(1, 1, 0, 0), (3, 2, 2, 40), (2, 3, 1, 60, 1.0), (4, 2, 8, 100, 0.9, 7)],
)
def test_generated_scenarios_normalise(args: tuple[Any, ...]) -> None:
    scenario = gen.generate(*args)
    normal = sc.normalise(scenario, source="generated")
    dc = normal["datacenters"][0]
    clusters, hosts, gpus, vms = args[:4]
    assert len(dc["clusters"]) == clusters
    assert sum(len(c["hosts"]) for c in dc["clusters"]) == clusters * hosts
    assert all(len(h["gpus"]) == gpus for c in dc["clusters"] for h in c["hosts"])
    assert len(dc["vms"]) == vms
    assert gen.generate(*args) == scenario  # the same arguments, the same estate


def test_generated_estate_mixes_every_gpu_kind() -> None:
    dc = sc.normalise(gen.generate(3, 2, 2, 60, gpu_vm_share=0.5))["datacenters"][0]
    kinds = {next(iter(g)) for vm in dc["vms"] for g in vm["gpus"]}
    assert kinds == {"vgpu", "passthrough", "dynamic"}
    assert all(
        g["on"] for vm in dc["vms"] if vm["power"] == "poweredOn" for g in vm["gpus"] if "vgpu" in g
    )
    transports = {a["type"] for c in dc["clusters"] for h in c["hosts"] for a in h["adapters"]}
    assert {"fc", "iscsi"} <= transports
    assert all(len(m["paths"]) == 2 for ds in dc["datastores"] for m in ds["mounts"])


def test_generate_cli_writes_a_loadable_file(tmp_path: Path) -> None:
    out = tmp_path / "big.yaml"
    assert (
        gen.main(["--clusters", "2", "--hosts", "2", "--gpus", "2", "--vms", "20", "-o", str(out)])
        == 0
    )
    assert out.read_text(encoding="utf-8").startswith("# Generated")
    assert sc.load_scenario(out) == sc.normalise(yaml.safe_load(out.read_text(encoding="utf-8")))
    assert sc.load_scenario(out) == sc.normalise(gen.generate(2, 2, 2, 20))


# -- a standalone ESXi host -------------------------------------------------------

ESXI = """\
description: one ESXi host
vcenter:
  kind: esxi
datacenters:
  - standalone_hosts:
      - name: esx01
        version: 7.0.3
        build: "21930508"
        gpus:
          - {pci_id: "0000:3b:00.0", device_id: 0x27b8}
        vgpu_profiles: [{name: grid_l4-4q}]
    datastores:
      - name: local01
        mounts: [{host: esx01}]
    vms:
      - {name: vm1, host: esx01, gpus: [{vgpu: grid_l4-4q}]}
"""


def test_esxi_server_takes_its_about_from_the_host(tmp_path: Path) -> None:
    s = load(tmp_path, ESXI)
    assert s["vcenter"] == {
        "kind": "esxi",
        "name": "VMware ESXi",
        "version": "7.0.3",
        "build": "21930508",
        "api_version": "8.0.3.0",
        "settings": {},
        "statistics_level": None,
        "gpu_counters": ["utilization", "mem.used", "mem.usage", "temperature", "power.used"],
        "gpu_counter_key": 1000,
        "licence": None,
    }
    (dc,) = s["datacenters"]
    assert (dc["name"], dc["clusters"]) == ("ha-datacenter", [])
    assert [h["name"] for h in dc["standalone_hosts"]] == ["esx01"]
    assert sc.normalise(json.loads(json.dumps(s))) == s
    # Written out, the host's values are accepted.
    same = ESXI.replace("  kind: esxi\n", "  kind: esxi\n  version: 7.0.3\n  name: VMware ESXi\n")
    assert load(tmp_path, same) == s


ESXI_ERRORS = [
    pytest.param(
        "  kind: esxi\n",
        "  kind: esxi\n  settings: {vgpu.hotmigrate.enabled: true}\n",
        "'settings' of vcenter (kind esxi) is for a vCenter",
        "settings:",
        id="settings",
    ),
    pytest.param(
        "  kind: esxi\n",
        "  kind: esxi\n  statistics_level: 4\n",
        "'statistics_level' of vcenter (kind esxi) is for a vCenter",
        "statistics_level: 4",
        id="statistics-level",
    ),
    pytest.param(
        "  kind: esxi\n",
        "  kind: esxi\n  licence: {edition: eval}\n",
        "'licence' of vcenter (kind esxi) is for a vCenter",
        "licence:",
        id="licence",
    ),
    pytest.param(
        "  kind: esxi\n",
        "  kind: esxi\n  build: '1'\n",
        "'build' of vcenter (kind esxi) is its host's build (21930508), not '1'",
        "build: '1'",
        id="build-differs",
    ),
    pytest.param(
        "  kind: esxi\n",
        "  kind: esxi\n  gpu_counter_key: 65530\n",
        "'gpu_counter_key' of vcenter (kind esxi) must be between 1000 and 65522",
        "gpu_counter_key",
        id="counter-ids",
    ),
    pytest.param(
        "  kind: esxi\n",
        "  kind: vcsa\n",
        "'kind' of vcenter must be one of vcenter, esxi, not 'vcsa'",
        "kind: vcsa",
        id="kind",
    ),
    pytest.param(
        "  - standalone_hosts:\n",
        "  - name: DC1\n    standalone_hosts:\n",
        "the datacenter of an ESXi host is ha-datacenter, not 'DC1'",
        "name: DC1",
        id="datacenter-name",
    ),
    pytest.param(
        "      - {name: vm1, host: esx01, gpus: [{vgpu: grid_l4-4q}]}\n",
        "      - {name: vm1, host: esx01, gpus: [{vgpu: grid_l4-4q}]}\n  - name: other\n",
        "a scenario of kind esxi has exactly one datacenter, ha-datacenter",
        "- name: other",
        id="two-datacenters",
    ),
    pytest.param(
        "  - standalone_hosts:\n",
        "  - clusters: [{name: c1, hosts: [{name: esx02}]}]\n    standalone_hosts:\n",
        "an ESXi host has no clusters: the host goes in standalone_hosts",
        "clusters:",
        id="cluster",
    ),
    pytest.param(
        "    datastores:\n",
        "      - {name: esx02}\n    datastores:\n",
        "a scenario of kind esxi has exactly one standalone host",
        "- {name: esx02}",
        id="two-hosts",
    ),
    pytest.param(
        "        version: 7.0.3\n",
        "        version: 7.0.3\n        connection: disconnected\n",
        "the ESXi host esx01 is the server itself, so it is connected",
        "connection: disconnected",
        id="disconnected",
    ),
]


@pytest.mark.parametrize(("old", "new", "message", "on_line"), ESXI_ERRORS)
def test_esxi_errors_name_file_and_line(
    tmp_path: Path, old: str, new: str, message: str, on_line: str
) -> None:
    assert old in ESXI
    text = ESXI.replace(old, new, 1)
    path = write(tmp_path, text)
    with pytest.raises(sc.ScenarioError) as info:
        sc.load_scenario(path)
    error = str(info.value)
    assert message in error, error
    line = int(error[len(str(path)) + 1 :].split(":", 1)[0])
    assert on_line in text.splitlines()[line - 1], (line, error)


def test_esxi_without_hosts_is_refused(tmp_path: Path) -> None:
    text = ESXI.split("  - standalone_hosts:")[0] + "  - datastores: []\n"
    with pytest.raises(sc.ScenarioError, match="exactly one standalone host"):
        load(tmp_path, text)


def test_an_expectation_lists_the_objects_not_proven(tmp_path: Path) -> None:
    text = BASE + "expect:\n  - {rule: VM-10, fail: [vm2], unproven: [vm1]}\n  - {rule: HA-01}\n"
    assert load(tmp_path, text)["expect"] == [
        {"rule": "VM-10", "fail": ["vm2"], "pass": [], "unproven": ["vm1"]},
        {"rule": "HA-01", "fail": [], "pass": [], "unproven": []},
    ]
    wrong = BASE + "expect:\n  - {rule: VM-10, unproven: [vm9]}\n"
    with pytest.raises(sc.ScenarioError, match="names 'vm9', which is not in the scenario"):
        load(tmp_path, wrong)


# vCenter's facts of a vGPU profile, as the lab derives them from its name where the
# scenario says nothing: frame buffer in GiB, MIG slicing, class by series.
@pytest.mark.parametrize(
    ("name", "facts"),
    [
        ("nvidia_l40s-24q", (24, "timeSliced", "quadro")),
        ("grid_a100-3-20c", (20, "mig", "compute")),
        ("grid_a100-1-5cme", (5, "mig", "compute")),
        ("grid_a100-4c", (4, "timeSliced", "compute")),
        ("grid_rtx6000-ada-48q", (48, "timeSliced", "quadro")),
        ("grid_a16-2b", (2, "timeSliced", "quadro")),
        ("GRID_L4-8A", (8, "timeSliced", "quadro")),
        ("vgpu-of-another-form", (0, "timeSliced", "quadro")),
    ],
)
def test_profile_facts_default_to_what_the_name_says(
    name: str, facts: tuple[int, str, str]
) -> None:
    defaults = sc.profile_defaults(name)
    assert (defaults["fb_gib"], defaults["sharing"], defaults["class"]) == facts


API9 = """\
description: a vSphere 9 vCenter
vcenter: {version: 9.0.0, api_version: 9.0.0.0}
datacenters:
  - name: DC1
    clusters:
      - name: c1
        hosts:
          - name: esx01
            graphics: {default_type: sharedDirect}
            gpus:
              - {pci_id: "0000:3b:00.0", device_id: 0x27b8}
              - {pci_id: "0000:5e:00.0", device_id: 0x26b9}
            vgpu_profiles:
              - {name: nvidia_l40s-24q, capacity: {max: 2, consumed: 1, unused_reservation: 1}}
              - name: nvidia_l40s-12q
                fb_gib: 11
                sharing: mig
                class: compute
                capacity: {max: 4, remaining: 1}
              - {name: nvidia_l4-4q, capacity: {unknown: InvalidState}}
              - {name: nvidia_l4-8q, device_vendor_id: "0x12345678"}
"""


def test_profile_facts_and_capacity_as_declared_or_derived(tmp_path: Path) -> None:
    host = load(tmp_path, API9)["datacenters"][0]["clusters"][0]["hosts"][0]
    facts = {
        p["name"]: (p["fb_gib"], p["sharing"], p["class"], p["device_vendor_id"], p["capacity"])
        for p in host["vgpu_profiles"]
    }
    l40s, l4 = 0x26B9 << 16 | 0x10DE, 0x27B8 << 16 | 0x10DE
    assert facts == {
        # remaining defaults to what max leaves: 2 - 1 - 1 = 0.
        "nvidia_l40s-24q": (
            24,
            "timeSliced",
            "quadro",
            l40s,  # the host's L40S, though its first GPU is an L4
            {"max": 2, "consumed": 1, "remaining": 0, "unused_reservation": 1},
        ),
        "nvidia_l40s-12q": (
            11,
            "mig",
            "compute",
            l40s,
            {"max": 4, "consumed": 0, "remaining": 1, "unused_reservation": 0},
        ),
        "nvidia_l4-4q": (4, "timeSliced", "quadro", l4, {"unknown": ["InvalidState"]}),
        # No capacity declared: vCenter cannot count it.
        "nvidia_l4-8q": (8, "timeSliced", "quadro", 0x12345678, {"unknown": ["NotSupported"]}),
    }


@pytest.mark.parametrize(
    ("capacity", "message"),
    [
        ("{max: 2, consumed: 2, remaining: 1}", "does not add up"),
        ("{max: 2, unknown: NotSupported}", "either 'unknown' or counts"),
        ("{unknown: [NoPermission]}", "must name faults among NotSupported"),
        ("{unknown: []}", "must name faults among"),
        ("{consumed: 1}", "has no 'max'"),
        ("{max: -1}", "'max' of the capacity of vGPU profile nvidia_l4-4q"),
    ],
)
def test_capacity_errors(tmp_path: Path, capacity: str, message: str) -> None:
    text = API9.replace("capacity: {unknown: InvalidState}", f"capacity: {capacity}")
    with pytest.raises(sc.ScenarioError, match=re.escape(message)):
        load(tmp_path, text)


def test_a_standalone_esxi_host_serves_no_capacity(tmp_path: Path) -> None:
    text = """\
description: an ESXi 9 host
vcenter: {kind: esxi, api_version: 9.0.0.0}
datacenters:
  - standalone_hosts:
      - name: esx01
        gpus: [{pci_id: "0000:3b:00.0", device_id: 0x27b8}]
        vgpu_profiles: [{name: nvidia_l4-4q, capacity: {max: 6}}]
"""
    with pytest.raises(sc.ScenarioError, match=r"needs a vCenter of api_version 9\.0\.0\.0"):
        load(tmp_path, text)
    host = load(tmp_path, text.replace(", capacity: {max: 6}", ""))["datacenters"][0][
        "standalone_hosts"
    ][0]
    assert host["vgpu_profiles"][0]["capacity"] is None


NVLINK = """\
description: vendor device groups
datacenters:
  - name: DC1
    clusters:
      - name: c1
        hosts:
          - name: esx01
            graphics: {default_type: sharedDirect}
            gpus:
              - {pci_id: "0000:18:00.0", device_id: 0x2330}
              - {pci_id: "0000:2a:00.0", device_id: 0x2330}
              - {pci_id: "0000:3a:00.0", device_id: 0x2330}
            vgpu_profiles: [{name: grid_h100xm-80c}]
            device_groups:
              - name: two-linked
                components: [{vgpu: grid_h100xm-80c}, {vgpu: grid_h100xm-80c, configurable: true}]
              - name: gpu-nic
                description: a GPU and its NIC
                components: [{type: sriovNic, vendor: Mellanox, device: ConnectX-7}, {}]
    vms:
      - name: llm
        host: esx01
        gpus: [{vgpu: grid_h100xm-80c}, {vgpu: grid_h100xm-80c}, {vgpu: grid_h100xm-80c}]
        device_groups: [{name: two-linked, gpus: [2, 0]}]
"""


def test_device_groups_of_a_host_and_of_a_vm(tmp_path: Path) -> None:
    dc = load(tmp_path, NVLINK)["datacenters"][0]
    host = dc["clusters"][0]["hosts"][0]
    vgpu = {"type": "nvidiaVgpu", "vendor": "NVIDIA Corporation", "device": "grid_h100xm-80c"}
    assert host["device_groups"] == [
        {
            "name": "two-linked",
            "description": "",
            "components": [
                {**vgpu, "configurable": False, "vgpu": "grid_h100xm-80c"},
                {**vgpu, "configurable": True, "vgpu": "grid_h100xm-80c"},
            ],
        },
        {
            "name": "gpu-nic",
            "description": "a GPU and its NIC",
            "components": [
                {
                    "type": "sriovNic",
                    "vendor": "Mellanox",
                    "device": "ConnectX-7",
                    "configurable": False,
                    "vgpu": None,
                },
                {
                    "type": "nvidiaVgpu",
                    "vendor": "NVIDIA Corporation",
                    "device": "",
                    "configurable": False,
                    "vgpu": None,
                },
            ],
        },
    ]
    assert dc["vms"][0]["device_groups"] == [{"name": "two-linked", "key": 1, "gpus": [2, 0]}]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("gpus: [2, 0]", "gpus: [2, 3]", "names GPU 3, but VM llm has 3"),
        ("gpus: [2, 0]", "gpus: [2, 2]", "GPU 2 of VM llm is in two device groups"),
        ("gpus: [2, 0]", "gpus: []", "device group #1 of VM llm has no GPU"),
        ("gpus: [2, 0]", "gpus: [true]", "lists GPU indices, not a boolean"),
        (
            "name: two-linked, gpus",
            "name: three-linked, gpus",
            "VM llm is powered on with device group 'three-linked', which its host esx01 "
            "does not offer",
        ),
        (
            "gpus: [2, 0]}]",
            "gpus: [2], key: 4}, {name: gpu-nic, gpus: [1], key: 4}]",
            "VM llm has two device groups of key 4",
        ),
        ("- name: gpu-nic\n", "- name: two-linked\n", "host esx01 offers device group"),
        ("{type: sriovNic, vendor", "{type: nic, vendor", "must be one of pciPassthru"),
        ("{}]", "{type: sriovNic, vgpu: grid_h100xm-80c}]", "'vgpu' of component #2"),
        (
            "components: [{type: sriovNic, vendor: Mellanox, device: ConnectX-7}, {}]",
            "components: []",
            "device group 'gpu-nic' of host esx01 has no components",
        ),
    ],
)
def test_device_group_errors(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in NVLINK
    with pytest.raises(sc.ScenarioError, match=re.escape(message)):
        load(tmp_path, NVLINK.replace(old, new, 1))


def test_device_groups_need_api_8_0_0_1_and_a_host_s_a_vcenter(tmp_path: Path) -> None:
    old = NVLINK.replace("datacenters:", "vcenter: {api_version: 8.0.0.0}\ndatacenters:", 1)
    with pytest.raises(sc.ScenarioError, match=r"needs a vCenter of api_version 8\.0\.0\.1"):
        load(tmp_path, old)
    host_groups = NVLINK[NVLINK.index("            device_groups:") : NVLINK.index("    vms:")]
    with pytest.raises(sc.ScenarioError, match=r"VM llm needs a server of api_version 8\.0\.0\.1"):
        load(tmp_path, old.replace(host_groups, ""))
    esxi = """\
description: an ESXi host offering a device group
vcenter: {kind: esxi}
datacenters:
  - standalone_hosts:
      - name: esx01
        gpus: [{pci_id: "0000:3b:00.0", device_id: 0x2330}]
        vgpu_profiles: [{name: grid_h100xm-80c}]
        device_groups: [{name: g, components: [{}]}]
"""
    with pytest.raises(sc.ScenarioError, match=r"'device_groups' of host esx01 needs a vCenter"):
        load(tmp_path, esxi)


def test_role_and_vgpu_manager_defaults(tmp_path: Path) -> None:
    s = load(tmp_path, BASE)
    assert s["role"] == {"privileges": []}
    assert [h["vgpu_manager"] for h in s["datacenters"][0]["clusters"][0]["hosts"]] == [None, None]
    text = BASE.replace(
        "description: base\n", "description: base\nrole: {privileges: [Host.Config.Image]}\n"
    )
    text = text.replace(
        "          - name: esx01\n",
        "          - name: esx01\n            vgpu_manager: 550.54.16\n",
    ).replace(
        "          - name: esx02\n",
        "          - name: esx02\n            version: 7.0.3\n"
        "            vgpu_manager: {version: 535.161.05, vib: NVD-AIE_ESXi_7.0.2_Driver}\n",
    )
    s = load(tmp_path, text)
    assert s["role"] == {"privileges": ["Host.Config.Image"]}
    esx01, esx02 = s["datacenters"][0]["clusters"][0]["hosts"]
    # NVIDIA's VIB of the host's ESXi line, and its OEM suffix, unless named.
    assert esx01["vgpu_manager"] == {
        "version": "550.54.16",
        "vib": "NVD-VMware_ESXi_8.0.0_Driver",
        "vib_version": "550.54.16-1OEM.800.1.0.20613240",
    }
    assert esx02["vgpu_manager"] == {
        "version": "535.161.05",
        "vib": "NVD-AIE_ESXi_7.0.2_Driver",
        "vib_version": "535.161.05-1OEM.702.0.0.17630552",
    }
    assert sc.normalise(s) == s
