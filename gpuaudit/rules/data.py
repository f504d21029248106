"""Data rules: what the collector could not read, and so which verdicts are uncertain."""

from __future__ import annotations

from collections.abc import Iterator

from gpuaudit.rules.registry import Context, Verdict, rule


@rule(
    id="DATA-01",
    title="The inventory has gaps: verdicts that depend on them are uncertain",
    category="data",
    severity="medium",
    object_kind="inventory",
    rationale="""A property the collector could not read (no permission, a host not responding, a
        field newer than the API version) is not evidence of a problem, nor of its absence. Every
        verdict that depends on it is uncertain; findings on such objects carry the gap in their
        evidence under "uncertain".""",
    remediation="""Give the audit account read access to the whole inventory (the read-only role
        propagated from the root), reconnect hosts that are not responding, and scan again.""",
)
def gaps(ctx: Context) -> Iterator[Verdict]:
    inv = ctx.facts.inventory
    by_object: dict[str, list[dict[str, str]]] = {}
    kinds: dict[str, str] = {}
    for gap in inv.gaps:
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
            yield Verdict(
                host.name,
                True,
                "no gaps",
                {},
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


_KINDS = {
    "HostSystem": "host",
    "VirtualMachine": "vm",
    "ClusterComputeResource": "cluster",
    "Datastore": "datastore",
    "ServiceInstance": "vcenter",
    "OptionManager": "vcenter",
}
