"""Load, check and normalise lab scenarios (docs/scenario-format.md).

``load_scenario(path)`` reads a YAML scenario and returns its normalised form: a
plain dict in which every default of the format is filled in, PCI ids are ints,
paths are objects and powered-on GPU VMs are placed on a device. The Go lab reads
that form as JSON; the tests read it to derive what gpuaudit must find.

``normalise(data)`` does the same for a scenario built in Python (see
generate.py). Every problem raises ``ScenarioError`` with the file and, for YAML,
the line: ``tests/scenarios/x.yaml:12: unknown key 'gpuz' in host esx01``.

    python -m tests.lab.scenario FILE     # print the normalised form as JSON
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import sys
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

import yaml

from gpuaudit.knowledge import catalog


class ScenarioError(ValueError):
    """A scenario that does not follow docs/scenario-format.md."""


# ---------------------------------------------------------------------------
# YAML with line numbers.
#
# The loader follows YAML 1.2 core rules for plain scalars: only true/false are
# booleans (YAML 1.1 reads the `on:` key of a vGPU as True), and there are no
# sexagesimal numbers (YAML 1.1 reads 0000:41:00.0 as the float 2460.0) and no
# timestamps. Mappings and sequences remember the lines of their entries so that
# errors can point at them.


class _Map(dict):  # type: ignore[type-arg]
    def __init__(self, line: int | None = None) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[Any, int] = {}


class _Seq(list):  # type: ignore[type-arg]
    def __init__(self, items: Any, line: int | None, item_lines: list[int]) -> None:
        super().__init__(items)
        self.line = line
        self.item_lines = item_lines


class _YamlProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


# libyaml's parser when PyYAML has it (large generated scenarios load ten times
# faster); the resolver and constructors below are Python either way.
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc]
    pass


_DROPPED_TAGS = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:value",
}
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _DROPPED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^[-+]?(?:[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-").lower()
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    return sign * int(digits, 10)


def _construct_map(loader: _Loader, node: yaml.MappingNode) -> _Map:
    loader.flatten_mapping(node)
    result = _Map(node.start_mark.line + 1)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, (str, int, float, bool)) and key is not None:
            raise _YamlProblem(line, "a key must be a plain value")
        if key in result:
            raise _YamlProblem(line, f"duplicate key {key!r}")
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = line
    return result


def _construct_seq(loader: _Loader, node: yaml.SequenceNode) -> _Seq:
    return _Seq(
        [loader.construct_object(child, deep=True) for child in node.value],
        node.start_mark.line + 1,
        [child.start_mark.line + 1 for child in node.value],
    )


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def _line_of(container: Any, key: Any = None) -> int | None:
    """The line of container[key] (or of the container itself) when YAML gave one."""
    if isinstance(container, _Map):
        if key is not None and key in container.key_lines:
            return container.key_lines[key]
        return container.line
    if isinstance(container, _Seq):
        if isinstance(key, int) and 0 <= key < len(container.item_lines):
            return container.item_lines[key]
        return container.line
    return None


def _plain(value: Any) -> Any:
    """Deep copy without the line-tracking types."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------------
# Vocabularies and defaults (docs/scenario-format.md).

_REQUIRED: Any = object()

CONNECTION_STATES = ("connected", "disconnected", "notResponding")
RESTART_PRIORITIES = ("disabled", "lowest", "low", "medium", "high", "highest")
ADMISSION_POLICIES = ("slots", "percent", "dedicated-hosts")
DRS_AUTOMATION = ("manual", "partiallyAutomated", "fullyAutomated")
VMOTION_SWITCHES = ("standard", "distributed")
ISOLATION_RESPONSES = ("none", "powerOff", "shutdown")
APD_RESPONSES = ("disabled", "warning", "restartConservative", "restartAggressive")
PDL_RESPONSES = ("disabled", "warning", "restartAggressive")
HEARTBEAT_POLICIES = ("userSelectedDs", "allFeasibleDs", "allFeasibleDsWithUserPreference")
HA_STATES = (
    "master", "connectedToMaster", "election", "fdmUnreachable", "hostDown",
    "initializationError", "networkIsolated", "networkPartitionedFromMaster",
    "uninitializationError", "uninitialized",
)  # fmt: skip
# The configIssue events the lab can serve (clusters.go).
CONFIG_ISSUES = (
    "HostNoRedundantManagementNetworkEvent", "HostDasErrorEvent", "DasHostFailedEvent",
    "InsufficientFailoverResourcesEvent", "ClusterOvercommittedEvent",
)  # fmt: skip
HOST_GRAPHICS_TYPES = ("shared", "sharedDirect")
ASSIGNMENT_POLICIES = ("performance", "consolidation")
GPU_GRAPHICS_TYPES = ("basic", "shared", "direct", "sharedDirect", "none")
# The severities an expect entry may give its failures.
EXPECTED_SEVERITIES = ("critical", "high", "medium", "low", "info")
# A GPU's own entry in graphicsConfig.deviceType; "none" gives it no entry.
GPU_DEVICE_TYPES = ("shared", "sharedDirect", "none")
VGPU_MODES = ("none", "sameSize", "mixedSize", "multiInstanceGpu")
# vgpuProfileInfo's enums (VirtualMachineVgpuProfileInfoProfileSharing, ...ProfileClass).
PROFILE_SHARING = ("timeSliced", "mig")
PROFILE_CLASSES = ("compute", "quadro")
# DirectPathProfileManager.QueryCapacity (vSphere 9.0): the API that serves it, and the
# faults an unknown answer may carry; a profile that declares none gets the first.
CAPACITY_API = (9, 0, 0, 0)
# Vendor device groups: ConfigTarget.vendorDeviceGroupInfo, a VM's config.deviceGroups
# and its devices' deviceGroupInfo, all "Since vSphere API Release 8.0.0.1".
DEVICE_GROUPS_API = (8, 0, 0, 1)
COMPONENT_TYPES = ("pciPassthru", "nvidiaVgpu", "sriovNic", "dvx")
COMPONENT_VENDOR = "NVIDIA Corporation"
CAPACITY_FAULTS = ("NotSupported", "InvalidState", "NotFound", "InvalidArgument")
# Privileges beyond the Read-only role that a scenario's role may grant (role.privileges).
ROLE_PRIVILEGES = ("Host.Config.Image",)
# The NVIDIA vGPU manager VIB a host gets by default, and its version's OEM suffix, per
# ESXi line: as NVIDIA's vGPU packages for vSphere 7.0 and 8.0 install them.
MANAGER_VIBS = {
    7: ("NVD-VMware_ESXi_7.0.2_Driver", "1OEM.702.0.0.17630552"),
    8: ("NVD-VMware_ESXi_8.0.0_Driver", "1OEM.800.1.0.20613240"),
}
_MANAGER_VERSION = re.compile(r"^[0-9]+(?:\.[0-9]+)+$")
ADAPTER_TYPES = ("fc", "fcoe", "iscsi", "sas", "block")
LOCAL_ADAPTER_TYPES = ("sas", "block")
ADAPTER_STATUSES = ("online", "offline", "unknown")
PATH_STATES = ("active", "standby", "disabled", "dead")
DATASTORE_TYPES = ("VMFS", "NFS", "NFS41", "vsan")
POWER_STATES = ("poweredOn", "poweredOff", "suspended")
GPU_COUNTER_NAMES = ("utilization", "mem.used", "mem.usage", "temperature", "power.used")
COUNTER_INSTANCES = ("pci", "index", "decimal", "opaque")
# The subsystem (vendor 10de, device) that real boards report, by device id: NVIDIA's
# "Compatible GPUs" table of the open GPU kernel modules (github.com/NVIDIA/
# open-gpu-kernel-modules README.md, release 560.31.02; the H200 NVL and the RTX PRO
# Blackwell Server Editions from the table of release 610.43.03), and pci.ids for
# the M10 ("10de 1160 Tesla M10", github.com/pciutils/pciids commit c1c12547d626,
# 2026-08-22). A physical board never reports subsystem device 0x0000: that is an
# SR-IOV virtual function. Device 25b6 is two boards (A16: 14a9, A2: 157e).
REAL_SUBSYSTEMS = {
    0x13BD: 0x1160,  # Tesla M10
    0x1EB8: 0x12A2,  # Tesla T4
    0x20B5: 0x1533,  # A100 80GB PCIe
    0x20F1: 0x145F,  # A100-PCIE-40GB
    0x2235: 0x145A,  # A40
    0x2236: 0x1482,  # A10
    0x2321: 0x1839,  # H100 NVL
    0x2330: 0x16C0,  # H100 80GB HBM3 (SXM5)
    0x2331: 0x1626,  # H100 PCIe
    0x233B: 0x1996,  # H200 NVL
    0x25B6: 0x14A9,  # A16 (A2: 0x157E)
    0x26B1: 0x16A1,  # RTX 6000 Ada Generation
    0x26B5: 0x169D,  # L40
    0x26B9: 0x1851,  # L40S
    0x27B8: 0x16CA,  # L4
    0x2BB5: 0x204E,  # RTX PRO 6000 Blackwell Server Edition
    0x2C3A: 0x21F4,  # RTX PRO 4500 Blackwell Server Edition
}
A2_SUBSYSTEM = 0x157E
TELEMETRY_SERIES = ("utilization", "memory_used_mb", "temperature_c", "power_w")
MAX_SERIES = 10_000  # samples per series
EVALUATION_KEY = "00000-00000-00000-00000-00000"
SERVER_KINDS = ("vcenter", "esxi")
# A standalone ESXi host (vcenter.kind esxi): what its about says, and the name of
# its one datacenter.
ESXI_NAME = "VMware ESXi"
ESXI_DATACENTER = "ha-datacenter"
# The ESX simulator numbers its own counters from 65536; the lab's GPU counters
# (at most 14 ids from gpu_counter_key) stay below them.
ESXI_COUNTER_KEY_MAX = 65536 - 14
HOST_EDITION = "esx.enterprisePlus.cpuPackageCoreLimited"
# The EVC baseline of the lab's CPUs (Xeon Gold 6448Y, Sapphire Rapids).
DEFAULT_MAX_EVC_MODE = "intel-sapphirerapids"
# hardware.biosInfo of a host that names none (a Dell PowerEdge R760 BIOS).
DEFAULT_BIOS = {"version": "2.1.5", "release_date": "2024-05-15"}
VCENTER_EDITION = "vc.standard.instance"
# The lab's stand-ins for what vSphere reports per edition. vSphere's own key for
# the shared passthrough graphics (vGPU) feature is not confirmed; "vgpu" is ours.
EDITION_NAMES = {
    HOST_EDITION: "vSphere 8 Enterprise Plus",
    "esx.standard.cpuPackageCoreLimited": "vSphere 8 Standard",
    "eval": "Evaluation Mode",
    VCENTER_EDITION: "vCenter Server 8 Standard",
    # vSphere Foundation and VMware Cloud Foundation (5.x, and 9's core entitlement);
    # they list no features unless the scenario gives some.
    "esx.vvf.cpuCoreMin": "VMware vSphere Foundation",
    "esx.vcf.cpuCoreMin": "vSphere 8 Enterprise Plus for VCF",
    "esx.vcf.entitlement.cpuCoreMin": "VMware Cloud Foundation (cores)",
}
EDITION_FEATURES = {
    HOST_EDITION: ("vmotion", "das", "drs", "dvs", "vgpu"),
    "esx.standard.cpuPackageCoreLimited": ("vmotion", "das"),
    "eval": ("vmotion", "das", "drs", "dvs", "vgpu"),
    VCENTER_EDITION: ("vpxStd",),
}
FEATURE_NAMES = {
    "vmotion": "vMotion",
    "das": "vSphere HA",
    "drs": "vSphere DRS",
    "dvs": "vSphere Distributed Switch",
    "vgpu": "Shared Passthrough Graphics",
    "vpxStd": "vCenter Server Standard",
}

# Model and driver that a host reports for each adapter type.
ADAPTER_MODELS = {
    "fc": ("LPe35002", "lpfc"),
    "fcoe": ("Cisco VIC FCoE HBA", "nfnic"),
    "iscsi": ("iSCSI Software Adapter", "iscsi_vmk"),
    "iscsi-hardware": ("QLogic FastLinQ QL41xxx iSCSI Adapter", "qedil"),
    "sas": ("Dell HBA355i Front", "lsi_msgpt35"),
    "block": ("PCIe NVMe Controller", "nvme_pcie"),
}
# WWN prefixes (NAA 1/2 and the vendor OUI) for derived FC and FCoE names.
_WWN_PREFIXES = {
    "fc": ("10:00:00:10:9b", "20:00:00:10:9b"),  # Emulex
    "fcoe": ("20:00:00:25:b5", "10:00:00:25:b5"),  # Cisco UCS
}

_PCI_ID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_HBA = re.compile(r"^vmhba[0-9]+$")
_VMK = re.compile(r"^vmk[1-9][0-9]*$")
_WWN = re.compile(r"^[0-9a-f]{2}(?::[0-9a-f]{2}){7}$")
_API_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$")
# A vGPU profile name as vCenter reads its facts from it: board, MIG slices (MIG-backed
# profiles only), frame buffer in GiB, series, and the media extensions of a MIG profile
# (grid_l40s-24q, nvidia_a100d-3-40c, grid_a100-1-5cme, grid_rtx6000-ada-48q). The lab's
# own reading, standing in for vCenter's; gpuaudit's is gpuaudit/knowledge/catalog.py.
_PROFILE_NAME = re.compile(
    r"^(?:grid|nvidia)_(?P<board>[a-z0-9]+(?:-[a-z][a-z0-9]*)*)-"
    r"(?:(?P<slices>[0-9]+)-)?(?P<gib>[0-9]+)(?P<series>[a-z])(?:me)?$"
)
# vCenter escapes '/', '\' and '%' in entity names as %2f, %5c and %25, except a
# '%' that already starts one of those sequences: such a name cannot round-trip.
_ESCAPE_SEQUENCE = re.compile(r"%(?:2f|5c|25)", re.IGNORECASE)
# What SOAP (XML 1.0) cannot carry: C0 controls other than tab, newline and
# carriage return, and the non-characters U+FFFE and U+FFFF. DEL, C1 controls and
# line or paragraph separators are served as written.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_LICENCE_KEY = re.compile(r"^[0-9A-Z]{5}(?:-[0-9A-Z]{5}){4}$")


def _catalogue_model(gpu: dict[str, Any]) -> Any:
    """The catalogue's model of a normalised GPU, or None."""
    return catalog.model_for(
        gpu["vendor_id"],
        gpu["device_id"],
        gpu["device_name"],
        sub_vendor_id=gpu["sub_vendor_id"],
        sub_device_id=gpu["sub_device_id"],
    )


def _api_numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in version.split("."))


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _hash_hex(*parts: str) -> str:
    return hashlib.sha1("\x00".join(parts).encode("utf-8")).hexdigest()


def default_lun(datastore: str) -> str:
    """`naa.6` + 31 hex digits derived from the datastore name (an NAA type 6 id)."""
    return "naa.6" + _hash_hex("lun", datastore)[:31]


def default_licence_key(edition: str, expires: str | None) -> str:
    """Five groups of five derived from the edition and expiry: hosts that share both
    share one key, as hosts share a licence with capacity for several."""
    if edition == "eval":
        return EVALUATION_KEY
    digits = _hash_hex("licence", edition, expires or "").upper()[:25]
    return "-".join(digits[i : i + 5] for i in range(0, 25, 5))


def profile_defaults(name: str) -> dict[str, Any]:
    """What vCenter's vgpuProfileInfo says of a profile the scenario describes no further:
    the frame buffer and MIG slicing its name gives, class compute for the C series and
    quadro for the others; for a name of another form 0 GiB, timeSliced, quadro."""
    match = _PROFILE_NAME.match(name.lower())
    if match is None:
        return {"fb_gib": 0, "sharing": "timeSliced", "class": "quadro"}
    return {
        "fb_gib": int(match["gib"]),
        "sharing": "mig" if match["slices"] else "timeSliced",
        "class": "compute" if match["series"] == "c" else "quadro",
    }


def profile_board(name: str) -> str | None:
    """The board a profile name is for (grid_l40s-24q -> l40s), None for another form."""
    match = _PROFILE_NAME.match(name.lower())
    return match["board"] if match else None


def default_sub_device(vendor_id: int, device_id: int, device_name: str) -> int:
    """The subsystem device id a GPU reports when the scenario gives none: a real
    board's (REAL_SUBSYSTEMS; the A2's where the name names the A2 alone), else the
    device id itself, never 0x0000 (a virtual function's)."""
    if vendor_id == catalog.NVIDIA and device_id == 0x25B6:
        named_a2 = re.search(r"\bA2\b", device_name) and not re.search(r"\bA16\b", device_name)
        return A2_SUBSYSTEM if named_a2 else REAL_SUBSYSTEMS[0x25B6]
    if vendor_id == catalog.NVIDIA and device_id in REAL_SUBSYSTEMS:
        return REAL_SUBSYSTEMS[device_id]
    return device_id or 1


def device_vendor_id(vendor_id: int, device_id: int) -> int:
    """deviceVendorId: the PCI vendor id in the low 16 bits, the device id in the next 16."""
    return (device_id & 0xFFFF) << 16 | (vendor_id & 0xFFFF)


def default_wwn(kind: str, port: bool, host: str, device: str) -> str:
    prefix = _WWN_PREFIXES[kind][0 if port else 1]
    return prefix + ":" + ":".join(_hash_hex("wwn", host, device)[i : i + 2] for i in (0, 2, 4))


# ---------------------------------------------------------------------------
# The checker.


class _Normaliser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.hosts: dict[str, dict[str, Any]] = {}  # name -> normalised host
        self.host_dc: dict[str, str] = {}
        self.host_cluster: dict[str, str | None] = {}
        # cluster -> (its listed heartbeat datastores, the line that lists them)
        self.heartbeat_lists: dict[str, tuple[list[str], int | None]] = {}
        self.datastores: dict[str, dict[str, Any]] = {}
        self.datastore_dc: dict[str, str] = {}
        self.luns: dict[str, str] = {}
        self.host_datastores: dict[str, list[str]] = {}  # host -> datastores it mounts
        self.vms: dict[str, dict[str, Any]] = {}
        self.clusters: dict[str, dict[str, Any]] = {}
        self.datacenters: set[str] = set()
        self.device_lines: dict[int, int | None] = {}  # id(VM GPU device) -> its line
        self.esxi_about: dict[Any, Any] = {}  # the vcenter section of a kind esxi scenario
        self.serves_capacity = False  # a vCenter of API 9.0 or later: QueryCapacity
        self.serves_device_groups = False  # a server of API 8.0.0.1 or later
        self.serves_config_target = False  # a vCenter (QueryConfigTarget is asked of one)

    # -- reporting ----------------------------------------------------------

    def fail(self, line: int | None, message: str) -> NoReturn:
        where = f"{self.source}:{line}" if line else self.source
        raise ScenarioError(f"{where}: {message}")

    # -- typed access -------------------------------------------------------

    def mapping(
        self,
        value: Any,
        what: str,
        line: int | None,
        allowed: tuple[str, ...],
        required: tuple[str, ...] = (),
        kind: str | None = None,
    ) -> dict[Any, Any]:
        """Check a mapping's keys; with ``kind``, messages call it by its name."""
        if not isinstance(value, dict):
            self.fail(line, f"{what} must be a mapping, not {_kind(value)}")
        name = value.get("name")
        if kind is not None and isinstance(name, str) and name.strip():
            what = f"{kind} {name}"
        for key in value:
            if key not in allowed:
                self.fail(_line_of(value, key), f"unknown key {key!r} in {what}")
        for key in required:
            if key not in value:
                self.fail(_line_of(value) or line, f"{what} has no {key!r}")
        return value

    def get(self, m: dict[Any, Any], key: str, default: Any) -> tuple[Any, int | None, bool]:
        """(value, line, given); a key written with no value counts as not given."""
        line = _line_of(m, key)
        if key not in m or m[key] is None:
            return default, line, False
        return m[key], line, True

    def string(
        self,
        m: dict[Any, Any],
        key: str,
        what: str,
        default: Any = _REQUIRED,
        choices: tuple[str, ...] | None = None,
    ) -> Any:
        value, line, given = self.get(m, key, default)
        if not given:
            if default is _REQUIRED:
                self.fail(line, f"{what} has no {key!r}")
            return default
        if not isinstance(value, str):
            self.fail(line, f"{key!r} of {what} must be a string, not {_kind(value)}")
        if choices is not None and value not in choices:
            self.fail(line, f"{key!r} of {what} must be one of {', '.join(choices)}, not {value!r}")
        return value

    def name(self, m: dict[Any, Any], what: str) -> str:
        value, line, given = self.get(m, "name", None)
        if not given:
            self.fail(line, f"{what} has no 'name'")
        if not isinstance(value, str):
            self.fail(line, f"the name of {what} must be a string, not {_kind(value)}")
        if not value.strip():
            self.fail(line, f"the name of {what} is empty")
        if _CONTROL.search(value):
            self.fail(line, f"the name of {what} contains a control character XML 1.0 cannot carry")
        if _ESCAPE_SEQUENCE.search(value):
            self.fail(
                line,
                f"the name {value!r} contains an escape sequence (%2f, %5c or %25) that "
                "vCenter would read back as '/', '\\' or '%'",
            )
        return value

    def boolean(self, m: dict[Any, Any], key: str, what: str, default: Any) -> Any:
        value, line, given = self.get(m, key, default)
        if given and not isinstance(value, bool):
            self.fail(line, f"{key!r} of {what} must be true or false, not {_kind(value)}")
        return value

    def integer(
        self,
        m: dict[Any, Any],
        key: str,
        what: str,
        default: Any = _REQUIRED,
        minimum: int = 0,
        maximum: int | None = None,
        hex_ok: bool = False,
    ) -> Any:
        value, line, given = self.get(m, key, default)
        if not given:
            if default is _REQUIRED:
                self.fail(line, f"{what} has no {key!r}")
            return default
        if hex_ok and isinstance(value, str) and re.fullmatch(r"0[xX][0-9a-fA-F]+", value):
            value = int(value, 16)
        if not isinstance(value, int) or isinstance(value, bool):
            kind = "a whole number or a hex number like 0x10de" if hex_ok else "a whole number"
            self.fail(line, f"{key!r} of {what} must be {kind}, not {_kind(value)}")
        if value < minimum or (maximum is not None and value > maximum):
            limit = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            self.fail(line, f"{key!r} of {what} must be {limit}, not {value}")
        return value

    def pci_id(self, value: Any, line: int | None, what: str) -> str:
        if not isinstance(value, str) or not _PCI_ID.match(value.lower()):
            self.fail(line, f"{what} must be a PCI address like 0000:3b:00.0, not {value!r}")
        return value.lower()

    def items(self, m: dict[Any, Any], key: str, what: str) -> list[tuple[Any, int | None, int]]:
        """The entries of list m[key] as (value, line, index); [] when absent."""
        value, line, given = self.get(m, key, [])
        if not given:
            return []
        if not isinstance(value, list):
            self.fail(line, f"{key!r} of {what} must be a list, not {_kind(value)}")
        return [(item, _line_of(value, i) or line, i) for i, item in enumerate(value)]

    def section(self, m: dict[Any, Any], key: str, what: str, allowed: tuple[str, ...]) -> Any:
        value, line, given = self.get(m, key, None)
        if not given:
            return _Map()
        return self.mapping(value, f"{key!r} of {what}", line, allowed)

    def unique(self, seen: dict[str, Any], name: str, kind: str, line: int | None) -> None:
        if name in seen:
            self.fail(line, f"two {kind}s are named {name!r}")

    # -- top level ----------------------------------------------------------

    def scenario(self, data: Any) -> dict[str, Any]:
        top = self.mapping(
            data,
            "the scenario",
            _line_of(data),
            # outcome: the failover outcomes the simulation tests read; the lab ignores it
            ("description", "vcenter", "datacenters", "expect", "faults", "outcome", "role"),
            ("datacenters",),
        )
        description = self.string(top, "description", "the scenario", "")
        vcenter = self.vcenter(top)
        esxi = vcenter["kind"] == "esxi"
        self.serves_capacity = not esxi and _api_numbers(vcenter["api_version"]) >= CAPACITY_API
        self.serves_device_groups = _api_numbers(vcenter["api_version"]) >= DEVICE_GROUPS_API
        self.serves_config_target = not esxi
        dcs = self.items(top, "datacenters", "the scenario")
        if not dcs:
            self.fail(_line_of(top, "datacenters"), "the scenario needs at least one datacenter")
        if esxi and len(dcs) > 1:
            self.fail(
                dcs[1][1], f"a scenario of kind esxi has exactly one datacenter, {ESXI_DATACENTER}"
            )
        datacenters = [self.datacenter(dc, line, i, esxi) for dc, line, i in dcs]
        if esxi:
            self.esxi_host(top, vcenter, dcs[0][0], datacenters[0])
        expect = [
            self.expectation(e, line) for e, line, _ in self.items(top, "expect", "the scenario")
        ]
        faults = self.faults(top)
        return {
            "description": description,
            "vcenter": vcenter,
            "datacenters": datacenters,
            "expect": expect,
            "faults": faults,
            "role": self.role(top),
        }

    def role(self, top: dict[Any, Any]) -> dict[str, Any]:
        """The audit account's privileges beyond the Read-only role (``privileges``)."""
        section = self.section(top, "role", "the scenario", ("privileges",))
        granted: list[str] = []
        for name, line, i in self.items(section, "privileges", "'role'"):
            if name not in ROLE_PRIVILEGES:
                self.fail(
                    line,
                    f"privilege #{i + 1} of 'role' must be one of {', '.join(ROLE_PRIVILEGES)},"
                    f" not {name!r}",
                )
            if name in granted:
                self.fail(line, f"'role' grants {name} twice")
            granted.append(name)
        return {"privileges": granted}

    def faults(self, top: dict[Any, Any]) -> dict[str, Any]:
        """What the lab withholds: ``no_permission`` entries name an object and a path,
        ``invisible`` the objects the account may not see at all."""
        section = self.section(top, "faults", "the scenario", ("no_permission", "invisible"))
        known = (
            set(self.hosts) | set(self.vms) | set(self.datastores) | set(self.clusters)
        ) | self.datacenters
        denied = []
        for entry, line, i in self.items(section, "no_permission", "'faults'"):
            what = f"no_permission entry #{i + 1}"
            entry = self.mapping(entry, what, line, ("object", "property"), ("object",))
            name = self.string(entry, "object", what)
            if name not in known:
                self.fail(
                    _line_of(entry, "object") or line,
                    f"{what} names {name!r}, which is not in the scenario",
                )
            denied.append({"object": name, "property": self.string(entry, "property", what, None)})
        hidden = []
        for name, line, i in self.items(section, "invisible", "'faults'"):
            if not isinstance(name, str) or name not in known:
                self.fail(
                    line, f"invisible entry #{i + 1} ({name!r}) is not a name in the scenario"
                )
            hidden.append(name)
        return {"no_permission": denied, "invisible": hidden}

    def vcenter(self, top: dict[Any, Any]) -> dict[str, Any]:
        what = "vcenter"
        vc = self.section(
            top,
            "vcenter",
            "the scenario",
            (
                "kind", "name", "version", "build", "api_version", "settings", "statistics_level",
                "gpu_counters", "gpu_counter_key", "licence",
            ),
        )  # fmt: skip
        kind = self.string(vc, "kind", what, "vcenter", SERVER_KINDS)
        if kind == "esxi":
            return self.esxi_server(vc)
        api = self.string(vc, "api_version", what, "8.0.3.0")
        if not _API_VERSION.match(api):
            self.fail(
                _line_of(vc, "api_version"), f"api_version must look like 8.0.3.0, not {api!r}"
            )
        settings_raw, line, given = self.get(vc, "settings", {})
        if given and not isinstance(settings_raw, dict):
            self.fail(line, f"'settings' of vcenter must be a mapping, not {_kind(settings_raw)}")
        settings: dict[str, Any] = {}
        for key, value in settings_raw.items():
            key_line = _line_of(settings_raw, key)
            if not isinstance(key, str) or not key:
                self.fail(key_line, f"setting name {key!r} must be a string")
            if not isinstance(value, (bool, int, str)):
                self.fail(key_line, f"setting {key!r} must be a boolean, number or string")
            if key == "vgpu.hotmigrate.enabled" and not (
                isinstance(value, bool)
                or (isinstance(value, str) and value.lower() in ("true", "false"))
            ):
                self.fail(key_line, "setting 'vgpu.hotmigrate.enabled' must be true or false")
            settings[key] = value
        return {
            "kind": kind,
            "name": self.string(vc, "name", what, "VMware vCenter Server"),
            "version": self.string(vc, "version", what, "8.0.3"),
            "build": str(self.string_or_int(vc, "build", what, "24022515")),
            "api_version": api,
            "settings": settings,
            "statistics_level": self.integer(vc, "statistics_level", what, 4, minimum=1, maximum=4),
            "gpu_counters": self.counter_names(vc),
            "gpu_counter_key": self.integer(vc, "gpu_counter_key", what, 1000, minimum=1000),
            "licence": self.licence(vc, what, VCENTER_EDITION),
        }

    def esxi_server(self, vc: dict[Any, Any]) -> dict[str, Any]:
        """The server of a standalone ESXi host: its about comes from its one host
        (esxi_host fills in version and build), and it has nothing vCenter's."""
        what = "vcenter (kind esxi)"
        refused = {
            "statistics_level": "an ESXi host has no statistics levels; it keeps the last "
            "hour of 20-second samples",
            "licence": "an ESXi host's licence is the 'licence' of its standalone host",
        }
        for key, why in refused.items():
            if self.get(vc, key, None)[2]:
                self.fail(_line_of(vc, key), f"{key!r} of {what} is for a vCenter: {why}")
        settings, line, given = self.get(vc, "settings", {})
        if given and settings != {}:
            self.fail(
                line,
                f"'settings' of {what} is for a vCenter: an ESXi host has no vCenter advanced "
                "settings (vgpu.hotmigrate.enabled)",
            )
        api = self.string(vc, "api_version", what, "8.0.3.0")
        if not _API_VERSION.match(api):
            self.fail(
                _line_of(vc, "api_version"), f"api_version must look like 8.0.3.0, not {api!r}"
            )
        self.esxi_about = vc
        key = self.integer(
            vc, "gpu_counter_key", what, 1000, minimum=1000, maximum=ESXI_COUNTER_KEY_MAX
        )
        return {
            "kind": "esxi",
            "name": self.string(vc, "name", what, ESXI_NAME, (ESXI_NAME,)),
            "version": "",  # the host's (esxi_host)
            "build": "",
            "api_version": api,
            "settings": {},
            "statistics_level": None,
            "gpu_counters": self.counter_names(vc),
            "gpu_counter_key": key,
            "licence": None,
        }

    def esxi_host(
        self, top: dict[Any, Any], server: dict[str, Any], dc: Any, spec: dict[str, Any]
    ) -> None:
        """A standalone ESXi host: its one datacenter has no cluster and one connected host."""
        if spec["clusters"]:
            self.fail(
                _line_of(dc, "clusters"),
                "an ESXi host has no clusters: the host goes in standalone_hosts",
            )
        hosts = spec["standalone_hosts"]
        if len(hosts) != 1:
            line = _line_of(dc["standalone_hosts"], 1) if len(hosts) > 1 else _line_of(dc)
            self.fail(
                line or _line_of(top, "datacenters"),
                "a scenario of kind esxi has exactly one standalone host: the ESXi host itself",
            )
        host = hosts[0]
        if host["connection"] != "connected":
            raw_host = dc["standalone_hosts"][0]
            self.fail(
                _line_of(raw_host, "connection"),
                f"the ESXi host {host['name']} is the server itself, so it is connected",
            )
        for key in ("version", "build"):
            value, line, given = self.get(self.esxi_about, key, None)
            if given and str(value) != host[key]:
                self.fail(
                    line,
                    f"{key!r} of vcenter (kind esxi) is its host's {key} ({host[key]}), "
                    f"not {value!r}: leave it out",
                )
            server[key] = host[key]

    def counter_names(self, vc: dict[Any, Any]) -> list[str]:
        value, line, given = self.get(vc, "gpu_counters", list(GPU_COUNTER_NAMES))
        if not given:
            return list(value)
        if not isinstance(value, list):
            self.fail(line, f"'gpu_counters' of vcenter must be a list, not {_kind(value)}")
        names: list[str] = []
        for i, name in enumerate(value):
            item_line = _line_of(value, i) or line
            if name not in GPU_COUNTER_NAMES:
                choices = ", ".join(GPU_COUNTER_NAMES)
                self.fail(item_line, f"GPU counter {name!r} of vcenter is not one of {choices}")
            if name in names:
                self.fail(item_line, f"vcenter lists GPU counter {name!r} twice")
            names.append(name)
        return names

    def licence(self, m: dict[Any, Any], what: str, edition_default: str) -> dict[str, Any]:
        """A licence (docs/scenario-format.md); every key has a default."""
        lic = self.section(m, "licence", what, ("key", "edition", "name", "expires", "features"))
        where = f"the licence of {what}"
        edition = self.string(lic, "edition", where, edition_default)
        if not edition:
            self.fail(_line_of(lic, "edition"), f"{where} has an empty edition")
        expires = self.string(lic, "expires", where, None)
        if expires is not None:
            try:
                if not _DAY.match(expires):
                    raise ValueError(expires)
                date.fromisoformat(expires)
            except ValueError:
                self.fail(
                    _line_of(lic, "expires"), f"'expires' of {where} must be a date YYYY-MM-DD"
                )
        key = self.string(lic, "key", where, default_licence_key(edition, expires))
        if not _LICENCE_KEY.match(key):
            self.fail(
                _line_of(lic, "key"),
                f"'key' of {where} must look like AAAAA-BBBBB-CCCCC-DDDDD-EEEEE",
            )
        features_raw, line, given = self.get(lic, "features", None)
        if not given:
            features_raw = list(EDITION_FEATURES.get(edition, ()))
        elif not isinstance(features_raw, list):
            self.fail(line, f"'features' of {where} must be a list, not {_kind(features_raw)}")
        features: list[dict[str, str]] = []
        for i, item in enumerate(features_raw):
            item_line = _line_of(features_raw, i) or line
            if isinstance(item, str):
                item = {"key": item}
            item = self.mapping(
                item, f"feature #{i + 1} of {where}", item_line, ("key", "name"), ("key",)
            )
            feature = self.string(item, "key", f"feature #{i + 1} of {where}")
            if not feature:
                self.fail(item_line, f"feature #{i + 1} of {where} has an empty key")
            if any(f["key"] == feature for f in features):
                self.fail(item_line, f"{where} lists feature {feature!r} twice")
            name = self.string(
                item, "name", f"feature {feature} of {where}", FEATURE_NAMES.get(feature, feature)
            )
            features.append({"key": feature, "name": name})
        return {
            "key": key,
            "edition": edition,
            "name": self.string(lic, "name", where, EDITION_NAMES.get(edition, edition)),
            "expires": expires,
            "features": features,
        }

    def string_or_int(self, m: dict[Any, Any], key: str, what: str, default: str) -> str:
        value, line, given = self.get(m, key, default)
        if given and (isinstance(value, bool) or not isinstance(value, (str, int))):
            self.fail(line, f"{key!r} of {what} must be a string, not {_kind(value)}")
        return str(value)

    def datacenter(self, dc: Any, line: int | None, index: int, esxi: bool) -> dict[str, Any]:
        dc = self.mapping(
            dc,
            f"datacenter #{index + 1}",
            line,
            ("name", "clusters", "standalone_hosts", "datastores", "vms"),
            kind="datacenter",
        )
        if esxi and not self.get(dc, "name", None)[2]:
            name = ESXI_DATACENTER
        else:
            name = self.name(dc, f"datacenter #{index + 1}")
        if esxi and name != ESXI_DATACENTER:
            self.fail(
                _line_of(dc, "name"),
                f"the datacenter of an ESXi host is {ESXI_DATACENTER}, not {name!r}",
            )
        if name in self.datacenters:
            self.fail(_line_of(dc, "name"), f"two datacenters are named {name!r}")
        self.datacenters.add(name)
        what = f"datacenter {name}"
        clusters = [self.cluster(c, cl, i, name) for c, cl, i in self.items(dc, "clusters", what)]
        standalone = [
            self.host(h, hl, i, name, None, f"standalone host #{i + 1} of {what}")
            for h, hl, i in self.items(dc, "standalone_hosts", what)
        ]
        datastores = [
            self.datastore(d, dl, i, name) for d, dl, i in self.items(dc, "datastores", what)
        ]
        for cluster in clusters:
            listed, hb_line = self.heartbeat_lists[cluster["name"]]
            for ds in listed:
                if ds not in self.datastores or self.datastore_dc[ds] != name:
                    self.fail(
                        hb_line,
                        f"heartbeat datastore {ds!r} of cluster {cluster['name']} is not in {what}",
                    )
        vms = [self.vm(v, vl, i, name) for v, vl, i in self.items(dc, "vms", what)]
        self.place_gpus(vms)
        for cluster in clusters:
            self.check_rule_vms(cluster, vms)
        return {
            "name": name,
            "clusters": clusters,
            "standalone_hosts": standalone,
            "datastores": datastores,
            "vms": vms,
        }

    # -- clusters -----------------------------------------------------------

    def cluster(self, c: Any, line: int | None, index: int, dc: str) -> dict[str, Any]:
        label = f"cluster #{index + 1} of datacenter {dc}"
        c = self.mapping(
            c,
            label,
            line,
            ("name", "ha", "drs", "hosts", "config_issues", "evc_mode", "groups", "rules"),
            kind="cluster",
        )
        name = self.name(c, label)
        self.unique(self.clusters, name, "cluster", _line_of(c, "name"))
        what = f"cluster {name}"
        ha = self.section(
            c,
            "ha",
            what,
            (
                "enabled", "host_monitoring", "default_restart_priority", "admission_control",
                "isolation_response", "vmcp", "heartbeat", "options",
            ),
        )  # fmt: skip
        vmcp = self.section(ha, "vmcp", what, ("enabled", "apd", "pdl"))
        heartbeat = self.section(ha, "heartbeat", what, ("policy", "datastores"))
        ac = self.section(
            ha,
            "admission_control",
            what,
            (
                "enabled",
                "policy",
                "failover_level",
                "cpu_percent",
                "memory_percent",
                "failover_hosts",
            ),
        )
        drs = self.section(c, "drs", what, ("enabled", "automation", "options"))
        hosts = [
            self.host(h, hl, i, dc, name, f"host #{i + 1} of {what}")
            for h, hl, i in self.items(c, "hosts", what)
        ]
        host_names = {h["name"] for h in hosts}
        failover_hosts = []
        for host, host_line, _ in self.items(ac, "failover_hosts", what):
            if not isinstance(host, str) or host not in host_names:
                self.fail(
                    host_line, f"failover host {host!r} of {what} is not a host of the cluster"
                )
            failover_hosts.append(host)
        policy = self.string(
            ac, "policy", f"the admission control of {what}", None, ADMISSION_POLICIES
        )
        if policy == "dedicated-hosts" and not failover_hosts:
            self.fail(
                _line_of(ac, "policy"),
                f"dedicated-hosts admission control of {what} names no failover_hosts",
            )
        if failover_hosts and policy != "dedicated-hosts":
            self.fail(
                _line_of(ac, "failover_hosts"),
                f"failover_hosts of {what} need policy dedicated-hosts",
            )
        result = {
            "name": name,
            "ha": {
                "enabled": self.boolean(ha, "enabled", f"the HA of {what}", False),
                "host_monitoring": self.boolean(ha, "host_monitoring", f"the HA of {what}", True),
                "default_restart_priority": self.string(
                    ha,
                    "default_restart_priority",
                    f"the HA of {what}",
                    "medium",
                    RESTART_PRIORITIES,
                ),
                "admission_control": {
                    "enabled": self.boolean(
                        ac, "enabled", f"the admission control of {what}", False
                    ),
                    "policy": policy,
                    "failover_level": self.integer(
                        ac, "failover_level", what, 1, minimum=1, maximum=31
                    ),
                    "cpu_percent": self.integer(ac, "cpu_percent", what, 25, maximum=100),
                    "memory_percent": self.integer(ac, "memory_percent", what, 25, maximum=100),
                    "failover_hosts": failover_hosts,
                },
            },
            "drs": {
                "enabled": self.boolean(drs, "enabled", f"the DRS of {what}", False),
                "automation": self.string(
                    drs, "automation", f"the DRS of {what}", "fullyAutomated", DRS_AUTOMATION
                ),
                "options": self.drs_options(drs, f"the DRS of {what}"),
            },
            "hosts": hosts,
            "config_issues": self.config_issues(c, what),
            "evc_mode": self.string(c, "evc_mode", what, None),
        }
        ha_result: dict[str, Any] = result["ha"]
        ha_result["options"] = self.ha_options(ha, f"the HA of {what}")
        result |= self.drs_rules(c, what, host_names)
        ha_result |= {
            "isolation_response": self.string(
                ha, "isolation_response", f"the HA of {what}", "powerOff", ISOLATION_RESPONSES
            ),
            "vmcp": {
                "enabled": self.boolean(vmcp, "enabled", f"the VMCP of {what}", True),
                "apd": self.string(
                    vmcp, "apd", f"the VMCP of {what}", "restartConservative", APD_RESPONSES
                ),
                "pdl": self.string(
                    vmcp, "pdl", f"the VMCP of {what}", "restartAggressive", PDL_RESPONSES
                ),
            },
            "heartbeat": {
                "policy": self.string(
                    heartbeat,
                    "policy",
                    f"the heartbeat datastores of {what}",
                    "allFeasibleDsWithUserPreference",
                    HEARTBEAT_POLICIES,
                ),
                "datastores": [
                    self.string({"d": d}, "d", f"a heartbeat datastore of {what}")
                    for d, _, _ in self.items(heartbeat, "datastores", what)
                ],
            },
        }
        self.heartbeat_lists[name] = (ha_result["heartbeat"]["datastores"], _line_of(heartbeat))
        # The HA agents: the first active host is the master, the others connect to it,
        # unless a host states its own; no state where HA is off or the host is inactive.
        master = True
        for h in hosts:
            active = result["ha"]["enabled"] and h["connection"] == "connected"
            active = active and not h["maintenance"]
            if h["ha_state"] is None and active:
                h["ha_state"] = "master" if master else "connectedToMaster"
                master = False
        self.clusters[name] = result
        return result

    def ha_options(self, ha: dict[Any, Any], what: str) -> dict[str, str]:
        """vSphere HA advanced options; true and false as vCenter writes them."""
        options, line, _ = self.get(ha, "options", {})
        if not isinstance(options, dict):
            self.fail(line, f"'options' of {what} must be a mapping of option names to values")
        result = {}
        for key, value in options.items():
            if not isinstance(key, str) or not key or isinstance(value, (dict, list)):
                self.fail(
                    _line_of(options, key) or line,
                    f"option {key!r} of {what} must be a name with a number or text value",
                )
            result[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return result

    def drs_rules(self, c: dict[Any, Any], what: str, hosts: set[str]) -> dict[str, Any]:
        """DRS groups (of VMs or of hosts) and rules (VM-Host, VM-VM affinity or anti-affinity).

        VM names are checked once the datacenter's VMs are known (check_rule_vms)."""
        groups: list[dict[str, Any]] = []
        kinds: dict[str, str] = {}
        for g, g_line, i in self.items(c, "groups", what):
            g = self.mapping(g, f"group #{i + 1} of {what}", g_line, ("name", "vms", "hosts"))
            name = self.name(g, f"group #{i + 1} of {what}")
            if name in kinds:
                self.fail(g_line, f"two groups of {what} are named {name!r}")
            vms = [m for m, _, _ in self.items(g, "vms", f"group {name}")]
            hosts_of = [m for m, _, _ in self.items(g, "hosts", f"group {name}")]
            if bool(vms) == bool(hosts_of):
                self.fail(g_line, f"group {name} of {what} must list either vms or hosts")
            kind = "vms" if vms else "hosts"
            members = vms or hosts_of
            for m in members:
                if not isinstance(m, str) or (kind == "hosts" and m not in hosts):
                    self.fail(
                        g_line, f"group {name} of {what} names {m!r}, not a {kind[:-1]} of it"
                    )
            kinds[name] = kind
            groups.append({"name": name, "vms": members if kind == "vms" else [],
                           "hosts": members if kind == "hosts" else []})  # fmt: skip
        rules: list[dict[str, Any]] = []
        keys = (
            "name", "enabled", "mandatory", "vm_group", "affine_host_group",
            "anti_affine_host_group", "kind", "vms",
        )  # fmt: skip
        for r, r_line, i in self.items(c, "rules", what):
            r = self.mapping(r, f"rule #{i + 1} of {what}", r_line, keys)
            name = self.name(r, f"rule #{i + 1} of {what}")
            rule = {
                "name": name,
                "enabled": self.boolean(r, "enabled", f"rule {name}", True),
                "mandatory": self.boolean(r, "mandatory", f"rule {name}", False),
                "kind": self.string(
                    r, "kind", f"rule {name}", "vm-host", ("vm-host", "affinity", "anti-affinity")
                ),
                "vm_group": "",
                "affine_host_group": "",
                "anti_affine_host_group": "",
                "vms": [],
            }
            if rule["kind"] == "vm-host":
                rule["vm_group"] = self.string(r, "vm_group", f"rule {name}")
                affine = self.string(r, "affine_host_group", f"rule {name}", "")
                anti = self.string(r, "anti_affine_host_group", f"rule {name}", "")
                if bool(affine) == bool(anti):
                    self.fail(r_line, f"rule {name} of {what} needs exactly one host group")
                for group, kind in ((rule["vm_group"], "vms"), (affine or anti, "hosts")):
                    if kinds.get(group) != kind:
                        self.fail(r_line, f"rule {name} of {what}: no group of {kind} {group!r}")
                rule["affine_host_group"], rule["anti_affine_host_group"] = affine, anti
            else:
                rule["vms"] = [v for v, _, _ in self.items(r, "vms", f"rule {name}")]
                if len(rule["vms"]) < 2:
                    self.fail(r_line, f"rule {name} of {what} needs two VMs or more")
            rules.append(rule)
        return {"groups": groups, "rules": rules}

    def check_rule_vms(self, cluster: dict[str, Any], vms: list[dict[str, Any]]) -> None:
        """Every VM a group or rule names runs on a host of the cluster."""
        hosts = {h["name"] for h in cluster["hosts"]}
        here = {v["name"] for v in vms if v["host"] in hosts}
        named = [n for g in cluster["groups"] for n in g["vms"]]
        named += [n for r in cluster["rules"] for n in r["vms"]]
        for vm in named:
            if vm not in here:
                self.fail(None, f"cluster {cluster['name']}: {vm!r} is not a VM of the cluster")

    def drs_options(self, drs: dict[Any, Any], what: str) -> dict[str, str]:
        """DRS advanced options: names to values, kept as the strings vCenter stores."""
        options, line, _ = self.get(drs, "options", {})
        if not isinstance(options, dict):
            self.fail(line, f"'options' of {what} must be a mapping of option names to values")
        result = {}
        for key, value in options.items():
            if not isinstance(key, str) or not key or isinstance(value, (dict, list)):
                self.fail(
                    _line_of(options, key) or line,
                    f"option {key!r} of {what} must be a name with a number or text value",
                )
            result[key] = str(value)
        return result

    # -- hosts --------------------------------------------------------------

    def host(
        self, h: Any, line: int | None, index: int, dc: str, cluster: str | None, label: str
    ) -> dict[str, Any]:
        h = self.mapping(
            h,
            label,
            line,
            (
                "name", "version", "build", "vendor", "model", "cpu_cores", "cpu_mhz",
                "memory_gb", "connection", "maintenance", "graphics", "gpus", "vgpu_profiles",
                "adapters", "vmotion", "gpu_counter_instances", "licence", "ha_state",
                "config_issues", "max_evc_mode", "bios", "device_groups", "vgpu_manager",
            ),
            kind="host",
        )  # fmt: skip
        name = self.name(h, label)
        self.unique(self.hosts, name, "host", _line_of(h, "name"))
        what = f"host {name}"
        graphics = self.section(h, "graphics", what, ("default_type", "assignment_policy"))
        profiles = self.vgpu_profiles(h, what)
        gpus: list[dict[str, Any]] = []
        for gpu, gpu_line, i in self.items(h, "gpus", what):
            normalised = self.gpu(gpu, gpu_line, i, what, bool(profiles))
            if any(g["pci_id"] == normalised["pci_id"] for g in gpus):
                self.fail(gpu_line, f"{what} has two GPUs at {normalised['pci_id']}")
            gpus.append(normalised)
        for profile in profiles:
            if profile["device_vendor_id"] is None:
                profile["device_vendor_id"] = self.profile_gpu_ids(profile["name"], gpus)
        result = {
            "name": name,
            "version": self.string(h, "version", what, "8.0.3"),
            "build": self.string_or_int(h, "build", what, "24022510"),
            "vendor": self.string(h, "vendor", what, "Dell Inc."),
            "model": self.string(h, "model", what, "PowerEdge R760"),
            "cpu_cores": self.integer(h, "cpu_cores", what, 32, minimum=1, maximum=1024),
            "cpu_mhz": self.integer(h, "cpu_mhz", what, 2800, minimum=1),
            "memory_gb": self.integer(h, "memory_gb", what, 512, minimum=1),
            "connection": self.string(h, "connection", what, "connected", CONNECTION_STATES),
            "maintenance": self.boolean(h, "maintenance", what, False),
            "graphics": {
                "default_type": self.string(
                    graphics,
                    "default_type",
                    f"the graphics of {what}",
                    "shared",
                    HOST_GRAPHICS_TYPES,
                ),
                "assignment_policy": self.string(
                    graphics,
                    "assignment_policy",
                    f"the graphics of {what}",
                    "performance",
                    ASSIGNMENT_POLICIES,
                ),
            },
            "gpus": gpus,
            "vgpu_profiles": profiles,
            "adapters": self.adapters(h, name, what),
            "vmotion": self.vmotion(h, what),
            "gpu_counter_instances": self.string(
                h, "gpu_counter_instances", what, "pci", COUNTER_INSTANCES
            ),
            "licence": self.licence(h, what, HOST_EDITION),
            "ha_state": self.string(h, "ha_state", what, None, HA_STATES),
            "config_issues": self.config_issues(h, what),
            "max_evc_mode": self.string(h, "max_evc_mode", what, DEFAULT_MAX_EVC_MODE),
            "bios": self.bios(h, what),
            "device_groups": self.host_device_groups(h, what),
        }
        result["vgpu_manager"] = self.vgpu_manager(h, what, result["version"])
        self.hosts[name] = result
        self.host_dc[name] = dc
        self.host_cluster[name] = cluster
        return result

    def host_device_groups(self, h: dict[Any, Any], what: str) -> list[dict[str, Any]]:
        """The vendor device groups the host offers, served by QueryConfigTarget (API
        8.0.0.1): each a name, a description and its components."""
        groups: list[dict[str, Any]] = []
        entries = self.items(h, "device_groups", what)
        if entries and not (self.serves_device_groups and self.serves_config_target):
            self.fail(
                _line_of(h, "device_groups"),
                f"'device_groups' of {what} needs a vCenter of api_version 8.0.0.1 or later, "
                "which serves vendorDeviceGroupInfo",
            )
        for g, line, i in entries:
            label = f"device group #{i + 1} of {what}"
            g = self.mapping(g, label, line, ("name", "description", "components"), ("name",))
            name = self.string(g, "name", label)
            if not name:
                self.fail(line, f"{label} has an empty name")
            if any(other["name"] == name for other in groups):
                self.fail(line, f"{what} offers device group {name!r} twice")
            about = f"device group {name!r} of {what}"
            components = []
            for c, c_line, j in self.items(g, "components", about):
                c_label = f"component #{j + 1} of {about}"
                c = self.mapping(
                    c, c_label, c_line, ("type", "vendor", "device", "configurable", "vgpu")
                )
                kind = self.string(c, "type", c_label, "nvidiaVgpu", COMPONENT_TYPES)
                vgpu = self.string(c, "vgpu", c_label, None)
                if vgpu is not None and kind != "nvidiaVgpu":
                    self.fail(_line_of(c, "vgpu"), f"'vgpu' of {c_label} is for nvidiaVgpu only")
                components.append(
                    {
                        "type": kind,
                        "vendor": self.string(c, "vendor", c_label, COMPONENT_VENDOR),
                        "device": self.string(c, "device", c_label, vgpu or ""),
                        "configurable": self.boolean(c, "configurable", c_label, False),
                        "vgpu": vgpu,
                    }
                )
            if not components:
                self.fail(line, f"{about} has no components")
            groups.append(
                {
                    "name": name,
                    "description": self.string(g, "description", about, ""),
                    "components": components,
                }
            )
        return groups

    @staticmethod
    def profile_gpu_ids(profile: str, gpus: list[dict[str, Any]]) -> int:
        """deviceVendorId of a profile: the PCI ids of the host's first GPU of the board the
        profile is for (by the catalogue's model), else of its first GPU; NVIDIA's vendor
        id alone on a host without a GPU."""
        board = profile_board(profile)
        for gpu in gpus:
            model = _catalogue_model(gpu)
            if model is not None and model.profile_prefix == board:
                return device_vendor_id(gpu["vendor_id"], gpu["device_id"])
        if gpus:
            return device_vendor_id(gpus[0]["vendor_id"], gpus[0]["device_id"])
        return device_vendor_id(catalog.NVIDIA, 0)

    def bios(self, h: dict[Any, Any], what: str) -> dict[str, str]:
        """hardware.biosInfo: its version and release date (YYYY-MM-DD)."""
        bios = self.section(h, "bios", what, ("version", "release_date"))
        label = f"the bios of {what}"
        version = self.string(bios, "version", label, DEFAULT_BIOS["version"])
        released, line, given = self.get(bios, "release_date", DEFAULT_BIOS["release_date"])
        if given and not isinstance(released, date):
            try:
                released = date.fromisoformat(str(released))
            except ValueError:
                self.fail(line, f"'release_date' of {label} must be a date (YYYY-MM-DD)")
        return {"version": version, "release_date": str(released)}

    def vgpu_manager(self, h: dict[Any, Any], what: str, esxi: str) -> dict[str, str] | None:
        """The NVIDIA vGPU manager VIB the host has installed: ``version`` (a driver version,
        550.54.16), ``vib`` (its name, by default NVIDIA's for the host's ESXi line) and
        ``vib_version`` (the VIB's own version, by default ``version`` with NVIDIA's OEM
        suffix for that line); a string is the version alone. None: no NVIDIA VIB."""
        value, line, given = self.get(h, "vgpu_manager", None)
        if not given:
            return None
        if isinstance(value, str):
            value = {"version": value}
        label = f"the vgpu_manager of {what}"
        m = self.mapping(value, label, line, ("version", "vib", "vib_version"), ("version",))
        version = self.string(m, "version", label)
        if not _MANAGER_VERSION.match(version):
            self.fail(
                _line_of(m, "version") or line, f"'version' of {label} must be like 550.54.16"
            )
        major = int(esxi.split(".")[0]) if esxi.split(".")[0].isdigit() else 8
        default_vib, suffix = MANAGER_VIBS.get(major, MANAGER_VIBS[8])
        vib = self.string(m, "vib", label, default_vib)
        vib_version = self.string(m, "vib_version", label, f"{version}-{suffix}")
        return {"version": version, "vib": vib, "vib_version": vib_version}

    def config_issues(self, m: dict[Any, Any], what: str) -> list[dict[str, Any]]:
        issues = []
        for issue, line, i in self.items(m, "config_issues", what):
            label = f"config issue #{i + 1} of {what}"
            issue = self.mapping(issue, label, line, ("kind", "message"), ("kind",))
            issues.append(
                {
                    "kind": self.string(issue, "kind", label, choices=CONFIG_ISSUES),
                    "message": self.string(issue, "message", label, ""),
                }
            )
        return issues

    def vgpu_profiles(self, h: dict[Any, Any], what: str) -> list[dict[str, Any]]:
        profiles: list[dict[str, Any]] = []
        for p, line, i in self.items(h, "vgpu_profiles", what):
            label = f"vGPU profile #{i + 1} of {what}"
            p = self.mapping(
                p,
                label,
                line,
                (
                    "name", "migrate", "suspend", "stun_estimates", "fb_gib", "sharing", "class",
                    "device_vendor_id", "capacity",
                ),
                ("name",),
                kind=f"{what}: vGPU profile",
            )  # fmt: skip
            name = self.string(p, "name", label)
            if not name:
                self.fail(line, f"{label} has an empty name")
            if any(q["name"] == name for q in profiles):
                self.fail(line, f"{what} lists vGPU profile {name!r} twice")
            about = f"vGPU profile {name} of {what}"
            derived = profile_defaults(name)
            profile = {
                "name": name,
                "migrate": self.boolean(p, "migrate", about, True),
                "suspend": self.boolean(p, "suspend", about, True),
                "fb_gib": self.integer(p, "fb_gib", about, derived["fb_gib"]),
                "sharing": self.string(p, "sharing", about, derived["sharing"], PROFILE_SHARING),
                "class": self.string(p, "class", about, derived["class"], PROFILE_CLASSES),
                # None until the host's GPUs are known (host fills it in).
                "device_vendor_id": self.integer(
                    p, "device_vendor_id", about, None, maximum=0xFFFFFFFF, hex_ok=True
                ),
                "capacity": self.capacity(p, about),
            }
            estimates = self.stun_estimates(p, about)
            if estimates:  # only where given: most scenarios have none
                profile["stun_estimates"] = estimates
            profiles.append(profile)
        return profiles

    def capacity(self, p: dict[Any, Any], what: str) -> dict[str, Any] | None:
        """vCenter's answer to QueryCapacity for the profile (API 9.0 and later): the four
        counts, or ``unknown`` and its faults; an unknown answer when none is declared."""
        raw, line, given = self.get(p, "capacity", None)
        if not self.serves_capacity:
            if given:
                self.fail(
                    line,
                    f"'capacity' of {what} needs a vCenter of api_version 9.0.0.0 or later, "
                    "which serves DirectPathProfileManager",
                )
            return None
        if not given:
            return {"unknown": [CAPACITY_FAULTS[0]]}
        label = f"the capacity of {what}"
        c = self.mapping(
            raw, label, line, ("max", "consumed", "remaining", "unused_reservation", "unknown")
        )
        if "unknown" in c:
            if len(c) > 1:
                self.fail(line, f"{label} is either 'unknown' or counts, not both")
            faults, fault_line, _ = self.get(c, "unknown", [])
            faults = faults if isinstance(faults, list) else [faults]
            if not faults or any(f not in CAPACITY_FAULTS for f in faults):
                self.fail(
                    fault_line,
                    f"'unknown' of {label} must name faults among {', '.join(CAPACITY_FAULTS)}",
                )
            return {"unknown": list(faults)}
        maximum = self.integer(c, "max", label)
        consumed = self.integer(c, "consumed", label, 0)
        reserved = self.integer(c, "unused_reservation", label, 0)
        remaining = self.integer(c, "remaining", label, max(0, maximum - consumed - reserved))
        if consumed + remaining + reserved > maximum:
            self.fail(
                line,
                f"{label} does not add up: consumed + remaining + unused_reservation "
                f"({consumed + remaining + reserved}) is more than max ({maximum})",
            )
        return {
            "max": maximum,
            "consumed": consumed,
            "remaining": remaining,
            "unused_reservation": reserved,
        }

    def stun_estimates(self, p: dict[Any, Any], what: str) -> list[dict[str, int]]:
        """vCenter's stun time estimates of a profile: (bandwidth_mbps, stun_s) points."""
        points: list[dict[str, int]] = []
        for e, line, i in self.items(p, "stun_estimates", what):
            label = f"stun estimate #{i + 1} of {what}"
            e = self.mapping(
                e, label, line, ("bandwidth_mbps", "stun_s"), ("bandwidth_mbps", "stun_s")
            )
            bandwidth = self.integer(e, "bandwidth_mbps", label, minimum=1)
            if any(q["bandwidth_mbps"] == bandwidth for q in points):
                self.fail(line, f"{what} gives two stun estimates at {bandwidth} Mbps")
            points.append({"bandwidth_mbps": bandwidth, "stun_s": self.integer(e, "stun_s", label)})
        return points

    def gpu(
        self, g: Any, line: int | None, index: int, host_what: str, offers_vgpu: bool
    ) -> dict[str, Any]:
        label = f"GPU #{index + 1} of {host_what}"
        g = self.mapping(
            g,
            label,
            line,
            (
                "pci_id", "vendor_id", "device_id", "sub_vendor_id", "sub_device_id", "vendor_name",
                "device_name", "class_id", "memory_mb", "passthrough", "graphics_type", "vgpu_mode",
                "telemetry", "device_type", "sriov",
            ),
            ("pci_id", "device_id"),
        )  # fmt: skip
        pci_id = self.pci_id(g["pci_id"], _line_of(g, "pci_id"), f"'pci_id' of {label}")
        what = f"GPU {pci_id} of {host_what}"
        vendor_id = self.integer(g, "vendor_id", what, catalog.NVIDIA, maximum=0xFFFF, hex_ok=True)
        device_id = self.integer(g, "device_id", what, maximum=0xFFFF, hex_ok=True)
        device_name_given = self.string(g, "device_name", what, None)
        sub_vendor_id = self.integer(
            g, "sub_vendor_id", what, vendor_id, maximum=0xFFFF, hex_ok=True
        )
        sub_device_id = self.integer(
            g,
            "sub_device_id",
            what,
            default_sub_device(vendor_id, device_id, device_name_given or ""),
            maximum=0xFFFF,
            hex_ok=True,
        )
        model = catalog.model_for(
            vendor_id,
            device_id,
            device_name_given or "",
            sub_vendor_id=sub_vendor_id,
            sub_device_id=sub_device_id,
        )
        device_name = device_name_given
        if device_name is None:
            device_name = model.name if model else f"Device {device_id:04x}"
        passthrough = self.section(
            g, "passthrough", what, ("capable", "enabled", "active", "hardware_label")
        )
        enabled = self.boolean(passthrough, "enabled", f"the passthrough of {what}", False)
        default_type = "direct" if enabled else "sharedDirect" if offers_vgpu else "basic"
        graphics_type = self.string(g, "graphics_type", what, default_type, GPU_GRAPHICS_TYPES)
        return {
            "pci_id": pci_id,
            "vendor_id": vendor_id,
            "device_id": device_id,
            "sub_vendor_id": sub_vendor_id,
            "sub_device_id": sub_device_id,
            "vendor_name": self.string(
                g,
                "vendor_name",
                what,
                catalog.VENDOR_NAMES.get(vendor_id, f"Vendor {vendor_id:04x}"),
            ),
            "device_name": device_name,
            "class_id": self.integer(g, "class_id", what, 0x0302, maximum=0xFFFF, hex_ok=True),
            "memory_mb": self.integer(g, "memory_mb", what, model.memory_mb if model else 0),
            "passthrough": {
                "capable": self.boolean(passthrough, "capable", f"the passthrough of {what}", True),
                "enabled": enabled,
                "active": self.boolean(
                    passthrough, "active", f"the passthrough of {what}", enabled
                ),
                "hardware_label": self.string(
                    passthrough, "hardware_label", f"the passthrough of {what}", ""
                ),
            },
            "graphics_type": graphics_type,
            # By default a GPU in Shared or Shared Direct mode has its own setting of that type.
            "device_type": self.string(
                g,
                "device_type",
                what,
                graphics_type if graphics_type in ("shared", "sharedDirect") else "none",
                GPU_DEVICE_TYPES,
            ),
            "vgpu_mode": self.string(g, "vgpu_mode", what, None, VGPU_MODES),
            "telemetry": self.telemetry(g, what),
            "sriov": self.sriov(g, what, model, graphics_type),
        }

    def sriov(self, g: dict[Any, Any], what: str, model: Any, graphics_type: str) -> dict[str, Any]:
        """SR-IOV as the host reports it. By default an Ampere or later GPU reports it,
        with its virtual functions enabled and active when it serves vGPUs, and an older
        one does not; ``sriov: false`` reports none (SR-IOV off in the BIOS)."""
        value, _, given = self.get(g, "sriov", None)
        keys = ("reported", "capable", "enabled", "active", "vfs", "max_vfs", "listed")
        s = _Map() if value is False else self.section(g, "sriov", what, keys)
        label = f"the SR-IOV of {what}"
        newer = model is not None and catalog.vgpu_needs_sriov(model)
        reported = self.boolean(s, "reported", label, value is not False and (given or newer))
        capable = self.boolean(s, "capable", label, reported)
        enabled = self.boolean(s, "enabled", label, capable and graphics_type == "sharedDirect")
        active = self.boolean(s, "active", label, enabled)
        max_vfs = self.integer(s, "max_vfs", label, 16 if capable else 0, maximum=256)
        return {
            "reported": reported,
            "capable": capable,
            "enabled": enabled,
            "active": active,
            "vfs": self.integer(s, "vfs", label, max_vfs if active else 0, maximum=max_vfs),
            "max_vfs": max_vfs,
            "listed": self.boolean(s, "listed", label, False),
        }

    def telemetry(self, g: dict[Any, Any], what: str) -> dict[str, Any] | None:
        """A GPU's counter series, oldest first; None when the scenario gives none."""
        value, line, given = self.get(g, "telemetry", None)
        if not given:
            return None
        where = f"the telemetry of {what}"
        t = self.mapping(value, where, line, TELEMETRY_SERIES)
        out: dict[str, Any] = {}
        for key in TELEMETRY_SERIES:
            series, key_line, key_given = self.get(t, key, None)
            if not key_given:
                out[key] = None
                continue
            if not isinstance(series, list) or not series:
                self.fail(key_line, f"{key!r} of {where} must be a non-empty list of numbers")
            if len(series) > MAX_SERIES:
                self.fail(key_line, f"{key!r} of {where} has more than {MAX_SERIES} samples")
            for i, number in enumerate(series):
                item_line = _line_of(series, i) or key_line
                if isinstance(number, bool) or not isinstance(number, (int, float)):
                    self.fail(item_line, f"sample #{i + 1} of {key!r} of {where} is not a number")
                if number < 0 or (key == "utilization" and number > 100):
                    limit = "between 0 and 100" if key == "utilization" else ">= 0"
                    self.fail(item_line, f"sample #{i + 1} of {key!r} of {where} must be {limit}")
            out[key] = list(series)
        return out

    def adapters(self, h: dict[Any, Any], host: str, what: str) -> list[dict[str, Any]]:
        adapters: list[dict[str, Any]] = []
        for a, line, i in self.items(h, "adapters", what):
            label = f"adapter #{i + 1} of {what}"
            a = self.mapping(
                a,
                label,
                line,
                ("device", "type", "model", "driver", "status", "port_wwn", "node_wwn", "software"),
                ("device", "type"),
            )
            device = self.string(a, "device", label)
            if not _HBA.match(device):
                self.fail(
                    _line_of(a, "device"),
                    f"'device' of {label} must look like vmhba2, not {device!r}",
                )
            if any(x["device"] == device for x in adapters):
                self.fail(line, f"{what} has two adapters named {device}")
            adapter_what = f"adapter {device} of {what}"
            kind = self.string(a, "type", adapter_what, choices=ADAPTER_TYPES)
            software = self.boolean(a, "software", adapter_what, True if kind == "iscsi" else None)
            if kind != "iscsi" and software is not None:
                self.fail(
                    _line_of(a, "software"),
                    f"'software' of {adapter_what} is for iscsi adapters only",
                )
            model_key = "iscsi-hardware" if kind == "iscsi" and not software else kind
            wwns: dict[str, str | None] = {"port_wwn": None, "node_wwn": None}
            for key in wwns:
                value = self.string(a, key, adapter_what, None)
                if value is not None and kind not in _WWN_PREFIXES:
                    self.fail(
                        _line_of(a, key),
                        f"{key!r} of {adapter_what} is for fc and fcoe adapters only",
                    )
                if value is not None and not _WWN.match(value.lower()):
                    self.fail(
                        _line_of(a, key),
                        f"{key!r} of {adapter_what} must look like 10:00:00:10:9b:00:00:01",
                    )
                if value is None and kind in _WWN_PREFIXES:
                    port = wwns["port_wwn"]
                    if key == "node_wwn" and port is not None:
                        # The node name of a given port name: NAA 1 <-> 2, same tail.
                        value = ("20" if port.startswith("10") else "10") + port[2:]
                    else:
                        value = default_wwn(kind, key == "port_wwn", host, device)
                wwns[key] = value.lower() if value else None
            adapters.append(
                {
                    "device": device,
                    "type": kind,
                    "model": self.string(a, "model", adapter_what, ADAPTER_MODELS[model_key][0]),
                    "driver": self.string(a, "driver", adapter_what, ADAPTER_MODELS[model_key][1]),
                    "status": self.string(a, "status", adapter_what, "online", ADAPTER_STATUSES),
                    "port_wwn": wwns["port_wwn"],
                    "node_wwn": wwns["node_wwn"],
                    "software": software,
                }
            )
        if not any(a["device"] == "vmhba0" for a in adapters):
            model, driver = ADAPTER_MODELS["block"]
            adapters.insert(
                0,
                {
                    "device": "vmhba0",
                    "type": "block",
                    "model": model,
                    "driver": driver,
                    "status": "online",
                    "port_wwn": None,
                    "node_wwn": None,
                    "software": None,
                },
            )
        return adapters

    def vmotion(self, h: dict[Any, Any], what: str) -> list[dict[str, Any]]:
        nics: list[dict[str, Any]] = []
        for n, line, i in self.items(h, "vmotion", what):
            label = f"vMotion adapter #{i + 1} of {what}"
            n = self.mapping(
                n, label, line, ("device", "ip", "uplink_speed_mbps", "switch"), ("device", "ip")
            )
            device = self.string(n, "device", label)
            if not _VMK.match(device):
                self.fail(
                    _line_of(n, "device"),
                    f"'device' of {label} must be vmk1 or higher (vmk0 is the management adapter), "
                    f"not {device!r}",
                )
            ip = self.string(n, "ip", label)
            try:
                ipaddress.IPv4Address(ip)
            except ValueError:
                self.fail(_line_of(n, "ip"), f"'ip' of {label} must be an IPv4 address, not {ip!r}")
            if any(x["device"] == device for x in nics):
                self.fail(line, f"{what} lists vMotion adapter {device} twice")
            speed = self.integer(n, "uplink_speed_mbps", label, 25000, minimum=0)
            switch = self.string(n, "switch", label, "standard", VMOTION_SWITCHES)
            shared = next((x for x in nics if x["switch"] == switch), None)
            if shared is not None and speed != shared["uplink_speed_mbps"]:
                name = "vSwitch-vmotion" if switch == "standard" else "dvs-vmotion"
                self.fail(
                    _line_of(n, "uplink_speed_mbps") or line,
                    f"the {switch} vMotion adapters of {what} share one switch, {name}, "
                    "so they must have the same uplink_speed_mbps",
                )
            nics.append(
                {
                    "device": device,
                    "ip": ip,
                    "uplink_speed_mbps": speed,
                    "switch": switch,
                }
            )
        return nics

    # -- datastores ---------------------------------------------------------

    def datastore(self, d: Any, line: int | None, index: int, dc: str) -> dict[str, Any]:
        label = f"datastore #{index + 1} of datacenter {dc}"
        d = self.mapping(
            d,
            label,
            line,
            ("name", "type", "capacity_gb", "free_gb", "lun", "local", "mounts"),
            kind="datastore",
        )
        name = self.name(d, label)
        self.unique(self.datastores, name, "datastore", _line_of(d, "name"))
        what = f"datastore {name}"
        kind = self.string(d, "type", what, "VMFS", DATASTORE_TYPES)
        vmfs = kind == "VMFS"
        capacity = self.integer(d, "capacity_gb", what, 2048, minimum=1)
        free = self.integer(d, "free_gb", what, min(1024, capacity))
        if free > capacity:
            self.fail(
                _line_of(d, "free_gb"),
                f"{what} has more free_gb ({free}) than capacity_gb ({capacity})",
            )
        for key in ("lun", "local"):
            if not vmfs and d.get(key) is not None:
                self.fail(_line_of(d, key), f"{key!r} of {what} is for VMFS datastores only")
        lun = self.string(d, "lun", what, default_lun(name) if vmfs else None)
        if lun is not None:
            if not lun or re.search(r"\s", lun):
                self.fail(
                    _line_of(d, "lun"),
                    f"'lun' of {what} must be a canonical name like naa.600a0980...",
                )
            if lun in self.luns:
                self.fail(
                    _line_of(d, "lun"),
                    f"{what} and datastore {self.luns[lun]} use the same LUN {lun}",
                )
            self.luns[lun] = name
        mounts = [
            self.mount(m, ml, i, dc, what, vmfs) for m, ml, i in self.items(d, "mounts", what)
        ]
        for i, mount in enumerate(mounts):
            if any(m["host"] == mount["host"] for m in mounts[:i]):
                self.fail(_line_of(d, "mounts"), f"{what} mounts host {mount['host']} twice")
        local_default = (
            vmfs
            and len(mounts) == 1
            and all(
                self.adapter_type(mounts[0]["host"], p["adapter"]) in LOCAL_ADAPTER_TYPES
                for p in mounts[0]["paths"]
            )
        )
        result = {
            "name": name,
            "type": kind,
            "capacity_gb": capacity,
            "free_gb": free,
            "lun": lun,
            "local": self.boolean(d, "local", what, local_default) if vmfs else None,
            "mounts": mounts,
        }
        self.datastores[name] = result
        self.datastore_dc[name] = dc
        for mount in mounts:
            self.host_datastores.setdefault(mount["host"], []).append(name)
        return result

    def adapter_type(self, host: str, device: str) -> str:
        return str(next(a["type"] for a in self.hosts[host]["adapters"] if a["device"] == device))

    def mount(
        self, m: Any, line: int | None, index: int, dc: str, ds_what: str, vmfs: bool
    ) -> dict[str, Any]:
        label = f"mount #{index + 1} of {ds_what}"
        m = self.mapping(m, label, line, ("host", "mounted", "accessible", "paths"), ("host",))
        host = self.string(m, "host", label)
        if host not in self.hosts or self.host_dc[host] != dc:
            self.fail(
                _line_of(m, "host"), f"{label} names host {host!r}, which is not in datacenter {dc}"
            )
        what = f"the mount of {ds_what} on host {host}"
        adapters = {a["device"]: a for a in self.hosts[host]["adapters"]}
        paths: list[dict[str, str]] = []
        for p, path_line, _ in self.items(m, "paths", what):
            if not vmfs:
                self.fail(path_line, f"{what} has paths, which only VMFS datastores have")
            if isinstance(p, str):
                adapter, state = p, "active"
            else:
                p = self.mapping(
                    p, f"a path of {what}", path_line, ("adapter", "state"), ("adapter",)
                )
                adapter = self.string(p, "adapter", f"a path of {what}")
                state = self.string(p, "state", f"path {adapter} of {what}", "active", PATH_STATES)
            if adapter not in adapters:
                self.fail(
                    path_line,
                    f"{what} has a path through {adapter!r}, which host {host} does not have",
                )
            if any(x["adapter"] == adapter for x in paths):
                self.fail(path_line, f"{what} lists adapter {adapter} twice")
            paths.append({"adapter": adapter, "state": state})
        if vmfs and not paths:
            local = next((a for a in adapters.values() if a["type"] in LOCAL_ADAPTER_TYPES), None)
            if local is None:
                self.fail(line, f"{what} has no paths and host {host} has no sas or block adapter")
            paths.append({"adapter": local["device"], "state": "active"})
        return {
            "host": host,
            "mounted": self.boolean(m, "mounted", what, True),
            "accessible": self.boolean(m, "accessible", what, True),
            "paths": paths,
        }

    # -- VMs ----------------------------------------------------------------

    def vm(self, v: Any, line: int | None, index: int, dc: str) -> dict[str, Any]:
        label = f"VM #{index + 1} of datacenter {dc}"
        v = self.mapping(
            v,
            label,
            line,
            (
                "name", "host", "power", "memory_mb", "memory_reservation_mb",
                "memory_locked_to_max", "datastores", "restart_priority", "gpus",
                "isolation_response", "firmware", "extra_config", "min_evc_mode",
                "device_groups",
            ),
            ("host",),
            kind="VM",
        )  # fmt: skip
        name = self.name(v, label)
        self.unique(self.vms, name, "VM", _line_of(v, "name"))
        what = f"VM {name}"
        host = self.string(v, "host", what)
        if host not in self.hosts or self.host_dc[host] != dc:
            self.fail(
                _line_of(v, "host"), f"{what} is on host {host!r}, which is not in datacenter {dc}"
            )
        memory = self.integer(v, "memory_mb", what, 8192, minimum=1)
        locked = self.boolean(v, "memory_locked_to_max", what, False)
        reservation = self.integer(v, "memory_reservation_mb", what, memory if locked else 0)
        if reservation > memory:
            self.fail(
                _line_of(v, "memory_reservation_mb"), f"{what} reserves more memory than it has"
            )
        if locked and reservation != memory:
            self.fail(
                _line_of(v, "memory_reservation_mb"),
                f"{what} has memory_locked_to_max, so its reservation is its memory_mb ({memory})",
            )
        mounted = self.host_datastores.get(host, [])
        datastores: list[str] = []
        if "datastores" in v and v["datastores"] is not None:
            for ds, ds_line, _ in self.items(v, "datastores", what):
                if (
                    not isinstance(ds, str)
                    or ds not in self.datastores
                    or self.datastore_dc[ds] != dc
                ):
                    self.fail(
                        ds_line, f"{what} uses datastore {ds!r}, which is not in datacenter {dc}"
                    )
                if ds not in mounted:
                    self.fail(
                        ds_line, f"{what} uses datastore {ds}, which its host {host} does not mount"
                    )
                if ds in datastores:
                    self.fail(ds_line, f"{what} lists datastore {ds} twice")
                datastores.append(ds)
        elif mounted:
            datastores = mounted[:1]
        priority = self.string(
            v, "restart_priority", what, None, (*RESTART_PRIORITIES, "clusterRestartPriority")
        )
        if priority is not None and self.host_cluster[host] is None:
            self.fail(
                _line_of(v, "restart_priority"),
                f"{what} has a restart_priority but its host {host} is not in a cluster",
            )
        isolation = self.string(
            v, "isolation_response", what, None, (*ISOLATION_RESPONSES, "clusterIsolationResponse")
        )
        if isolation is not None and self.host_cluster[host] is None:
            self.fail(
                _line_of(v, "isolation_response"),
                f"{what} has an isolation_response but its host {host} is not in a cluster",
            )
        power = self.string(v, "power", what, "poweredOn", POWER_STATES)
        gpus = [
            self.vm_gpu(g, gl, i, what, host, power) for g, gl, i in self.items(v, "gpus", what)
        ]
        result = {
            "name": name,
            "host": host,
            "power": power,
            "memory_mb": memory,
            "memory_reservation_mb": reservation,
            "memory_locked_to_max": locked,
            "datastores": datastores,
            "restart_priority": priority,
            "gpus": gpus,
            "isolation_response": isolation,
            "firmware": self.string(v, "firmware", what, "efi", ("bios", "efi")),
            "extra_config": self.extra_config(v, what),
            "min_evc_mode": self.string(v, "min_evc_mode", what, None),
            "device_groups": self.vm_device_groups(v, what, host, power, len(gpus)),
        }
        self.vms[name] = result
        return result

    def vm_device_groups(
        self, v: dict[Any, Any], what: str, host: str, power: str, gpus: int
    ) -> list[dict[str, Any]]:
        """The vendor device groups the VM uses: each a name and the indices of its GPUs
        (``gpus``) that form it, in order; the lab serves them as config.deviceGroups and
        each member's deviceGroupInfo, keyed by the group's ``key`` (by default its
        position, from 1)."""
        groups: list[dict[str, Any]] = []
        entries = self.items(v, "device_groups", what)
        if entries and not self.serves_device_groups:
            self.fail(
                _line_of(v, "device_groups"),
                f"'device_groups' of {what} needs a server of api_version 8.0.0.1 or later",
            )
        taken: set[int] = set()
        offered = {g["name"] for g in self.hosts[host]["device_groups"]}
        for g, line, i in entries:
            label = f"device group #{i + 1} of {what}"
            g = self.mapping(g, label, line, ("name", "gpus", "key"), ("name", "gpus"))
            name = self.string(g, "name", label)
            if not name:
                self.fail(line, f"{label} has an empty name")
            key = self.integer(g, "key", label, i + 1, minimum=1, maximum=2**31 - 1)
            if any(other["key"] == key for other in groups):
                self.fail(_line_of(g, "key"), f"{what} has two device groups of key {key}")
            members = []
            for index, m_line, _ in self.items(g, "gpus", label):
                if isinstance(index, bool) or not isinstance(index, int):
                    self.fail(m_line, f"'gpus' of {label} lists GPU indices, not {_kind(index)}")
                if not 0 <= index < gpus:
                    self.fail(m_line, f"{label} names GPU {index}, but {what} has {gpus}")
                if index in taken:
                    self.fail(m_line, f"GPU {index} of {what} is in two device groups")
                taken.add(index)
                members.append(index)
            if not members:
                self.fail(line, f"{label} has no GPU")
            if power == "poweredOn" and name not in offered:
                self.fail(
                    line,
                    f"{what} is powered on with device group {name!r}, which its host {host} "
                    "does not offer (device_groups)",
                )
            groups.append({"name": name, "key": key, "gpus": members})
        return groups

    def extra_config(self, v: dict[Any, Any], what: str) -> dict[str, str]:
        """config.extraConfig entries: string keys to string (or whole number) values."""
        value, line, given = self.get(v, "extra_config", None)
        if not given:
            return {}
        if not isinstance(value, dict):
            self.fail(line, f"'extra_config' of {what} must be a mapping, not {_kind(value)}")
        entries = {}
        for key, entry in value.items():
            entry_line = _line_of(value, key) or line
            if not isinstance(key, str) or not key:
                self.fail(entry_line, f"an extra_config key of {what} must be a string")
            if isinstance(entry, bool) or not isinstance(entry, (str, int)):
                self.fail(
                    entry_line,
                    f"extra_config {key!r} of {what} must be a string or a whole number, "
                    f'not {_kind(entry)} (write booleans as "TRUE" or "FALSE")',
                )
            entries[key] = str(entry)
        return entries

    def vm_gpu(
        self, g: Any, line: int | None, index: int, vm_what: str, host: str, power: str
    ) -> dict[str, Any]:
        device = self.vm_gpu_form(g, line, index, vm_what, host, power)
        self.device_lines[id(device)] = line
        return device

    def vm_gpu_form(
        self, g: Any, line: int | None, index: int, vm_what: str, host: str, power: str
    ) -> dict[str, Any]:
        label = f"GPU #{index + 1} of {vm_what}"
        forms = ("vgpu", "passthrough", "dynamic")
        vgpu_only = ("migrate_supported", "migrate_data_mb", "on")
        g = self.mapping(g, label, line, (*forms, *vgpu_only))
        given = [f for f in forms if f in g]
        if len(given) != 1:
            self.fail(line, f"{label} must have exactly one of vgpu, passthrough, dynamic")
        form = given[0]
        if form != "vgpu":
            for key in vgpu_only:
                if key in g:
                    self.fail(_line_of(g, key), f"{key!r} of {label} is for vGPUs only")
        gpus = {gpu["pci_id"]: gpu for gpu in self.hosts[host]["gpus"]}
        powered_on = power == "poweredOn"
        if form == "vgpu":
            profile = self.string(g, "vgpu", label)
            if not profile:
                self.fail(_line_of(g, "vgpu"), f"{label} has an empty vGPU profile")
            on = None
            if g.get("on") is not None:
                on = self.pci_id(g["on"], _line_of(g, "on"), f"'on' of {label}")
                if on not in gpus:
                    self.fail(
                        _line_of(g, "on"), f"{label} is on {on}, which host {host} does not have"
                    )
            vgpu = {
                "vgpu": profile,
                "migrate_supported": self.boolean(g, "migrate_supported", label, None),
                "on": on if powered_on else None,
            }
            if "migrate_data_mb" in g:  # left out, the backing has no vgpuMigrateDataSizeMB
                vgpu["migrate_data_mb"] = self.integer(
                    g, "migrate_data_mb", label, minimum=1, maximum=2**31 - 1
                )
            return vgpu
        if form == "passthrough":
            pci_id = self.pci_id(
                g["passthrough"], _line_of(g, "passthrough"), f"'passthrough' of {label}"
            )
            if pci_id not in gpus:
                self.fail(
                    _line_of(g, "passthrough"),
                    f"{label} is bound to {pci_id}, which host {host} does not have",
                )
            return {"passthrough": pci_id}
        dyn_what = f"the Dynamic DirectPath {label}"
        dyn_line = _line_of(g, "dynamic")
        dyn = self.mapping(
            g["dynamic"], dyn_what, dyn_line, ("allowed", "assigned", "label"), ("allowed",)
        )
        allowed = []
        for a, a_line, _ in self.items(dyn, "allowed", dyn_what):
            a = self.mapping(
                a,
                f"an allowed device of {dyn_what}",
                a_line,
                ("vendor_id", "device_id", "sub_vendor_id", "sub_device_id"),
                ("device_id",),
            )
            allowed.append(
                {
                    "vendor_id": self.integer(
                        a, "vendor_id", dyn_what, catalog.NVIDIA, maximum=0xFFFF, hex_ok=True
                    ),
                    "device_id": self.integer(
                        a, "device_id", dyn_what, maximum=0xFFFF, hex_ok=True
                    ),
                    # None: the entry gives no such id (any matches)
                    "sub_vendor_id": self.integer(
                        a, "sub_vendor_id", dyn_what, None, maximum=0xFFFF, hex_ok=True
                    ),
                    "sub_device_id": self.integer(
                        a, "sub_device_id", dyn_what, None, maximum=0xFFFF, hex_ok=True
                    ),
                }
            )
        if not allowed:
            self.fail(dyn_line, f"{dyn_what} allows no device")
        assigned = None
        if dyn.get("assigned") is not None:
            assigned = self.pci_id(
                dyn["assigned"], _line_of(dyn, "assigned"), f"'assigned' of {dyn_what}"
            )
            if assigned not in gpus:
                self.fail(
                    _line_of(dyn, "assigned"),
                    f"{dyn_what} is assigned {assigned}, which host {host} lacks",
                )
            gpu = gpus[assigned]
            if not any(
                (a["vendor_id"], a["device_id"]) == (gpu["vendor_id"], gpu["device_id"])
                for a in allowed
            ):
                self.fail(
                    _line_of(dyn, "assigned"),
                    f"{dyn_what} is assigned {assigned}, which it does not allow",
                )
        return {
            "dynamic": {
                "allowed": allowed,
                "assigned": assigned if powered_on else None,
                "label": self.string(dyn, "label", dyn_what, ""),
            }
        }

    # -- GPU placement ------------------------------------------------------

    def place_gpus(self, vms: list[dict[str, Any]]) -> None:
        """Check the devices of powered-on VMs and fill in the placements left out.

        Explicit placements go first so that a default never takes a device that
        a later VM names.
        """
        exclusive: dict[tuple[str, str], str] = {}  # (host, pci id) -> VM with it
        vgpus: dict[tuple[str, str], list[str]] = {}  # (host, pci id) -> profiles on it
        running = [vm for vm in vms if vm["power"] == "poweredOn"]

        def claim(vm: dict[str, Any], dev: dict[str, Any], pci_id: str, how: str) -> None:
            key = (vm["host"], pci_id)
            gpu = self.gpu_of(vm["host"], pci_id)
            line = self.device_lines.get(id(dev))
            if not gpu["passthrough"]["enabled"]:
                self.fail(
                    line,
                    f"VM {vm['name']} is powered on with {how} {pci_id} of host {vm['host']}, "
                    "which is not enabled for passthrough",
                )
            other = exclusive.get(key) or (
                f"vGPUs of {', '.join(vgpus[key])}" if key in vgpus else None
            )
            if other:
                self.fail(
                    line,
                    f"VM {vm['name']} and {other} are powered on with {pci_id} "
                    f"of host {vm['host']}",
                )
            exclusive[key] = f"VM {vm['name']}"

        def fits(vm: dict[str, Any], pci_id: str, profile: str) -> str | None:
            key = (vm["host"], pci_id)
            if key in exclusive:
                return f"{exclusive[key]} has it in passthrough"
            return self.vgpu_refusal(self.gpu_of(vm["host"], pci_id), profile, vgpus.get(key, []))

        for vm in running:
            offered = {p["name"] for p in self.hosts[vm["host"]]["vgpu_profiles"]}
            for dev in vm["gpus"]:
                if "passthrough" in dev:
                    claim(vm, dev, dev["passthrough"], "passthrough of")
                elif "dynamic" in dev and dev["dynamic"]["assigned"]:
                    claim(vm, dev, dev["dynamic"]["assigned"], "Dynamic DirectPath on")
                elif "vgpu" in dev and dev["vgpu"] not in offered:
                    self.fail(
                        self.device_lines.get(id(dev)),
                        f"VM {vm['name']} is powered on with vGPU {dev['vgpu']}, which its host "
                        f"{vm['host']} does not offer (vgpu_profiles)",
                    )
        for vm in running:
            for dev in vm["gpus"]:
                if "vgpu" in dev and dev["on"]:
                    refusal = fits(vm, dev["on"], dev["vgpu"])
                    if refusal:
                        self.fail(
                            self.device_lines.get(id(dev)),
                            f"vGPU {dev['vgpu']} of VM {vm['name']} cannot run on {dev['on']} "
                            f"of host {vm['host']}: {refusal}",
                        )
                    vgpus.setdefault((vm["host"], dev["on"]), []).append(dev["vgpu"])
        for vm in running:
            host_gpus = self.hosts[vm["host"]]["gpus"]
            for dev in vm["gpus"]:
                if "vgpu" in dev and not dev["on"]:
                    pci_id = next(
                        (g["pci_id"] for g in host_gpus if not fits(vm, g["pci_id"], dev["vgpu"])),
                        None,
                    )
                    if pci_id is None:
                        self.fail(
                            self.device_lines.get(id(dev)),
                            f"no GPU of host {vm['host']} can take vGPU {dev['vgpu']} "
                            f"of powered-on VM {vm['name']}",
                        )
                    dev["on"] = pci_id
                    vgpus.setdefault((vm["host"], pci_id), []).append(dev["vgpu"])
                elif "dynamic" in dev and not dev["dynamic"]["assigned"]:
                    wanted = {(a["vendor_id"], a["device_id"]) for a in dev["dynamic"]["allowed"]}
                    free = next(
                        (
                            g["pci_id"]
                            for g in host_gpus
                            if (g["vendor_id"], g["device_id"]) in wanted
                            and g["passthrough"]["enabled"]
                            and (vm["host"], g["pci_id"]) not in exclusive
                            and (vm["host"], g["pci_id"]) not in vgpus
                        ),
                        None,
                    )
                    if free is None:
                        self.fail(
                            self.device_lines.get(id(dev)),
                            f"no free passthrough device of host {vm['host']} matches the Dynamic "
                            f"DirectPath device of powered-on VM {vm['name']}",
                        )
                    claim(vm, dev, free, "Dynamic DirectPath on")
                    dev["dynamic"]["assigned"] = free

    def gpu_of(self, host: str, pci_id: str) -> dict[str, Any]:
        return next(g for g in self.hosts[host]["gpus"] if g["pci_id"] == pci_id)

    @staticmethod
    def vgpu_refusal(gpu: dict[str, Any], profile: str, placed: list[str]) -> str | None:
        """Why the GPU cannot take one more vGPU of the profile, or None when it can."""
        if gpu["graphics_type"] != "sharedDirect":
            return f"its graphics type is {gpu['graphics_type']}, not sharedDirect"
        if gpu["passthrough"]["enabled"]:
            return "it is enabled for passthrough"
        info = catalog.parse_profile(profile)
        model = _catalogue_model(gpu)
        if info is not None and model is not None and info.gpu != model.profile_prefix:
            return f"{profile} is not a profile of the {model.name}"
        mode = gpu["vgpu_mode"]
        if mode == "multiInstanceGpu":
            return None
        if mode != "mixedSize" and any(p != profile for p in placed):
            return f"it runs {placed[0]} and equal-size mode allows one profile per GPU"
        if info is None or gpu["memory_mb"] <= 0:
            return None
        used = 0
        for p in placed:
            placed_info = catalog.parse_profile(p)
            used += placed_info.memory_mb if placed_info else 0
        if used + info.memory_mb > gpu["memory_mb"]:
            return f"its {gpu['memory_mb']} MB frame buffer is full"
        return None

    # -- expectations -------------------------------------------------------

    def expectation(self, e: Any, line: int | None) -> dict[str, Any]:
        e = self.mapping(
            e,
            "an expect entry",
            line,
            ("rule", "fail", "pass", "unproven", "cluster", "scenario", "severity"),
            ("rule",),
        )
        rule = self.string(e, "rule", "an expect entry")
        what = f"the expectation for {rule}"
        known = (
            set(self.hosts)
            | set(self.vms)
            | set(self.datastores)
            | set(self.clusters)
            | self.datacenters
            # Findings name a GPU "host/pci_id" and the server itself "vCenter".
            | {f"{h}/{g['pci_id']}" for h, spec in self.hosts.items() for g in spec["gpus"]}
            | {"vCenter"}
        )
        result: dict[str, Any] = {"rule": rule}
        for key in ("fail", "pass", "unproven"):
            names = []
            for name, name_line, _ in self.items(e, key, what):
                if not isinstance(name, str) or name not in known:
                    self.fail(name_line, f"{what} names {name!r}, which is not in the scenario")
                names.append(name)
            result[key] = names
        cluster = self.string(e, "cluster", what, None)
        if cluster is not None and cluster not in self.clusters:
            self.fail(
                _line_of(e, "cluster"),
                f"{what} names cluster {cluster!r}, which is not in the scenario",
            )
        scenario = self.string_or_int(e, "scenario", what, "") if "scenario" in e else None
        if cluster is not None:
            result["cluster"] = cluster
        if scenario is not None:
            result["scenario"] = scenario
        severity = self.string(e, "severity", what, None, EXPECTED_SEVERITIES)
        if severity is not None:
            result["severity"] = severity
        return result


# ---------------------------------------------------------------------------
# Entry points.


def normalise(data: Any, source: str = "<scenario>") -> dict[str, Any]:
    """Check a scenario (as parsed YAML or built in Python) and fill in its defaults."""
    result: dict[str, Any] = _plain(_Normaliser(source).scenario(data))
    return result


def load_scenario(path: str | Path) -> dict[str, Any]:
    """Read, check and normalise a scenario file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{source}: cannot read: {exc}") from None
    try:
        data = yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader
    except _YamlProblem as exc:
        raise ScenarioError(f"{source}:{exc.line}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark else ""
        raise ScenarioError(
            f"{source}{line}: not valid YAML: {exc.problem or exc.context}"
        ) from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{source}: not valid YAML: {exc}") from None
    if data is None:
        raise ScenarioError(f"{source}: the file is empty")
    return normalise(data, source)


def to_json(scenario: dict[str, Any], indent: int | None = None) -> str:
    """The normalised form as the Go lab reads it."""
    return json.dumps(scenario, indent=indent, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write("usage: python -m tests.lab.scenario FILE.yaml\n")
        return 2
    try:
        scenario = load_scenario(args[0])
    except ScenarioError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    sys.stdout.write(to_json(scenario, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
