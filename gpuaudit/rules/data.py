"""Data rules: what the collector could not read, and so which verdicts are uncertain."""

from __future__ import annotations

from collections.abc import Iterator

from gpuaudit.inventory import Inventory
from gpuaudit.results import ObjectKind
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, Verdict, rule


def gaps(ctx: Context) -> Iterator[Verdict]:
    inv = ctx.facts.inventory
    by_object: dict[str, list[dict[str, str]]] = {}
    kinds: dict[str, str] = {}
    # Reads the Read-only role cannot make are reported, not failed (Gap.privilege).
    beyond_role: dict[str, list[str]] = {}
    for gap in inv.gaps:
        if not gap.uncertain:
            beyond_role.setdefault(gap.object, []).append(f"{gap.property} (needs {gap.privilege})")
            continue
        by_object.setdefault(gap.object, []).append(
            {"kind": gap.kind, "property": gap.property, "reason": gap.reason}
        )
        kinds.setdefault(gap.object, gap.kind)
    for host in inv.hosts:
        if not host.connected and host.name not in by_object:
            by_object[host.name] = [
                {
                    "kind": "HostSystem",
                    "property": "config",
                    "reason": f"host is {host.connection_state}",
                }
            ]
            kinds[host.name] = "HostSystem"
    for host in inv.hosts:
        if host.name not in by_object:
            unread = beyond_role.get(host.name, [])
            yield Verdict(
                host.name,
                True,
                "no gaps"
                + (f"; not read by the Read-only role: {'; '.join(unread)}" if unread else ""),
                {"beyond_role": unread} if unread else {},
                cluster=host.cluster,
                host=host.name,
                object_kind="host",
            )
    for name, items in by_object.items():
        owner = ctx.facts.hosts.get(name)
        what = "; ".join(f"{i['property']}: {i['reason']}" for i in items)
        yield Verdict(
            name,
            False,
            f"could not read {what}",
            {"gaps": items},
            cluster=owner.cluster if owner else None,
            host=name if owner else None,
            object_kind=_KINDS.get(kinds[name], "inventory"),
        )


rule(
    id="DATA-01",
    title="The inventory has gaps: verdicts that depend on them are uncertain",
    category="data",
    severity="medium",
    object_kind="inventory",
    rationale="""A property the collector could not read (no permission, a host not responding, a
        field newer than the API version) is not evidence of a problem, nor of its absence. Every
        verdict that depends on it is uncertain; findings on such objects carry the gap in their
        evidence under "uncertain". A property only a privilege beyond the Read-only role can
        read (the NVIDIA vGPU manager version: Host.Config.Image) is listed, not failed: the
        rules that need it give no verdict (GPU-08, GPU-09) or one not proven (VM-06).""",
    remediation="""Give the audit account read access to the whole inventory (the read-only role
        propagated from the root), reconnect hosts that are not responding, and scan again.""",
    references=(sources.API_MISSING_PROPERTY, sources.SYSTEM_ROLES),
)(gaps)


_KINDS: dict[str, ObjectKind] = {
    "HostSystem": "host",
    "VirtualMachine": "vm",
    "ClusterComputeResource": "cluster",
    "Datastore": "datastore",
    "ServiceInstance": "vcenter",
    "OptionManager": "vcenter",
}


# The rule whose failure no policy, baseline or --fail-on may quieten: an audit that
# read no host has checked nothing, and a scheduled job must not stay green on it.
NOTHING_EXAMINED = "DATA-02"


def nothing_examined(ctx: Context, inv: Inventory) -> Outcome:
    seen = {
        "hosts": len(inv.hosts),
        "datacenters": len(inv.datacenters),
        "clusters": len(inv.clusters),
        "vms": len(inv.vms),
        "datastores": len(inv.datastores),
    }
    if inv.hosts:
        return Outcome(True, f"{_count(seen['hosts'], 'host')} read", seen)
    refused = sorted({g.object for g in inv.gaps if g.reason == "NoPermission"})
    evidence: dict[str, object] = dict(seen)
    if refused:
        evidence["no_permission"] = refused
    return Outcome(False, "nothing was examined: " + _cause(seen, refused), evidence)


rule(
    id=NOTHING_EXAMINED,
    title="The audit examined nothing: no host was read",
    category="data",
    severity="critical",
    scope=scopes.THE_INVENTORY,
    rationale="""Every other rule examines hosts, their GPUs, VMs and datastores. When the
        inventory holds no host, each of them examines nothing and passes by default: the
        report would say PASS about an estate it never saw, and a scheduled job would stay
        green for ever. An account that can see nothing (the Read-only role not propagated
        from the root of the inventory, or assigned on a folder that holds no hosts) and a
        server whose inventory answer is empty or unreadable both look like this. The
        finding is always critical, cannot be waived or graded down by a policy, and makes
        the exit status non-zero whatever --fail-on or --baseline say.""",
    remediation="""Give the audit account the Read-only role on the root of the vCenter
        inventory (Administration > Access Control > Global Permissions, or the vCenter
        object's Permissions) with "Propagate to children" ticked, check that the server
        named is the vCenter (or ESXi host) that runs the GPU hosts, and scan again.""",
    references=(sources.SYSTEM_ROLES, sources.API_MISSING_PROPERTY),
)(nothing_examined)


def _cause(seen: dict[str, int], refused: list[str]) -> str:
    listed = [
        _count(seen[key], noun)
        for key, noun in (
            ("datacenters", "datacenter"),
            ("clusters", "cluster"),
            ("vms", "VM"),
            ("datastores", "datastore"),
        )
        if seen[key]
    ]
    if refused:
        shown = ", ".join(refused[:5]) + (", ..." if len(refused) > 5 else "")
        return (
            f"no host was read and the server refused the audit account (NoPermission) on "
            f"{_count(len(refused), 'object')} ({shown}): the account's permissions do not "
            "cover the inventory; give it the Read-only role on the root, propagated to children"
        )
    if listed:
        return (
            f"no host was read, though the server listed {_and(listed)}: the audit account "
            "sees part of the inventory only (the Read-only role not propagated from the root, "
            "or assigned on a folder that holds no hosts)"
        )
    return (
        "the server's answer held no object at all: the audit account can see nothing (no "
        "role on the root of the inventory), or the server's inventory answer was empty or "
        "unreadable"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
