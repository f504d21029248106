"""VM-09 (rules/drs.py): each DRS option's exact verdict, message and evidence.

vCenter 7.0 U3f is build 20051473 (VMware's vCenter build list); 8.0 U2 is the first
release that load-balances vGPU VMs (Broadcom KB 88271 and the 8.0 U2 DRS blog post).

Then each option that fails a fully automated DRS cluster on its own.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import HOST_AGENT
from gpuaudit.rules import drs
from gpuaudit.rules.registry import Outcome
from tests.support.builders import Estate, context, healthy

EVACUATES = {"VgpuMMAutomationTimeoutSecs": "-1"}
BALANCES = {"PassthroughDrsAutomation": "1", "LBMaxVmotionPerHost": "1"}


def _estate(
    options: dict[str, str],
    version: str = "8.0.3",
    build: str = "24022515",
    automation: str = "fullyAutomated",
) -> Estate:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = version, build
    cluster = e.inv.clusters[0]
    cluster.drs_enabled, cluster.drs_automation = True, automation
    cluster.drs_options = dict(options)
    return e


def _vm09(e: Estate) -> Outcome | None:
    return drs.vgpu_drs_options(context(e.inv), e.inv.clusters[0])


def _verdict(e: Estate) -> Outcome:
    outcome = _vm09(e)
    assert outcome is not None
    return outcome


def test_passing_verdict_message_and_evidence() -> None:
    outcome = _verdict(_estate({**EVACUATES, **BALANCES, "VmDevicesStunTimeTolerated": "100"}))
    assert outcome == Outcome(
        True,
        "VgpuMMAutomationTimeoutSecs is -1: maintenance mode evacuates vGPU VMs",
        {
            "drs_automation": "fullyAutomated",
            "options": {
                "PassthroughDrsAutomation": "1",
                "LBMaxVmotionPerHost": "1",
                "VgpuMMAutomationTimeoutSecs": "-1",
                "VmDevicesStunTimeTolerated": "100",
            },
            "vcenter_release": "8.0 U3",
            "vgpu_vms": 3,
        },
    )


def test_every_problem_is_named_in_one_message() -> None:
    options = {"LBMaxVmotionPerHost": "2", "VmDevicesStunTimeTolerated": "soon"}
    outcome = _verdict(_estate(options))
    assert not outcome.passed
    assert outcome.message == (
        "VgpuMMAutomationTimeoutSecs is unset: maintenance mode does not evacuate vGPU VMs; "
        "PassthroughDrsAutomation is not 1: DRS never load-balances vGPU VMs; "
        "VmDevicesStunTimeTolerated is soon, below 100 s: "
        "DRS skips vGPU VMs with longer estimated stun times"
    )
    assert outcome.evidence["options"] == {
        "PassthroughDrsAutomation": None,
        "LBMaxVmotionPerHost": "2",
        "VgpuMMAutomationTimeoutSecs": None,
        "VmDevicesStunTimeTolerated": "soon",
    }


def test_an_unset_vmotion_limit_is_named_unset() -> None:
    outcome = _verdict(_estate({**EVACUATES, "PassthroughDrsAutomation": " 1 "}))
    assert outcome.message == (
        "LBMaxVmotionPerHost is unset, not 1: several vGPU vMotions at once per host"
    )


def test_options_are_read_as_numbers_with_spaces_around() -> None:
    options = {"VgpuMMAutomationTimeoutSecs": " -1 ", "PassthroughDrsAutomation": "1 "}
    outcome = _verdict(_estate({**options, "LBMaxVmotionPerHost": " 1"}))
    assert outcome.passed


def test_an_evacuation_timeout_that_is_no_number_fails() -> None:
    outcome = _verdict(_estate({**BALANCES, "VgpuMMAutomationTimeoutSecs": "never"}))
    assert outcome.message == (
        "VgpuMMAutomationTimeoutSecs is never, not -1: maintenance mode does not evacuate vGPU VMs"
    )


@pytest.mark.parametrize("automation", ["partiallyAutomated", "manual"])
def test_load_balancing_options_matter_only_when_fully_automated(automation: str) -> None:
    assert _verdict(_estate(EVACUATES, automation=automation)).passed


def test_load_balancing_from_80_u2_exactly() -> None:
    outcome = _verdict(_estate(EVACUATES, version="8.0.2", build="22385739"))
    assert outcome.message == "PassthroughDrsAutomation is not 1: DRS never load-balances vGPU VMs"
    assert _verdict(_estate(EVACUATES, version="8.0.1", build="22088981")).passed


def test_an_unreadable_vcenter_version_checks_the_options_it_can() -> None:
    outcome = _verdict(_estate(EVACUATES, version="unknown", build=""))
    assert outcome.passed
    assert outcome.evidence["vcenter_release"] is None


@pytest.mark.parametrize(
    ("version", "build", "evacuates"),
    [
        ("7.0.3", "20051473", True),  # 7.0 U3f itself
        ("7.0.3", "20051472", False),
        ("7.0.3", "", True),  # an unknown build of 7.0 U3 is given the benefit of the doubt
        ("7.0.2", "17958471", False),
        ("7.0.3", "21477706", True),
        ("6.7.0", "14367737", False),
        ("8.0.0", "20519528", True),
        ("9.0.0", "1", True),
    ],
)
def test_evacuation_from_vcenter_70_u3f(version: str, build: str, evacuates: bool) -> None:
    outcome = _verdict(_estate({**EVACUATES, **BALANCES}, version=version, build=build))
    assert outcome.passed is evacuates
    if not evacuates:
        assert outcome.message.startswith(f"vCenter {outcome.evidence['vcenter_release']} ")
        assert outcome.message.endswith(
            " predates 7.0 U3f: maintenance mode never evacuates vGPU VMs; "
            "they must be moved by hand"
        )


def test_not_asked_of_a_standalone_host_or_a_cluster_without_vgpu_vms() -> None:
    standalone = _estate({})
    standalone.inv.vcenter.api_type = HOST_AGENT
    assert _vm09(standalone) is None
    no_vgpu = _estate({})
    for vm in no_vgpu.inv.vms:
        vm.gpus = [g for g in vm.gpus if g.kind != "vgpu"]
    assert _vm09(no_vgpu) is None


# --- VM-09, one option at a time ----------------------------------------------------------

READY = {"PassthroughDrsAutomation": "1", "LBMaxVmotionPerHost": "1"}


def _drs_estate(options: dict[str, str], vcenter: str = "8.0.3", build: str = "24022515") -> Estate:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = vcenter, build
    cluster = e.inv.clusters[0]
    cluster.drs_enabled, cluster.drs_automation = True, "fullyAutomated"
    cluster.drs_options = dict(options)
    return e


def test_vm09_every_option_set_passes() -> None:
    e = _drs_estate({**READY, "VgpuMMAutomationTimeoutSecs": "-1"})
    assert _verdict(e).passed


def test_vm09_an_unset_evacuation_timeout_fails() -> None:
    outcome = _verdict(_drs_estate(READY))
    assert not outcome.passed
    assert "VgpuMMAutomationTimeoutSecs is unset" in outcome.message


def test_vm09_an_evacuation_timeout_other_than_minus_one_fails() -> None:
    outcome = _verdict(_drs_estate({**READY, "VgpuMMAutomationTimeoutSecs": "300"}))
    assert not outcome.passed
    assert "VgpuMMAutomationTimeoutSecs is 300, not -1" in outcome.message


def test_vm09_fully_automated_drs_without_passthrough_automation_fails() -> None:
    outcome = _verdict(_drs_estate({"VgpuMMAutomationTimeoutSecs": "-1"}))
    assert not outcome.passed
    assert "PassthroughDrsAutomation is not 1: DRS never load-balances vGPU VMs" in outcome.message


def test_vm09_passthrough_automation_does_not_apply_before_vcenter_80_u2() -> None:
    e = _drs_estate({"VgpuMMAutomationTimeoutSecs": "-1"}, vcenter="8.0.1", build="21560480")
    assert _verdict(e).passed


def test_vm09_several_vmotions_per_host_fail() -> None:
    options = {**READY, "LBMaxVmotionPerHost": "4", "VgpuMMAutomationTimeoutSecs": "-1"}
    outcome = _verdict(_drs_estate(options))
    assert not outcome.passed
    assert "LBMaxVmotionPerHost is 4, not 1" in outcome.message


@pytest.mark.parametrize(("seconds", "passed"), [("50", False), ("100", True), ("180", True)])
def test_vm09_stun_time_tolerance_below_the_default_fails(seconds: str, passed: bool) -> None:
    options = {**READY, "VgpuMMAutomationTimeoutSecs": "-1", "VmDevicesStunTimeTolerated": seconds}
    assert _verdict(_drs_estate(options)).passed is passed


def test_vm09_a_vcenter_before_70_u3f_cannot_evacuate() -> None:
    e = _drs_estate({"VgpuMMAutomationTimeoutSecs": "-1"}, vcenter="7.0.3", build="19234570")
    outcome = _verdict(e)
    assert not outcome.passed
    assert "predates 7.0 U3f" in outcome.message


def test_vm09_does_not_apply_without_drs() -> None:
    e = _drs_estate({})
    e.inv.clusters[0].drs_enabled = False
    assert _vm09(e) is None
