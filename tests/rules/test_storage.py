"""ST-01 to ST-05 (rules/storage.py): exact messages and evidence, written out by hand."""

from __future__ import annotations

import pytest

from gpuaudit.inventory import LunPath, StorageAdapter
from gpuaudit.rules import scopes, storage
from gpuaudit.rules.registry import Outcome
from tests.support.builders import Estate, context, healthy


def _paths(*states: tuple[str, str]) -> list[LunPath]:
    return [LunPath(adapter, "fc", state) for adapter, state in states]


@pytest.mark.parametrize(
    ("states", "problem"),
    [
        ([("vmhba2", "active"), ("vmhba3", "standby")], ""),
        ([("vmhba2", "active"), ("vmhba3", "active")], ""),
        ([("vmhba2", "active")], "a single usable path (vmhba2, active)"),
        ([("vmhba2", "standby"), ("vmhba3", "unknown")], "a single usable path (vmhba2, standby)"),
        ([("vmhba2", "standby"), ("vmhba3", "standby")], "no active path, only standby ones"),
        ([("vmhba2", "active"), ("vmhba2", "standby")], "all usable paths go through vmhba2"),
        (
            [("vmhba2", "dead"), ("vmhba3", "dead"), ("vmhba4", "disabled")],
            "dead paths through vmhba2, vmhba3, disabled path through vmhba4, "
            "no usable (active or standby) path",
        ),
        (
            [("vmhba2", "active"), ("vmhba3", "active"), ("vmhba4", "dead")],
            "dead path through vmhba4",
        ),
    ],
)
def test_path_problems_named_in_order(states: list[tuple[str, str]], problem: str) -> None:
    host = healthy().inv.hosts[0]
    assert storage._path_problem(host, _paths(*states)) == problem


def test_one_software_iscsi_adapter_is_not_a_single_point_of_failure() -> None:
    host = healthy().inv.hosts[0]
    host.adapters = [StorageAdapter("vmhba64", "iscsi", iscsi_software=True)]
    two = _paths(("vmhba64", "active"), ("vmhba64", "active"))
    assert storage._path_problem(host, two) == ""
    host.adapters = [StorageAdapter("vmhba64", "iscsi", iscsi_software=False)]
    assert storage._path_problem(host, two) == "all usable paths go through vmhba64"


def test_multipath_messages() -> None:
    e = healthy()
    ds = e.inv.datastores[0]
    ds.transport = "fc"
    ds.luns = ["naa.600a098038303053453f463045727a51"]
    for mount in ds.mounts:
        mount.paths = _paths(("vmhba2", "active"), ("vmhba3", "standby"))
    outcome = storage.multipath(context(e.inv), ds)
    assert outcome is not None and outcome.passed
    assert outcome.message == "redundant paths from h1, h2, h3"
    both = ["vmhba2:active", "vmhba3:standby"]
    assert outcome.evidence == {
        "luns": ds.luns,
        "paths": {"h1": both, "h2": both, "h3": both},
        "problems": {},
    }
    ds.mounts[0].paths = _paths(("vmhba2", "active"))
    ds.mounts[1].paths = _paths(("vmhba2", "dead"))  # h2 is not responding: not judged
    ds.mounts[2].paths = _paths(("vmhba2", "standby"), ("vmhba3", "standby"))
    e.inv.hosts[1].connection_state = "notResponding"
    outcome = storage.multipath(context(e.inv), ds)
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "h1: a single usable path (vmhba2, active); h3: no active path, only standby ones"
    )
    assert list(outcome.evidence["problems"]) == ["h1", "h3"]


def test_unused_hba_messages() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.adapters = [
        StorageAdapter("vmhba2", "fc"),
        StorageAdapter("vmhba3", "fcoe"),
        StorageAdapter("vmhba64", "iscsi"),
    ]
    ds = e.inv.datastores[0]
    ds.transport = "fc"
    outcome = storage.unused_hba(context(e.inv), host)
    assert outcome is not None and outcome.passed
    assert outcome.message == "FC HBA vmhba2, vmhba3 serves san1"
    assert outcome.evidence == {"fc_hbas": ["vmhba2", "vmhba3"], "fc_datastores": ["san1"]}
    ds.transport = "iscsi"
    for mount in ds.mounts:
        mount.paths = [LunPath("vmhba64", "iscsi")]
    outcome = storage.unused_hba(context(e.inv), host)
    assert outcome is not None and not outcome.passed
    assert outcome.message == "FC HBA vmhba2, vmhba3 but no FC datastore"
    ds.transport = "mixed"
    ds.mounts[0].paths = [LunPath("vmhba64", "iscsi"), LunPath("vmhba3", "fcoe")]
    outcome = storage.unused_hba(context(e.inv), host)
    assert outcome is not None and outcome.passed
    other = e.inv.hosts[1]
    other.adapters = [StorageAdapter("vmhba2", "fc")]
    outcome = storage.unused_hba(context(e.inv), other)
    assert outcome is not None and not outcome.passed


def test_a_mixed_datastore_needs_the_adapters_its_paths_use() -> None:
    e = healthy()
    ds = e.inv.datastores[0]
    ds.transport = "mixed"
    assert ds.mounts[0].host == "h1"
    ds.mounts[0].paths = [LunPath("vmhba2", "fc"), LunPath("vmhba64", "iscsi")]
    h1 = e.inv.hosts[0]
    assert storage.iscsi_adapter(context(e.inv), h1) == Outcome(
        False,
        "no iSCSI adapter, but needs san1",
        {"iscsi_datastores": ["san1"], "iscsi_adapters": []},
    )
    fc = storage.fc_hba(context(e.inv), h1)
    assert fc is not None and fc.evidence["needs"] == ["fc"]


def test_st03_names_the_hosts_without_access_in_every_cluster() -> None:
    from tests.support.builders import Estate

    e = Estate()
    for c in ("c1", "c2"):
        e.cluster(c)
    a1, a2, a3 = (e.host(f"a{i}", "c1") for i in (1, 2, 3))
    b1, b2 = e.host("b1", "c2"), e.host("b2", "c2")
    e.datastore("shared", [a1, b1])  # a2, a3 and b2 do not mount it
    use = scopes.DatastoreUse("shared", ["c1", "c2"])
    assert storage.datastore_everywhere(context(e.inv), use) == Outcome(
        False,
        "not mounted and accessible on c1: a2, a3; c2: b2",
        {"clusters": ["c1", "c2"], "hosts_without_access": {"c1": ["a2", "a3"], "c2": ["b2"]}},
    )
    e.datastore("everywhere", [a1, a2, a3, b1, b2])
    assert storage.datastore_everywhere(
        context(e.inv), scopes.DatastoreUse("everywhere", ["c1", "c2"])
    ) == Outcome(
        True,
        "mounted and accessible on every connected host of c1, c2",
        {"clusters": ["c1", "c2"], "hosts_without_access": {}},
    )


def test_st01_names_every_online_fc_hba() -> None:
    e = healthy()  # san1 is FC; each host has two online FC HBAs, vmhba2 and vmhba3
    assert storage.fc_hba(context(e.inv), e.inv.hosts[0]) == Outcome(
        True,
        "online FC HBA: vmhba2, vmhba3",
        {"needs": ["fc"], "hbas": {"vmhba2": "online", "vmhba3": "online"}},
    )


def test_st01_a_host_whose_fc_hbas_are_offline() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.adapters = [StorageAdapter("vmhba2", "fc", status="offline")]
    assert storage.fc_hba(context(e.inv), host) == Outcome(
        False,
        "c1 uses FC storage and this host has no online FC HBA",
        {"needs": ["fc"], "hbas": {"vmhba2": "offline"}},
    )


def test_st02_names_the_iscsi_datastores_and_adapters() -> None:
    e = Estate()
    e.cluster("c")
    i1, i2 = (e.host(n, "c", fc=2) for n in ("i1", "i2"))
    i1.adapters += [StorageAdapter(f"vmhba6{n}", "iscsi", iscsi_software=True) for n in (4, 5)]
    e.datastore("san1", [i1, i2])  # FC: no iSCSI adapter needed for it
    # mounted on i1 only, but HA may restart their VMs on i2: i2 needs them as well
    e.datastore("iscsi-a", [i1], transport="iscsi")
    e.datastore("iscsi-b", [i1], transport="iscsi")
    solo = e.host("solo", None, fc=2)
    e.datastore("san-solo", [solo])
    e.datastore("iscsi-solo", [solo], transport="iscsi")
    ctx = context(e.inv)
    needs = ["iscsi-a", "iscsi-b"]
    assert storage.iscsi_adapter(ctx, i1) == Outcome(
        True,
        "iSCSI adapter: vmhba64, vmhba65",
        {"iscsi_datastores": needs, "iscsi_adapters": ["vmhba64", "vmhba65"]},
    )
    assert storage.iscsi_adapter(ctx, i2) == Outcome(
        False,
        "no iSCSI adapter, but needs iscsi-a, iscsi-b",
        {"iscsi_datastores": needs, "iscsi_adapters": []},
    )
    # a host outside any cluster needs only what it mounts itself
    assert storage.iscsi_adapter(ctx, solo) == Outcome(
        False,
        "no iSCSI adapter, but needs iscsi-solo",
        {"iscsi_datastores": ["iscsi-solo"], "iscsi_adapters": []},
    )


def test_st05_names_every_fc_datastore_a_host_serves() -> None:
    e = healthy()
    e.datastore("san2", e.inv.hosts)  # FC too
    assert storage.unused_hba(context(e.inv), e.inv.hosts[0]) == Outcome(
        True,
        "FC HBA vmhba2, vmhba3 serves san1, san2",
        {"fc_hbas": ["vmhba2", "vmhba3"], "fc_datastores": ["san1", "san2"]},
    )


def test_each_cluster_needs_what_its_own_datastores_need() -> None:
    e = healthy()  # c1: FC
    e.cluster("c2")
    n1 = e.host("n1", "c2")
    e.datastore("nfs1", [n1], transport="nfs")
    # one context for both, as in an audit: what c1 needs is worked out once, for c1 only
    ctx = context(e.inv)
    assert storage.fc_hba(ctx, e.inv.hosts[0]) is not None
    assert storage.fc_hba(ctx, n1) is None
