"""The capacity chart's geometry for a small simulation, every number written out by hand.

Cluster gpu-a holds esx-01 (a 2-slot vGPU A100 and a passthrough A100; the worst
failure), esx-02 (a 4-slot vGPU A100, an idle A100 and a 32-slot A16) and esx-03 (no
GPU); esx-x has a T4 the simulation saw though the inventory lists it in no cluster.
After esx-01 fails, vm1 restarts on esx-02's A100, pt1 on the idle A100 (now
passthrough) and two more VMs on the A16.

The layout constants, from the module's docstring and the template: labels 200 wide,
panels 330 wide 36 apart, rows 24 high from y=30 with 14-high bars centred in them,
bars at most 110 wide and 6 apart, 60 of the panel kept for the free-slot text,
slots 1.5 apart, and slots narrower than 4 drawn as one proportional bar.
"""

from __future__ import annotations

from gpuaudit.inventory import Cluster, Host, Inventory, VCenter
from gpuaudit.report.capacity import Chart, GpuBar, build_chart
from gpuaudit.results import ClusterSimulation, GpuSlots

E_VMS = [f"e{i}" for i in range(1, 14)]
E_SHOWN = "e1, e2, e3, e4, e5, e6, e7, e8, e9, e10, e11, e12 and 1 more"


def _inventory() -> Inventory:
    return Inventory(
        source="vc",
        collected_at="2026-12-01T10:00:00Z",
        vcenter=VCenter(name="vc"),
        datacenters=["DC"],
        clusters=[
            Cluster(name="gpu-a", moref="domain-c1", datacenter="DC"),
            Cluster(name="other", moref="domain-c2", datacenter="DC"),
        ],
        hosts=[
            Host(name="esx-01", moref="host-1", datacenter="DC", cluster="gpu-a"),
            Host(name="esx-02", moref="host-2", datacenter="DC", cluster="gpu-a"),
            Host(name="esx-o", moref="host-5", datacenter="DC", cluster="other"),
            Host(name="esx-03", moref="host-3", datacenter="DC", cluster="gpu-a"),
            Host(name="esx-x", moref="host-4", datacenter="DC"),
        ],
    )


def _slots(host: str, pci: str, model: str, mode: str, profile: str | None, **kw) -> GpuSlots:
    return GpuSlots(host, pci, model, 40960, mode, profile, **kw)


def _before() -> list[GpuSlots]:
    return [
        _slots("esx-01", "A", "A100", "vgpu", "grid_a100-20c", capacity=2, used=1, vms=["vm1"]),
        _slots("esx-01", "B", "A100", "passthrough", None, capacity=1, used=1, vms=["pt1"]),
        _slots(
            "esx-02", "C", "A100", "vgpu", "grid_a100-10c", capacity=4, used=2, vms=["v2", "v3"]
        ),
        _slots("esx-02", "D", "A100", "idle", None, capacity=1, used=0),
        _slots("esx-02", "E", "A16", "vgpu", "grid_a16-2b", capacity=32, used=13, vms=E_VMS),
        _slots("esx-x", "F", "T4", "vgpu", "grid_t4-16c", capacity=1, used=0),
    ]


def _after() -> list[GpuSlots]:
    return [
        _slots(
            "esx-02",
            "C",
            "A100",
            "vgpu",
            "grid_a100-10c",
            capacity=4,
            used=3,
            vms=["v2", "v3", "vm1"],
        ),
        _slots("esx-02", "D", "A100", "passthrough", None, capacity=1, used=1, vms=["pt1"]),
        _slots("esx-02", "E", "A16", "vgpu", "grid_a16-2b", capacity=32, used=15, vms=E_VMS),
        _slots("esx-x", "F", "T4", "vgpu", "grid_t4-16c", capacity=1, used=0),
    ]


def _sim(**kw) -> ClusterSimulation:
    base = dict(
        cluster="gpu-a",
        worst_host="esx-01",
        capacity=_before(),
        after_worst=_after(),
        restart_disabled=["nr1"],
    )
    base.update(kw)
    return ClusterSimulation(**base)  # type: ignore[arg-type]


def _bar(bar: GpuBar) -> tuple:
    return (bar.tip, bar.x, bar.y, bar.w, bar.h, [(r.x, r.y, r.w, r.h, r.kind) for r in bar.rects])


def _row(row) -> tuple:
    return (
        row.name,
        row.label,
        row.y,
        row.failed,
        row.no_gpu,
        [_bar(b) for b in row.now],
        row.now_text,
        [_bar(b) for b in row.after],
        row.after_text,
    )


# Three GPUs on esx-02 share a panel: (330 - 60 - 2 * 6) / 3 = 86 wide, 92 apart.
# Each host is drawn once: its bars after the failure take the place of its bars now,
# so both start at x 200.
# A 4-slot bar: slots (86 - 3 * 1.5) / 4 = 20.375 wide, 21.875 apart.
# A 32-slot bar: (86 - 31 * 1.5) / 32 < 4, so proportional: 86 * n / 32 per run of slots.
NOW_ROWS = [
    (
        "esx-01",
        "esx-01",
        30,
        True,
        False,
        [
            (
                "esx-01 A A100 (grid_a100-20c): 1 of 2 used. VMs: vm1",
                200,
                35.0,
                86.0,
                14,
                [(200, 35.0, 42.25, 14, "used-vgpu"), (243.75, 35.0, 42.25, 14, "free")],
            ),
            (
                "esx-01 B A100 (passthrough): 1 of 1 used. VMs: pt1",
                292.0,
                35.0,
                86.0,
                14,
                [(292.0, 35.0, 86.0, 14, "used-pt")],
            ),
        ],
        "1 free",
        [],
        "",
    ),
    (
        "esx-02",
        "esx-02",
        54,
        False,
        False,
        [
            (
                "esx-02 C A100 (grid_a100-10c): 2 of 4 used. VMs: v2, v3",
                200,
                59.0,
                86.0,
                14,
                [
                    (200, 59.0, 20.38, 14, "used-vgpu"),
                    (221.88, 59.0, 20.38, 14, "used-vgpu"),
                    (243.75, 59.0, 20.38, 14, "free"),
                    (265.62, 59.0, 20.38, 14, "free"),
                ],
            ),
            (
                "esx-02 D A100 (idle): 0 of 1 used",
                292.0,
                59.0,
                86.0,
                14,
                [(292.0, 59.0, 86.0, 14, "idle")],
            ),
            (
                f"esx-02 E A16 (grid_a16-2b): 13 of 32 used. VMs: {E_SHOWN}",
                384.0,
                59.0,
                86.0,
                14,
                [(384.0, 59.0, 34.94, 14, "used-vgpu"), (418.94, 59.0, 51.06, 14, "free")],
            ),
        ],
        "22 free",  # 37 slots, 15 used
        [
            (
                "esx-02 C A100 (grid_a100-10c): 3 of 4 used, 1 by restarted VMs. VMs: v2, v3, vm1",
                200,
                59.0,
                86.0,
                14,
                [
                    (200, 59.0, 20.38, 14, "used-vgpu"),
                    (221.88, 59.0, 20.38, 14, "used-vgpu"),
                    (243.75, 59.0, 20.38, 14, "moved"),
                    (265.62, 59.0, 20.38, 14, "free"),
                ],
            ),
            (
                "esx-02 D A100 (passthrough): 1 of 1 used, 1 by restarted VMs. VMs: pt1",
                292.0,
                59.0,
                86.0,
                14,
                [(292.0, 59.0, 86.0, 14, "moved")],
            ),
            (
                f"esx-02 E A16 (grid_a16-2b): 15 of 32 used, 2 by restarted VMs. VMs: {E_SHOWN}",
                384.0,
                59.0,
                86.0,
                14,
                [
                    (384.0, 59.0, 34.94, 14, "used-vgpu"),
                    (418.94, 59.0, 5.38, 14, "moved"),
                    (424.31, 59.0, 45.69, 14, "free"),
                ],
            ),
        ],
        "18 free",  # 37 slots, 19 used
    ),
    ("esx-03", "esx-03", 78, False, True, [], "no GPU", [], "no GPU"),
    (
        "esx-x",
        "esx-x",
        102,
        False,
        False,
        [
            (
                "esx-x F T4 (grid_t4-16c): 0 of 1 used",
                200,
                107.0,
                86.0,
                14,
                [(200, 107.0, 86.0, 14, "free")],
            )
        ],
        "1 free",
        [
            (
                "esx-x F T4 (grid_t4-16c): 0 of 1 used",
                200,
                107.0,
                86.0,
                14,
                [(200, 107.0, 86.0, 14, "free")],
            )
        ],
        "1 free",
    ),
]


def test_whole_chart_after_the_worst_failure() -> None:
    sim = _sim()
    chart = build_chart(sim, _inventory())
    assert [_row(r) for r in chart.rows] == NOW_ROWS
    # 200 + 330 + 90 wide (one panel and the column of free slots after the failure);
    # 30 + 4 rows * 24 + 34 high, the legend 16 above the foot.
    assert (chart.width, chart.height, chart.legend_y) == (620, 160, 144)
    assert (chart.now_x, chart.after_x, chart.worst_host, chart.has_after) == (
        200,
        200,
        "esx-01",
        True,
    )
    assert chart.manual is False
    assert chart.restart_disabled == ["nr1"]
    assert chart.restart_disabled is not sim.restart_disabled
    assert chart.after_title == "After esx-01 fails (HA restart)"
    assert chart.moved_label == "taken by restarted VMs"
    # Right-aligned 4 short of the panel's end, and of the after column's.
    assert (chart.now_text_x, chart.after_text_x) == (526, 616)


def test_chart_without_a_failure_has_one_panel() -> None:
    chart = build_chart(_sim(worst_host=None, after_worst=[]), _inventory())
    assert (chart.width, chart.height, chart.has_after, chart.worst_host) == (530, 160, False, None)
    assert [(r.name, r.failed, r.after, r.after_text) for r in chart.rows] == [
        ("esx-01", False, [], ""),
        ("esx-02", False, [], ""),
        ("esx-03", False, [], ""),
        ("esx-x", False, [], ""),
    ]
    assert [r.now_text for r in chart.rows] == ["1 free", "22 free", "no GPU", "1 free"]


def test_manual_restart_and_no_after_state() -> None:
    # HA restarts nothing; no after-failure slots were recorded, so each surviving host
    # keeps its GPUs as they are.
    chart = build_chart(_sim(after_worst=[], ha_restarts=False, restart_disabled=[]), _inventory())
    assert chart.manual is True and chart.restart_disabled == []
    assert chart.after_title == "After esx-01 fails (manual restart)"
    assert chart.moved_label == "taken by a manual restart"
    after = {r.name: ([b.tip for b in r.after], r.after_text) for r in chart.rows}
    assert after == {
        "esx-01": ([], ""),
        "esx-02": (
            [
                "esx-02 C A100 (grid_a100-10c): 2 of 4 used. VMs: v2, v3",
                "esx-02 D A100 (idle): 0 of 1 used",
                f"esx-02 E A16 (grid_a16-2b): 13 of 32 used. VMs: {E_SHOWN}",
            ],
            "22 free",
        ),
        "esx-03": ([], "no GPU"),
        "esx-x": (["esx-x F T4 (grid_t4-16c): 0 of 1 used"], "1 free"),
    }


def test_host_missing_from_the_after_state_has_no_gpu() -> None:
    after = [g for g in _after() if g.host != "esx-x"]
    chart = build_chart(_sim(after_worst=after), _inventory())
    row = chart.rows[3]
    assert (row.name, row.after, row.after_text) == ("esx-x", [], "no GPU")


def test_empty_cluster() -> None:
    inv = _inventory()
    chart = build_chart(ClusterSimulation(cluster="none"), inv)
    assert (chart.rows, chart.width, chart.height, chart.legend_y) == ([], 530, 64, 48)
    assert (chart.has_after, chart.manual, chart.restart_disabled) == (False, False, [])


def test_one_gpu_bars_are_capped_and_names_shortened() -> None:
    long = "esx-0123456789abcdefghijk"  # 25 characters: cut to 23 and an ellipsis
    exact = "esx-0123456789abcdefghij"  # 24: kept
    inv = Inventory(
        source="vc",
        collected_at="t",
        vcenter=VCenter(name="vc"),
        datacenters=["DC"],
        clusters=[Cluster(name="c", moref="c1", datacenter="DC")],
        hosts=[
            Host(name=long, moref="h1", datacenter="DC", cluster="c"),
            Host(name=exact, moref="h2", datacenter="DC", cluster="c"),
        ],
    )
    gpus = [
        # 0 slots are drawn as 1; use above capacity as full.
        _slots(long, "G", "L4", "vgpu", "grid_l4-24q", capacity=0, used=0),
        _slots(exact, "H", "L4", "vgpu", "grid_l4-12q", capacity=2, used=3),
    ]
    sim = ClusterSimulation(cluster="c", capacity=gpus)
    chart = build_chart(sim, inv)
    assert [_row(r) for r in chart.rows] == [
        (
            long,
            "esx-0123456789abcdefghi\u2026",
            30,
            False,
            False,
            [
                (
                    f"{long} G L4 (grid_l4-24q): 0 of 0 used",
                    200,
                    35.0,
                    110,
                    14,
                    [(200, 35.0, 110, 14, "free")],
                )
            ],
            "1 free",
            [],
            "",
        ),
        (
            exact,
            exact,
            54,
            False,
            False,
            [
                (
                    f"{exact} H L4 (grid_l4-12q): 3 of 2 used",
                    200,
                    59.0,
                    110,
                    14,
                    # (110 - 1.5) / 2 = 54.25 per slot
                    [(200, 59.0, 54.25, 14, "used-vgpu"), (255.75, 59.0, 54.25, 14, "used-vgpu")],
                )
            ],
            "0 free",
            [],
            "",
        ),
    ]


def test_negative_use_is_drawn_as_none() -> None:
    gpu = _slots("h", "N", "L4", "vgpu", "grid_l4-24q", capacity=1, used=-1)
    chart = build_chart(ClusterSimulation(cluster="c", capacity=[gpu]), _inventory())
    (row,) = chart.rows
    assert [(r.x, r.w, r.kind) for r in row.now[0].rects] == [(200, 110, "free")]


def test_tip_lists_twelve_vms_without_more_and_ignores_fewer_after() -> None:
    twelve = [f"v{i}" for i in range(1, 13)]
    before = _slots("h", "P", "L40", "vgpu", "grid_l40-12q", capacity=4, used=3, vms=twelve)
    after = _slots("h", "P", "L40", "vgpu", "grid_l40-12q", capacity=4, used=2, vms=twelve)
    sim = ClusterSimulation(cluster="c", worst_host="dead", capacity=[before], after_worst=[after])
    inv = Inventory(source="vc", collected_at="t", vcenter=VCenter(name="vc"))
    chart = build_chart(sim, inv)
    (row,) = chart.rows
    shown = ", ".join(twelve)
    assert row.now[0].tip == f"h P L40 (grid_l40-12q): 3 of 4 used. VMs: {shown}"
    assert row.after[0].tip == f"h P L40 (grid_l40-12q): 2 of 4 used. VMs: {shown}"
    # (330 - 60) / 1 = 270, capped at 110; (110 - 4.5) / 4 = 26.375 per slot.
    assert [(r.x, r.w, r.kind) for r in row.after[0].rects] == [
        (200, 26.38, "used-vgpu"),
        (227.88, 26.38, "used-vgpu"),
        (255.75, 26.38, "free"),
        (283.62, 26.38, "free"),
    ]
    assert row.after_text == "2 free"


def test_chart_dataclass_defaults() -> None:
    chart = Chart(1, 2, [], 3, 4, None, 5, False)
    assert (chart.manual, chart.restart_disabled) == (False, [])
    assert chart.after_title == "After  fails (HA restart)"


def test_long_worst_host_is_cut_in_the_title() -> None:
    host = "h" * 40
    chart = Chart(1, 2, [], 3, 4, host, 5, True, manual=True)
    # 48 - len("After ") - len(" fails (manual restart)") = 19: 18 characters and "…".
    assert chart.after_title == "After " + "h" * 18 + "\u2026 fails (manual restart)"


def test_slots_in_use_beyond_a_zero_capacity_count_as_one() -> None:
    # A GPU that reports no slots is drawn, and counted, as one: two VMs on it fill it.
    gpu = _slots("h", "Z", "L4", "vgpu", "grid_l4-24q", capacity=0, used=2, vms=["a", "b"])
    chart = build_chart(ClusterSimulation(cluster="c", capacity=[gpu]), _inventory())
    (row,) = chart.rows
    assert row.now_text == "0 free"
    assert [(r.x, r.w, r.kind) for r in row.now[0].rects] == [(200, 110, "used-vgpu")]
