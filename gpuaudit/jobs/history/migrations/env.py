"""Alembic's entry point: migrations run on the connection the store hands over."""

from __future__ import annotations

from alembic import context

from gpuaudit.jobs.history.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
