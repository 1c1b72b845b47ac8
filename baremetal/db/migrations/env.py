"""Alembic environment: runs on the connection baremetal hands over."""

from alembic import context

from baremetal.db import models

config = context.config


def run_migrations_online() -> None:
    connection = config.attributes['connection']
    context.configure(connection=connection,
                      target_metadata=models.Base.metadata,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
