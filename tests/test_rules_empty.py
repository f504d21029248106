"""DATA-02 on plain inventories: an audit that read no host fails, and says why."""

from __future__ import annotations

from datetime import date

from gpuaudit.inventory import Cluster, Datastore, Gap, Host, Inventory, Vm
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.results import Finding
from gpuaudit.rules import catalogue
from gpuaudit.verdict.check import run_checks

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
