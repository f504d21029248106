"""The history store's tables, as SQLAlchemy Core describes them.

The migrations under ``migrations/versions`` create exactly these; a change here
needs a new migration (and a test that an older store upgrades).
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

# A fleet run: one row per `scan --targets`; its targets' scans point at it.
runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),
    Column("started_at", DateTime, nullable=False),
    Column("exit_code", Integer, nullable=False),
    Column("summary", Text, nullable=False),  # the fleet summary's JSON
)

# One scan of one vCenter, with its counts.
scans = Table(
    "scans",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="SET NULL"), nullable=True),
    Column("vcenter", String(512), nullable=False),  # the server as it was named
    Column("vcenter_name", String(512), nullable=False),
    Column("checked_at", DateTime, nullable=False),  # UTC
    Column("recorded_at", DateTime, nullable=False),
    Column("tool_version", String(64), nullable=False),
    Column("rules_version", String(64), nullable=False),
    # fail: any unwaived failure; unproven: none, but a finding not proven; else pass
    Column("verdict", String(8), nullable=False),
    Column("failed_critical", Integer, nullable=False),
    Column("failed_high", Integer, nullable=False),
    Column("failed_medium", Integer, nullable=False),
    Column("failed_low", Integer, nullable=False),
    Column("failed_info", Integer, nullable=False),
    Column("waived", Integer, nullable=False),
    Column("passed", Integer, nullable=False),
    Column("rule_errors", Integer, nullable=False),
    # Unwaived findings not proven (revision 0002; scans recorded before have 0).
    Column("unproven", Integer, nullable=False, server_default="0"),
    # What the fleet summary shows, and the size a fleet scan schedules by
    # (revision 0003; NULL for scans recorded before).
    Column("hosts", Integer, nullable=True),
    Column("vms", Integer, nullable=True),
    Column("gpus", Integer, nullable=True),
    Column("gpu_vms", Integer, nullable=True),
    Column("exit_code", Integer, nullable=True),
    # The history's key (revision 0004): the vCenter's instance UUID, so that its FQDN
    # and its IP address make one history; the name as given when the UUID is unknown,
    # and for the scans recorded before.
    Column("vcenter_key", String(512), nullable=False),
    Index("ix_scans_vcenter_checked", "vcenter", "checked_at"),
    Index("ix_scans_key_checked", "vcenter_key", "checked_at"),
)

# Failed, not proven and waived findings only: passes are counted in scans.passed.
findings = Table(
    "findings",
    metadata,
    Column("scan_id", Integer, ForeignKey("scans.id", ondelete="CASCADE"), nullable=False),
    Column("finding_id", String(64), nullable=False),
    Column("rule", String(32), nullable=False),
    Column("object", Text, nullable=False),
    Column("object_kind", String(16), nullable=False),
    Column("status", String(8), nullable=False),
    Column("severity", String(8), nullable=False),
    Column("cluster", Text, nullable=True),
    Column("message", Text, nullable=False),
    Column("first_seen", DateTime, nullable=False),  # UTC
    Index("ix_findings_scan", "scan_id", "finding_id"),
)

# Each simulated cluster's N+k.
clusters = Table(
    "clusters",
    metadata,
    Column("scan_id", Integer, ForeignKey("scans.id", ondelete="CASCADE"), nullable=False),
    Column("cluster", Text, nullable=False),
    Column("design", String(8), nullable=True),
    Column("tolerates", Integer, nullable=False),
    Column("manual_tolerates", Integer, nullable=False),
    Column("ha_restarts", Boolean, nullable=False),
    Column("gpu_vms", Integer, nullable=False),
    Column("worst_host", Text, nullable=True),
    Index("ix_clusters_scan", "scan_id"),
)

# GPU slots and their use per cluster and model, before any failure ("before")
# and after the worst one ("after_worst").
capacity = Table(
    "capacity",
    metadata,
    Column("scan_id", Integer, ForeignKey("scans.id", ondelete="CASCADE"), nullable=False),
    Column("cluster", Text, nullable=False),
    Column("phase", String(16), nullable=False),
    Column("model", Text, nullable=False),
    Column("slots", Integer, nullable=False),
    Column("used", Integer, nullable=False),
    Index("ix_capacity_scan", "scan_id"),
)
