"""The summaries under bench/results/ that ``bench.run --before`` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import summary

ROOT = Path(__file__).resolve().parents[2]


def test_the_transcribed_maximum_run_carries_the_recorded_figures() -> None:
    # The figures docs/performance.md recorded for the one run at commit d144835.
    earlier = summary.load(ROOT / "bench" / "results" / "d144835.json")
    assert earlier["commit"] == "d144835" and "transcribed" in earlier["source"]
    (scale,) = earlier["scales"]
    assert (scale["label"], scale["hosts"], scale["vms"]) == ("max", 2500, 45000)
    assert (scale["floor_s"], scale["collect_s"], scale["scan_s"]) == (44.56, 39.06, 97.41)
    assert (scale["scan_vs_floor"], scale["peak_rss_mib"]) == (2.19, 1674)
    assert (scale["requests"], scale["pages"], scale["mb_received"]) == (209, 181, 248.6)
    assert scale["phases_s"] == {
        "check": 28.0,
        "html": 4.7,
        "xlsx": 13.5,
        "json": 12.1,
        "junit": 2.4,
        "sarif": 1.9,
    }


def test_raw_measurements_are_not_a_summary(tmp_path: Path) -> None:
    raw = tmp_path / "raw.json"
    raw.write_text(json.dumps({"report": {"scales": []}, "raw": {}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a bench\.run summary"):
        summary.load(raw)
