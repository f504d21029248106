"""Scans are keyed by the vCenter's instance UUID, so that every name of one vCenter
(an FQDN, its IP address) makes one history.

Revision ID: 0004
Revises: 0003

The new column ``vcenter_key`` is what the history groups scans by; ``vcenter`` stays
the server as it was named, shown beside it. Scans recorded before keep the key they
had, the name as given: the store never knew their UUID.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Added nullable, filled, then made NOT NULL: a NOT NULL column needs a value for
    # the rows already there, and the value is another column's.
    with op.batch_alter_table("scans") as batch:
        batch.add_column(sa.Column("vcenter_key", sa.String(512), nullable=True))
    op.execute("UPDATE scans SET vcenter_key = vcenter")
    with op.batch_alter_table("scans") as batch:
        batch.alter_column("vcenter_key", existing_type=sa.String(512), nullable=False)
        batch.create_index("ix_scans_key_checked", ["vcenter_key", "checked_at"])


def downgrade() -> None:
    with op.batch_alter_table("scans") as batch:
        batch.drop_index("ix_scans_key_checked")
        batch.drop_column("vcenter_key")
