"""gpuaudit.vsphere.collect.managers against a property collector faked by hand.

PerformanceManager's perfCounter and historicalInterval, LicenseManager's licenses
and licenseAssignmentManager: the API's property names, read in one
RetrievePropertiesEx; a withheld property comes back in missingSet with its fault.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.vsphere.collect.managers import ManagerProps, read_managers

PC = vmodl.query.PropertyCollector
PERF = vim.PerformanceManager("PerfMgr")
LICENCES = vim.LicenseManager("LicenseManager")


class _Collector:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[Any] = []

    def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
        self.asked.append((specSet, options))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def _content(answer: Any, perf: Any = PERF, licences: Any = LICENCES) -> Any:
    return SimpleNamespace(
        perfManager=perf, licenseManager=licences, propertyCollector=_Collector(answer)
    )


def _prop(name: str, value: Any) -> Any:
    return SimpleNamespace(name=name, val=value)


def test_both_managers_in_one_call_with_what_each_withheld() -> None:
    counters = [vim.PerformanceManager.CounterInfo(key=1)]
    # The answer's shape (RetrieveResult, ObjectContent) with plain objects: pyVmomi's
    # own would need typed arrays for the values.
    answer = SimpleNamespace(
        objects=[
            SimpleNamespace(
                obj=PERF,
                propSet=[_prop("perfCounter", counters)],
                missingSet=[
                    PC.MissingProperty(
                        path="historicalInterval",
                        fault=vim.fault.NoPermission(privilegeId="System.View"),
                    )
                ],
            ),
            SimpleNamespace(
                obj=LICENCES,
                propSet=[_prop("licenses", []), _prop("licenseAssignmentManager", None)],
                missingSet=[
                    SimpleNamespace(path="evaluation", fault=None),  # a fault not named
                ],
            ),
        ]
    )
    content = _content(answer)
    perf, licences = read_managers(content)
    assert (perf.values, perf.missing, perf.error) == (
        {"perfCounter": counters},
        {"historicalInterval": "NoPermission"},
        "",
    )
    assert (licences.values, licences.missing, licences.error) == (
        {"licenses": [], "licenseAssignmentManager": None},
        {"evaluation": "?"},
        "",
    )
    ((specs, options),) = content.propertyCollector.asked
    (spec,) = specs
    assert [(o.obj, o.skip) for o in spec.objectSet] == [(PERF, False), (LICENCES, False)]
    assert [(p.type, list(p.pathSet)) for p in spec.propSet] == [
        (vim.PerformanceManager, ["perfCounter", "historicalInterval"]),
        (vim.LicenseManager, ["licenses", "licenseAssignmentManager"]),
    ]
    assert isinstance(options, PC.RetrieveOptions)


def test_one_manager_only_and_none_at_all() -> None:
    content = _content(SimpleNamespace(objects=[]), perf=None)
    read_managers(content)
    ((specs, _),) = content.propertyCollector.asked
    assert [o.obj for o in specs[0].objectSet] == [LICENCES]
    assert [p.type for p in specs[0].propSet] == [vim.LicenseManager]
    content = _content(SimpleNamespace(objects=[]), licences=None)
    read_managers(content)
    ((specs, _),) = content.propertyCollector.asked
    assert [o.obj for o in specs[0].objectSet] == [PERF]
    assert [p.type for p in specs[0].propSet] == [vim.PerformanceManager]
    content = _content(SimpleNamespace(objects=[]), perf=None, licences=None)
    perf, licences = read_managers(content)
    assert content.propertyCollector.asked == []
    assert (perf.values, licences.values, perf.error, licences.error) == ({}, {}, "", "")
    perf, licences = read_managers(_content(None))
    assert (perf.values, licences.values) == ({}, {})


def test_a_failed_call_is_an_error_on_both() -> None:
    perf, licences = read_managers(_content(vim.fault.NoPermission(privilegeId="System.View")))
    assert (perf.error, licences.error) == ("NoPermission", "NoPermission")
    assert (perf.values, licences.values, perf.missing, licences.missing) == ({}, {}, {}, {})


def test_a_missing_or_unset_value_reads_as_the_default() -> None:
    props = ManagerProps()
    props.values = {"licenses": None, "perfCounter": []}
    assert props.get("licenses", "default") == "default"
    assert props.get("absent") is None
    assert props.get("perfCounter", "default") == []
