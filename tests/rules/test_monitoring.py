"""MON-01 to MON-04 (rules/monitoring.py): exact messages and evidence, written out by hand.

healthy() gives h1..h3 one L4 each (PCI 0000:3b:00.0) and VMs v1..v3, one grid_l4-8q
(8192 MB of frame buffer) on each host's GPU.
"""

from __future__ import annotations

from gpuaudit.inventory import CounterStats, GpuTelemetry, HostTelemetry
from gpuaudit.model.policy import MonitoringPolicy, Policy
from gpuaudit.rules import monitoring
from gpuaudit.rules.registry import Outcome
from tests.rules.test_rule_units import _with_telemetry, first_gpu, judge
from tests.support.builders import Estate, context, healthy


def test_mon01_message_and_evidence_of_a_host_that_reports() -> None:
    e = _with_telemetry(healthy(), temperature_c=60)
    e.inv.telemetry.statistics_level, e.inv.telemetry.interval_s = 2, 300
    h1 = e.inv.hosts[0]
    h1.telemetry = HostTelemetry(status="reported", instances=["gpu0"], unmatched=["gpu7"])
    assert judge(monitoring.counters_reported, e.inv, h1) == Outcome(
        True,
        "1 of 1 GPUs report counters",
        {
            "status": "reported",
            "reason": "",
            "instances": ["gpu0"],
            "unmatched_instances": ["gpu7"],
            "gpus_without_counters": [],
            "statistics_level": 2,
            "interval_s": 300,
        },
    )


def test_mon01_names_the_gpus_that_stay_silent() -> None:
    e = _with_telemetry(healthy(), temperature_c=60)
    h1 = e.inv.hosts[0]
    e.gpu(h1)
    e.gpu(h1)
    outcome = judge(monitoring.counters_reported, e.inv, h1)
    silent = [f"h1/{g.pci_id}" for g in h1.gpus[1:]]
    assert outcome.passed
    assert outcome.message == f"1 of 3 GPUs report counters; none from {', '.join(silent)}"


def test_mon01_a_host_not_queried_or_without_a_reason() -> None:
    e = _with_telemetry(healthy(), temperature_c=60)
    h2, h3 = e.inv.hosts[1], e.inv.hosts[2]
    outcome = judge(monitoring.counters_reported, e.inv, h2)
    assert outcome.message == "no GPU counters: the host was not queried"
    assert outcome.evidence["status"] == "not queried"
    assert outcome.evidence["reason"] == ""
    assert outcome.evidence["instances"] == [] and outcome.evidence["unmatched_instances"] == []
    h3.telemetry = HostTelemetry(status="error", reason="")
    assert judge(monitoring.counters_reported, e.inv, h3).message == (
        "no GPU counters: the host was not queried"
    )
    h3.telemetry = HostTelemetry(status="none", reason="statistics level 1")
    outcome = judge(monitoring.counters_reported, e.inv, h3)
    assert (outcome.passed, outcome.message) == (False, "no GPU counters: statistics level 1")


def test_mon01_fails_a_host_whose_counters_match_none_of_its_gpus() -> None:
    e = _with_telemetry(healthy(), temperature_c=60)
    e.inv.telemetry.statistics_level, e.inv.telemetry.interval_s = 4, 300
    h1 = e.inv.hosts[0]
    e.gpu(h1)
    for gpu in h1.gpus:
        gpu.telemetry = None
    h1.telemetry = HostTelemetry(
        status="reported", instances=["000:024:00.0", "gpu5"], unmatched=["000:024:00.0", "gpu5"]
    )
    silent = [f"h1/{g.pci_id}" for g in h1.gpus]
    assert judge(monitoring.counters_reported, e.inv, h1) == Outcome(
        False,
        "no GPU counters: none of the 2 counter instances (000:024:00.0, gpu5) matches one "
        "of the 2 GPUs",
        {
            "status": "reported",
            "reason": "",
            "instances": ["000:024:00.0", "gpu5"],
            "unmatched_instances": ["000:024:00.0", "gpu5"],
            "gpus_without_counters": silent,
            "statistics_level": 4,
            "interval_s": 300,
        },
    )
    # One GPU of the two matched is enough to pass.
    h1.gpus[1].telemetry = GpuTelemetry(instance="gpu5", matched_by="order")
    outcome = judge(monitoring.counters_reported, e.inv, h1)
    assert (outcome.passed, outcome.message) == (
        True,
        f"1 of 2 GPUs report counters; none from h1/{h1.gpus[0].pci_id}",
    )


def _peaks(e: Estate, **peaks: float) -> Estate:
    stats = {name: CounterStats(average, peak, 288) for name, (average, peak) in peaks.items()}
    e.inv.hosts[0].gpus[0].telemetry = GpuTelemetry(instance="gpu0", matched_by="only", **stats)
    return e


def test_mon02_messages_and_evidence() -> None:
    e = _peaks(_with_telemetry(healthy()), temperature_c=(61.5, 85.5))
    outcome = judge(monitoring.temperature, e.inv, first_gpu(e.inv))
    assert outcome == Outcome(
        False,
        "peak 85.5 °C over 24 h, above the 85 °C threshold",
        {"peak_c": 85.5, "average_c": 61.5, "limit_c": 85.0},
    )
    cool = context(e.inv, Policy(monitoring=MonitoringPolicy(max_temperature_c=90)))
    passed = monitoring.temperature(cool, first_gpu(e.inv))
    assert passed is not None
    assert passed.message == "peak 85.5 °C over 24 h, within the 90 °C threshold"


def test_the_window_is_told_in_hours_up_to_two_days() -> None:
    e = _peaks(_with_telemetry(healthy()), temperature_c=(50, 60))
    e.inv.telemetry.window_hours = 47.5
    assert "over 47.5 h," in judge(monitoring.temperature, e.inv, first_gpu(e.inv)).message
    e.inv.telemetry.window_hours = 48
    assert "over 2 days," in judge(monitoring.temperature, e.inv, first_gpu(e.inv)).message
    e.inv.telemetry.window_hours = 168
    assert "over 7 days," in judge(monitoring.temperature, e.inv, first_gpu(e.inv)).message


def test_mon03_messages_and_evidence() -> None:
    e = _peaks(_with_telemetry(healthy()), utilization_percent=(1.5, 4.5))
    outcome = judge(monitoring.idle, e.inv, first_gpu(e.inv))
    assert outcome == Outcome(
        False,
        "utilisation never reached 5 % over 24 h (peak 4.5 %): reclaim it, or count it as "
        "buffer capacity",
        {"peak_percent": 4.5, "average_percent": 1.5, "limit_percent": 5.0, "vms": ["v1"]},
    )
    e = _peaks(_with_telemetry(healthy()), utilization_percent=(2, 5))
    outcome = judge(monitoring.idle, e.inv, first_gpu(e.inv))
    assert (outcome.passed, outcome.message) == (True, "utilisation peaked at 5 % over 24 h")


def test_mon04_messages_and_evidence() -> None:
    e = _peaks(_with_telemetry(healthy()), memory_used_mb=(1000, 4096))
    outcome = judge(monitoring.framebuffer, e.inv, first_gpu(e.inv))
    assert outcome == Outcome(
        False,
        "memory use peaked at 4,096 MB of 8,192 MB allocated to vGPUs (50 %): smaller "
        "profiles would raise density",
        {
            "allocated_mb": 8192,
            "peak_used_mb": 4096,
            "profiles": ["grid_l4-8q"],
            "ratio_limit": 2.0,
        },
    )
    e = _peaks(_with_telemetry(healthy()), memory_used_mb=(1000, 6144))
    outcome = judge(monitoring.framebuffer, e.inv, first_gpu(e.inv))
    assert (outcome.passed, outcome.message) == (
        True,
        "memory use peaked at 6,144 MB of 8,192 MB allocated to vGPUs (75 %)",
    )


def test_mon04_a_vm_on_two_gpus_counts_half_on_each() -> None:
    e = _peaks(_with_telemetry(healthy()), memory_used_mb=(1000, 6000))
    h1 = e.inv.hosts[0]
    second = e.gpu(h1)
    second.vms.append("v1")
    assert monitoring.allocated_mb(context(e.inv), h1, h1.gpus[0]) == (4096, ["grid_l4-8q"])
    h1.gpus[0].vms.append("not-a-vm")
    assert monitoring.allocated_mb(context(e.inv), h1, h1.gpus[0]) == (4096, ["grid_l4-8q"])


def test_mon04_adds_up_every_vgpu_on_the_gpu() -> None:
    e = _peaks(_with_telemetry(healthy()), memory_used_mb=(1000, 6000))
    h1 = e.inv.hosts[0]
    e.vm("v4", h1, ["san1"], vgpu="grid_l4-4q")
    # a name the GPU lists first but the inventory lacks skips only itself
    h1.gpus[0].vms.insert(0, "not-a-vm")
    # grid_l4-8q (8192 MB) and grid_l4-4q (4096 MB)
    assert monitoring.allocated_mb(context(e.inv), h1, h1.gpus[0]) == (
        12_288,
        ["grid_l4-4q", "grid_l4-8q"],
    )


def test_mon01_evidence_keeps_the_reason_the_host_gave() -> None:
    e = _with_telemetry(healthy(), temperature_c=60)
    e.inv.telemetry.statistics_level, e.inv.telemetry.interval_s = 1, 300
    h2 = e.inv.hosts[1]
    h2.telemetry = HostTelemetry(status="none", reason="statistics level 1")
    assert judge(monitoring.counters_reported, e.inv, h2) == Outcome(
        False,
        "no GPU counters: statistics level 1",
        {
            "status": "none",
            "reason": "statistics level 1",
            "instances": [],
            "unmatched_instances": [],
            "gpus_without_counters": ["h2/0000:3b:00.0"],
            "statistics_level": 1,
            "interval_s": 300,
        },
    )


def test_a_counter_the_gpu_did_not_report_is_not_judged() -> None:
    # h1's GPU reported its temperature only: nothing to say of its utilisation or memory
    e = _with_telemetry(healthy(), temperature_c=60)
    gpu = first_gpu(e.inv)
    assert monitoring.idle(context(e.inv), gpu) is None
    assert monitoring.framebuffer(context(e.inv), gpu) is None
