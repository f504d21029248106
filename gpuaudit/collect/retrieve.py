"""Bulk property retrieval: one ContainerView, one paged RetrievePropertiesEx.

Reading an attribute of a pyVmomi managed object is a SOAP round trip, so a
script that walks ``vm.config.hardware.device`` makes one call per VM. Here every
object of every type comes back in one RetrievePropertiesEx (plus its pages),
carrying only the property paths asked for.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyVmomi import vim, vmodl

PAGE_SIZE = 500


@dataclass
class ObjectProps:
    """The properties of one managed object, by path, and the paths it could not read."""

    moref: str
    kind: str  # the managed object type: HostSystem, VirtualMachine, ...
    props: dict[str, Any] = field(default_factory=dict)
    # path -> fault name (NoPermission, ...) for each property the server withheld.
    missing: dict[str, str] = field(default_factory=dict)

    def get(self, path: str, default: Any = None) -> Any:
        value = self.props.get(path)
        return default if value is None else value

    @property
    def name(self) -> str:
        name = self.props.get("name")
        return unescape_name(str(name)) if name else self.moref


_ESCAPES = re.compile(r"%(2[fF]|5[cC]|25)")
_UNESCAPED = {"2f": "/", "5c": "\\", "25": "%"}


def unescape_name(name: str) -> str:
    """vCenter escapes '/', '\\' and '%' in entity names as %2f, %5c and %25."""
    return _ESCAPES.sub(lambda m: _UNESCAPED[m.group(1).lower()], name)


def moref(obj: Any) -> str:
    """The moref id of a managed object reference (no server call)."""
    return str(obj._moId)


def kind(obj: Any) -> str:
    return str(obj._wsdlName)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large answer is parsed and used.

    pyVmomi builds a few objects per XML element, millions for a large estate, all
    alive until the inventory is assembled: each full collection on the way walks
    all of them again and frees nothing (a sixth of a 10,000-VM collection). They
    sit in reference cycles, so they are collected once on the way out, after the
    caller has dropped them.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def retrieve(
    content: Any, specs: Mapping[type, Iterable[str]], page_size: int = PAGE_SIZE
) -> dict[str, ObjectProps]:
    """Every object of the given types below the root folder, keyed by moref.

    ``specs`` maps a pyVmomi managed type to the property paths to read.
    """
    view = content.viewManager.CreateContainerView(
        container=content.rootFolder, type=list(specs), recursive=True
    )
    try:
        traversal = vmodl.query.PropertyCollector.TraversalSpec(
            name="view", path="view", skip=False, type=vim.view.ContainerView
        )
        object_spec = vmodl.query.PropertyCollector.ObjectSpec(
            obj=view, skip=True, selectSet=[traversal]
        )
        prop_specs = [
            vmodl.query.PropertyCollector.PropertySpec(type=t, pathSet=sorted(set(p)), all=False)
            for t, p in specs.items()
        ]
        filter_spec = vmodl.query.PropertyCollector.FilterSpec(
            objectSet=[object_spec], propSet=prop_specs
        )
        collector = content.propertyCollector
        options = vmodl.query.PropertyCollector.RetrieveOptions(maxObjects=page_size)
        found: dict[str, ObjectProps] = {}
        result = collector.RetrievePropertiesEx(specSet=[filter_spec], options=options)
        while result is not None:
            for content_obj in result.objects:
                _merge(found, content_obj)
            if not result.token:
                break
            result = collector.ContinueRetrievePropertiesEx(token=result.token)
        return found
    finally:
        view.DestroyView()


def _merge(found: dict[str, ObjectProps], content_obj: Any) -> None:
    """Fold one ObjectContent in; an object matched by two specs comes back merged."""
    key = moref(content_obj.obj)
    entry = found.get(key)
    if entry is None:
        entry = found[key] = ObjectProps(moref=key, kind=kind(content_obj.obj))
    for prop in content_obj.propSet or []:
        entry.props[prop.name] = prop.val
    for missing in content_obj.missingSet or []:
        fault = missing.fault
        entry.missing[missing.path] = fault.__class__.__name__.split(".")[-1] if fault else "?"
