"""DATA-01 and DATA-02 (rules/data.py): the verdicts, messages and evidence, written out;
then DATA-02 on plain inventories: an audit that read no host fails, and says why.
"""

from __future__ import annotations

from datetime import date

from gpuaudit.inventory import Cluster, Datastore, Gap, Host, Inventory, Vm
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.results import Finding
from gpuaudit.rules import catalogue, data
from gpuaudit.rules.registry import Outcome, Verdict
from gpuaudit.verdict.check import run_checks
from tests.support.builders import Estate, context


def _two_hosts() -> Estate:
    e = Estate()
    e.cluster("c1")
    e.host("h1", "c1")
    e.host("h2", "c1")
    return e


def test_hosts_without_gaps_pass_and_gaps_are_grouped_by_object() -> None:
    e = _two_hosts()
    e.inv.gaps = [
        Gap("h2", "HostSystem", "config.option", "NoPermission"),
        Gap("vm-9", "VirtualMachine", "config", "notResponding"),
        Gap("h2", "HostSystem", "hardware", "notInApiVersion"),
        Gap("ds1", "Datastore", "info", "NoPermission"),
        Gap("odd", "Folder", "childEntity", "NoPermission"),
        Gap("vc", "ServiceInstance", "content", "NoPermission"),
        Gap("opt", "OptionManager", "setting", "NoPermission"),
        Gap("c9", "ClusterComputeResource", "configurationEx", "NoPermission"),
    ]
    verdicts = list(data.gaps(context(e.inv)))
    assert verdicts[0] == Verdict(
        "h1", True, "no gaps", {}, cluster="c1", host="h1", object_kind="host"
    )
    h2 = verdicts[1]
    assert h2 == Verdict(
        "h2",
        False,
        "could not read config.option: NoPermission; hardware: notInApiVersion",
        {
            "gaps": [
                {"kind": "HostSystem", "property": "config.option", "reason": "NoPermission"},
                {"kind": "HostSystem", "property": "hardware", "reason": "notInApiVersion"},
            ]
        },
        cluster="c1",
        host="h2",
        object_kind="host",
    )
    others = {v.object: (v.cluster, v.host, v.object_kind) for v in verdicts[2:]}
    assert others == {
        "vm-9": (None, None, "vm"),
        "ds1": (None, None, "datastore"),
        "odd": (None, None, "inventory"),
        "vc": (None, None, "vcenter"),
        "opt": (None, None, "vcenter"),
        "c9": (None, None, "cluster"),
    }
    assert len(verdicts) == 8


def test_a_host_not_responding_is_a_gap_of_its_own() -> None:
    e = _two_hosts()
    e.inv.hosts[0].connection_state = "notResponding"
    e.inv.hosts[1].connection_state = "disconnected"
    e.inv.gaps = [Gap("h2", "HostSystem", "runtime", "NoPermission")]
    verdicts = list(data.gaps(context(e.inv)))
    assert [(v.object, v.passed, v.message) for v in verdicts] == [
        ("h2", False, "could not read runtime: NoPermission"),
        ("h1", False, "could not read config: host is notResponding"),
    ]
    assert verdicts[1].evidence == {
        "gaps": [{"kind": "HostSystem", "property": "config", "reason": "host is notResponding"}]
    }
    assert (verdicts[1].cluster, verdicts[1].host, verdicts[1].object_kind) == ("c1", "h1", "host")


def _examined(inv: Inventory) -> Outcome:
    return data.nothing_examined(context(inv), inv)


def test_one_host_read_is_said_in_the_singular() -> None:
    e = Estate()
    e.cluster("c1")
    e.host("h1", "c1")
    e.inv.datacenters = ["dc1"]
    assert _examined(e.inv) == Outcome(
        True,
        "1 host read",
        {"hosts": 1, "datacenters": 1, "clusters": 1, "vms": 0, "datastores": 0},
    )
    assert _examined(_two_hosts().inv).message == "2 hosts read"


def test_nothing_at_all_was_listed() -> None:
    outcome = _examined(Inventory())
    assert outcome == Outcome(
        False,
        "nothing was examined: the server's answer held no object at all: the audit account "
        "can see nothing (no role on the root of the inventory), or the server's inventory "
        "answer was empty or unreadable",
        {"hosts": 0, "datacenters": 0, "clusters": 0, "vms": 0, "datastores": 0},
    )


def test_objects_listed_but_no_host() -> None:
    inv = Inventory(datacenters=["dc1", "dc2"])
    assert _examined(inv).message == (
        "nothing was examined: no host was read, though the server listed 2 datacenters: the "
        "audit account sees part of the inventory only (the Read-only role not propagated from "
        "the root, or assigned on a folder that holds no hosts)"
    )
    e = Estate()
    e.cluster("c1")
    e.inv.datacenters = ["dc1"]
    assert "the server listed 1 datacenter and 1 cluster: " in _examined(e.inv).message


def test_every_kind_of_object_listed_is_counted() -> None:
    e = _two_hosts()
    h1 = e.inv.hosts[0]
    e.datastore("ds1", [h1])
    e.vm("v1", h1, ["ds1"])
    e.inv.hosts = []
    e.inv.datacenters = ["dc1"]
    assert (
        "the server listed 1 datacenter, 1 cluster, 1 VM and 1 datastore: "
        in _examined(e.inv).message
    )


def test_objects_refused_are_named_five_at_most() -> None:
    inv = Inventory(
        gaps=[Gap(f"folder-{i}", "Folder", "childEntity", "NoPermission") for i in (6, 2, 4, 1)]
        + [Gap("dc9", "Datacenter", "name", "notResponding")]
    )
    outcome = _examined(inv)
    assert outcome.message == (
        "nothing was examined: no host was read and the server refused the audit account "
        "(NoPermission) on 4 objects (folder-1, folder-2, folder-4, folder-6): the account's "
        "permissions do not cover the inventory; give it the Read-only role on the root, "
        "propagated to children"
    )
    assert outcome.evidence["no_permission"] == ["folder-1", "folder-2", "folder-4", "folder-6"]
    six = Inventory(gaps=[Gap(f"f{i}", "Folder", "x", "NoPermission") for i in range(6)])
    assert "on 6 objects (f0, f1, f2, f3, f4, ...): " in _examined(six).message
    five = Inventory(gaps=[Gap(f"f{i}", "Folder", "x", "NoPermission") for i in range(5)])
    assert "on 5 objects (f0, f1, f2, f3, f4): " in _examined(five).message
    one = Inventory(gaps=[Gap("f0", "Folder", "x", "NoPermission")])
    assert "on 1 object (f0): " in _examined(one).message


def test_reads_beyond_the_read_only_role_are_named_in_a_passing_verdict() -> None:
    e = _two_hosts()
    e.inv.gaps = [
        Gap("h1", "HostSystem", "vgpu_manager_version", "", privilege="Host.Config.Image"),
        Gap("h1", "HostSystem", "software", "", privilege="Host.Config.Image"),
    ]
    assert list(data.gaps(context(e.inv))) == [
        Verdict(
            "h1",
            True,
            "no gaps; not read by the Read-only role: vgpu_manager_version (needs "
            "Host.Config.Image); software (needs Host.Config.Image)",
            {
                "beyond_role": [
                    "vgpu_manager_version (needs Host.Config.Image)",
                    "software (needs Host.Config.Image)",
                ]
            },
            cluster="c1",
            host="h1",
            object_kind="host",
        ),
        Verdict("h2", True, "no gaps", {}, cluster="c1", host="h2", object_kind="host"),
    ]


# --- DATA-02 on plain inventories: an audit that read no host -----------------------------

RULE_IDS = [r.id for r in catalogue()]

TODAY = date(2027, 1, 15)


def data02(inv: Inventory, policy_text: str | None = None) -> Finding:
    policy = parse_policy(policy_text, "policy.yaml", rule_ids=RULE_IDS) if policy_text else None
    result = run_checks(inv, policy, TODAY)
    assert result.errors == []
    (finding,) = [f for f in result.findings if f.rule == "DATA-02"]
    return finding


def test_an_empty_inventory_fails_as_nothing_seen_at_all() -> None:
    f = data02(Inventory())
    assert (f.status, f.severity, f.object) == ("fail", "critical", "inventory")
    assert f.message.startswith("nothing was examined: ")
    assert "held no object at all" in f.message
    assert "can see nothing" in f.message and "empty or unreadable" in f.message
    assert f.evidence["hosts"] == 0 and f.evidence["vms"] == 0


def test_vms_and_datastores_without_hosts_point_at_the_role_scope() -> None:
    inv = Inventory(
        datacenters=["DC1"],
        clusters=[Cluster("gpu-01", "domain-c1", datacenter="DC1")],
        vms=[Vm("vdi-01", "vm-1"), Vm("vdi-02", "vm-2")],
        datastores=[Datastore("ds-01", "datastore-1")],
    )
    f = data02(inv)
    assert (f.status, f.severity) == ("fail", "critical")
    assert "no host was read" in f.message
    assert "1 datacenter, 1 cluster, 2 VMs and 1 datastore" in f.message
    assert "not propagated from the root" in f.message
    assert "folder that holds no hosts" in f.message
    assert f.evidence["vms"] == 2 and f.evidence["datastores"] == 1


def test_a_no_permission_gap_names_the_permissions() -> None:
    inv = Inventory(
        datacenters=["DC1"],
        gaps=[
            Gap("DC1", "Datacenter", "hostFolder", "NoPermission"),
            Gap("vCenter", "OptionManager", "setting", "NoPermission"),
        ],
    )
    f = data02(inv)
    assert (f.status, f.severity) == ("fail", "critical")
    assert "NoPermission" in f.message and "2 objects (DC1, vCenter)" in f.message
    assert "Read-only role on the root" in f.message
    assert f.evidence["no_permission"] == ["DC1", "vCenter"]


def test_one_host_is_enough_to_pass() -> None:
    f = data02(Inventory(hosts=[Host("esx01", "host-1", connection_state="notResponding")]))
    assert (f.status, f.message) == ("pass", "1 host read")


def test_no_policy_can_waive_or_grade_it_down() -> None:
    policy = """
severity:
  DATA-02: info
waivers:
  - {rule: DATA-02, object: "*", reason: empty lab, owner: ops, expires: 2099-01-01}
"""
    f = data02(Inventory(), policy)
    assert (f.status, f.severity, f.waiver) == ("fail", "critical", None)
    assert f.evidence["policy_ignored"] == ["severity override", "waiver"]
