"""Drift rules: the hosts of one GPU cluster should run the same ESXi build and the same
BIOS per server model. Their NVIDIA vGPU managers are compared in vgpu_manager.py."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gpuaudit.inventory import Cluster, Host
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, rule

REFERENCES: dict[str, list[tuple[str, str]]] = {
    "lifecycle": [
        (
            "vSphere 7.0 Lifecycle Manager: checking a cluster's compliance against its image "
            "(ESXi version and firmware of each host)",
            "https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere-lifecycle-manager.doc/"
            "GUID-D4CE90CD-A607-4F35-80A9-47FDA76E0881.html",
        ),
    ],
}


def spread(hosts: Iterable[Host], value: Callable[[Host], str | None]) -> dict[str, list[str]]:
    """Each distinct value among ``hosts`` -> the hosts that have it, by name; hosts whose
    value is unknown (None or empty) are left out."""
    out: dict[str, list[str]] = {}
    for host in hosts:
        key = value(host)
        if key:
            out.setdefault(key, []).append(host.name)
    return {key: sorted(names) for key, names in sorted(out.items())}


def listed(groups: dict[str, list[str]]) -> str:
    return "; ".join(f"{key} ({', '.join(names)})" for key, names in groups.items())


def _esxi_build(host: Host) -> str | None:
    return f"{host.version} build {host.build}" if host.build else None


def esxi_build(ctx: Context, cluster: Cluster) -> Outcome | None:
    hosts = ctx.facts.connected_hosts(cluster.name)
    builds = spread(hosts, _esxi_build)
    if sum(len(names) for names in builds.values()) < 2:
        return None  # nothing to compare
    evidence = {"builds": builds}
    if len(builds) > 1:
        return Outcome(False, f"{len(builds)} ESXi builds: {listed(builds)}", evidence)
    only = next(iter(builds))
    return Outcome(True, f"every connected host runs ESXi {only}", evidence)


rule(
    id="DS-03",
    title="The hosts of a GPU cluster run different ESXi builds",
    category="design",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPUS,
    rationale="""The hosts of a cluster should run one ESXi build: vSphere Lifecycle Manager
        manages a cluster with one image and reports every host that departs from it.
        Hosts of mixed builds are a rolling upgrade left half done: vGPU VMs that vMotion, DRS
        or HA move between them meet a different hypervisor, and the NVIDIA vGPU manager and
        the releases it supports (VM-06) are judged per host.""",
    remediation="""Finish the upgrade: remediate the cluster's hosts to one ESXi image with
        vSphere Lifecycle Manager, one host at a time in maintenance mode.""",
    references=(*REFERENCES["lifecycle"], sources.HA_CLUSTER),
)(esxi_build)


def _hardware(host: Host) -> str:
    return f"{host.vendor} {host.model}".strip() or "unknown model"


def _bios(host: Host) -> str | None:
    if not host.bios_version:
        return None
    dated = f" of {host.bios_release_date}" if host.bios_release_date else ""
    return f"{host.bios_version}{dated}"


def bios_version(ctx: Context, cluster: Cluster) -> Outcome | None:
    hosts = ctx.facts.connected_hosts(cluster.name)
    by_model: dict[str, list[Host]] = {}
    for host in hosts:
        by_model.setdefault(_hardware(host), []).append(host)
    versions = {model: spread(group, _bios) for model, group in sorted(by_model.items())}
    compared = {m: v for m, v in versions.items() if sum(len(n) for n in v.values()) >= 2}
    if not compared:
        return None  # no two hosts of one model with a known BIOS
    evidence = {"bios_by_model": compared}
    drifted = {m: v for m, v in compared.items() if len(v) > 1}
    if drifted:
        message = "; ".join(
            f"{model}: {len(v)} BIOS versions, {listed(v)}" for model, v in drifted.items()
        )
        return Outcome(False, message, evidence)
    same = ", ".join(f"{model} on {next(iter(v))}" for model, v in compared.items())
    return Outcome(True, f"one BIOS per server model: {same}", evidence)


rule(
    id="DS-04",
    title="Hosts of one server model in a GPU cluster run different BIOS versions",
    category="design",
    severity="low",
    scope=scopes.CLUSTERS_WITH_GPUS,
    rationale="""Servers of one model in one cluster should run one BIOS: the BIOS holds the
        settings GPUs depend on (SR-IOV, Above 4G decoding, MMIO sizes) and its fixes, and
        vSphere Lifecycle Manager keeps firmware in line with the cluster's image where a
        firmware add-on is used. A host on another BIOS may behave differently with the same
        GPUs, and a VM that runs on one host may not power on, or lose its GPU, on another.
        Different server models are compared only with their own kind.""",
    remediation="""Update the hosts' BIOS to the same release per server model (with the
        vendor's tools or a vSphere Lifecycle Manager firmware add-on), in maintenance mode,
        and check the GPU settings in the BIOS afterwards.""",
    references=(*REFERENCES["lifecycle"], sources.NVIDIA_VGPU_USER_GUIDE),
)(bios_version)
