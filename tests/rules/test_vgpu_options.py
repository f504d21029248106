"""VM-11: a vGPU VM with unified memory, CUDA debuggers or profilers enabled cannot be
live-migrated.

NVIDIA (Virtual GPU Software User Guide 17): each is enabled per vGPU by setting the
vGPU plugin parameter pciPassthru<vgpu-id>.cfg.enable_uvm (6.4.3), .enable_debugging
(6.5.1) or .enable_profiling (6.5.2.4) "to 1"; "When NVIDIA CUDA Toolkit debuggers are
enabled for a VM, the VM cannot be migrated" (6.5.1); "A VM for which NVIDIA CUDA Toolkit
profilers are enabled cannot be migrated" (6.5.2.3); and NVIDIA AI Enterprise: "NVIDIA
vGPU (C-Series) migration is disabled for a VM for which any of the following NVIDIA CUDA
Toolkit features is enabled: Unified memory, Debuggers, Profilers". Messages and evidence
below are written out by hand.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import HOST_AGENT, Gap, Vm
from gpuaudit.rules import vgpu_options
from gpuaudit.rules.registry import Outcome
from tests.support.builders import Estate, context, healthy, passthrough_estate


def v1(e: Estate) -> Vm:
    return next(v for v in e.inv.vms if v.name == "v1")


def judge(e: Estate, options: dict[str, str]) -> Outcome:
    vm = v1(e)
    vm.vgpu_plugin_options = options
    outcome = vgpu_options.migration_options(context(e.inv), vm)
    assert outcome is not None
    return outcome


@pytest.mark.parametrize(
    ("key", "feature"),
    [
        ("pciPassthru0.cfg.enable_uvm", "unified memory"),
        ("pciPassthru0.cfg.enable_debugging", "CUDA debuggers"),
        ("pciPassthru1.cfg.enable_profiling", "CUDA profilers"),
    ],
)
def test_vm11_fails_a_vgpu_vm_with_a_feature_that_disables_migration(
    key: str, feature: str
) -> None:
    outcome = judge(healthy(), {key: "1"})
    assert outcome == Outcome(
        False,
        f"{key} = 1 ({feature}): NVIDIA disables the live migration of such a vGPU VM",
        {"options": {key: "1"}, "enabled": [key], "unclear": []},
    )


def test_vm11_names_every_enabled_feature_in_order() -> None:
    options = {"pciPassthru0.cfg.enable_uvm": " 1 ", "pciPassthru0.cfg.enable_debugging": "1"}
    outcome = judge(healthy(), options)
    assert not outcome.passed
    assert outcome.message == (
        "pciPassthru0.cfg.enable_debugging = 1 (CUDA debuggers), pciPassthru0.cfg.enable_uvm "
        "= 1 (unified memory): NVIDIA disables the live migration of such a vGPU VM"
    )
    assert outcome.evidence["enabled"] == [
        "pciPassthru0.cfg.enable_debugging",
        "pciPassthru0.cfg.enable_uvm",
    ]


def test_vm11_passes_a_vgpu_vm_without_the_parameters() -> None:
    outcome = judge(healthy(), {})
    assert outcome == Outcome(
        True,
        "unified memory, CUDA debuggers and CUDA profilers are off",
        {"options": {}, "enabled": [], "unclear": []},
    )


def test_vm11_passes_parameters_set_to_0_and_names_them() -> None:
    outcome = judge(healthy(), {"pciPassthru0.cfg.enable_uvm": "0"})
    assert outcome.passed and not outcome.unproven
    assert outcome.message == (
        "unified memory, CUDA debuggers and CUDA profilers are off "
        "(pciPassthru0.cfg.enable_uvm = 0)"
    )


def test_vm11_a_value_nvidia_does_not_document_is_not_proven() -> None:
    outcome = judge(healthy(), {"pciPassthru0.cfg.enable_uvm": "TRUE"})
    reason = (
        "pciPassthru0.cfg.enable_uvm = 'TRUE': NVIDIA documents 1 (enabled) and 0 (disabled) only"
    )
    assert outcome == Outcome(
        True,
        f"{reason}; its live migration may be disabled",
        {
            "options": {"pciPassthru0.cfg.enable_uvm": "TRUE"},
            "enabled": [],
            "unclear": ["pciPassthru0.cfg.enable_uvm"],
        },
        unproven=reason,
    )


def test_vm11_names_every_unclear_value() -> None:
    options = {"pciPassthru1.cfg.enable_uvm": "on", "pciPassthru0.cfg.enable_debugging": ""}
    outcome = judge(healthy(), options)
    assert outcome.unproven == (
        "pciPassthru0.cfg.enable_debugging = '', pciPassthru1.cfg.enable_uvm = 'on': "
        "NVIDIA documents 1 (enabled) and 0 (disabled) only"
    )


def test_vm11_an_enabled_feature_fails_whatever_else_is_unclear() -> None:
    options = {"pciPassthru0.cfg.enable_uvm": "yes", "pciPassthru0.cfg.enable_profiling": "1"}
    outcome = judge(healthy(), options)
    assert not outcome.passed
    assert outcome.evidence["unclear"] == ["pciPassthru0.cfg.enable_uvm"]


def test_vm11_an_unread_extra_config_is_not_proven() -> None:
    e = healthy()
    e.inv.gaps.append(Gap("v1", "VirtualMachine", "config.extraConfig", "NoPermission"))
    e.inv.gaps.append(Gap("v2", "VirtualMachine", "config.firmware", "NoPermission"))
    e.inv.gaps.append(Gap("v3", "HostSystem", "config.extraConfig", "NoPermission"))
    outcome = judge(e, {})
    assert outcome.unproven == "the VM's config.extraConfig could not be read"
    assert outcome.evidence == {"options": {}, "enabled": [], "unclear": []}
    assert outcome.message == (
        "the VM's config.extraConfig could not be read: its vGPU plugin parameters are unknown"
    )
    for name in ("v2", "v3"):
        vm = next(v for v in e.inv.vms if v.name == name)
        other = vgpu_options.migration_options(context(e.inv), vm)
        assert other is not None and other.passed and not other.unproven, name


def test_vm11_does_not_examine_a_vm_without_vgpu_or_a_standalone_host() -> None:
    e = passthrough_estate()
    vm = e.inv.vms[0]
    vm.vgpu_plugin_options = {"pciPassthru0.cfg.enable_uvm": "1"}
    assert vgpu_options.migration_options(context(e.inv), vm) is None
    e = healthy()
    e.inv.vcenter.api_type = HOST_AGENT
    v1(e).vgpu_plugin_options = {"pciPassthru0.cfg.enable_uvm": "1"}
    assert vgpu_options.migration_options(context(e.inv), v1(e)) is None


def test_the_feature_of_each_parameter() -> None:
    assert vgpu_options.feature("pciPassthru3.cfg.enable_profiling") == "CUDA profilers"
    assert vgpu_options.feature("pciPassthru0.cfg.enable_uvm") == "unified memory"
