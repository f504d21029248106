"""Rows of a sheet kept in a temporary file instead of memory.

A fleet scan merges every target's Findings, Clusters, Hosts, GPUs and VMs sheets
into its own workbook, written when the last target is done. Holding each finished
target's whole audit until then made the fleet's peak memory the sum of its
targets' audits (two configuration-maximum vCenters held some 2 GiB); a target's
sheet rows are spooled here as soon as it finishes, and its audit is dropped.

The standard library has no on-disk list (``shelve`` keys by string and pickles per
key; ``tempfile.SpooledTemporaryFile`` holds bytes, not rows), so this is a small
one: rows pickled in chunks to an unnamed temporary file, read back a chunk at a
time. Sheet writers read rows in order (iteration, a leading slice, the row before),
so one decoded chunk is kept and a read in order costs one pass over the file.

A fleet scans each target in a process of its own (gpuaudit.jobs.fleet), which spools its
rows and hands them to the fleet's process: rows spooled into a named ``directory``
cross a process boundary by pickling, as the file's name and where its chunks start;
the process that unpickles them opens the file and removes its name, so from then on
it is as unnamed as the default.
"""

from __future__ import annotations

import itertools
import os
import pickle
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any, overload

CHUNK = 2000  # rows pickled together: large enough to pickle fast, small to hold


class _Rows(Sequence[list[Any]]):
    """Indexing shared by the row sequences: a slice is its rows in a list, a negative
    index counts from the end, and ``_row`` reads one row by its index."""

    def _row(self, index: int) -> list[Any]:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> list[Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[Any]]: ...

    def __getitem__(self, index: int | slice) -> list[Any] | list[list[Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._row(index)


class SpooledRows(_Rows):
    """A read-only sequence of rows stored in a temporary file (deleted on close)."""

    def __init__(self, rows: Iterable[list[Any]], directory: str | None = None) -> None:
        # Kept open for the rows' lifetime; closed by close() or when collected.
        self._file: IO[bytes]
        self._path: str | None = None  # the file's name while another process may read it
        if directory is None:
            self._file = tempfile.TemporaryFile(prefix="gpuaudit-rows-")  # noqa: SIM115
        else:
            named = tempfile.NamedTemporaryFile(  # noqa: SIM115
                prefix="gpuaudit-rows-", dir=directory, delete=False
            )
            self._file, self._path = named, named.name
        self._offsets: list[int] = []  # where each chunk starts in the file
        self._length = 0
        source = iter(rows)
        while chunk := list(itertools.islice(source, CHUNK)):
            self._offsets.append(self._file.tell())
            pickle.dump(chunk, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._length += len(chunk)
        self._file.flush()
        self._cached: tuple[int, list[list[Any]]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        if self._path is None:
            raise TypeError("rows spooled to an unnamed file cannot leave their process")
        return {"path": self._path, "offsets": self._offsets, "length": self._length}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._file = open(state["path"], "rb")  # noqa: SIM115  (kept open, as above)
        os.unlink(state["path"])  # this process owns the rows now
        self._path = None
        self._offsets = state["offsets"]
        self._length = state["length"]
        self._cached = None

    def _chunk(self, number: int) -> list[list[Any]]:
        if self._cached is None or self._cached[0] != number:
            self._file.seek(self._offsets[number])
            self._cached = (number, pickle.load(self._file))  # our own file, written above
        return self._cached[1]

    def __len__(self) -> int:
        return self._length

    def _row(self, index: int) -> list[Any]:
        return self._chunk(index // CHUNK)[index % CHUNK]

    def __iter__(self) -> Iterator[list[Any]]:
        for number in range(len(self._offsets)):
            yield from self._chunk(number)

    def close(self) -> None:
        self._file.close()


class ChainedRows(_Rows):
    """Several row sequences read as one, in order (the fleet's targets, one after another)."""

    def __init__(self, parts: Sequence[Sequence[list[Any]]]) -> None:
        self._parts = list(parts)
        self._starts = list(itertools.accumulate((len(p) for p in self._parts), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    def _row(self, index: int) -> list[Any]:
        part = next(p for p in range(len(self._parts)) if index < self._starts[p + 1])
        return self._parts[part][index - self._starts[part]]

    def __iter__(self) -> Iterator[list[Any]]:
        for part in self._parts:
            yield from part
