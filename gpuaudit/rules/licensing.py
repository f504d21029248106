"""Licensing rules: which NVIDIA licence each vGPU VM needs, and whether each host's
vSphere licence allows vGPU at all."""

from __future__ import annotations

import re
from datetime import date
from fnmatch import fnmatchcase

from gpuaudit import catalog
from gpuaudit import facts as F
from gpuaudit.facts import UNKNOWN_EDITION, vm_edition
from gpuaudit.inventory import Host, Licence, Vm
from gpuaudit.policy import LicensingPolicy
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, rule

_SHARED_PASSTHROUGH = re.compile(r"shared\s*pass[\s-]*(?:through|thru)", re.IGNORECASE)


def vgpu_allowance(licence: Licence, policy: LicensingPolicy) -> tuple[bool, str]:
    """Whether a licence allows shared passthrough graphics, and on what evidence."""
    if licence.features:
        for key, name in licence.features.items():
            if key in policy.vgpu_features or _SHARED_PASSTHROUGH.search(name):
                return True, f"feature {key} ({name})"
        return False, "no shared passthrough graphics (vGPU) feature among " + ", ".join(
            sorted(licence.features)
        )
    for pattern in policy.vgpu_editions:
        if fnmatchcase(licence.edition_key, pattern):
            return True, f"edition {licence.edition_key} (licensing.vgpu_editions)"
    return False, (
        f"edition {licence.edition_key or 'unknown'} lists no features and is not known to "
        "include vGPU (licensing.vgpu_editions)"
    )


@rule(
    id="LIC-01",
    title="The NVIDIA licence edition each vGPU VM needs",
    category="licensing",
    severity="info",
    scope=scopes.GPU_VMS,
    rationale="""Every running vGPU needs an NVIDIA licence from a licence server, of the edition
        its profile's series implies: Q RTX Virtual Workstation, B Virtual PC, A Virtual
        Applications, C AI Enterprise. vGPU needs an NVIDIA licence besides
        vSphere's (NVIDIA vGPU licensing guide); passthrough GPUs need none. The finding names
        the edition; it fails when the profile does not tell which.""",
    remediation="""Make sure the licence server holds enough concurrent licences of each edition
        for the powered-on vGPU VMs (the report's licence summary counts them). For a profile
        gpuaudit does not recognise, look its series up in NVIDIA's vGPU documentation.""",
    references=(sources.NVIDIA_LICENSING, sources.NVIDIA_LICENSE_SYSTEM),
)
def edition_needed(ctx: Context, vm: Vm) -> Outcome | None:
    edition = vm_edition(vm)
    if edition is None:
        return None  # passthrough only: no vGPU licence
    profiles = F.profiles(vm)
    known = UNKNOWN_EDITION not in edition
    when = "now (powered on)" if vm.powered_on else "when powered on"
    message = (
        f"needs an {edition} licence {when} for {', '.join(profiles)}"
        if known
        else f"cannot tell which NVIDIA licence {', '.join(profiles)} needs"
    )
    series = sorted({i.series.upper() for p in profiles if (i := catalog.parse_profile(p))})
    evidence = {
        "edition": edition,
        "profiles": profiles,
        "series": series,
        "powered_on": vm.powered_on,
    }
    return Outcome(known, message, evidence)


def licence_problems(licence: Licence | None, policy: LicensingPolicy, today: date) -> list[str]:
    if licence is None:
        return ["no licence assignment was read for the host"]
    problems = []
    if licence.evaluation:
        problems.append("the host runs in evaluation mode")
    if licence.expires and date.fromisoformat(licence.expires) < today:
        problems.append(f"its licence expired on {licence.expires}")
    allowed, why = vgpu_allowance(licence, policy)
    if not allowed and not licence.evaluation:
        problems.append(f"its licence does not allow vGPU: {why}")
    return problems


@rule(
    id="LIC-02",
    title="vGPU runs on a host whose vSphere licence does not allow it, is evaluation or expired",
    category="licensing",
    severity="high",
    scope=scopes.HOSTS,
    rationale="""vGPU needs vSphere's shared passthrough graphics feature, which only some editions
        carry. A host in evaluation mode or on an expired licence stops powering on VMs when the
        licence lapses, so HA cannot restart its vGPU VMs either. Which licence keys carry the
        feature is read from the licence's feature list; the default feature keys and editions are
        gpuaudit's best knowledge and can be changed in the policy (licensing).""",
    remediation="""Assign the host a licence whose edition includes shared passthrough graphics
        (for example vSphere Enterprise Plus), or a renewed one; then check that vGPU VMs still
        power on.""",
    references=(sources.VSPHERE_LICENSING, sources.NVIDIA_VGPU_USER_GUIDE),
)
def host_licence(ctx: Context, host: Host) -> Outcome | None:
    f = ctx.facts
    if not f.inventory.licensing.collected:
        return None
    running = [vm.name for vm in f.host_gpu_vms(host.name) if F.is_vgpu_vm(vm) and vm.powered_on]
    if not running:
        return None
    lic = host.licence
    problems = licence_problems(lic, ctx.policy.licensing, ctx.today)
    evidence: dict[str, object] = {"vgpu_vms": sorted(running)}
    if lic is not None:
        allowed, why = vgpu_allowance(lic, ctx.policy.licensing)
        evidence.update(
            edition=lic.edition_key,
            name=lic.name,
            key_tail=lic.key_tail,
            expires=lic.expires,
            evaluation=lic.evaluation,
            vgpu_allowed=allowed,
            allowed_by=why,
        )
    message = (
        "; ".join(problems)
        if problems
        else f"{lic.name or lic.edition_key} allows vGPU ({evidence['allowed_by']})"
        if lic
        else ""
    )
    return Outcome(not problems, message, evidence)
