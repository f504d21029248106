"""Monitoring rules: does every GPU report its counters, and what do they say?

They read the GPU telemetry the collector summarised over its window (average
and peak per counter). An inventory collected before telemetry existed has none:
the rules then examine nothing rather than fail every host.
"""

from __future__ import annotations

from gpuaudit.inventory import Gpu, Host
from gpuaudit.knowledge import catalog
from gpuaudit.model import facts as F
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, rule
from gpuaudit.rules.scopes import HostGpu


def _window(ctx: Context) -> str:
    hours = ctx.facts.inventory.telemetry.window_hours
    return f"{hours:g} h" if hours < 48 else f"{hours / 24:g} days"


def _peak(gpu: Gpu, field: str) -> float | None:
    """The GPU's peak for ``field`` (a GpuTelemetry counter); None when it has none."""
    stats = getattr(gpu.telemetry, field, None) if gpu.telemetry else None
    return stats.peak if stats is not None else None


def counters_reported(ctx: Context, host: Host) -> Outcome | None:
    inv = ctx.facts.inventory
    if not inv.telemetry.collected or not host.gpus:
        return None
    tel = host.telemetry
    silent = [F.gpu_name(host, g) for g in host.gpus if g.telemetry is None]
    # Counters that match none of the host's GPUs tell nothing of them.
    ok = tel is not None and tel.status == "reported" and len(silent) < len(host.gpus)
    evidence = {
        "status": tel.status if tel else "not queried",
        "reason": tel.reason if tel else "",
        "instances": tel.instances if tel else [],
        "unmatched_instances": tel.unmatched if tel else [],
        "gpus_without_counters": silent,
        "statistics_level": inv.telemetry.statistics_level,
        "interval_s": inv.telemetry.interval_s,
    }
    if ok:
        message = f"{len(host.gpus) - len(silent)} of {len(host.gpus)} GPUs report counters"
        if silent:
            message += f"; none from {', '.join(silent)}"
    elif tel is not None and tel.status == "reported":
        message = (
            f"no GPU counters: none of the {len(tel.instances)} counter instances "
            f"({', '.join(tel.instances)}) matches one of the {len(host.gpus)} GPUs"
        )
    else:
        reason = tel.reason if tel and tel.reason else "the host was not queried"
        message = f"no GPU counters: {reason}"
    return Outcome(ok, message, evidence)


rule(
    id="MON-01",
    title="A host with GPUs reports no GPU counters",
    category="monitoring",
    severity="medium",
    scope=scopes.CONNECTED_HOSTS,
    rationale="""GPU monitoring is mandatory: temperature, memory and power per GPU, with
        node-level alerts (NVIDIA DCGM or the vGPU manager's counters in vCenter). vCenter keeps
        GPU utilisation, memory, temperature and power only for GPUs the host's NVIDIA driver
        (the vGPU manager) owns, and only when its statistics level keeps them. A host that
        reports none is blind to a hot, full or idle GPU.""",
    remediation="""Install the NVIDIA vGPU manager (host driver) that matches the GPUs, and raise
        the statistics level of the 5-minute interval to the level the gpu counters need (vCenter >
        Configure > General > Statistics). Passthrough GPUs are invisible to the host: monitor them
        with DCGM inside the guest and waive MON-01 for those hosts.""",
    references=(sources.PERFORMANCE_CHARTS, sources.NVIDIA_DCGM, sources.NVIDIA_MANAGEMENT_SDK),
)(counters_reported)


def temperature(ctx: Context, item: HostGpu) -> Outcome | None:
    gpu = item.gpu
    peak = _peak(gpu, "temperature_c")
    if peak is None:
        return None
    limit = ctx.policy.monitoring.max_temperature_c
    stats = gpu.telemetry.temperature_c if gpu.telemetry else None
    ok = peak <= limit
    verb = "above" if not ok else "within"
    message = f"peak {peak:g} °C over {_window(ctx)}, {verb} the {limit:g} °C threshold"
    evidence = {"peak_c": peak, "average_c": stats.average if stats else None, "limit_c": limit}
    return Outcome(ok, message, evidence)


rule(
    id="MON-02",
    title="A GPU's peak temperature is above the policy's threshold",
    category="monitoring",
    severity="medium",
    scope=scopes.GPUS,
    rationale="""GPU temperature needs monitoring and the cooling validating: even a 72 W
        L4 draws power spikes. A GPU that runs hot throttles its clocks, and one that keeps doing so
        fails early: a capacity and an HA problem before it is a hardware one.""",
    remediation="""Check the server's airflow, fan profile and inlet temperature, and the GPU's
        placement (passively cooled cards need the vendor's high-airflow profile). Spread the
        load if one GPU runs much hotter than its peers.""",
    references=(sources.NVIDIA_DCGM, sources.NVIDIA_MANAGEMENT_SDK),
)(temperature)


def idle(ctx: Context, item: HostGpu) -> Outcome | None:
    gpu = item.gpu
    peak = _peak(gpu, "utilization_percent")
    if peak is None:
        return None
    limit = ctx.policy.monitoring.idle_utilization_percent
    stats = gpu.telemetry.utilization_percent if gpu.telemetry else None
    ok = peak >= limit
    message = (
        f"utilisation peaked at {peak:g} % over {_window(ctx)}"
        if ok
        else f"utilisation never reached {limit:g} % over {_window(ctx)} (peak {peak:g} %): "
        "reclaim it, or count it as buffer capacity"
    )
    evidence = {
        "peak_percent": peak,
        "average_percent": stats.average if stats else None,
        "limit_percent": limit,
        "vms": sorted(gpu.vms),
    }
    return Outcome(ok, message, evidence)


rule(
    id="MON-03",
    title="A GPU's peak utilisation is below the idle threshold",
    category="monitoring",
    severity="info",
    scope=scopes.GPUS,
    rationale="""A GPU that never works in the whole window is either waste or, deliberately, the
        buffer capacity the N+1 rule needs (one node's worth of GPUs kept free). Listed so
        that the buffer is a decision, not an accident.""",
    remediation="""Reclaim the GPU (or its vGPU VMs' profiles) for work that needs it, or record it
        as buffer capacity with a waiver.""",
    references=(sources.NVIDIA_DCGM, sources.HA_ADMISSION_CONTROL),
)(idle)


def allocated_mb(ctx: Context, host: Host, gpu: Gpu) -> tuple[int, list[str]]:
    """Frame buffer allocated to vGPUs on ``gpu`` and their profiles. A VM with vGPUs on
    several GPUs counts its share on each."""
    total = 0.0
    profiles = []
    vms = {vm.name: vm for vm in ctx.facts.host_gpu_vms(host.name)}
    for name in gpu.vms:
        vm = vms.get(name)
        if vm is None:
            continue
        spread = sum(1 for g in host.gpus if name in g.vms) or 1
        for profile in F.profiles(vm):
            info = catalog.parse_profile(profile)
            if info is not None:
                total += info.memory_mb / spread
                profiles.append(profile)
    return round(total), sorted(profiles)


def framebuffer(ctx: Context, item: HostGpu) -> Outcome | None:
    peak = _peak(item.gpu, "memory_used_mb")
    if peak is None:
        return None
    allocated, profiles = allocated_mb(ctx, item.host, item.gpu)
    if allocated <= 0:
        return None
    ratio = ctx.policy.monitoring.framebuffer_ratio
    ok = allocated < ratio * peak
    share = 100.0 * peak / allocated
    message = (
        f"memory use peaked at {peak:,.0f} MB of {allocated:,} MB allocated to vGPUs "
        f"({share:.0f} %)"
    )
    if not ok:
        message += ": smaller profiles would raise density"
    evidence = {
        "allocated_mb": allocated,
        "peak_used_mb": peak,
        "profiles": profiles,
        "ratio_limit": ratio,
    }
    return Outcome(ok, message, evidence)


rule(
    id="MON-04",
    title="vGPUs on a GPU are allocated far more frame buffer than they use at peak",
    category="monitoring",
    severity="info",
    scope=scopes.GPUS,
    rationale="""In equal-size mode a GPU holds frame buffer / profile size vGPUs, so the profile
        decides density. vGPUs whose memory use peaks far below their profile's frame buffer keep
        other VMs off the GPU, and off the failover capacity HA needs.""",
    remediation="""Move the VMs to a smaller profile of the same series that still covers their
        peak, and re-check HA-06 and HA-08 with the density gained. Watch a whole business cycle
        before shrinking: the window may have missed month-end peaks.""",
    references=(sources.NVIDIA_VGPU_USER_GUIDE, sources.NVIDIA_MANAGEMENT_SDK),
)(framebuffer)
