"""The planning benchmark's what-if and DRS copies (bench/plan.py) change only what they
say, on a small cluster of bench/config_max.py's kind. The timings themselves are in
docs/performance.md; the tests do not run them."""

from __future__ import annotations

from bench.config_max import config_max_cluster
from bench.plan import retire, what_if, with_drs_evacuation


def test_retiring_a_host_drops_it_and_its_vms_from_a_copy_only() -> None:
    inv = config_max_cluster(hosts=6, gpus=2)
    on_first = {vm.name for vm in inv.vms if vm.host == "esx000"}
    assert on_first  # GPU 0 of every host runs VMs
    out = retire(inv, "esx000")
    assert [h.name for h in out.hosts] == ["esx001", "esx002", "esx003", "esx004", "esx005"]
    assert {vm.name for vm in out.vms} == {vm.name for vm in inv.vms} - on_first
    for c in out.clusters:
        for rule in c.vm_vm_rules:
            assert not set(rule.vms) & on_first
        for hr in c.vm_host_rules:
            assert "esx000" not in hr.hosts and not set(hr.vms) & on_first
    assert len(inv.hosts) == 6  # the original is untouched


def test_the_drs_copy_lets_drs_evacuate_vgpu_vms() -> None:
    inv = config_max_cluster(hosts=3, gpus=1)
    (c,) = with_drs_evacuation(inv).clusters
    assert (c.drs_enabled, c.drs_automation) == (True, "fullyAutomated")
    assert c.drs_options["VgpuMMAutomationTimeoutSecs"] == "-1"
    assert "VgpuMMAutomationTimeoutSecs" not in inv.clusters[0].drs_options


def test_the_what_if_answers_for_the_cluster_without_the_retired_host() -> None:
    readiness, headroom = what_if(config_max_cluster(hosts=6, gpus=2))
    assert [h.host for c in readiness for h in c.hosts] == [f"esx00{i}" for i in range(1, 6)]
    assert [c.cluster for c in headroom] == ["max"]
