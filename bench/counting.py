"""Count what goes over the wire: SOAP requests by operation, and bytes received.

pyVmomi binds ``HTTPConnection`` when it is imported (gpuaudit/vsphere/cassette.py says
why), so the counting connection is patched into ``pyVmomi.SoapAdapter``, where
both pyVmomi's stub and gpuaudit's version negotiation look it up. Bytes are
counted as they leave the socket's file object: status line, headers, chunk
framing and body, i.e. what a client really reads.
"""

from __future__ import annotations

import collections
import http.client
import re
from dataclasses import dataclass, field
from typing import Any

import pyVmomi.SoapAdapter

_OPERATION = re.compile(rb"<(?:[\w-]+:)?Body[^>]*>\s*<(?:[\w-]+:)?([A-Za-z]\w*)")
PAGE_OPERATION = "ContinueRetrievePropertiesEx"
# QueryPerf calls after the first are pages of one query: the server's
# maxQueryMetrics decides how many hosts each carries.
PAGED_QUERY = "QueryPerf"
# QueryConfigTarget asks for vCenter's description of the vGPU profiles (and its stun
# time estimates) once per (vGPU cluster, ESXi build, GPU model): it grows with the
# clusters, not with the VMs, and is counted beside the pages, not in the fixed bound.
PER_GROUP_CALL = "QueryConfigTarget"
# Once per vGPU host, counted beside the pages too: on vSphere 9.0 QueryCapacity (on
# the wire DirectPathProfileManagerQueryCapacity), and the host's installed software,
# where alone vSphere reports the NVIDIA vGPU manager's version
# (gpuaudit/vsphere/collect/software.py).
PER_HOST_CALL = "DirectPathProfileManagerQueryCapacity"
SOFTWARE_CALL = "fetchSoftwarePackages"


@dataclass
class Traffic:
    operations: collections.Counter[str] = field(default_factory=collections.Counter)
    bytes_received: int = 0
    bytes_sent: int = 0

    def snapshot(self) -> Traffic:
        return Traffic(collections.Counter(self.operations), self.bytes_received, self.bytes_sent)

    def since(self, earlier: Traffic) -> dict[str, Any]:
        ops = self.operations - earlier.operations
        soap = {k: v for k, v in ops.items() if not k.startswith("GET ")}
        pages = soap.get(PAGE_OPERATION, 0) + max(0, soap.get(PAGED_QUERY, 0) - 1)
        per_group = soap.get(PER_GROUP_CALL, 0)
        per_host = soap.get(PER_HOST_CALL, 0)
        software = soap.get(SOFTWARE_CALL, 0)
        return {
            "soap_requests": sum(soap.values()),
            "pages": pages,
            "stun_estimate_calls": per_group,
            "capacity_calls": per_host,
            "software_calls": software,
            "requests_less_pages": sum(soap.values()) - pages - per_group - per_host - software,
            "http_gets": sum(v for k, v in ops.items() if k.startswith("GET ")),
            "bytes_received": self.bytes_received - earlier.bytes_received,
            "bytes_sent": self.bytes_sent - earlier.bytes_sent,
            "operations": dict(sorted(ops.items())),
        }


TRAFFIC = Traffic()


class _CountingReader:
    """The response's file object, counting every byte read from it."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def _count(self, data: bytes) -> bytes:
        TRAFFIC.bytes_received += len(data)
        return data

    def read(self, *args: Any) -> bytes:
        return self._count(self._raw.read(*args))

    def read1(self, *args: Any) -> bytes:
        return self._count(self._raw.read1(*args))

    def readline(self, *args: Any) -> bytes:
        return self._count(self._raw.readline(*args))

    def readinto(self, buffer: Any) -> int:
        n: int = self._raw.readinto(buffer)
        TRAFFIC.bytes_received += n or 0
        return n

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _CountingResponse(http.client.HTTPResponse):
    def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp = _CountingReader(self.fp)  # type: ignore[assignment]


class CountingHTTPConnection(http.client.HTTPConnection):
    response_class = _CountingResponse

    def request(self, method: str, url: str, body: Any = None, *args: Any, **kwargs: Any) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        if method == "GET":
            TRAFFIC.operations[f"GET {url}"] += 1
        else:
            found = _OPERATION.search(data[:4096]) if isinstance(data, bytes) else None
            TRAFFIC.operations[found.group(1).decode() if found else f"{method} ?"] += 1
        TRAFFIC.bytes_sent += len(data)
        super().request(method, url, body, *args, **kwargs)


def install() -> None:
    """Count every plain-http connection that pyVmomi (and gpuaudit.vsphere.connect) opens.

    From now on, until the process ends.
    """
    pyVmomi.SoapAdapter.HTTPConnection = CountingHTTPConnection  # type: ignore[misc]
