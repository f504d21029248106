"""Reading a what-if change file (docs/plan.md, "What-if") into gpuaudit.plan.whatif changes.

Strict as the policy file: an unknown key, a wrong type or a second kind of change in
one item raises ChangeFileError naming the file and line. Names (clusters, hosts, VMs)
are checked when the changes are applied to an inventory: ``ChangeSet.where`` gives the
line of the key a ChangeError is about, so that it too is told as file:line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from gpuaudit.common.yamlread import InputFileError, InputModel, Text, YamlReader, problem
from gpuaudit.plan import whatif

CHANGES_VERSION = 1


class ChangeFileError(InputFileError):
    """A change file that cannot be used; the message names the file and line."""


def _version(value: Any) -> Any:
    if type(value) is not int or value != CHANGES_VERSION:
        raise problem(f"expected {CHANGES_VERSION}")
    return value


def _one_of(*allowed: str) -> Any:
    def check(value: str) -> str:
        if value not in allowed:
            raise problem(f"expected one of {', '.join(allowed)}")
        return value

    return AfterValidator(check)


Version = Annotated[int, BeforeValidator(_version)]
Names = Annotated[list[Text], Field(min_length=1)]


class AddHostsEntry(InputModel):
    cluster: Text
    count: int = Field(default=1, ge=1, le=64)
    like: Text | None = None
    gpu_model: Text | None = None
    gpus: int | None = Field(default=None, ge=0, le=16)
    memory_gb: int | None = Field(default=None, ge=1, le=64 * 1024)
    vgpu_mode: Annotated[Text, _one_of(*whatif.VGPU_MODES)] | None = None
    profiles: list[Text] | None = None
    name: Text = whatif.NEW_HOST_NAME


class RetireHostsEntry(InputModel):
    hosts: Names


class MoveVmEntry(InputModel):
    vm: Text
    host: Text


class SetProfileEntry(InputModel):
    vm: Text
    profile: Text


class SetVgpuModeEntry(InputModel):
    mode: Annotated[Text, _one_of(*whatif.VGPU_MODES)]
    cluster: Text | None = None
    hosts: list[Text] = Field(default_factory=list)
    gpu: Text | None = None

    @model_validator(mode="after")
    def _where(self) -> SetVgpuModeEntry:
        if (self.cluster is None) == (not self.hosts):
            raise problem("give cluster or hosts, one of the two")
        return self


class AddDrsRuleEntry(InputModel):
    cluster: Text
    name: Text
    kind: Annotated[Text, _one_of(*whatif.RULE_KINDS)]
    vms: Names
    hosts: list[Text] = Field(default_factory=list)
    mandatory: bool = False
    affine: bool = True

    @model_validator(mode="after")
    def _hosts(self) -> AddDrsRuleEntry:
        if (self.kind == "vm-host") != bool(self.hosts):
            raise problem("a vm-host rule names hosts; the others do not")
        return self


class SetHaEntry(InputModel):
    cluster: Text
    enabled: bool | None = None
    host_monitoring: bool | None = None
    admission_control: bool | None = None
    failover_level: int | None = Field(default=None, ge=1, le=31)
    restart_priority: (
        Annotated[Text, _one_of("disabled", "lowest", "low", "medium", "high", "highest")] | None
    ) = None
    options: dict[Text, Text] = Field(default_factory=dict)


class SetDrsEntry(InputModel):
    cluster: Text
    enabled: bool | None = None
    automation: Annotated[Text, _one_of(*whatif.DRS_AUTOMATION)] | None = None
    options: dict[Text, Text] = Field(default_factory=dict)


class ChangeEntry(InputModel):
    """One change: exactly one of the keys below."""

    add_hosts: AddHostsEntry | None = None
    retire_hosts: RetireHostsEntry | None = None
    move_vm: MoveVmEntry | None = None
    set_profile: SetProfileEntry | None = None
    set_vgpu_mode: SetVgpuModeEntry | None = None
    add_drs_rule: AddDrsRuleEntry | None = None
    set_ha: SetHaEntry | None = None
    set_drs: SetDrsEntry | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ChangeEntry:
        given = [k for k in type(self).model_fields if getattr(self, k) is not None]
        if len(given) != 1:
            kinds = ", ".join(type(self).model_fields)
            raise problem(f"each change is exactly one of {kinds}")
        return self

    def kind(self) -> str:
        return next(k for k in type(self).model_fields if getattr(self, k) is not None)


class ChangeFile(InputModel):
    version: Version = CHANGES_VERSION
    description: Text = ""
    changes: Annotated[list[ChangeEntry], Field(min_length=1)]


@dataclass
class ChangeSet:
    """The changes of a file, and where each stands in it."""

    source: str
    changes: list[whatif.Change]
    kinds: list[str] = field(default_factory=list)  # each change's key, as written
    lines: list[dict[str, int]] = field(default_factory=list)  # per change: key -> line

    def where(self, error: whatif.ChangeError) -> ChangeFileError:
        """A ChangeError told as file:line: the line of the key it is about."""
        lines = self.lines[error.index] if error.index < len(self.lines) else {}
        line = lines.get(error.key, lines.get("", None))
        kind = self.kinds[error.index] if error.index < len(self.kinds) else "change"
        return ChangeFileError(
            self.source, line, f"changes[{error.index}].{kind}.{error.key}: {error.message}"
        )

    def described(self) -> list[str]:
        """Each change in one line, as the file gave it."""
        return [f"{kind}: {_said(c)}" for kind, c in zip(self.kinds, self.changes, strict=True)]


def _said(change: whatif.Change) -> str:
    parts = []
    for key, value in vars(change).items():
        if value is None or value == () or (key == "name" and value == whatif.NEW_HOST_NAME):
            continue
        if isinstance(value, tuple):
            if value and isinstance(value[0], tuple):
                value = ", ".join(f"{k}={v}" for k, v in value)
            else:
                value = ", ".join(value)
        parts.append(f"{key} {value}")
    return "; ".join(parts)


def load_changes(path: str | Path) -> ChangeSet:
    """The changes of the file at ``path``; raises ChangeFileError."""
    reader = _Reader(str(path))
    root = reader.read_file(path)
    if root is None:
        raise ChangeFileError(str(path), None, "empty: it needs a list of changes")
    return reader.document(root)


def parse_changes(text: str, source: str = "<changes>") -> ChangeSet:
    reader = _Reader(source)
    root = reader.parse(text)
    if root is None:
        raise ChangeFileError(source, None, "empty: it needs a list of changes")
    return reader.document(root)


class _Reader(YamlReader):
    error = ChangeFileError

    def document(self, root: yaml.Node) -> ChangeSet:
        file = self.validate(ChangeFile, root, "changes")
        out = ChangeSet(self.source, [])
        for i, entry in enumerate(file.changes):
            kind = entry.kind()
            out.kinds.append(kind)
            out.changes.append(_change(kind, getattr(entry, kind)))
            item = self.node_at(root, ["changes", i, kind])
            lines = {"": item.start_mark.line + 1}
            if isinstance(item, yaml.MappingNode):
                for key, value in item.value:
                    lines[str(key.value)] = value.start_mark.line + 1
            out.lines.append(lines)
        return out


def _change(kind: str, entry: Any) -> whatif.Change:
    data = entry.model_dump()
    for key, value in list(data.items()):
        if isinstance(value, list):
            data[key] = tuple(value)
        elif isinstance(value, dict):
            data[key] = tuple(sorted(value.items()))
    made: dict[str, type] = {
        "add_hosts": whatif.AddHosts,
        "retire_hosts": whatif.RetireHosts,
        "move_vm": whatif.MoveVm,
        "set_profile": whatif.SetProfile,
        "set_vgpu_mode": whatif.SetVgpuMode,
        "add_drs_rule": whatif.AddDrsRule,
        "set_ha": whatif.SetHa,
        "set_drs": whatif.SetDrs,
    }
    change: whatif.Change = made[kind](**data)
    return change
