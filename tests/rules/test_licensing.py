"""LIC-01 for passthrough guests and LIC-02's editions and evaluation mode.

The scenario tests read their expectations from tests/scenarios/licensing.yaml
(its `expect`, its licences' expiry dates) and from the policy below; the unit
tests judge one object with one rule.

Then LIC-01's messages and LIC-02's licence judgement (rules/licensing.py), written
out by hand. The edition keys are vCenter's (esx.enterprisePlus.cpuPackageCoreLimited,
esx.standard.cpuPackage); the warning window is the policy's default of 14 days.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from gpuaudit.inventory import GpuAttachment, Inventory, Licence
from gpuaudit.model.policy import LicensingPolicy, PassthroughLicence, Policy
from gpuaudit.model.policy_file import PolicyError, parse_policy
from gpuaudit.report.licences import licence_summary
from gpuaudit.results import AuditResult
from gpuaudit.rules import catalogue, licensing
from gpuaudit.rules.registry import Outcome
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain as scan
from tests.conftest import CASSETTES, RECORDED, SCENARIOS
from tests.support.builders import Estate, context, healthy, passthrough_estate

RULE_IDS = [r.id for r in catalogue()]
SCENARIO = SCENARIOS / "licensing.yaml"
TODAY = date(2027, 1, 15)
WARNING_DAYS = 14

# The policy the scenario's header describes.
POLICY = """
licensing:
  passthrough:
    - {match: "cl-lic-ai*", edition: NVAIE}
    - {match: "ws-pt-*", edition: vWS}
    - {match: "cuda-pt-*", edition: none}
"""
# What each short edition name of the policy means, written out independently.
EDITIONS = {
    "NVAIE": "NVIDIA AI Enterprise",
    "vWS": "NVIDIA RTX Virtual Workstation",
    "none": None,
}


def policy() -> Policy:
    return parse_policy(POLICY, "licensing-policy", rule_ids=RULE_IDS)


def scenario() -> dict[str, Any]:
    lab_scenario = pytest.importorskip("tests.lab.scenario")
    return dict(lab_scenario.load_scenario(SCENARIO))


def expected_inventory() -> Inventory:
    lab_expected = pytest.importorskip("tests.lab.expected")
    return lab_expected.expected_inventory(scenario())  # type: ignore[no-any-return]


def check(inv: Inventory) -> AuditResult:
    result = run_checks(inv, policy(), TODAY)
    assert result.errors == []
    return result


def expectations(rule: str) -> tuple[set[str], set[str]]:
    entries = [e for e in scenario()["expect"] if e["rule"] == rule]
    assert entries, f"licensing.yaml has no expectation for {rule}"
    return (
        {n for e in entries for n in e["fail"]},
        {n for e in entries for n in e["pass"]},
    )


def scenario_hosts() -> dict[str, dict[str, Any]]:
    return {
        h["name"]: h for dc in scenario()["datacenters"] for c in dc["clusters"] for h in c["hosts"]
    }


def scenario_vms() -> list[dict[str, Any]]:
    return [vm for dc in scenario()["datacenters"] for vm in dc["vms"]]


# --- the scenario --------------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["LIC-01", "LIC-02"])
def test_the_scenario_fails_and_passes_exactly_where_expected(rule: str) -> None:
    fail, passing = expectations(rule)
    findings = [f for f in check(expected_inventory()).findings if f.rule == rule]
    assert {f.object for f in findings if f.status == "fail"} == fail
    statuses = {f.object: f.status for f in findings}
    assert {name: statuses.get(name) for name in passing} == dict.fromkeys(passing, "pass")


def test_evaluation_mode_is_graded_by_how_close_its_end_is() -> None:
    findings = {f.object: f for f in check(expected_inventory()).findings if f.rule == "LIC-02"}
    graded = 0
    for name, host in scenario_hosts().items():
        lic = host["licence"]
        if lic["edition"] != "eval" or name not in findings:
            continue
        end = date.fromisoformat(lic["expires"])
        finding = findings[name]
        graded += 1
        if end < TODAY:
            assert (finding.status, finding.severity) == ("fail", "high"), name
        elif end - TODAY <= timedelta(days=WARNING_DAYS):
            assert (finding.status, finding.severity) == ("fail", "medium"), name
            assert lic["expires"] in finding.message
        else:
            assert finding.status == "pass", name
    assert graded == 3


def test_passthrough_guests_carry_the_edition_the_policy_declares() -> None:
    findings = {f.object: f for f in check(expected_inventory()).findings if f.rule == "LIC-01"}
    declared = {"ai-pt-01": "NVAIE", "ws-pt-01": "vWS", "cuda-pt-01": "none"}
    for vm, short in declared.items():
        assert findings[vm].evidence["edition"] == EDITIONS[short], vm
        assert findings[vm].evidence["passthrough"] is True
    assert "assumed: no NVIDIA licence" in findings["plain-pt-01"].message


def test_the_licence_summary_counts_passthrough_guests_by_declared_edition() -> None:
    result = check(expected_inventory())
    summary = licence_summary(result.inventory, result.findings)
    # Powered-on VMs per edition, from the scenario: vGPU by profile series, the
    # passthrough guests by the policy above (cuda-pt-01 is off and needs none).
    series = {"q": "NVIDIA RTX Virtual Workstation", "c": "NVIDIA AI Enterprise"}
    expected: dict[str, int] = {}
    for vm in scenario_vms():
        if vm.get("power", "poweredOn") != "poweredOn":
            continue
        gpu = vm["gpus"][0]
        if "vgpu" in gpu:
            edition = series[gpu["vgpu"][-1]]
        elif vm["name"] == "ai-pt-01":
            edition = EDITIONS["NVAIE"]
        elif vm["name"] == "ws-pt-01":
            edition = EDITIONS["vWS"]
        else:
            continue
        expected[edition] = expected.get(edition, 0) + 1
    assert summary.totals == dict(sorted(expected.items()))
    assert summary.passthrough_vms == 4 and summary.passthrough_assumed == 1
    assert "1 passthrough GPU VM with no edition declared is assumed" in summary.note
    ai = next(r for r in summary.rows if r.cluster == "cl-lic-ai")
    assert (ai.edition, ai.powered_on, ai.passthrough) == (EDITIONS["NVAIE"], 1, 1)


def test_the_recorded_scan_reads_the_new_editions_as_the_scenario_gives_them() -> None:
    assert "licensing" in RECORDED
    inv = scan.obtain_inventory(scan.Replay(CASSETTES / "licensing.yaml"))
    editions = {h.name: h.licence.edition_key if h.licence else None for h in inv.hosts}
    assert editions == {name: h["licence"]["edition"] for name, h in scenario_hosts().items()}
    fail, _ = expectations("LIC-02")
    findings = [f for f in check(inv).findings if f.rule == "LIC-02"]
    assert {f.object for f in findings if f.status == "fail"} == fail


# --- the policy file ------------------------------------------------------------------------


def test_the_policy_reads_passthrough_editions_in_any_case() -> None:
    parsed = parse_policy(
        "licensing:\n  passthrough:\n    - {match: cl-vdi, edition: vapps}\n"
        "  evaluation_warning_days: 30\n",
        rule_ids=RULE_IDS,
    )
    assert parsed.licensing.passthrough == (
        PassthroughLicence("cl-vdi", "NVIDIA Virtual Applications"),
    )
    assert parsed.licensing.evaluation_warning_days == 30


def test_the_policy_refuses_an_unknown_passthrough_edition_naming_its_line() -> None:
    text = "licensing:\n  passthrough:\n    - {match: cl-vdi, edition: GRID}\n"
    refusal = (
        r":3: licensing.passthrough\[0\].edition: "
        r"expected one of vWS, vPC, vApps, NVAIE, none$"
    )
    with pytest.raises(PolicyError, match=refusal):
        parse_policy(text, rule_ids=RULE_IDS)


# --- LIC-01, one VM at a time ---------------------------------------------------------------


def _passthrough(policy_entries: tuple[PassthroughLicence, ...]) -> tuple[Estate, Policy]:
    e = passthrough_estate()
    return e, Policy(licensing=LicensingPolicy(passthrough=policy_entries))


def test_lic01_a_passthrough_vm_of_a_declared_cluster_needs_its_edition() -> None:
    e, pol = _passthrough((PassthroughLicence("pt", "NVIDIA AI Enterprise"),))
    outcome = licensing.edition_needed(context(e.inv, pol), e.inv.vms[0])
    assert outcome is not None and outcome.passed
    assert "needs an NVIDIA AI Enterprise licence now" in outcome.message
    assert outcome.evidence["declared_by"] == "pt"


def test_lic01_the_first_matching_entry_decides_by_vm_name() -> None:
    entries = (
        PassthroughLicence("pv1", "NVIDIA RTX Virtual Workstation"),
        PassthroughLicence("pt", "NVIDIA AI Enterprise"),
    )
    e, pol = _passthrough(entries)
    outcome = licensing.edition_needed(context(e.inv, pol), e.inv.vms[0])
    assert outcome is not None and outcome.evidence["edition"] == "NVIDIA RTX Virtual Workstation"


def test_lic01_a_guest_declared_to_need_no_licence_passes() -> None:
    e, pol = _passthrough((PassthroughLicence("pt", None),))
    outcome = licensing.edition_needed(context(e.inv, pol), e.inv.vms[0])
    assert outcome is not None and outcome.passed and outcome.evidence["edition"] is None


def test_lic01_an_undeclared_passthrough_vm_fails_stating_the_assumption() -> None:
    e, pol = _passthrough((PassthroughLicence("other-*", "NVIDIA AI Enterprise"),))
    outcome = licensing.edition_needed(context(e.inv, pol), e.inv.vms[0])
    assert outcome is not None and not outcome.passed
    assert "declare licensing.passthrough in the policy" in outcome.message


# --- LIC-02, one host at a time -------------------------------------------------------------


def _host_outcome(licence: Licence) -> Outcome:
    e = healthy()
    e.inv.licensing.collected = True
    e.inv.hosts[0].licence = licence
    outcome = licensing.host_licence(context(e.inv, today=TODAY), e.inv.hosts[0])
    assert outcome is not None
    return outcome


@pytest.mark.parametrize(
    "edition",
    ["esx.vvf.cpuCoreMin", "esx.vcf.cpuCoreMin", "esx.vcf.entitlement.cpuCoreMin"],
)
def test_lic02_vsphere_foundation_and_cloud_foundation_allow_vgpu(edition: str) -> None:
    outcome = _host_outcome(Licence(edition_key=edition))
    assert outcome.passed and outcome.evidence["vgpu_allowed"] is True


def test_lic02_a_known_edition_allows_vgpu_whatever_its_feature_names() -> None:
    lic = Licence(edition_key="esx.vcf.cpuCoreMin", features={"vmotion": "vMotion"})
    assert _host_outcome(lic).passed


def test_lic02_a_feature_named_vgpu_allows_it() -> None:
    lic = Licence(edition_key="esx.other", features={"grid": "NVIDIA GRID vGPU"})
    assert _host_outcome(lic).passed


def test_lic02_a_standard_licence_fails_high() -> None:
    outcome = _host_outcome(
        Licence(edition_key="esx.standard.cpuCoreMin", features={"vmotion": "vMotion"})
    )
    assert not outcome.passed and outcome.severity is None  # the rule's: high


def test_lic02_evaluation_mode_far_from_its_end_passes() -> None:
    end = (TODAY + timedelta(days=WARNING_DAYS + 1)).isoformat()
    outcome = _host_outcome(Licence(edition_key="eval", evaluation=True, expires=end))
    assert outcome.passed and end in outcome.message


def test_lic02_evaluation_mode_ending_within_14_days_fails_medium_with_the_date() -> None:
    end = (TODAY + timedelta(days=WARNING_DAYS)).isoformat()
    outcome = _host_outcome(Licence(edition_key="eval", evaluation=True, expires=end))
    assert not outcome.passed and outcome.severity == "medium" and end in outcome.message


def test_lic02_evaluation_mode_that_has_ended_fails_high() -> None:
    end = (TODAY - timedelta(days=1)).isoformat()
    outcome = _host_outcome(Licence(edition_key="eval", evaluation=True, expires=end))
    assert not outcome.passed and outcome.severity is None and end in outcome.message


def test_lic02_evaluation_mode_whose_end_was_not_read_fails_medium() -> None:
    outcome = _host_outcome(Licence(edition_key="eval", evaluation=True))
    assert not outcome.passed and outcome.severity == "medium"


def test_every_licensing_rule_has_references() -> None:
    ids = {r.id for r in catalogue() if r.category == "licensing"}
    assert set(licensing.REFERENCES) == ids
    for refs in licensing.REFERENCES.values():
        assert refs and all(url.startswith("https://") for _, url in refs)


# --- messages and the licence judgement, by hand ------------------------------------------

DEFAULT_LICENSING = LicensingPolicy()


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
    assert licensing.vgpu_allowance(licence, DEFAULT_LICENSING) == (True, why)


def test_an_edition_that_carries_vgpu_allows_it() -> None:
    licence = Licence("esx.enterprisePlus.cpuPackageCoreLimited", features={"dvs": "Switch"})
    assert licensing.vgpu_allowance(licence, DEFAULT_LICENSING) == (
        True,
        "edition esx.enterprisePlus.cpuPackageCoreLimited (licensing.vgpu_editions)",
    )


def test_an_edition_without_vgpu_names_what_it_has() -> None:
    licence = Licence("esx.standard.cpuPackage", features={"vmotion": "vMotion", "dvs": "vgpus"})
    assert licensing.vgpu_allowance(licence, DEFAULT_LICENSING) == (
        False,
        "edition esx.standard.cpuPackage is not known to include vGPU "
        "(licensing.vgpu_editions) and has no shared passthrough graphics (vGPU) feature "
        "among dvs, vmotion",
    )
    assert licensing.vgpu_allowance(Licence(""), DEFAULT_LICENSING) == (
        False,
        "edition unknown lists no features and is not known to include vGPU "
        "(licensing.vgpu_editions)",
    )


def test_licence_problems_of_a_paid_licence() -> None:
    assert licensing.licence_problems(None, DEFAULT_LICENSING, TODAY) == [
        ("no licence assignment was read for the host", None)
    ]
    ok = Licence("esx.vvf.cpuCoreMin", expires="2027-01-15")
    assert licensing.licence_problems(ok, DEFAULT_LICENSING, TODAY) == []
    ended = Licence("esx.standard.cpuPackage", expires="2027-01-14")
    assert licensing.licence_problems(ended, DEFAULT_LICENSING, TODAY) == [
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
    assert licensing.licence_problems(licence, DEFAULT_LICENSING, TODAY) == problems


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
