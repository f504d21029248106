"""Pseudonyms for the names in a recorded cassette, for support cases.

Every entity name (datacenter, cluster, host, VM, datastore, folder) and the
login's user name are replaced by a stable pseudonym: the same name always maps
to the same pseudonym, so the findings of a replay line up with the live scan's.
Names are numbered in sorted order within their kind (``host-003``), which
keeps one estate's pseudonyms the same from one recording to the next.

Only name-bearing elements are rewritten (a ``name`` property's value, a
``<name>`` field, the session's user), never property paths or other values, so
a VM called ``poweredOn`` cannot corrupt the session.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import yaml

from gpuaudit.vsphere.collect.retrieve import unescape_name

_PREFIX = {
    "Datacenter": "datacenter",
    "ClusterComputeResource": "cluster",
    "HostSystem": "host",
    "ComputeResource": "host",  # a standalone host's compute resource bears its name
    "VirtualMachine": "vm",
    "Datastore": "datastore",
    "Folder": "folder",
}
_ORDER = list(_PREFIX)
# The folders every datacenter has: their names identify nothing, and as words
# ("host", "vm") they are better left alone.
_DEFAULT_FOLDERS = {"Datacenters", "host", "vm", "datastore", "network"}

_OBJECT = re.compile(r"<objects>(.*?)</objects>", re.S)
_OBJ_TYPE = re.compile(r'<obj type="([^"]+)">')
_NAME_PROP = re.compile(r"(<propSet><name>name</name><val[^>]*>)([^<]*)(</val>)")
_NAME_FIELD = re.compile(r"(?<!<propSet>)(<name>)([^<]*)(</name>)")
_DISPLAY_NAME = re.compile(r"(<entityDisplayName>)([^<]*)(</entityDisplayName>)")
_FILE_NAME = re.compile(r"(<fileName>)\[([^\]<]*)\] ?([^<]*)(</fileName>)")
_USER = re.compile(r"(<(userName|fullName)(?: [^>]*)?>)[^<]*(</\2>)")


def _escape(name: str) -> str:
    """A real name as vCenter sends it: %-escaped separators, then XML-escaped."""
    served = name.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")
    return html.escape(served, quote=False)


def _real(text: str) -> str:
    return unescape_name(html.unescape(text))


def collect_names(bodies: list[str]) -> dict[str, str]:
    """Every entity name in the recorded responses, mapped to its pseudonym."""
    by_kind: dict[str, set[str]] = {}
    for body in bodies:
        for obj in _OBJECT.finditer(body):
            found_type = _OBJ_TYPE.search(obj.group(1))
            found_name = _NAME_PROP.search(obj.group(1))
            if found_type and found_name and found_type.group(1) in _PREFIX:
                by_kind.setdefault(found_type.group(1), set()).add(_real(found_name.group(2)))
    mapping: dict[str, str] = {}
    counters: dict[str, int] = {}
    by_kind["Folder"] = by_kind.get("Folder", set()) - _DEFAULT_FOLDERS
    for kind in _ORDER:
        for name in sorted(by_kind.get(kind, ())):
            if name in mapping:
                continue
            prefix = _PREFIX[kind]
            counters[prefix] = counters.get(prefix, 0) + 1
            mapping[name] = f"{prefix}-{counters[prefix]:03d}"
    return mapping


def rewrite(body: str, mapping: dict[str, str]) -> str:
    """``body`` with every mapped name in a name-bearing element replaced."""

    def swap(match: re.Match[str]) -> str:
        pseudonym = mapping.get(_real(match.group(2)))
        if pseudonym is None:
            return match.group(0)
        return match.group(1) + _escape(pseudonym) + match.group(3)

    body = _NAME_PROP.sub(swap, body)
    body = _NAME_FIELD.sub(swap, body)
    body = _DISPLAY_NAME.sub(swap, body)  # licence assignments name their host
    body = _FILE_NAME.sub(lambda m: _file_name(m, mapping), body)
    if "LoginResponse" in body or "<Login " in body or "<Login>" in body:
        # The session's user (its fullName is the user's, unlike about.fullName).
        body = _USER.sub(lambda m: m.group(1) + "user" + m.group(3), body)
    return body


def _file_name(match: re.Match[str], mapping: dict[str, str]) -> str:
    """``[datastore] vm/vm.vmdk``: the datastore and every name in the path."""
    datastore = _real(match.group(2))
    path = html.unescape(match.group(3))
    for name in sorted(mapping, key=len, reverse=True):
        if name and name in path:
            path = path.replace(name, mapping[name])
    new = f"[{_escape(mapping.get(datastore, datastore))}] {html.escape(path, quote=False)}"
    return match.group(1) + new + match.group(4)


def anonymize_cassette(path: str | Path) -> dict[str, str]:
    """Rewrite the cassette at ``path`` in place; return the name -> pseudonym mapping."""
    file = Path(path)
    data: Any = yaml.safe_load(file.read_text(encoding="utf-8"))
    responses = [i["response"]["body"] for i in data["interactions"]]
    bodies = [_text(b.get("string")) for b in responses]
    mapping = collect_names(bodies)
    for holder, body in zip(responses, bodies, strict=True):
        if body:
            holder["string"] = rewrite(body, mapping)
    for interaction in data["interactions"]:
        request = interaction["request"]
        if request.get("body"):
            request["body"] = rewrite(_text(request["body"]), mapping)
    file.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return mapping


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return value or ""
