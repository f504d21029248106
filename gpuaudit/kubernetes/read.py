"""Read a Kubernetes cluster from ``kubectl get nodes,pods --all-namespaces -o json``.

The file is a v1 ``List`` of ``Node`` and ``Pod`` objects. Each item is checked
against the Kubernetes object model itself: the official client's models
(``kubernetes.client``), deserialised as the client deserialises an API server's
answer. A file that is no such List raises :class:`KubernetesInputError`, whose
message is one line; so does one nested deeper than the JSON parser's recursion
limit, as for every other input file (``files.parse_json``).

GPU quantities are read by Kubernetes' own grammar (:func:`parse_quantity`), with
bounds on their length and magnitude, so that no quantity can cost more than a
moment to read.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

from gpuaudit.common.files import parse_json
from gpuaudit.kubernetes.model import (
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


# Kubernetes' quantity grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go):
#   <quantity> ::= <signedNumber><suffix>; <number> ::= <digits> | <digits>.<digits>
#   | <digits>. | .<digits>; <suffix> ::= <binarySI> | <decimalExponent> | <decimalSI>
#   <binarySI> ::= Ki | Mi | Gi | Ti | Pi | Ei; <decimalSI> ::= n | u | m | "" | k | M
#   | G | T | P | E; <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>,
# whose exponent Kubernetes reads as a 32-bit integer.
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<decimal>[numkMGTPE])|[eE](?P<exponent>[+-]?[0-9]+))?"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}  # powers of 1024
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
MAX_QUANTITY_LENGTH = 64  # characters; the largest exact quantity needs fewer than 30
MAX_QUANTITY = 2**63 - 1  # Kubernetes caps every quantity at the int64 maximum
_MAX_EXPONENT = 2**31 - 1


def parse_quantity(text: str) -> int:
    """The whole number a Kubernetes quantity (``"1"``, ``"2k"``, ``"1Ki"``, ``"5e2"``)
    stands for, its fraction dropped; raises ValueError for anything else.

    Only Kubernetes' grammar is read (no spaces, ``_``, NaN or Infinity, which
    Python's Decimal would take). A quantity longer than MAX_QUANTITY_LENGTH
    characters, an exponent beyond 32 bits, or a magnitude above MAX_QUANTITY is
    refused before any arithmetic, so ``1e999999999`` costs no more than ``1``.
    """
    if len(text) > MAX_QUANTITY_LENGTH:
        raise ValueError(f"longer than {MAX_QUANTITY_LENGTH} characters")
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError("not a Kubernetes quantity")
    number = Decimal(match["number"])
    if match["binary"]:
        exponent, factor = 0, 1024 ** _BINARY[match["binary"]]
    else:
        exponent = int(match["exponent"]) if match["exponent"] else 0
        exponent += _DECIMAL.get(match["decimal"] or "", 0)
        factor = 1
        if abs(exponent) > _MAX_EXPONENT:
            raise ValueError("its exponent is beyond 32 bits")
    if not number or number.adjusted() + exponent < 0:
        return 0  # less than one: nothing whole
    # 10 ** (adjusted + 1) bounds the number from above: the exponents are compared
    # first, so that no huge number is ever made.
    if number.adjusted() + exponent >= len(str(MAX_QUANTITY)):
        raise ValueError(f"larger than {MAX_QUANTITY}")
    with localcontext(prec=2 * MAX_QUANTITY_LENGTH):  # exact: nothing is rounded
        value = number.scaleb(exponent) * factor
    if abs(value) > MAX_QUANTITY:
        raise ValueError(f"larger than {MAX_QUANTITY}")
    return int(value)


def client_missing() -> bool:
    """True when the Kubernetes client, an optional dependency (the extra
    ``gpuaudit[kubernetes]``), cannot be imported."""
    try:
        import kubernetes.client  # noqa: F401  (heavy: loaded only when a file is given)
    except ImportError:
        return True
    return False


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
    data = parse_json(text, KubernetesInputError)
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
    if not isinstance(kind, str) or kind not in _MODELS:
        raise KubernetesInputError(f"item {index}: kind {kind!r} is neither Node nor Pod")
    if item.get("apiVersion", "v1") != "v1":
        raise KubernetesInputError(f"item {index}: apiVersion {item.get('apiVersion')!r}")
    try:
        obj = ApiClient().deserialize(json.dumps(item), _MODELS[kind], "application/json")
    except RecursionError:  # parsed, but nested too deeply to be written again or checked
        raise KubernetesInputError(f"item {index} ({kind}): nested too deeply") from None
    except ValueError as exc:  # the models' validation error is a ValueError
        raise KubernetesInputError(f"item {index} ({kind}): {_one_line(exc)}") from exc
    except (TypeError, AttributeError) as exc:  # a list or an object of the wrong type
        raise KubernetesInputError(
            f"item {index} ({kind}): a field has the wrong type ({' '.join(str(exc).split())})"
        ) from None
    if obj.metadata is None or not obj.metadata.name:
        raise KubernetesInputError(f"item {index} ({kind}): no metadata.name")
    return obj


def _one_line(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    title = getattr(exc, "title", "")
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        text = f"{title}: {where}: {first.get('msg', '')}".replace(": : ", ": ")
        return " ".join(text.split())  # a key may hold a line break
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
        allocatable=_gpu_quantities(
            status.allocatable if status is not None else None,
            f"node {obj.metadata.name}: status.allocatable",
        ),
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
        requests=_pod_requests(spec, f"pod {meta.namespace or 'default'}/{meta.name}"),
        node_selector=dict((spec.node_selector or {}) if spec is not None else {}),
        affinity=_required_affinity(spec),
        tolerations=[
            Toleration(t.key or "", t.operator or "Equal", t.value or "", t.effect or "")
            for t in ((spec.tolerations or []) if spec is not None else [])
        ],
        daemonset=any(o.kind == "DaemonSet" for o in owners),
    )


def _pod_requests(spec: Any, pod: str) -> dict[str, int]:
    """A pod's effective GPU requests: the sum over its containers, or the largest init
    container's, whichever is more. An extended resource given only as a limit is
    requested at that limit (Kubernetes defaults the request to the limit)."""
    if spec is None:
        return {}
    total: dict[str, int] = {}
    for container in spec.containers or []:
        where = f"{pod}: container {container.name}"
        for name, n in _container_requests(container, where).items():
            total[name] = total.get(name, 0) + n
    for container in spec.init_containers or []:
        where = f"{pod}: init container {container.name}"
        for name, n in _container_requests(container, where).items():
            total[name] = max(total.get(name, 0), n)
    return total


def _container_requests(container: Any, where: str) -> dict[str, int]:
    resources = container.resources
    if resources is None:
        return {}
    out = _gpu_quantities(resources.limits, f"{where} resources.limits")
    out.update(_gpu_quantities(resources.requests, f"{where} resources.requests"))
    return out


def _gpu_quantities(values: dict[str, Any] | None, where: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, quantity in (values or {}).items():
        if not is_gpu_resource(name):
            continue
        try:
            out[name] = parse_quantity(str(quantity))
        except ValueError as exc:
            shown = quantity if len(str(quantity)) <= 40 else f"{str(quantity)[:40]}..."
            raise KubernetesInputError(
                f"{where}[{name}]: not a quantity ({exc}): {shown!r}"
            ) from None
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
