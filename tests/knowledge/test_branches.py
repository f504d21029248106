"""The NVIDIA vGPU branch table (gpuaudit/knowledge/branches.py) against NVIDIA's own words.

Each expectation below is written out from the NVIDIA document it quotes, not read
from gpuaudit's table:

- "NVIDIA Virtual GPU (vGPU) Software", https://docs.nvidia.com/vgpu/index.html
  (Active / Older vGPU Software Releases):
  "| NVIDIA vGPU 13 | R470 | EOL Long-Term Support | 13.12 | July 2024 | August 2024 |"
  "| NVIDIA vGPU 14 | R510 | EOL Production | 14.4 | December 2022 | February 2023 |"
  "| NVIDIA vGPU 15 | R525 | EOL Production | 15.4 | October 2023 | December 2023 |"
  "| NVIDIA vGPU 16 | R535 | Long-Term Support | 16.11 | July 2025 | July 2026 |"
  "| NVIDIA vGPU 17 | R550 | EOL Production | 17.6 | April 2025 | June 2025 |"
  "| NVIDIA vGPU 18 | R570 | Production | 18.4 | July 2025 | March 2026 |"
  "| NVIDIA vGPU 19 | R580 | Long-Term Support | 19.1 | September 2025 | July 2028 |"
- NVIDIA Security Bulletin 5821 (May 2026): "Virtual GPU Manager | ... (R595 vGPU 20) |
  595.58.02 (All versions prior to and including vGPU 20.0) | 595.71.03 (vGPU 20.1)".
  No NVIDIA document read gives vGPU 20's branch type or end of support, nor mentions
  vGPU 21.
- Virtual GPU Software R580 for VMware vSphere Release Notes (19.0), 1.2: "NVIDIA vGPU
  Manager with guest VM drivers from the same release; NVIDIA vGPU Manager from a later
  major release branch with guest VM drivers from the previous branch; NVIDIA vGPU
  Manager from a later long-term support branch with guest VM drivers from the previous
  long-term support branch".
- Broadcom KB 395110, "Unified VCF Versioning in ESXi Release": ESXi 7.0 and 8.0 versions
  are "<Major version field 1>.<Minor version/Major version field 2>.<Update release> -
  <Internal quarter identifier>.<Patch identifier>.<Buildnumber>"; "8.0 GA |
  8.0.0-1.0.20513097", "8.0 U2 / Update 2 | 8.0.2-0.0.22380479", "8.0 U2b / P03 |
  8.0.2-0.30.23305546", "8.0 U2c / EP2 | 8.0.2-0.40.23825572", "8.0 U2b Hot Patch 1 |
  8.0.2-0.30.23465881", and "ESXi 8.0 Update 3e has a version string of
  8.0.3-0.70.24674464". From 9.0, "<Major version>.<Minor version>.<Maintenance
  version>.<Express/hot patch identifier>.<Buildnumber>", and "User facing release aliases
  such as Update 2a or U3b that were used for previous vSphere releases are discontinued".
  A host reports the first three numbers as summary.config.product.version and the build
  number as its build.
"""

from __future__ import annotations

from datetime import date

import pytest

from gpuaudit.knowledge.branches import (
    BRANCHES,
    VgpuBranch,
    branch_for,
    driver_version,
    guest_meets_manager,
    listing_branches,
)
from gpuaudit.knowledge.releases import Release, esxi_release


def branch(number: int) -> VgpuBranch:
    return next(b for b in BRANCHES if b.number == number)


# --- the table, from NVIDIA's index and bulletin ---------------------------------------


def test_the_table_holds_nvidias_driver_branch_type_and_end_of_support() -> None:
    rows = [(b.number, b.driver, b.ltsb, b.end_of_support()) for b in BRANCHES]
    assert rows == [
        (13, 470, True, "August 2024"),
        (14, 510, False, "February 2023"),
        (15, 525, False, "December 2023"),
        (16, 535, True, "July 2026"),
        (17, 550, False, "June 2025"),
        (18, 570, False, "March 2026"),
        (19, 580, True, "July 2028"),
        # R595 from the May 2026 bulletin; its type and end of support are not published.
        (20, 595, None, "not published"),
    ]


@pytest.mark.parametrize(
    ("version", "number"),
    [
        ("470.256.02", 13),  # vGPU 13.12
        ("535.309.01", 16),  # vGPU 16.14, bulletin 5821
        ("570.211.01", 18),  # vGPU 18.6, bulletin 5747
        ("580.65.05", 19),  # vGPU 19.0, the R580 release notes
        ("595.71.03", 20),  # vGPU 20.1, bulletin 5821
        ("535.161.05-1OEM.800.1.0.20613240", 16),  # as a VIB version spells it
    ],
)
def test_a_manager_version_names_its_branch(version: str, number: int) -> None:
    found = branch_for(version)
    assert found is not None and found.number == number


@pytest.mark.parametrize("version", [None, "", "unknown", "610.10.01", "999.1"])
def test_a_version_of_no_published_branch_names_none(version: str | None) -> None:
    # vGPU 21's driver branch is not published: a later one matches nothing.
    assert branch_for(version) is None


def test_the_driver_version_is_the_leading_numbers() -> None:
    assert driver_version("535.161.05-1OEM.800.1.0.20613240") == "535.161.05"
    assert driver_version(" 580.65.05") == "580.65.05"
    assert driver_version("NVD.580") is None and driver_version(None) is None


# --- ESXi releases: only what is listed passes ------------------------------------------


def test_a_listed_release_is_supported() -> None:
    assert branch(16).lists(Release(8, 0)) == (True, "ESXi 8.0 is listed for vGPU 16 (R535)")
    assert branch(17).lists(Release(7, 0, 3)).value is True


def test_a_later_update_of_a_listed_line_is_not_known() -> None:
    # No NVIDIA text read says a branch supports every later update of a line it lists.
    assert branch(16).lists(Release(8, 0, 3)) == (
        None,
        "ESXi 8.0 U3 is later than the releases gpuaudit holds for vGPU 16 (R535) "
        "(ESXi 7.0, 8.0): whether NVIDIA lists it is not known",
    )


def test_a_later_line_than_any_listed_is_not_known() -> None:
    assert branch(16).lists(Release(9, 0)).value is None
    assert branch(18).lists(Release(9, 0, 1)).value is None


def test_an_earlier_release_than_listed_is_not_supported() -> None:
    assert branch(17).lists(Release(7, 0, 2)) == (
        False,
        "ESXi 7.0 U2 is not supported by vGPU 17 (R550) (listed: ESXi 7.0 U3, 8.0)",
    )
    assert branch(18).lists(Release(7, 0, 3)).value is False  # 8.0 and 9.0 only
    assert branch(16).lists(Release(6, 7, 3)).value is False


# --- an update's patches are that update; a later update is not --------------------------


@pytest.mark.parametrize(
    ("version", "build", "release"),
    [
        ("8.0.0", "20513097", Release(8, 0)),  # 8.0 GA
        ("8.0.2", "22380479", Release(8, 0, 2)),  # 8.0 U2
        ("8.0.2", "23305546", Release(8, 0, 2)),  # 8.0 U2b, patch P03
        ("8.0.2", "23825572", Release(8, 0, 2)),  # 8.0 U2c, express patch EP2
        ("8.0.2", "23465881", Release(8, 0, 2)),  # 8.0 U2b Hot Patch 1
        ("8.0.3", "24674464", Release(8, 0, 3)),  # 8.0 U3e
    ],
)
def test_a_patch_build_is_a_release_of_its_update(
    version: str, build: str, release: Release
) -> None:
    assert esxi_release(version, build) == release


def test_a_listed_update_holds_its_patches_and_a_later_update_is_not_known() -> None:
    # A branch whose notes list ESXi 8.0 Update 2 alone.
    listing = VgpuBranch(99, 999, None, None, (Release(8, 0, 2),), "")
    for build in ("22380479", "23305546", "23825572", "23465881"):
        assert listing.lists(esxi_release("8.0.2", build)).value is True, build
    # 8.0 U3e is of a later update: no NVIDIA text read says a listed update covers it.
    assert listing.lists(esxi_release("8.0.3", "24674464")) == (
        None,
        "ESXi 8.0 U3 is later than the releases gpuaudit holds for vGPU 99 (R999) "
        "(ESXi 8.0 U2): whether NVIDIA lists it is not known",
    )


def test_a_release_of_esx_9_is_named_by_its_version() -> None:
    # No "Update" names from 9.0: 9.0.1 is a maintenance release of 9.0.
    assert [str(r) for r in (Release(9, 0), Release(9, 0, 1), Release(8, 0, 3))] == [
        "9.0",
        "9.0.1",
        "8.0 U3",
    ]
    # The KB's sample version 9.0.1.0101.12345678, with or without its patch field.
    assert esxi_release("9.0.1", "12345678") == Release(9, 0, 1)
    assert esxi_release("9.0.1.0101", "12345678") == Release(9, 0, 1)
    # vGPU 18 holds 9.0: 9.0.1, a later release of the line, is not known to be listed.
    assert branch(18).lists(Release(9, 0, 1)).why == (
        "ESXi 9.0.1 is later than the releases gpuaudit holds for vGPU 18 (R570) "
        "(ESXi 8.0, 9.0): whether NVIDIA lists it is not known"
    )


@pytest.mark.parametrize("number", [19, 20])
def test_a_branch_whose_list_was_not_read_supports_nothing_known(number: int) -> None:
    known = branch(number).lists(Release(8, 0, 3))
    assert known.value is None
    assert known.why.endswith("supports are not in gpuaudit's data")


def test_the_branches_that_list_a_release() -> None:
    assert [b.number for b in listing_branches(Release(8, 0))] == [15, 16, 17, 18]
    assert [b.number for b in listing_branches(Release(8, 0, 3))] == []


# --- end of support: NVIDIA names a month ------------------------------------------------


@pytest.mark.parametrize(
    ("number", "today", "ended"),
    [
        (16, date(2026, 6, 30), False),  # supported until July 2026
        (16, date(2026, 7, 1), None),  # in July 2026: the day is not published
        (16, date(2026, 7, 31), None),
        (16, date(2026, 8, 1), True),
        (18, date(2026, 3, 15), None),  # March 2026
        (18, date(2027, 1, 15), True),
        (19, date(2028, 6, 30), False),  # July 2028
        (19, date(2028, 8, 1), True),
        (20, date(2026, 12, 1), None),  # not published
        (13, date(2025, 1, 1), True),  # EOL August 2024
    ],
)
def test_support_ends_after_the_month_nvidia_names(
    number: int, today: date, ended: bool | None
) -> None:
    assert branch(number).support_ended(today).value is ended


def test_the_end_of_support_is_said_in_words() -> None:
    assert branch(18).support_ended(date(2027, 1, 15)).why == (
        "NVIDIA's support of vGPU 18 (R570) ended in March 2026"
    )
    assert branch(19).support_ended(date(2027, 1, 15)).why == (
        "NVIDIA supports vGPU 19 (R580) until July 2028"
    )
    assert branch(16).support_ended(date(2026, 7, 15)).why == (
        "NVIDIA's support of vGPU 16 (R535) ends in July 2026, without a day"
    )
    assert branch(20).support_ended(date(2027, 1, 15)).why == (
        "NVIDIA has published no end of support for vGPU 20 (R595)"
    )


# --- guest driver on manager: NVIDIA's compatible combinations ---------------------------


@pytest.mark.parametrize(
    ("guest", "manager", "compatible"),
    [
        # "with guest VM drivers from the same release"
        ("580.65.05", "580.65.05", True),
        # "from a later major release branch with guest VM drivers from the previous branch"
        ("570.211.01", "580.65.05", True),  # 18 on 19
        ("580.159.01", "595.71.03", True),  # 19 on 20
        ("535.309.01", "550.163.02", True),  # 16 on 17
        # "from a later long-term support branch with ... the previous long-term support
        # branch": 19 (LTSB) after 16 (LTSB), with 17 and 18 production between
        ("535.309.01", "580.159.01", True),
        # a guest driver of a later branch than the manager: no NVIDIA text allows it
        ("580.65.05", "570.211.01", False),
        ("595.71.03", "535.309.01", False),
        # two releases of one branch: the R580 text lists only the same release
        ("580.65.05", "580.159.01", None),
        ("580.159.01", "580.65.05", None),
        # two branches back and not the previous LTSB
        ("550.163.02", "580.65.05", None),
        # 16 (LTSB) after 13 (LTSB): the R535 notes, which would say, were not read
        ("470.256.02", "535.309.01", None),
        # 20's branch type is not published: the LTSB pairing cannot be judged
        ("535.309.01", "595.71.03", None),
        # 18 is no LTSB: 16 on it is none of the combinations
        ("535.309.01", "570.211.01", None),
        # a branch gpuaudit does not know
        ("610.10.01", "580.65.05", None),
        ("580.65.05", "unreadable", None),
    ],
)
def test_guest_on_manager_follows_nvidias_combinations(
    guest: str, manager: str, compatible: bool | None
) -> None:
    assert guest_meets_manager(guest, manager).value is compatible


NO_BRANCH = "vGPU manager 610.10.01 is of no driver branch in gpuaudit's data"


@pytest.mark.parametrize(
    ("guest", "manager", "why"),
    [
        ("580.65.05", "580.65.05", "580.65.05 is the same release"),
        (
            "535.309.01",
            "580.159.01",
            "guest drivers of 535.309.01 on vGPU manager 580.159.01: vGPU 19 (R580) with "
            "guest drivers of the previous LTSB",
        ),
        (
            "570.211.01",
            "580.65.05",
            "guest drivers of 570.211.01 on vGPU manager 580.65.05: vGPU 19 (R580) with "
            "guest drivers of the previous branch",
        ),
        (
            "580.65.05",
            "570.211.01",
            "guest drivers of 580.65.05 on vGPU manager 570.211.01: guest drivers of vGPU 19 "
            "(R580) are newer than vGPU 18 (R570)",
        ),
        (
            "535.309.01",
            "595.71.03",
            "guest drivers of 535.309.01 on vGPU manager 595.71.03: whether vGPU 20 (R595) "
            "is a long-term support branch is not published",
        ),
        (
            "470.256.02",
            "535.309.01",
            "guest drivers of 470.256.02 on vGPU manager 535.309.01: the previous LTSB, a "
            "pairing first seen in NVIDIA's R580 release notes; those of vGPU 16 (R535) were "
            "not read",
        ),
        (
            "550.163.02",
            "580.65.05",
            "guest drivers of 550.163.02 on vGPU manager 580.65.05: none of the combinations "
            "NVIDIA lists as compatible",
        ),
        (
            "580.65.05",
            "580.159.01",
            "guest drivers of 580.65.05 on vGPU manager 580.159.01: two releases of vGPU 19 "
            "(R580), a pairing NVIDIA's R580 release notes do not list as compatible (they "
            "list the same release)",
        ),
        (
            "580.65.05",
            "610.10.01",
            "vGPU manager 610.10.01 is of no driver branch in gpuaudit's data",
        ),
        (
            "610.10.01",
            "580.65.05",
            "vGPU manager 610.10.01 is of no driver branch in gpuaudit's data",
        ),
    ],
)
def test_guest_on_manager_says_which_combination_or_which_fact_is_missing(
    guest: str, manager: str, why: str
) -> None:
    assert guest_meets_manager(guest, manager).why == why
