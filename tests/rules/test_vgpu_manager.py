"""GPU-08 and GPU-09 on hand-built inventories that carry the vGPU manager version.

The lab cannot serve that version: the collector never reads it (it needs the
Host.Config.Image privilege the Read-only role lacks), so no scenario or cassette holds
one, and these rules are judged here, on estates from tests/support/builders.py.

The expectations follow NVIDIA's words, quoted in tests/knowledge/test_branches.py: a guest
driver loads on a vGPU manager of the same release, of the next major branch, or (from
the R580 notes) of the next LTSB; vGPU 16 (R535) is supported until July 2026, 18
(R570) until March 2026, 19 (R580) until July 2028; vGPU 20's (R595) end of support is
not published. Checks run on 15 January 2027 (tests/builders.context).
"""

from __future__ import annotations

from datetime import date

import pytest

from gpuaudit.inventory import Cluster, Host, Inventory
from gpuaudit.rules import catalogue, vgpu_manager
from gpuaudit.rules.registry import Outcome
from tests.support.builders import Estate, context, healthy


def judge(inv: Inventory, name: str = "c1") -> Outcome | None:
    cluster: Cluster = next(c for c in inv.clusters if c.name == name)
    return vgpu_manager.vgpu_manager(context(inv), cluster)


def versions(e: Estate, *values: str | None) -> None:
    for host, value in zip(e.inv.hosts, values, strict=True):
        host.vgpu_manager_version = value


def rolling(upgraded: str, others: str) -> Estate:
    """healthy() with h1 upgraded to ``upgraded`` and emptied; h2 and h3 on ``others``
    run the VMs."""
    e = healthy()
    e.inv.vms = [vm for vm in e.inv.vms if vm.host != "h1"]
    versions(e, upgraded, others, others)
    return e


def pairing(guest: str, manager: str, compatible: bool | None, why: str) -> dict[str, object]:
    return {"guest": guest, "manager": manager, "compatible": compatible, "why": why}


# --- GPU-08 ------------------------------------------------------------------------------

# R570 guest drivers on an R580 manager: "NVIDIA vGPU Manager from a later major release
# branch with guest VM drivers from the previous branch".
PREVIOUS_BRANCH = (
    "guest drivers of 570.211.01 on vGPU manager 580.65.05: vGPU 19 (R580) with guest "
    "drivers of the previous branch"
)


def test_gpu08_gives_no_verdict_without_any_version() -> None:
    assert judge(healthy().inv) is None


def test_gpu08_compares_only_vgpu_hosts() -> None:
    e = Estate()
    e.cluster("c1")
    vgpu = e.host("h1", "c1")
    e.gpu(vgpu)
    passthrough = e.host("h2", "c1", profiles=())
    e.gpu(passthrough, mode="passthrough")
    vgpu.vgpu_manager_version = passthrough.vgpu_manager_version = "580.65.05"
    assert judge(e.inv) is None  # one vGPU host: nothing to compare


def test_gpu08_one_release_everywhere_passes() -> None:
    e = healthy()
    versions(e, "580.65.05", "580.65.05", "580.65.05")
    assert judge(e.inv) == Outcome(
        True,
        "every vGPU host runs vGPU manager 580.65.05",
        {"versions": {"580.65.05": ["h1", "h2", "h3"]}, "pairings": []},
    )


def test_gpu08_a_newer_branch_among_hosts_with_vms_fails() -> None:
    # VMs on h1 carry R580 guest drivers; restarted on h2 or h3 they meet an R570 manager.
    e = healthy()
    versions(e, "580.65.05", "570.211.01", "570.211.01")
    outcome = judge(e.inv)
    assert outcome is not None and not outcome.passed and not outcome.unproven
    assert outcome.message == (
        "2 vGPU manager versions: 570.211.01 (h2, h3); 580.65.05 (h1); a VM moved to another "
        "host meets guest drivers of 580.65.05 on vGPU manager 570.211.01: guest drivers of "
        "vGPU 19 (R580) are newer than vGPU 18 (R570)"
    )
    assert outcome.evidence["pairings"] == [
        pairing("570.211.01", "580.65.05", True, PREVIOUS_BRANCH),
        pairing(
            "580.65.05",
            "570.211.01",
            False,
            "guest drivers of 580.65.05 on vGPU manager 570.211.01: guest drivers of "
            "vGPU 19 (R580) are newer than vGPU 18 (R570)",
        ),
    ]


def test_gpu08_an_emptied_host_upgraded_one_branch_passes() -> None:
    # The VMs' R570 drivers meet the R580 manager: "later major release branch with guest
    # VM drivers from the previous branch".
    outcome = judge(rolling("580.65.05", "570.211.01").inv)
    assert outcome == Outcome(
        True,
        "2 vGPU manager versions: 570.211.01 (h2, h3); 580.65.05 (h1); NVIDIA lists as "
        f"compatible {PREVIOUS_BRANCH}",
        {
            "versions": {"570.211.01": ["h2", "h3"], "580.65.05": ["h1"]},
            "pairings": [pairing("570.211.01", "580.65.05", True, PREVIOUS_BRANCH)],
        },
    )


def test_gpu08_an_emptied_host_upgraded_from_ltsb_to_ltsb_passes() -> None:
    # R535 (vGPU 16, LTSB) drivers on an R580 (vGPU 19, LTSB) manager.
    outcome = judge(rolling("580.159.01", "535.309.01").inv)
    assert outcome is not None and outcome.passed and not outcome.unproven


def test_gpu08_the_twin_with_vms_on_the_upgraded_host_fails() -> None:
    # The same hosts as above, with a VM on the upgraded host too: its R580 drivers may
    # meet R535 on the others.
    e = rolling("580.159.01", "535.309.01")
    e.vm("v-h1", e.inv.hosts[0], ["san1"], vgpu="grid_l4-8q")
    outcome = judge(e.inv)
    assert outcome is not None and not outcome.passed


def test_gpu08_two_releases_of_one_branch_are_not_proven() -> None:
    e = healthy()
    versions(e, "580.65.05", "580.159.01", "580.159.01")
    outcome = judge(e.inv)
    assert outcome is not None and outcome.passed
    assert outcome.message == "2 vGPU manager versions: 580.159.01 (h2, h3); 580.65.05 (h1)"
    assert outcome.unproven == (
        "guest drivers of 580.159.01 on vGPU manager 580.65.05: two releases of vGPU 19 "
        "(R580), a pairing NVIDIA's R580 release notes do not list as compatible (they list "
        "the same release); guest drivers of 580.65.05 on vGPU manager 580.159.01: two "
        "releases of vGPU 19 (R580), a pairing NVIDIA's R580 release notes do not list as "
        "compatible (they list the same release)"
    )


def test_gpu08_a_host_whose_version_is_unknown_is_not_proven() -> None:
    e = healthy()
    versions(e, "580.65.05", "580.65.05", None)
    outcome = judge(e.inv)
    assert outcome == Outcome(
        True,
        "every vGPU host whose version is known runs vGPU manager 580.65.05",
        {"versions": {"580.65.05": ["h1", "h2"]}, "pairings": [], "unknown": ["h3"]},
        unproven="the vGPU manager version of h3 is not known",
    )


def test_gpu08_a_failure_is_not_hidden_by_an_unknown_host() -> None:
    e = healthy()
    versions(e, "580.65.05", "535.309.01", None)
    outcome = judge(e.inv)
    assert outcome is not None and not outcome.passed
    assert outcome.evidence["unknown"] == ["h3"]


def test_gpu08_a_manager_of_no_known_branch_is_not_proven() -> None:
    e = rolling("610.10.01", "580.65.05")
    outcome = judge(e.inv)
    assert outcome is not None and outcome.passed
    assert outcome.unproven == "vGPU manager 610.10.01 is of no driver branch in gpuaudit's data"


def test_gpu08_with_no_vgpu_vm_every_host_may_give_its_driver() -> None:
    e = rolling("580.65.05", "570.211.01")
    e.inv.vms = []
    outcome = judge(e.inv)  # a VM powered on at h1 would carry R580 drivers
    assert outcome is not None and not outcome.passed


def test_gpu08_a_host_running_vgpu_vms_counts_without_profiles() -> None:
    e = Estate()
    e.cluster("c1")
    h1, h2 = e.host("h1", "c1"), e.host("h2", "c1")
    for h in (h1, h2):
        e.gpu(h)
    e.datastore("san1", [h1, h2])
    e.vm("v1", h2, ["san1"], vgpu="grid_l4-8q")
    h2.vgpu_profiles = []
    h1.vgpu_manager_version, h2.vgpu_manager_version = "550.144.02", "580.65.05"
    cluster = e.inv.clusters[0]
    assert [h.name for h in vgpu_manager.vgpu_hosts(context(e.inv), cluster)] == ["h1", "h2"]
    outcome = judge(e.inv)
    assert outcome is not None and not outcome.passed


def test_gpu08_cites_nvidias_compatibility_section_and_the_privilege_page() -> None:
    rule = next(r for r in catalogue() if r.id == "GPU-08")
    urls = [ref.url for ref in rule.references]
    assert (
        "https://docs.nvidia.com/vgpu/19.0/grid-vgpu-release-notes-vmware-vsphere/index.html"
        in urls
    )
    assert any("ImageConfigManager" in url for url in urls)


# --- GPU-09 ------------------------------------------------------------------------------


def _gpu09(host: Host, inv: Inventory, today: date | None = None) -> Outcome | None:
    return vgpu_manager.branch_support(context(inv, today=today), host)


def test_gpu09_gives_no_verdict_without_a_version() -> None:
    e = healthy()
    assert _gpu09(e.inv.hosts[0], e.inv) is None


def test_gpu09_leaves_out_hosts_without_vgpu() -> None:
    e = Estate()
    e.cluster("c1")
    host = e.host("h1", "c1", profiles=())
    e.gpu(host, mode="passthrough")
    host.vgpu_manager_version = "570.211.01"
    assert _gpu09(host, e.inv) is None


def _evidence(version: str, number: int, until: str) -> dict[str, object]:
    return {"vgpu_manager_version": version, "vgpu_branch": number, "supported_until": until}


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        # "NVIDIA vGPU 18 | R570 | Production | ... | March 2026"
        (
            "570.211.01",
            Outcome(
                False,
                "NVIDIA's support of vGPU 18 (R570) ended in March 2026: its vGPU manager "
                "570.211.01 gets no more fixes",
                _evidence("570.211.01", 18, "March 2026"),
            ),
        ),
        # "NVIDIA vGPU 19 | R580 | Long-Term Support | ... | July 2028"
        (
            "580.159.01",
            Outcome(
                True,
                "NVIDIA supports vGPU 19 (R580) until July 2028",
                _evidence("580.159.01", 19, "July 2028"),
            ),
        ),
        # vGPU 20 (R595): no NVIDIA document read gives its end of support.
        (
            "595.71.03",
            Outcome(
                True,
                "NVIDIA has published no end of support for vGPU 20 (R595) (vGPU manager "
                "595.71.03)",
                _evidence("595.71.03", 20, "not published"),
                unproven="NVIDIA has published no end of support for vGPU 20 (R595)",
            ),
        ),
        # A later driver branch: vGPU 21's is not published.
        (
            "610.10.01",
            Outcome(
                True,
                "vGPU manager 610.10.01 is of no branch in gpuaudit's data",
                {"vgpu_manager_version": "610.10.01"},
                unproven="vGPU manager 610.10.01 is of no branch in gpuaudit's data: its end "
                "of support is not known",
            ),
        ),
    ],
)
def test_gpu09_on_15_january_2027(version: str, expected: Outcome) -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.vgpu_manager_version = version
    assert _gpu09(host, e.inv) == expected


def test_gpu09_in_the_month_support_ends_is_not_proven() -> None:
    # "NVIDIA vGPU 16 | R535 | Long-Term Support | ... | July 2026": NVIDIA names no day.
    e = healthy()
    host = e.inv.hosts[0]
    host.vgpu_manager_version = "535.309.01"
    before = _gpu09(host, e.inv, date(2026, 6, 30))
    assert before is not None and before.passed and not before.unproven
    within = _gpu09(host, e.inv, date(2026, 7, 20))
    assert within is not None and within.passed
    assert within.unproven == "NVIDIA's support of vGPU 16 (R535) ends in July 2026, without a day"
    after = _gpu09(host, e.inv, date(2026, 8, 1))
    assert after is not None and not after.passed


def test_gpu09_a_host_running_vgpu_vms_without_profiles_is_examined() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.vgpu_profiles = []
    host.vgpu_manager_version = "570.211.01"
    outcome = _gpu09(host, e.inv)
    assert outcome is not None and not outcome.passed


def test_gpu08_names_every_pairing_that_fails() -> None:
    e = healthy()  # a VM on every host
    versions(e, "570.211.01", "580.65.05", "595.71.03")
    outcome = judge(e.inv)
    assert outcome is not None
    assert (outcome.passed, outcome.unproven) == (False, "")
    assert outcome.message == (
        "3 vGPU manager versions: 570.211.01 (h1); 580.65.05 (h2); 595.71.03 (h3); a VM "
        "moved to another host meets guest drivers of 580.65.05 on vGPU manager 570.211.01: "
        "guest drivers of vGPU 19 (R580) are newer than vGPU 18 (R570); guest drivers of "
        "595.71.03 on vGPU manager 570.211.01: guest drivers of vGPU 20 (R595) are newer "
        "than vGPU 18 (R570); guest drivers of 595.71.03 on vGPU manager 580.65.05: guest "
        "drivers of vGPU 20 (R595) are newer than vGPU 19 (R580)"
    )


def test_gpu08_names_every_host_whose_version_is_unknown() -> None:
    e = healthy()
    versions(e, "580.65.05", None, None)
    outcome = judge(e.inv)
    assert outcome is not None and outcome.passed
    assert outcome.unproven == "the vGPU manager version of h2, h3 is not known"


def test_gpu08_names_every_compatible_pairing() -> None:
    # The VMs' R570 drivers meet two R580 releases, each "a later major release branch".
    e = rolling("580.65.05", "570.211.01")
    e.inv.hosts[2].vgpu_manager_version = "580.159.01"
    e.inv.vms = [vm for vm in e.inv.vms if vm.host == "h2"]
    outcome = judge(e.inv)
    assert outcome is not None and outcome.passed and not outcome.unproven
    assert outcome.message == (
        "3 vGPU manager versions: 570.211.01 (h2); 580.159.01 (h3); 580.65.05 (h1); NVIDIA "
        "lists as compatible guest drivers of 570.211.01 on vGPU manager 580.159.01: vGPU 19 "
        f"(R580) with guest drivers of the previous branch; {PREVIOUS_BRANCH}"
    )
