"""The DRS rules that vSphere HA honours, in the host-failure simulation.

Unit tests on hand-built clusters: three hosts h1..h3 with one L4 each (room for
three grid_l4-8q vGPUs), where a host is made "full" by a VM holding its L4 with
grid_l4-24q. The replay tests read tests/scenarios/drsrules.yaml and take their
expectations from the comments and rules written there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuaudit.inventory import Inventory, VmHostRule, VmVmRule
from gpuaudit.results import HostFailure
from gpuaudit.simulation.failures import simulate_cluster
from gpuaudit.simulation.placement_rules import respects_anti_affinity
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.lab.scenario import ScenarioError, load_scenario
from tests.support.builders import Estate

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "drsrules.yaml"


def three_hosts(full: tuple[str, ...] = ()) -> Estate:
    """Cluster c with h1..h3; v1 (grid_l4-8q) on h1; each host in ``full`` has no room."""
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2, 3)]
    for h in hosts:
        e.gpu(h)
    e.datastore("ds", hosts)
    e.vm("v1", hosts[0], ["ds"], vgpu="grid_l4-8q")
    for h in hosts:
        if h.name in full:
            e.vm(f"big-{h.name}", h, ["ds"], vgpu="grid_l4-24q")
    return e


def failure_of(inv: Inventory, host: str) -> HostFailure:
    sim = simulate_cluster(inv, "c")
    return next(f for f in sim.failures if f.host == host)


def placed(failure: HostFailure) -> dict[str, str | None]:
    return {p.vm: p.to_host for p in failure.placed}


def must_run_on(e: Estate, hosts: list[str], mandatory: bool = True, enabled: bool = True) -> None:
    e.inv.clusters[0].vm_host_rules.append(
        VmHostRule(
            name="gpu-on-rack1",
            enabled=enabled,
            mandatory=mandatory,
            affine=True,
            vm_group="gpu-vms",
            host_group="rack1",
            vms=["v1"],
            hosts=hosts,
        )
    )


# --- VM-Host rules --------------------------------------------------------------------


def test_must_rule_strands_a_vm_though_another_host_has_room() -> None:
    e = three_hosts(full=("h2",))
    must_run_on(e, ["h1", "h2"])
    failure = failure_of(e.inv, "h1")
    assert placed(failure) == {}
    (p,) = failure.unplaced
    assert p.vm == "v1"
    assert p.reason == (
        "blocked by VM-Host rule 'gpu-on-rack1' (must run on host group 'rack1': h1, h2), "
        "though h3 has room"
    )


def test_without_the_rule_the_same_vm_restarts_on_the_host_with_room() -> None:
    e = three_hosts(full=("h2",))
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h3"}


def test_must_rule_keeps_the_vm_on_its_group() -> None:
    e = three_hosts()
    must_run_on(e, ["h1", "h3"])
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h3"}


def test_should_rule_never_blocks_a_restart() -> None:
    e = three_hosts(full=("h2",))
    must_run_on(e, ["h1", "h2"], mandatory=False)
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h3"}


def test_disabled_must_rule_never_blocks_a_restart() -> None:
    e = three_hosts(full=("h2",))
    must_run_on(e, ["h1", "h2"], enabled=False)
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h3"}


def test_must_not_rule_keeps_the_vm_off_the_group() -> None:
    e = three_hosts(full=("h2",))
    e.inv.clusters[0].vm_host_rules.append(
        VmHostRule("not-h3", True, True, False, "gpu-vms", "h3-only", ["v1"], ["h3"])
    )
    failure = failure_of(e.inv, "h1")
    (p,) = failure.unplaced
    assert p.reason == (
        "blocked by VM-Host rule 'not-h3' (must not run on host group 'h3-only': h3), "
        "though h3 has room"
    )


def test_must_rule_lowers_the_tolerance() -> None:
    e = three_hosts()
    assert simulate_cluster(e.inv, "c").tolerates == 2
    must_run_on(e, ["h1", "h2"])
    # v1 may only run on h1 and h2: losing both leaves it nowhere.
    assert simulate_cluster(e.inv, "c").tolerates == 1


# --- VM-VM rules ----------------------------------------------------------------------


def apart(e: Estate, vms: list[str], affinity: bool = False, name: str = "keep-apart") -> None:
    e.inv.clusters[0].vm_vm_rules.append(VmVmRule(name=name, affinity=affinity, vms=vms))


def test_anti_affinity_keeps_the_vm_off_a_host_running_its_partner() -> None:
    e = three_hosts()
    e.vm("v2", e.inv.hosts[1], ["ds"], vgpu="grid_l4-8q")
    apart(e, ["v1", "v2"])
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h3"}


def test_anti_affinity_blocks_the_restart_when_only_the_partners_host_has_room() -> None:
    e = three_hosts(full=("h3",))
    e.vm("v2", e.inv.hosts[1], ["ds"], vgpu="grid_l4-8q")
    apart(e, ["v1", "v2"])
    failure = failure_of(e.inv, "h1")
    (p,) = failure.unplaced
    assert p.reason == (
        "blocked by VM-VM anti-affinity rule 'keep-apart' (apart from v2), though h2 has room"
    )


def test_anti_affinity_is_ignored_when_the_ha_option_says_false() -> None:
    e = three_hosts(full=("h3",))
    e.vm("v2", e.inv.hosts[1], ["ds"], vgpu="grid_l4-8q")
    apart(e, ["v1", "v2"])
    e.inv.clusters[0].ha_options["das.respectVmVmAntiAffinityRules"] = "false"
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h2"}


def test_the_ha_option_is_read_case_insensitively_and_defaults_to_true() -> None:
    e = three_hosts()
    cluster = e.inv.clusters[0]
    assert respects_anti_affinity(cluster)
    cluster.ha_options["das.respectvmvmantiaffinityrules"] = "FALSE"
    assert not respects_anti_affinity(cluster)
    cluster.ha_options["das.respectvmvmantiaffinityrules"] = "true"
    assert respects_anti_affinity(cluster)


def test_anti_affinity_counts_vms_without_a_gpu() -> None:
    e = three_hosts()
    e.vm("db", e.inv.hosts[1], ["ds"])  # no GPU, on h2
    apart(e, ["v1", "db"])
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h3"}


def test_anti_affinity_ignores_a_powered_off_partner() -> None:
    e = three_hosts(full=("h3",))
    e.vm("v2", e.inv.hosts[1], ["ds"], vgpu="grid_l4-8q", power="poweredOff")
    apart(e, ["v1", "v2"])
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h2"}


def test_two_restarted_vms_of_one_rule_go_to_different_hosts() -> None:
    e = three_hosts()
    e.vm("v2", e.inv.hosts[0], ["ds"], vgpu="grid_l4-8q")  # both on h1
    apart(e, ["v1", "v2"])
    where = placed(failure_of(e.inv, "h1"))
    assert set(where) == {"v1", "v2"} and where["v1"] != where["v2"]


def test_two_restarted_vms_of_one_rule_and_one_host_with_room_place_one() -> None:
    e = three_hosts(full=("h3",))
    e.vm("v2", e.inv.hosts[0], ["ds"], vgpu="grid_l4-8q")
    apart(e, ["v1", "v2"])
    failure = failure_of(e.inv, "h1")
    assert list(placed(failure).values()) == ["h2"]
    (p,) = failure.unplaced
    assert "VM-VM anti-affinity rule 'keep-apart'" in (p.reason or "")


def test_affinity_rule_is_not_a_failover_constraint() -> None:
    e = three_hosts(full=("h3",))
    e.vm("v2", e.inv.hosts[2], ["ds"])  # on h3, which has no GPU room for v1
    apart(e, ["v1", "v2"], affinity=True)
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h2"}


def test_disabled_anti_affinity_rule_is_ignored() -> None:
    e = three_hosts(full=("h3",))
    e.vm("v2", e.inv.hosts[1], ["ds"], vgpu="grid_l4-8q")
    e.inv.clusters[0].vm_vm_rules.append(VmVmRule("off", enabled=False, vms=["v1", "v2"]))
    assert placed(failure_of(e.inv, "h1")) == {"v1": "h2"}


# --- the drsrules scenario, replayed ---------------------------------------------------


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SCENARIO.read_text())
    return data


def replayed() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "drsrules.yaml"))


def test_replay_reads_the_rules_groups_and_ha_options() -> None:
    inv = replayed()
    dc = scenario()["datacenters"][0]
    for spec in dc["clusters"]:
        cluster = inv.cluster(spec["name"])
        assert cluster is not None
        groups = {g["name"]: g for g in spec.get("groups", [])}
        want_vm_host = [r for r in spec.get("rules", []) if "vm_group" in r]
        assert [r.name for r in cluster.vm_host_rules] == [r["name"] for r in want_vm_host]
        for rule, want in zip(cluster.vm_host_rules, want_vm_host, strict=True):
            assert rule.mandatory == want["mandatory"]
            assert rule.affine == ("affine_host_group" in want)
            host_group = want.get("affine_host_group") or want["anti_affine_host_group"]
            assert sorted(rule.vms) == sorted(groups[want["vm_group"]]["vms"])
            assert sorted(rule.hosts) == sorted(groups[host_group]["hosts"])
        want_vm_vm = [r for r in spec.get("rules", []) if "vms" in r]
        assert [(r.name, r.affinity, sorted(r.vms)) for r in cluster.vm_vm_rules] == [
            (r["name"], r["kind"] == "affinity", sorted(r["vms"])) for r in want_vm_vm
        ]
        assert cluster.ha_options == {
            k: str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in spec["ha"].get("options", {}).items()
        }


def test_replay_outcomes_follow_the_scenario() -> None:
    """The scenario's `outcome` list: per cluster and failed host, where each VM lands."""
    inv = replayed()
    for case in scenario()["outcome"]:
        sim = simulate_cluster(inv, case["cluster"])
        failure = next(f for f in sim.failures if f.host == case["fail"])
        where = placed(failure)
        for vm, target in case.get("placed", {}).items():
            assert where.get(vm) in (target if isinstance(target, list) else [target]), case
        for vm, rule in case.get("blocked", {}).items():
            (p,) = [p for p in failure.unplaced if p.vm == vm]
            assert (p.reason or "").startswith("blocked by"), case
            assert f"rule '{rule}'" in (p.reason or ""), case


def test_an_inventory_saved_without_rules_labels_or_sub_ids_still_loads() -> None:
    inv = replayed()
    data = inv.to_dict()
    for cluster in data["clusters"]:
        for key in ("vm_host_rules", "vm_vm_rules", "ha_options"):
            del cluster[key]
    for host in data["hosts"]:
        for gpu in host["gpus"]:
            del gpu["hardware_label"]
    for vm in data["vms"]:
        for att in vm["gpus"]:
            del att["allowed_sub_ids"]
    old = Inventory.from_dict(data)
    must = old.cluster("must-rack")
    assert must is not None and must.vm_host_rules == [] and must.ha_options == {}
    assert all(g.hardware_label == "" for h in old.hosts for g in h.gpus)
    assert all(a.allowed_sub_ids == [] for v in old.vms for a in v.gpus)
    # Without the rules, the VM the must rule stranded restarts where there is room.
    failure = next(f for f in simulate_cluster(old, "must-rack").failures if f.host == "must-esx01")
    assert placed(failure) == {"must-vm-01": "must-esx03"}


# --- the scenario format's groups and rules ---------------------------------------------

SMALL = """\
datacenters:
  - name: dc
    clusters:
      - name: c
        hosts: [{name: esx01}, {name: esx02}]
        groups: GROUPS
        rules: RULES
    vms:
      - {name: vm1, host: esx01}
      - {name: vm2, host: esx02}
"""


def load_small(tmp_path: Path, groups: str, rules: str) -> dict[str, Any]:
    path = tmp_path / "s.yaml"
    path.write_text(SMALL.replace("GROUPS", groups).replace("RULES", rules))
    return load_scenario(path)


def test_the_scenario_format_takes_groups_and_rules(tmp_path: Path) -> None:
    s = load_small(
        tmp_path,
        "[{name: g, vms: [vm1]}, {name: h, hosts: [esx02]}]",
        "[{name: r, vm_group: g, anti_affine_host_group: h, mandatory: true},"
        " {name: a, kind: anti-affinity, vms: [vm1, vm2], enabled: false}]",
    )
    cluster = s["datacenters"][0]["clusters"][0]
    assert cluster["rules"][0] == {
        "name": "r",
        "enabled": True,
        "mandatory": True,
        "kind": "vm-host",
        "vm_group": "g",
        "affine_host_group": "",
        "anti_affine_host_group": "h",
        "vms": [],
    }
    assert (cluster["rules"][1]["kind"], cluster["rules"][1]["enabled"]) == ("anti-affinity", False)


@pytest.mark.parametrize(
    ("groups", "rules", "message"),
    [
        ("[{name: h, hosts: [esx09]}]", "[]", "names 'esx09', not a host of it"),
        ("[{name: g, vms: [vm1], hosts: [esx01]}]", "[]", "must list either vms or hosts"),
        ("[{name: g, vms: [vm1]}]", "[{name: r, vm_group: g, affine_host_group: x}]", "no group"),
        ("[]", "[{name: a, kind: anti-affinity, vms: [vm1]}]", "needs two VMs or more"),
        ("[]", "[{name: a, kind: anti-affinity, vms: [vm1, vm9]}]", "'vm9' is not a VM"),
    ],
)
def test_the_scenario_format_refuses_bad_groups_and_rules(
    tmp_path: Path, groups: str, rules: str, message: str
) -> None:
    with pytest.raises(ScenarioError, match=message):
        load_small(tmp_path, groups, rules)


def test_the_collector_reads_must_not_rules_affinity_rules_and_resolves_names() -> None:
    from pyVmomi import vim

    from gpuaudit.vsphere.collect.retrieve import ObjectProps
    from gpuaudit.vsphere.collect.vms import build_cluster

    def ref(kind: Any, moid: str) -> Any:
        return kind(moid)

    vm1, vm2 = ref(vim.VirtualMachine, "vm-1"), ref(vim.VirtualMachine, "vm-2")
    host = ref(vim.HostSystem, "host-9")
    config = vim.cluster.ConfigInfoEx(
        dasConfig=vim.cluster.DasConfigInfo(
            enabled=True, option=[vim.option.OptionValue(key="das.x", value="1")]
        ),
        group=[
            vim.cluster.VmGroup(name="g", vm=[vm1]),
            vim.cluster.HostGroup(name="h", host=[host]),
        ],
        rule=[
            vim.cluster.VmHostRuleInfo(
                name="off-h", enabled=True, mandatory=True, vmGroupName="g",
                antiAffineHostGroupName="h",
            ),
            vim.cluster.AffinityRuleSpec(name="together", enabled=False, vm=[vm1, vm2]),
        ],
    )  # fmt: skip
    obj = ObjectProps(
        "domain-c1", "ClusterComputeResource", {"name": "c", "configurationEx": config}
    )
    cluster = build_cluster(obj, {"host-9": "esx09"}, {"vm-1": "one", "vm-2": "two"})
    assert cluster.vm_host_rules == [
        VmHostRule("off-h", True, True, False, "g", "h", ["one"], ["esx09"])
    ]
    assert cluster.vm_vm_rules == [VmVmRule("together", False, True, False, ["one", "two"])]
    assert cluster.ha_options == {"das.x": "1"}
