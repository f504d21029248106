"""Read a Kubernetes cluster from ``kubectl get nodes,pods --all-namespaces -o json``.

The file is a v1 ``List`` of ``Node`` and ``Pod`` objects. Each item is checked
against the Kubernetes object model itself: the official client's models
(``kubernetes.client``), deserialised as the client deserialises an API server's
answer. A file that is no such List raises :class:`KubernetesInputError`, whose
message is one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpuaudit.kube import (
    FIELD_PREFIX,
    Cluster,
    Node,
    Pod,
    Requirement,
    Taint,
    Toleration,
    is_gpu_resource,
)

_MODELS = {"Node": "V1Node", "Pod": "V1Pod"}
_LIST_KINDS = ("List", "NodeList", "PodList")


class KubernetesInputError(ValueError):
    """A file that is not the JSON of ``kubectl get nodes,pods -o json``."""


def read_cluster(path: str | Path) -> Cluster:
    """The nodes and pods of the file at ``path``; the cluster is named after the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KubernetesInputError(f"{path}: cannot read: {exc}") from exc
    try:
        return parse_cluster(text, name=path.stem, source=str(path))
    except KubernetesInputError as exc:
        raise KubernetesInputError(f"{path}: {exc}") from exc


def parse_cluster(text: str, name: str, source: str = "") -> Cluster:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise KubernetesInputError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("kind") not in _LIST_KINDS:
        raise KubernetesInputError(
            'not a Kubernetes List (kind "List", as kubectl get nodes,pods -o json writes)'
        )
    if data.get("apiVersion") != "v1":
        raise KubernetesInputError(f'apiVersion is {data.get("apiVersion")!r}, not "v1"')
    items = data.get("items")
    if not isinstance(items, list):
        raise KubernetesInputError('"items" is not a list')
    cluster = Cluster(name=name, source=source or name)
    for index, item in enumerate(items):
        obj = _deserialise(index, item, data["kind"])
        if isinstance(item, dict) and item.get("kind", _implied(data["kind"])) == "Node":
            cluster.nodes.append(_node(obj))
        else:
            cluster.pods.append(_pod(obj))
    return cluster


def _implied(list_kind: str) -> str | None:
    return {"NodeList": "Node", "PodList": "Pod"}.get(list_kind)


def _deserialise(index: int, item: Any, list_kind: str) -> Any:
    from kubernetes.client import ApiClient  # heavy: loaded only when a file is given

    kind = item.get("kind", _implied(list_kind)) if isinstance(item, dict) else None
    if kind not in _MODELS:
        raise KubernetesInputError(f"item {index}: kind {kind!r} is neither Node nor Pod")
    if item.get("apiVersion", "v1") != "v1":
        raise KubernetesInputError(f"item {index}: apiVersion {item.get('apiVersion')!r}")
    try:
        obj = ApiClient().deserialize(json.dumps(item), _MODELS[kind], "application/json")
    except ValueError as exc:  # the models' validation error is a ValueError
        raise KubernetesInputError(f"item {index} ({kind}): {_one_line(exc)}") from exc
    if obj.metadata is None or not obj.metadata.name:
        raise KubernetesInputError(f"item {index} ({kind}): no metadata.name")
    return obj


def _one_line(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    title = getattr(exc, "title", "")
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{title}: {where}: {first.get('msg', '')}".replace(": : ", ": ")
    return " ".join(str(exc).split())


def _node(obj: Any) -> Node:
    spec, status = obj.spec, obj.status
    info = status.node_info if status is not None else None
    return Node(
        name=obj.metadata.name,
        provider_id=(spec.provider_id or "") if spec is not None else "",
        system_uuid=(info.system_uuid or "") if info is not None else "",
        labels=dict(obj.metadata.labels or {}),
        taints=[
            Taint(t.key, t.value or "", t.effect or "")
            for t in ((spec.taints or []) if spec is not None else [])
        ],
        allocatable=_gpu_quantities(status.allocatable if status is not None else None),
        unschedulable=bool(spec.unschedulable) if spec is not None else False,
    )


def _pod(obj: Any) -> Pod:
    spec, meta = obj.spec, obj.metadata
    owners = meta.owner_references or []
    return Pod(
        namespace=meta.namespace or "default",
        name=meta.name,
        node=(spec.node_name or None) if spec is not None else None,
        phase=(obj.status.phase if obj.status is not None else None) or "Pending",
        requests=_pod_requests(spec),
        node_selector=dict((spec.node_selector or {}) if spec is not None else {}),
        affinity=_required_affinity(spec),
        tolerations=[
            Toleration(t.key or "", t.operator or "Equal", t.value or "", t.effect or "")
            for t in ((spec.tolerations or []) if spec is not None else [])
        ],
        daemonset=any(o.kind == "DaemonSet" for o in owners),
    )


def _pod_requests(spec: Any) -> dict[str, int]:
    """A pod's effective GPU requests: the sum over its containers, or the largest init
    container's, whichever is more. An extended resource given only as a limit is
    requested at that limit (Kubernetes defaults the request to the limit)."""
    if spec is None:
        return {}
    total: dict[str, int] = {}
    for container in spec.containers or []:
        for name, n in _container_requests(container).items():
            total[name] = total.get(name, 0) + n
    for container in spec.init_containers or []:
        for name, n in _container_requests(container).items():
            total[name] = max(total.get(name, 0), n)
    return total


def _container_requests(container: Any) -> dict[str, int]:
    resources = container.resources
    if resources is None:
        return {}
    out = _gpu_quantities(resources.limits)
    out.update(_gpu_quantities(resources.requests))
    return out


def _gpu_quantities(values: dict[str, Any] | None) -> dict[str, int]:
    from kubernetes.utils import parse_quantity

    out: dict[str, int] = {}
    for name, quantity in (values or {}).items():
        if not is_gpu_resource(name):
            continue
        try:
            out[name] = int(parse_quantity(quantity))  # type: ignore[no-untyped-call]
        except ValueError as exc:
            raise KubernetesInputError(f"{name}: not a quantity: {quantity!r}") from exc
    return out


def _required_affinity(spec: Any) -> list[list[Requirement]] | None:
    node_affinity = spec.affinity.node_affinity if spec is not None and spec.affinity else None
    required = (
        node_affinity.required_during_scheduling_ignored_during_execution
        if node_affinity is not None
        else None
    )
    if required is None:
        return None
    return [
        [
            Requirement(e.key, e.operator, tuple(e.values or ()))
            for e in (term.match_expressions or [])
        ]
        + [  # matchFields selects by field: metadata.name is the only one supported
            Requirement(FIELD_PREFIX + f.key, f.operator, tuple(f.values or ()))
            for f in (term.match_fields or [])
        ]
        for term in required.node_selector_terms or []
    ]
