"""LIC-02's licence judgement (rules/licensing.py) on hand-made licences and dates.

The edition keys are vCenter's (esx.enterprisePlus.cpuPackageCoreLimited, esx.standard.cpuPackage);
the warning window is the policy's default of 14 days.
"""

from __future__ import annotations

from datetime import date

import pytest

from gpuaudit.inventory import Licence
from gpuaudit.policy import LicensingPolicy
from gpuaudit.rules import licensing

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
