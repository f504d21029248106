"""gpuaudit.vsphere.collect.retrieve against a property collector faked by hand.

RetrievePropertiesEx answers a page of at most RetrieveOptions.maxObjects objects
and a token while more remain; ContinueRetrievePropertiesEx(token) gives the next.
An object deleted mid-read fails the call with ManagedObjectNotFound naming it.
vCenter escapes '/', '\\' and '%' in entity names as %2f, %5c and %25.
"""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.common.gc_pause import gc_paused
from gpuaudit.vsphere.collect.retrieve import (
    ObjectProps,
    kind,
    merge_into,
    moref,
    retrieve,
    retrieve_objects,
    unescape_name,
)

PC = vmodl.query.PropertyCollector


def _content(obj: Any, props: dict[str, Any], missing: dict[str, Any] | None = None) -> Any:
    # ObjectContent's shape with plain objects: pyVmomi's own need typed arrays.
    return SimpleNamespace(
        obj=obj,
        propSet=[SimpleNamespace(name=k, val=v) for k, v in props.items()],
        missingSet=[SimpleNamespace(path=k, fault=f) for k, f in (missing or {}).items()],
    )


class _Collector:
    """Serves ``pages`` (lists of ObjectContent) one RetrievePropertiesEx page at a time."""

    def __init__(self, pages: list[list[Any]], gone: list[str] | None = None) -> None:
        self.pages = pages
        self.gone = list(gone or [])
        self.calls: list[tuple[str, Any]] = []
        self._stub = "stub"

    def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
        self.calls.append(("retrieve", (specSet, options.maxObjects)))
        keys = [o.obj._moId for o in specSet[0].objectSet]
        for key in self.gone:
            if key in keys:
                self.gone.remove(key)
                raise vmodl.fault.ManagedObjectNotFound(obj=vim.VirtualMachine(key))
        return self._page(0)

    def ContinueRetrievePropertiesEx(self, token: str) -> Any:
        self.calls.append(("continue", token))
        return self._page(int(token))

    def _page(self, index: int) -> Any:
        if not self.pages:
            return None
        token = str(index + 1) if index + 1 < len(self.pages) else None
        return SimpleNamespace(objects=self.pages[index], token=token)


class _View(vim.view.ContainerView):  # type: ignore[misc]
    """A container view that remembers being destroyed instead of asking a server."""

    def DestroyView(self) -> None:
        object.__setattr__(self, "destroyed", True)


class _ViewManager:
    def __init__(self) -> None:
        self.view = _View("session[1]view-1")
        object.__setattr__(self.view, "destroyed", False)
        self.asked: list[Any] = []

    def CreateContainerView(self, container: Any, type: list[Any], recursive: bool) -> Any:
        self.asked.append((container, type, recursive))
        return self.view


def test_every_object_of_each_type_page_by_page_merged_by_moref() -> None:
    host, vm = vim.HostSystem("host-1"), vim.VirtualMachine("vm-1")
    pages = [
        [_content(host, {"name": "esx%2f01"}), _content(vm, {"name": "vm-a"})],
        [
            # The same object matched by a second spec comes back merged.
            _content(
                host,
                {"runtime.connectionState": "connected"},
                {"config.graphicsInfo": vim.fault.NoPermission(privilegeId="Host.Config")},
            ),
            _content(vim.Datastore("datastore-1"), {}, {"info": None}),
        ],
    ]
    collector = _Collector(pages)
    views = _ViewManager()
    content = SimpleNamespace(propertyCollector=collector, viewManager=views, rootFolder="root")
    heard: list[tuple[int, int]] = []
    found = retrieve(
        content,
        {vim.HostSystem: ["name", "runtime.connectionState", "name"], vim.VirtualMachine: ["name"]},
        page_size=2,
        on_page=lambda objects, pages: heard.append((objects, pages)),
    )
    assert found == {
        "host-1": ObjectProps(
            moref="host-1",
            kind="HostSystem",
            props={"name": "esx%2f01", "runtime.connectionState": "connected"},
            missing={"config.graphicsInfo": "NoPermission"},
        ),
        "vm-1": ObjectProps(moref="vm-1", kind="VirtualMachine", props={"name": "vm-a"}),
        "datastore-1": ObjectProps(moref="datastore-1", kind="Datastore", missing={"info": "?"}),
    }
    assert found["host-1"].name == "esx/01"
    assert heard == [(2, 1), (3, 2)]
    assert views.asked == [("root", [vim.HostSystem, vim.VirtualMachine], True)]
    assert views.view.destroyed
    assert [c[0] for c in collector.calls] == ["retrieve", "continue"]
    specs, max_objects = collector.calls[0][1]
    assert max_objects == 2
    (spec,) = specs
    (object_spec,) = spec.objectSet
    assert (object_spec.obj, object_spec.skip) == (views.view, True)
    (traversal,) = object_spec.selectSet
    assert (traversal.name, traversal.path, traversal.skip, traversal.type) == (
        "view",
        "view",
        False,
        vim.view.ContainerView,
    )
    assert [(p.type, list(p.pathSet), p.all) for p in spec.propSet] == [
        (vim.HostSystem, ["name", "runtime.connectionState"], False),
        (vim.VirtualMachine, ["name"], False),
    ]


def test_the_view_is_destroyed_when_the_read_fails() -> None:
    class Failing:
        def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
            raise vim.fault.NoPermission(privilegeId="System.View")

    views = _ViewManager()
    content = SimpleNamespace(propertyCollector=Failing(), viewManager=views, rootFolder="r")
    try:
        retrieve(content, {vim.HostSystem: ["name"]})
    except vim.fault.NoPermission:
        pass
    else:
        raise AssertionError("the fault was swallowed")
    assert views.view.destroyed


def test_chosen_objects_read_again_without_the_deleted_ones() -> None:
    collector = _Collector(
        [[_content(vim.VirtualMachine("vm-1"), {"config.hardware.device": []})]],
        gone=["vm-2", "vm-3"],
    )
    content = SimpleNamespace(propertyCollector=collector)
    heard: list[tuple[int, int]] = []
    found = retrieve_objects(
        content,
        vim.VirtualMachine,
        ["vm-1", "vm-2", "vm-1", "vm-3"],
        ["config.hardware.device", "config.extraConfig", "config.hardware.device"],
        page_size=7,
        on_page=lambda objects, pages: heard.append((objects, pages)),
    )
    assert list(found) == ["vm-1"]
    assert heard == [(1, 1)]
    asked = [
        ([(o.obj._moId, o.skip) for o in specs[0].objectSet], size)
        for _, (specs, size) in collector.calls
    ]
    assert asked == [
        ([("vm-1", False), ("vm-2", False), ("vm-3", False)], 7),
        ([("vm-1", False), ("vm-3", False)], 7),
        ([("vm-1", False)], 7),
    ]
    specs = collector.calls[0][1][0]
    assert [(p.type, list(p.pathSet), p.all) for p in specs[0].propSet] == [
        (vim.VirtualMachine, ["config.extraConfig", "config.hardware.device"], False)
    ]
    assert all(o.obj._stub == "stub" for o in specs[0].objectSet)


def test_nothing_asked_for_nothing_and_a_stranger_or_endless_deletions_raise() -> None:
    collector = _Collector([])
    assert (
        retrieve_objects(
            SimpleNamespace(propertyCollector=collector), vim.VirtualMachine, [], ["name"]
        )
        == {}
    )
    assert collector.calls == []
    # No answer at all: nothing found.
    collector = _Collector([])
    found = retrieve_objects(
        SimpleNamespace(propertyCollector=collector), vim.VirtualMachine, ["vm-1"], ["name"]
    )
    assert found == {}

    def raises(gone: list[str], wanted: list[str]) -> bool:
        collector = _Collector([[]], gone=gone)
        try:
            retrieve_objects(
                SimpleNamespace(propertyCollector=collector), vim.VirtualMachine, wanted, ["name"]
            )
        except vmodl.fault.ManagedObjectNotFound:
            return True
        return False

    # Eleven deletions are stepped round only up to ten.
    many = [f"vm-{i}" for i in range(12)]
    assert not raises(many[:10], many)
    assert raises(many[:11], many)

    class Stranger(_Collector):
        def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
            raise vmodl.fault.ManagedObjectNotFound(obj=vim.VirtualMachine("vm-9"))

    class Nameless(_Collector):
        def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
            fault = vmodl.fault.ManagedObjectNotFound(obj=vim.VirtualMachine("vm-1"))
            object.__setattr__(fault, "obj", None)  # a fault that names no object
            raise fault

    for cls in (Stranger, Nameless):
        try:
            retrieve_objects(
                SimpleNamespace(propertyCollector=cls([])), vim.VirtualMachine, ["vm-1"], ["n"]
            )
        except vmodl.fault.ManagedObjectNotFound:
            pass
        else:
            raise AssertionError(cls.__name__)


def test_a_second_read_folds_into_the_first() -> None:
    found = {
        "vm-1": ObjectProps("vm-1", "VirtualMachine", {"name": "a"}, {"datastore": "NoPermission"})
    }
    more = {
        "vm-2": ObjectProps("vm-2", "VirtualMachine", {"name": "b"}),
        "vm-1": ObjectProps("vm-1", "VirtualMachine", {"config.hardware.device": []}, {"x": "?"}),
    }
    merge_into(found, more)
    assert found == {
        "vm-1": ObjectProps(
            "vm-1",
            "VirtualMachine",
            {"name": "a", "config.hardware.device": []},
            {"datastore": "NoPermission", "x": "?"},
        ),
        "vm-2": ObjectProps("vm-2", "VirtualMachine", {"name": "b"}),
    }


def test_names_references_and_defaults() -> None:
    assert unescape_name("a%2fb%5Cc%25d%2Fe%41") == "a/b\\c%d/e%41"
    assert unescape_name("%252f") == "%2f"
    obj = ObjectProps("host-1", "HostSystem", {"name": "", "n": None, "z": 0})
    assert obj.name == "host-1"
    assert (obj.get("n", 5), obj.get("z", 5), obj.get("absent")) == (5, 0, None)
    assert ObjectProps("host-2", "HostSystem").name == "host-2"
    assert (moref(vim.HostSystem("host-7")), kind(vim.HostSystem("host-7"))) == (
        "host-7",
        "HostSystem",
    )


def test_each_object_is_slimmed_as_its_page_arrives_and_the_page_freed() -> None:
    pages = [
        [_content(vim.HostSystem("host-1"), {"name": "esx-01", "big": [1, 2, 3]})],
        [_content(vim.VirtualMachine("vm-1"), {"name": "vm-a"})],
    ]
    told: list[tuple[str, list[str]]] = []

    def slim(obj: ObjectProps) -> None:
        told.append((obj.moref, sorted(obj.props)))
        obj.props.pop("big", None)

    content = SimpleNamespace(
        propertyCollector=_Collector(pages), viewManager=_ViewManager(), rootFolder="root"
    )
    heard: list[int] = []
    with gc_paused():
        found = retrieve(
            content,
            {vim.HostSystem: ["name", "big"], vim.VirtualMachine: ["name"]},
            on_page=lambda objects, pages: heard.append(gc.get_count()[0]),
            slim={"HostSystem": slim},
        )
    assert told == [("host-1", ["big", "name"])]
    assert found["host-1"].props == {"name": "esx-01"}
    assert found["vm-1"].props == {"name": "vm-a"}
    # The youngest generation was collected after each page, with the collector paused.
    assert heard == [0, 0]
