"""gpuaudit.vsphere.collect.storage on host and datastore properties built in memory, by hand.

The join is vSphere's: a VMFS extent's diskName is a ScsiLun's canonicalName; the
LUN's key is a multipath LogicalUnit's ``lun``; each path's ``adapter`` is an HBA's
key. Path states are the API's (active, standby, disabled, dead, unknown).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pyVmomi import vim

from gpuaudit.inventory import Datastore, DatastoreMount, LunPath
from gpuaudit.vsphere.collect.retrieve import ObjectProps
from gpuaudit.vsphere.collect.storage import (
    HostLunPaths,
    build_datastore,
    host_lun_paths,
    transport,
)

MB = 1024 * 1024
FC_KEY = "key-vim.host.FibreChannelHba-vmhba2"
ISCSI_KEY = "key-vim.host.InternetScsiHba-vmhba64"
SAS_KEY = "key-vim.host.SerialAttachedHba-vmhba1"


def _lun(key: str, canonical: str) -> Any:
    return vim.host.ScsiDisk(key=key, canonicalName=canonical, uuid=key, lunType="disk")


def _path(adapter: str, state: str | None = "active", path_state: str = "") -> Any:
    return vim.host.MultipathInfo.Path(
        key=f"{adapter}-{state}", name="p", adapter=adapter, state=state, pathState=path_state
    )


def _logical(lun_key: str, paths: list[Any]) -> Any:
    return vim.host.MultipathInfo.LogicalUnit(
        key=f"lu-{lun_key}",
        id=lun_key,
        lun=lun_key,
        path=paths,
        policy=vim.host.MultipathInfo.LogicalUnitPolicy(policy="VMW_PSP_RR"),
    )


def _host_obj() -> ObjectProps:
    props = {
        "config.storageDevice.hostBusAdapter": [
            vim.host.FibreChannelHba(device="vmhba2", key=FC_KEY),
            vim.host.InternetScsiHba(device="vmhba64", key=ISCSI_KEY),
            vim.host.SerialAttachedHba(device="vmhba1", key=SAS_KEY),
        ],
        "config.storageDevice.scsiLun": [
            _lun("lun-fc", "naa.600a0b80001"),
            _lun("lun-iscsi", "naa.600a0b80002"),
            _lun("lun-local", "naa.5000c500003"),
            _lun("lun-odd", "naa.600a0b80004"),
        ],
        "config.storageDevice.multipathInfo": vim.host.MultipathInfo(
            lun=[
                _logical("lun-not-listed", [_path(FC_KEY)]),  # no ScsiLun: left out
                _logical(
                    "lun-fc",
                    [
                        _path(FC_KEY, "active"),
                        _path(FC_KEY, None, "standby"),  # the older field only
                        _path(FC_KEY, None, ""),
                    ],
                ),
                _logical("lun-odd", [_path("key-unknown-hba", "dead")]),
                _logical("lun-iscsi", [_path(ISCSI_KEY)]),
                _logical("lun-local", [_path(SAS_KEY, "active")]),
            ]
        ),
    }
    return ObjectProps(moref="host-1", kind="HostSystem", props=props)


FC_PATHS = [
    LunPath("vmhba2", "fc", "active"),
    LunPath("vmhba2", "fc", "standby"),
    LunPath("vmhba2", "fc", "unknown"),
]


def test_each_lun_with_its_paths_adapters_and_states() -> None:
    assert host_lun_paths(_host_obj()) == HostLunPaths(
        paths={
            "naa.600a0b80001": FC_PATHS,
            "naa.600a0b80002": [LunPath("vmhba64", "iscsi", "active")],
            "naa.5000c500003": [LunPath("vmhba1", "sas", "active")],
            # An HBA the host does not list: named by its key, of no known kind.
            "naa.600a0b80004": [LunPath("key-unknown-hba", "other", "dead")],
        }
    )
    assert host_lun_paths(ObjectProps(moref="host-2", kind="HostSystem")) == HostLunPaths()


def _datastore(
    ds_type: str, disks: list[str] | None, local: bool | None = False, **summary: Any
) -> ObjectProps:
    info: Any = vim.host.NasDatastoreInfo(name="ds", url="u", freeSpace=0)
    if disks is not None:
        extents = [vim.host.ScsiDisk.Partition(diskName=d, partition=1) for d in disks]
        info = vim.host.VmfsDatastoreInfo(
            name="ds",
            url="u",
            freeSpace=0,
            vmfs=vim.host.VmfsVolume(
                name="ds", type="VMFS", capacity=0, local=local, extent=extents
            ),
        )
    values = dict(name="ds", type=ds_type, capacity=0, freeSpace=0, accessible=True, url="u")
    values.update(summary)
    mounts = [
        vim.Datastore.HostMount(
            key=vim.HostSystem("host-1"),
            mountInfo=vim.host.MountInfo(accessMode="readWrite", mounted=True, accessible=True),
        ),
        vim.Datastore.HostMount(
            key=vim.HostSystem("host-2"),
            mountInfo=vim.host.MountInfo(accessMode="readWrite", mounted=False, accessible=False),
        ),
        # The API declares mountInfo required; a mount without it is read all the same.
        SimpleNamespace(key=vim.HostSystem("host-3"), mountInfo=None),
    ]
    props = {
        "name": "ds-gpu",
        "summary": vim.Datastore.Summary(**values),
        "info": info,
        "host": mounts,
    }
    return ObjectProps(moref="datastore-7", kind="Datastore", props=props)


def test_a_whole_vmfs_datastore_with_its_mounts_and_paths() -> None:
    views = {"host-1": host_lun_paths(_host_obj()), "host-2": HostLunPaths()}
    obj = _datastore(
        "VMFS",
        ["naa.600a0b80001", "naa.600a0b80002"],
        capacity=2 * 1024 * MB + MB - 1,
        freeSpace=1024 * MB + 7,
        multipleHostAccess=True,
    )
    assert build_datastore(obj, {"host-1": "esx-01", "host-2": "esx-02"}, views) == Datastore(
        name="ds-gpu",
        moref="datastore-7",
        type="VMFS",
        capacity_mb=2048,
        free_mb=1024,
        multiple_host_access=True,
        local=False,
        luns=["naa.600a0b80001", "naa.600a0b80002"],
        transport="mixed",
        mounts=[
            DatastoreMount(host="esx-01", paths=[*FC_PATHS, LunPath("vmhba64", "iscsi", "active")]),
            DatastoreMount(host="esx-02", mounted=False, accessible=False),
            # No mount information: taken as mounted and accessible.
            DatastoreMount(host="host-3"),
        ],
    )


def test_transport_of_each_datastore_kind() -> None:
    views = {"host-1": host_lun_paths(_host_obj())}

    def kind(ds_type: str, disks: list[str] | None = None, local: bool | None = False) -> str:
        return build_datastore(_datastore(ds_type, disks, local), {}, views).transport

    assert kind("VMFS", ["naa.600a0b80001"]) == "fc"
    assert kind("VMFS", ["naa.600a0b80002"]) == "iscsi"
    assert kind("vmfs", ["naa.600a0b80002"]) == "iscsi"
    assert kind("VMFS", ["naa.5000c500003"]) == "local"
    assert kind("VMFS", ["naa.600a0b80004"]) == "other"
    # A LUN no mounted host sees a path to: the volume's own flag decides.
    assert kind("VMFS", ["naa.0000000000"], local=True) == "local"
    assert kind("VMFS", ["naa.0000000000"], local=False) == "other"
    assert kind("NFS", None) == "nfs"
    assert kind("NFS41", None) == "nfs"
    assert kind("nfs", None) == "nfs"
    assert kind("vsan", None) == "vsan"
    assert kind("VVOL", None) == "vvol"
    assert kind("vvol", None) == "vvol"
    assert kind("PMEM", None) == "other"
    assert kind("", None) == "other"


def test_local_adapters_make_a_local_lun_and_unknown_local_stays_unknown() -> None:
    def over(*kinds: str) -> str:
        paths = [LunPath(f"vmhba{i}", k) for i, k in enumerate(kinds)]
        return transport(
            Datastore(name="ds", moref="d", type="VMFS", mounts=[DatastoreMount("h", paths=paths)])
        )

    for local in ("sas", "block", "pscsi", "pcie"):
        assert over(local) == "local"
    assert over("sas", "block") == "local"
    assert over("fcoe") == "fcoe"
    assert over("fc", "fc") == "fc"
    assert over("fc", "sas") == "mixed"
    obj = _datastore("VMFS", ["naa.600a0b80001"], local=None)
    assert build_datastore(obj, {}, {}).local is None
    bare = ObjectProps(moref="datastore-9", kind="Datastore", props={"name": "bare"})
    assert build_datastore(bare, {}, {}) == Datastore(name="bare", moref="datastore-9")
