"""Scans keep what the fleet summary shows: the estate's size and the scan's exit status.

Revision ID: 0003
Revises: 0002

Additive only: scans recorded before have no size and no exit status (NULL), and
the fleet summary shows them as unknown.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COLUMNS = ("hosts", "vms", "gpus", "gpu_vms", "exit_code")


def upgrade() -> None:
    with op.batch_alter_table("scans") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scans") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
