"""The first schema: runs, scans, their findings, clusters and GPU capacity.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _scan_ref(on_delete: str = "CASCADE") -> sa.Column[int]:
    return sa.Column(
        "scan_id", sa.Integer, sa.ForeignKey("scans.id", ondelete=on_delete), nullable=False
    )


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("exit_code", sa.Integer, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
    )
    op.create_table(
        "scans",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("vcenter", sa.String(512), nullable=False),
        sa.Column("vcenter_name", sa.String(512), nullable=False),
        sa.Column("checked_at", sa.DateTime, nullable=False),
        sa.Column("recorded_at", sa.DateTime, nullable=False),
        sa.Column("tool_version", sa.String(64), nullable=False),
        sa.Column("rules_version", sa.String(64), nullable=False),
        sa.Column("verdict", sa.String(8), nullable=False),
        *(
            sa.Column(f"failed_{s}", sa.Integer, nullable=False)
            for s in ("critical", "high", "medium", "low", "info")
        ),
        sa.Column("waived", sa.Integer, nullable=False),
        sa.Column("passed", sa.Integer, nullable=False),
        sa.Column("rule_errors", sa.Integer, nullable=False),
    )
    op.create_index("ix_scans_vcenter_checked", "scans", ["vcenter", "checked_at"])
    op.create_table(
        "findings",
        _scan_ref(),
        sa.Column("finding_id", sa.String(64), nullable=False),
        sa.Column("rule", sa.String(32), nullable=False),
        sa.Column("object", sa.Text, nullable=False),
        sa.Column("object_kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("severity", sa.String(8), nullable=False),
        sa.Column("cluster", sa.Text, nullable=True),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("first_seen", sa.DateTime, nullable=False),
    )
    op.create_index("ix_findings_scan", "findings", ["scan_id", "finding_id"])
    op.create_table(
        "clusters",
        _scan_ref(),
        sa.Column("cluster", sa.Text, nullable=False),
        sa.Column("design", sa.String(8), nullable=True),
        sa.Column("tolerates", sa.Integer, nullable=False),
        sa.Column("manual_tolerates", sa.Integer, nullable=False),
        sa.Column("ha_restarts", sa.Boolean, nullable=False),
        sa.Column("gpu_vms", sa.Integer, nullable=False),
        sa.Column("worst_host", sa.Text, nullable=True),
    )
    op.create_index("ix_clusters_scan", "clusters", ["scan_id"])
    op.create_table(
        "capacity",
        _scan_ref(),
        sa.Column("cluster", sa.Text, nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("slots", sa.Integer, nullable=False),
        sa.Column("used", sa.Integer, nullable=False),
    )
    op.create_index("ix_capacity_scan", "capacity", ["scan_id"])


def downgrade() -> None:
    for table in ("capacity", "clusters", "findings", "scans", "runs"):
        op.drop_table(table)
