"""Enhanced vMotion Compatibility (EVC) baselines, oldest first per CPU vendor.

A VM can vMotion to a host only when the host offers every CPU feature the VM
was powered on with: the VM's ``runtime.minRequiredEVCModeKey`` must be at or
below the host's ``summary.maxEVCModeKey``. Keys as vSphere names them (VMware
KB 1003212 lists the baselines and the processors in each).
"""

from __future__ import annotations

INTEL = (
    "intel-merom",
    "intel-penryn",
    "intel-nehalem",
    "intel-westmere",
    "intel-sandybridge",
    "intel-ivybridge",
    "intel-haswell",
    "intel-broadwell",
    "intel-skylake",
    "intel-cascadelake",
    "intel-icelake",
    "intel-sapphirerapids",
    "intel-graniterapids",
)
AMD = (
    "amd-rev-e",
    "amd-rev-f",
    "amd-greyhound-no3dnow",
    "amd-greyhound",
    "amd-bulldozer",
    "amd-piledriver",
    "amd-steamroller",
    "amd-zen",
    "amd-zen2",
    "amd-zen3",
    "amd-zen4",
)


def covers(offered: str, required: str) -> bool | None:
    """Whether a host offering mode ``offered`` runs a VM that requires ``required``.

    None when either key is not a baseline this catalogue knows (then only equal
    keys are known to match). A mode of the other CPU vendor never covers.
    """
    if offered == required:
        return True
    for family in (INTEL, AMD):
        if offered in family and required in family:
            return family.index(offered) >= family.index(required)
    known = {*INTEL, *AMD}
    if offered in known and required in known:
        return False  # Intel and AMD baselines never cover each other
    return None
