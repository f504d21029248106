"""Licensing rules: which NVIDIA licence each GPU VM needs (vGPU from its profile,
passthrough from the policy), and whether each host's vSphere licence allows vGPU."""

from __future__ import annotations

import re
from datetime import date
from fnmatch import fnmatchcase

from gpuaudit.inventory import Host, Licence, Vm
from gpuaudit.knowledge import catalog
from gpuaudit.model import facts as F
from gpuaudit.model.facts import UNKNOWN_EDITION, vm_edition
from gpuaudit.model.policy import LicensingPolicy
from gpuaudit.results import Severity
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, rule

_SHARED_PASSTHROUGH = re.compile(r"shared\s*pass[\s-]*(?:through|thru)|\bvgpu\b", re.IGNORECASE)

REFERENCES: dict[str, list[tuple[str, str]]] = {
    "LIC-01": [
        (
            "NVIDIA Virtual GPU Software Packaging, Pricing, and Licensing Guide",
            "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/"
            "solutions/resources/documents1/Virtual-GPU-Packaging-and-Licensing-Guide.pdf",
        ),
        (
            "NVIDIA AI Enterprise on VMware vSphere: NVIDIA License System",
            "https://docs.nvidia.com/ai-enterprise/deployment/vmware/latest/cpu-nls.html",
        ),
    ],
    "LIC-02": [
        (
            "Broadcom KB 313548: Counting cores for VMware Cloud Foundation and vSphere Foundation",
            "https://knowledge.broadcom.com/external/article/313548/"
            "counting-cores-for-vmware-cloud-foundati.html",
        ),
        (
            "vSphere: ESXi evaluation and licensed modes (the 60-day evaluation period)",
            "https://pubs.vmware.com/vsphere-51/topic/com.vmware.vsphere.install.doc/"
            "GUID-17862A54-C1D4-47A9-88AA-2A1A32602BC6.html",
        ),
    ],
}


def vgpu_allowance(licence: Licence, policy: LicensingPolicy) -> tuple[bool, str]:
    """Whether a licence allows shared passthrough graphics, and on what evidence: a
    feature that says so, else an edition known to carry it (a feature list may name
    vGPU in words gpuaudit does not recognise; the edition still tells)."""
    for key, name in licence.features.items():
        if key in policy.vgpu_features or _SHARED_PASSTHROUGH.search(name):
            return True, f"feature {key} ({name})"
    for pattern in policy.vgpu_editions:
        if fnmatchcase(licence.edition_key, pattern):
            return True, f"edition {licence.edition_key} (licensing.vgpu_editions)"
    edition = f"edition {licence.edition_key or 'unknown'}"
    if licence.features:
        return False, (
            f"{edition} is not known to include vGPU (licensing.vgpu_editions) and has no "
            "shared passthrough graphics (vGPU) feature among "
            + ", ".join(sorted(licence.features))
        )
    return False, (
        f"{edition} lists no features and is not known to include vGPU (licensing.vgpu_editions)"
    )


def edition_needed(ctx: Context, vm: Vm) -> Outcome | None:
    edition = vm_edition(vm)
    if edition is None:
        return passthrough_edition(ctx, vm)
    profiles = F.profiles(vm)
    known = UNKNOWN_EDITION not in edition
    message = (
        f"needs an {edition} licence {_when(vm)} for {', '.join(profiles)}"
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


rule(
    id="LIC-01",
    title="The NVIDIA licence edition each GPU VM needs",
    category="licensing",
    severity="info",
    scope=scopes.GPU_VMS,
    rationale="""Every running vGPU needs an NVIDIA licence from a licence server, of the edition
        its profile's series implies: Q RTX Virtual Workstation, B Virtual PC, A Virtual
        Applications, C AI Enterprise (NVIDIA vGPU licensing guide). A passthrough GPU needs one
        too when its guest runs NVIDIA's vWS, vApps or AI Enterprise driver; vSphere cannot
        see the guest's driver, so the edition comes from the policy (licensing.passthrough).
        The finding names the edition; it fails when the profile does not tell which, and when
        no policy entry covers a passthrough VM, stating the assumption that it needs none.""",
    remediation="""Make sure the licence server holds enough licences of each edition for the
        powered-on GPU VMs (the report's licence summary counts them). For a profile gpuaudit
        does not recognise, look its series up in NVIDIA's vGPU documentation. For passthrough
        VMs, declare the edition their guests' driver uses in the policy
        (licensing.passthrough: match a cluster or VM name, edition vWS, vPC, vApps, NVAIE or
        none).""",
    references=(sources.NVIDIA_LICENSING, sources.NVIDIA_LICENSE_SYSTEM, *REFERENCES["LIC-01"]),
)(edition_needed)


def _when(vm: Vm) -> str:
    return "now (powered on)" if vm.powered_on else "when powered on"


# What a passthrough VM is taken to need when no policy entry covers it.
PASSTHROUGH_ASSUMPTION = (
    "assumed: no NVIDIA licence for passthrough guests; declare licensing.passthrough in the policy"
)


def passthrough_edition(ctx: Context, vm: Vm) -> Outcome:
    """A passthrough VM's edition, as the policy declares it for its cluster or name."""
    entry = ctx.policy.licensing.passthrough_for(vm.cluster, vm.name)
    evidence: dict[str, object] = {
        "edition": entry.edition if entry else None,
        "passthrough": True,
        "declared_by": entry.match if entry else None,
        "powered_on": vm.powered_on,
    }
    if entry is None:
        return Outcome(
            False,
            f"passthrough GPU whose guest driver vSphere cannot see; {PASSTHROUGH_ASSUMPTION}",
            evidence,
        )
    where = f"licensing.passthrough {entry.match!r}"
    if entry.edition is None:
        return Outcome(
            True, f"passthrough GPU; its guest needs no NVIDIA licence ({where})", evidence
        )
    return Outcome(
        True,
        f"passthrough GPU whose guest runs the {entry.edition} driver: needs an "
        f"{entry.edition} licence {_when(vm)} ({where})",
        evidence,
    )


def licence_problems(
    licence: Licence | None, policy: LicensingPolicy, today: date
) -> list[tuple[str, Severity | None]]:
    """What is wrong with a vGPU host's licence, each with a severity (None: the rule's)."""
    if licence is None:
        return [("no licence assignment was read for the host", None)]
    expires = date.fromisoformat(licence.expires) if licence.expires else None
    if licence.evaluation:
        return evaluation_problems(expires, policy, today)
    problems: list[tuple[str, Severity | None]] = []
    if expires is not None and expires < today:
        problems.append((f"its licence expired on {licence.expires}", None))
    allowed, why = vgpu_allowance(licence, policy)
    if not allowed:
        problems.append((f"its licence does not allow vGPU: {why}", None))
    return problems


def evaluation_problems(
    expires: date | None, policy: LicensingPolicy, today: date
) -> list[tuple[str, Severity | None]]:
    """Evaluation mode carries every feature, vGPU included, until it ends: it passes
    until close to its end, is medium within the warning window, and fails (high)
    once over, when the host stops powering VMs on."""
    if expires is None:
        return [("the host runs in evaluation mode and its expiry date was not read", "medium")]
    if expires < today:
        return [(f"the host's evaluation period ended on {expires.isoformat()}", None)]
    days = (expires - today).days
    if days <= policy.evaluation_warning_days:
        return [
            (
                f"the host runs in evaluation mode, which ends on {expires.isoformat()} "
                f"(in {days} days)",
                "medium",
            )
        ]
    return []


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
    if problems:
        # The worst problem decides: one at the rule's severity outranks a medium one.
        severity = None if any(s is None for _, s in problems) else problems[0][1]
        return Outcome(False, "; ".join(m for m, _ in problems), evidence, severity)
    assert lic is not None  # a missing licence is a problem
    if lic.evaluation:
        until = f" until {lic.expires}" if lic.expires else ""
        message = f"evaluation mode allows every feature, vGPU included{until}"
    else:
        message = f"{lic.name or lic.edition_key} allows vGPU ({evidence['allowed_by']})"
    return Outcome(True, message, evidence)


rule(
    id="LIC-02",
    title="vGPU runs on a host whose vSphere licence does not allow it, has expired or ends soon",
    category="licensing",
    severity="high",
    scope=scopes.HOSTS,
    rationale="""vGPU needs vSphere's shared passthrough graphics feature, which only some editions
        carry: vSphere Enterprise Plus (per CPU or per core), VMware vSphere Foundation and
        VMware Cloud Foundation, whose licences vCenter shows with the edition keys
        esx.enterprisePlus.*, esx.vvf.* and esx.vcf.*; vSphere Standard does not. A licence
        allows vGPU when its feature list names shared passthrough graphics or its edition is
        one of these. Evaluation mode carries every feature for 60 days; when it or a licence
        ends, the host disconnects from vCenter and powers on no VM, so HA cannot restart its
        vGPU VMs. An evaluation that ends within 14 days fails medium, with the date; an ended
        one fails. The feature keys and editions can be changed in the policy (licensing).""",
    remediation="""Assign the host a licence whose edition includes shared passthrough graphics
        (vSphere Enterprise Plus, vSphere Foundation or VMware Cloud Foundation), before an
        evaluation period ends or in place of an expired licence; then check that vGPU VMs
        still power on.""",
    references=(sources.VSPHERE_LICENSING, sources.NVIDIA_VGPU_USER_GUIDE, *REFERENCES["LIC-02"]),
)(host_licence)
