"""LIC-01's messages and LIC-02's licence judgement (rules/licensing.py), written out by hand.

The edition keys are vCenter's (esx.enterprisePlus.cpuPackageCoreLimited, esx.standard.cpuPackage);
the warning window is the policy's default of 14 days.
"""

from __future__ import annotations

from datetime import date

import pytest

from gpuaudit.inventory import GpuAttachment, Licence
from gpuaudit.model.policy import LicensingPolicy, PassthroughLicence, Policy
from gpuaudit.rules import licensing
from gpuaudit.rules.registry import Outcome
from tests.support.builders import context, healthy, passthrough_estate

POLICY = LicensingPolicy()
TODAY = date(2027, 1, 15)


@pytest.mark.parametrize(
    ("features", "why"),
    [
        ({"vgpu": "Some name"}, "feature vgpu (Some name)"),
        ({"x1": "Shared Pass-Thru Graphics"}, "feature x1 (Shared Pass-Thru Graphics)"),
        ({"x2": "shared passthrough graphics"}, "feature x2 (shared passthrough graphics)"),
        ({"x3": "NVIDIA vGPU"}, "feature x3 (NVIDIA vGPU)"),
    ],
)
def test_a_feature_that_says_vgpu_allows_it(features: dict[str, str], why: str) -> None:
    licence = Licence("esx.standard.cpuPackage", features={"dvs": "Distributed Switch", **features})
    assert licensing.vgpu_allowance(licence, POLICY) == (True, why)


def test_an_edition_that_carries_vgpu_allows_it() -> None:
    licence = Licence("esx.enterprisePlus.cpuPackageCoreLimited", features={"dvs": "Switch"})
    assert licensing.vgpu_allowance(licence, POLICY) == (
        True,
        "edition esx.enterprisePlus.cpuPackageCoreLimited (licensing.vgpu_editions)",
    )


def test_an_edition_without_vgpu_names_what_it_has() -> None:
    licence = Licence("esx.standard.cpuPackage", features={"vmotion": "vMotion", "dvs": "vgpus"})
    assert licensing.vgpu_allowance(licence, POLICY) == (
        False,
        "edition esx.standard.cpuPackage is not known to include vGPU "
        "(licensing.vgpu_editions) and has no shared passthrough graphics (vGPU) feature "
        "among dvs, vmotion",
    )
    assert licensing.vgpu_allowance(Licence(""), POLICY) == (
        False,
        "edition unknown lists no features and is not known to include vGPU "
        "(licensing.vgpu_editions)",
    )


def test_licence_problems_of_a_paid_licence() -> None:
    assert licensing.licence_problems(None, POLICY, TODAY) == [
        ("no licence assignment was read for the host", None)
    ]
    ok = Licence("esx.vvf.cpuCoreMin", expires="2027-01-15")
    assert licensing.licence_problems(ok, POLICY, TODAY) == []
    ended = Licence("esx.standard.cpuPackage", expires="2027-01-14")
    assert licensing.licence_problems(ended, POLICY, TODAY) == [
        ("its licence expired on 2027-01-14", None),
        (
            "its licence does not allow vGPU: edition esx.standard.cpuPackage lists no features "
            "and is not known to include vGPU (licensing.vgpu_editions)",
            None,
        ),
    ]


@pytest.mark.parametrize(
    ("expires", "problems"),
    [
        (None, [("the host runs in evaluation mode and its expiry date was not read", "medium")]),
        ("2027-01-14", [("the host's evaluation period ended on 2027-01-14", None)]),
        (
            "2027-01-15",
            [("the host runs in evaluation mode, which ends on 2027-01-15 (in 0 days)", "medium")],
        ),
        (
            "2027-01-29",
            [("the host runs in evaluation mode, which ends on 2027-01-29 (in 14 days)", "medium")],
        ),
        ("2027-01-30", []),
    ],
)
def test_evaluation_mode_by_its_end(
    expires: str | None, problems: list[tuple[str, str | None]]
) -> None:
    licence = Licence("eval", expires=expires, evaluation=True)
    assert licensing.licence_problems(licence, POLICY, TODAY) == problems


def test_lic01_a_powered_off_vm_needs_its_licence_when_powered_on() -> None:
    e = healthy()
    off = e.vm("v4", e.inv.hosts[0], ["san1"], vgpu="grid_l4-8q", power="poweredOff")
    # Q series: NVIDIA RTX Virtual Workstation (NVIDIA vGPU licensing guide)
    assert licensing.edition_needed(context(e.inv), off) == Outcome(
        True,
        "needs an NVIDIA RTX Virtual Workstation licence when powered on for grid_l4-8q",
        {
            "edition": "NVIDIA RTX Virtual Workstation",
            "profiles": ["grid_l4-8q"],
            "series": ["Q"],
            "powered_on": False,
        },
    )
    on = licensing.edition_needed(context(e.inv), e.inv.vms[0])
    assert on is not None and on.message == (
        "needs an NVIDIA RTX Virtual Workstation licence now (powered on) for grid_l4-8q"
    )
    pt = passthrough_estate()
    pt.inv.vms[0].power_state = "poweredOff"
    policy = Policy(
        licensing=LicensingPolicy(passthrough=(PassthroughLicence("pt", "NVIDIA AI Enterprise"),))
    )
    assert licensing.edition_needed(context(pt.inv, policy), pt.inv.vms[0]) == Outcome(
        True,
        "passthrough GPU whose guest runs the NVIDIA AI Enterprise driver: needs an "
        "NVIDIA AI Enterprise licence when powered on (licensing.passthrough 'pt')",
        {
            "edition": "NVIDIA AI Enterprise",
            "passthrough": True,
            "declared_by": "pt",
            "powered_on": False,
        },
    )


def test_lic01_a_passthrough_vm_without_an_entry_or_needing_no_licence() -> None:
    e = passthrough_estate()
    pv1 = e.inv.vms[0]
    assert licensing.edition_needed(context(e.inv), pv1) == Outcome(
        False,
        "passthrough GPU whose guest driver vSphere cannot see; assumed: no NVIDIA licence "
        "for passthrough guests; declare licensing.passthrough in the policy",
        {"edition": None, "passthrough": True, "declared_by": None, "powered_on": True},
    )
    policy = Policy(licensing=LicensingPolicy(passthrough=(PassthroughLicence("pv*", None),)))
    assert licensing.edition_needed(context(e.inv, policy), pv1) == Outcome(
        True,
        "passthrough GPU; its guest needs no NVIDIA licence (licensing.passthrough 'pv*')",
        {"edition": None, "passthrough": True, "declared_by": "pv*", "powered_on": True},
    )


def test_lic01_names_every_profile_of_a_vm() -> None:
    e = healthy()
    vm = e.inv.vms[0]
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    assert licensing.edition_needed(context(e.inv), vm) == Outcome(
        True,
        "needs an NVIDIA RTX Virtual Workstation licence now (powered on) for "
        "grid_l4-8q, grid_l4-8q",
        {
            "edition": "NVIDIA RTX Virtual Workstation",
            "profiles": ["grid_l4-8q", "grid_l4-8q"],
            "series": ["Q"],
            "powered_on": True,
        },
    )


def test_lic01_a_profile_it_does_not_recognise() -> None:
    e = healthy()
    vm = e.inv.vms[0]
    vm.gpus.append(GpuAttachment("vgpu", profile="mystery"))
    assert licensing.edition_needed(context(e.inv), vm) == Outcome(
        False,
        "cannot tell which NVIDIA licence grid_l4-8q, mystery needs",
        {
            "edition": "NVIDIA RTX Virtual Workstation + unknown (profile not recognised)",
            "profiles": ["grid_l4-8q", "mystery"],
            "series": ["Q"],
            "powered_on": True,
        },
    )


def _lic02(licence: Licence | None) -> Outcome | None:
    """LIC-02 on h1 of healthy(), which runs v1 and also holds v4, a vGPU VM powered off."""
    e = healthy()
    e.inv.licensing.collected = True
    h1 = e.inv.hosts[0]
    e.vm("v4", h1, ["san1"], vgpu="grid_l4-8q", power="poweredOff")
    h1.licence = licence
    return licensing.host_licence(context(e.inv), h1)


def test_lic02_a_paid_licence_that_allows_vgpu_with_the_whole_verdict() -> None:
    licence = Licence(
        "esx.enterprisePlus.cpuPackageCoreLimited", "vSphere 8 Enterprise Plus", "4Q2N8"
    )
    assert _lic02(licence) == Outcome(
        True,
        "vSphere 8 Enterprise Plus allows vGPU "
        "(edition esx.enterprisePlus.cpuPackageCoreLimited (licensing.vgpu_editions))",
        {
            "vgpu_vms": ["v1"],
            "edition": "esx.enterprisePlus.cpuPackageCoreLimited",
            "name": "vSphere 8 Enterprise Plus",
            "key_tail": "4Q2N8",
            "expires": None,
            "evaluation": False,
            "vgpu_allowed": True,
            "allowed_by": "edition esx.enterprisePlus.cpuPackageCoreLimited "
            "(licensing.vgpu_editions)",
        },
    )
    unnamed = Licence("esx.vvf.cpuCoreMin")
    outcome = _lic02(unnamed)
    assert outcome is not None and outcome.message == (
        "esx.vvf.cpuCoreMin allows vGPU (edition esx.vvf.cpuCoreMin (licensing.vgpu_editions))"
    )


def test_lic02_an_expired_standard_licence_fails_with_both_problems() -> None:
    licence = Licence(
        "esx.standard.cpuPackage",
        "vSphere 8 Standard",
        "0K1L2",
        expires="2026-12-31",
        features={"vmotion": "vMotion"},
    )
    allowed_by = (
        "edition esx.standard.cpuPackage is not known to include vGPU (licensing.vgpu_editions) "
        "and has no shared passthrough graphics (vGPU) feature among vmotion"
    )
    assert _lic02(licence) == Outcome(
        False,
        f"its licence expired on 2026-12-31; its licence does not allow vGPU: {allowed_by}",
        {
            "vgpu_vms": ["v1"],
            "edition": "esx.standard.cpuPackage",
            "name": "vSphere 8 Standard",
            "key_tail": "0K1L2",
            "expires": "2026-12-31",
            "evaluation": False,
            "vgpu_allowed": False,
            "allowed_by": allowed_by,
        },
        None,
    )


def test_lic02_evaluation_mode_ending_soon_with_the_whole_verdict() -> None:
    licence = Licence("eval", "Evaluation Mode", expires="2027-01-20", evaluation=True)
    allowed_by = (
        "edition eval lists no features and is not known to include vGPU (licensing.vgpu_editions)"
    )
    assert _lic02(licence) == Outcome(
        False,
        "the host runs in evaluation mode, which ends on 2027-01-20 (in 5 days)",
        {
            "vgpu_vms": ["v1"],
            "edition": "eval",
            "name": "Evaluation Mode",
            "key_tail": "",
            "expires": "2027-01-20",
            "evaluation": True,
            "vgpu_allowed": False,
            "allowed_by": allowed_by,
        },
        "medium",
    )


def test_lic02_a_host_without_a_licence_and_one_without_a_running_vgpu_vm() -> None:
    assert _lic02(None) == Outcome(
        False, "no licence assignment was read for the host", {"vgpu_vms": ["v1"]}, None
    )
    e = healthy()
    e.inv.licensing.collected = True
    h1 = e.inv.hosts[0]
    e.inv.vms[0].power_state = "poweredOff"  # v1, h1's only GPU VM
    pt = e.gpu(h1, pci_id="0000:af:00.0", mode="passthrough")
    e.vm("p1", h1, ["san1"], passthrough=pt)  # powered on, but no vGPU
    assert licensing.host_licence(context(e.inv), h1) is None
