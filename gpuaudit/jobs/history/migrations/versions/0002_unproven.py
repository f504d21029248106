"""Scans count their findings not proven: a verdict that rests on a fact not known exactly.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Scans recorded before have none: nothing was "not proven" then.
    with op.batch_alter_table("scans") as batch:
        batch.add_column(sa.Column("unproven", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("scans") as batch:
        batch.drop_column("unproven")
