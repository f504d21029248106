"""Sheet rows spooled to a temporary file read back as the list they were."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from gpuaudit.report import spool
from gpuaudit.report.spool import ChainedRows, SpooledRows


def rows(n: int, tag: str = "r") -> list[list[object]]:
    return [
        [
            f"{tag}{i}",
            i,
            i / 2,
            i % 2 == 0,
            None,
            date(2026, 12, 4),
            datetime(2026, 12, 4, tzinfo=UTC),
        ]
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "n", [0, 1, spool.CHUNK - 1, spool.CHUNK, spool.CHUNK + 1, 3 * spool.CHUNK + 7]
)
def test_spooled_rows_read_back_as_written(n: int) -> None:
    want = rows(n)
    got = SpooledRows(iter(want))  # any iterable, read once
    assert len(got) == n
    assert list(got) == want
    assert list(got) == want  # and again
    assert got[:500] == want[:500]
    assert got[n // 2 :] == want[n // 2 :]
    for i in (0, n // 2, n - 1, -1, -n):
        if -n <= i < n:
            assert got[i] == want[i]
    for i in (n, -n - 1):
        with pytest.raises(IndexError):
            got[i]
    got.close()


def test_each_row_before_the_next_is_read_as_a_sheet_writer_reads_them() -> None:
    want = rows(2 * spool.CHUNK + 3)
    got = SpooledRows(want)
    assert all(got[i - 1] == want[i - 1] and got[i] == want[i] for i in range(1, len(want)))


def test_chained_rows_are_the_parts_one_after_another() -> None:
    parts = [rows(3, "a"), rows(0, "b"), rows(spool.CHUNK + 2, "c"), rows(1, "d")]
    chained = ChainedRows([SpooledRows(p) for p in parts])
    want = [row for part in parts for row in part]
    assert len(chained) == len(want)
    assert list(chained) == want
    assert chained[:10] == want[:10]
    assert [chained[i] for i in range(len(want))] == want
    assert chained[-1] == want[-1] and chained[-len(want)] == want[0]
    with pytest.raises(IndexError):
        chained[len(want)]
    assert list(ChainedRows([])) == [] and len(ChainedRows([])) == 0


def test_rows_spooled_in_a_folder_cross_to_another_process(tmp_path: Path) -> None:
    import multiprocessing
    import pickle

    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)

    def child() -> None:
        writer.send(SpooledRows(rows(2 * spool.CHUNK + 3, "c"), str(tmp_path)))

    process = context.Process(target=child)
    process.start()
    received = reader.recv()
    process.join()
    assert process.exitcode == 0
    assert list(received) == rows(2 * spool.CHUNK + 3, "c")
    assert received[-1][0] == f"c{2 * spool.CHUNK + 2}"
    # The receiver owns the rows: the file's name is gone, its rows are still read.
    assert list(tmp_path.iterdir()) == []
    assert len(received) == 2 * spool.CHUNK + 3
    # Rows in an unnamed file stay in their process.
    with pytest.raises(TypeError, match="cannot leave their process"):
        pickle.dumps(SpooledRows(rows(3)))
