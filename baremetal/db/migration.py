"""Schema migrations (alembic): upgrade, version, create_schema."""

import os

import sqlalchemy as sa
from oslo_db import exception as oslo_db_exc

from baremetal.db import models

_SCRIPTS = os.path.join(os.path.dirname(__file__), 'migrations')

# The newest revision; a unit test keeps it equal to alembic's head.  It
# lets a server whose schema is current start without loading alembic.
HEAD = '0012'


def is_current(engine: sa.engine.Engine) -> bool:
    try:
        with engine.connect() as conn:
            rev = conn.execute(sa.text(
                'SELECT version_num FROM alembic_version')).scalar()
    except (sa.exc.DBAPIError, oslo_db_exc.DBError):
        # no alembic_version table yet (oslo.db wraps the driver's error)
        return False
    return rev == HEAD


def _config(connection):
    import alembic.config
    cfg = alembic.config.Config()
    cfg.set_main_option('script_location', _SCRIPTS)
    cfg.attributes['connection'] = connection
    return cfg


def upgrade(engine: sa.engine.Engine, revision: str = 'head') -> None:
    """Bring the schema to ``revision`` (default: the newest)."""
    import alembic.command
    with engine.begin() as conn:
        alembic.command.upgrade(_config(conn), revision)


def version(engine: sa.engine.Engine) -> str | None:
    """The schema revision the database is at, None if never migrated."""
    import alembic.migration
    with engine.connect() as conn:
        ctx = alembic.migration.MigrationContext.configure(conn)
        return ctx.get_current_revision()


_VERSION_TABLE = sa.Table(
    'alembic_version', sa.MetaData(),
    sa.Column('version_num', sa.String(32), nullable=False),
    sa.PrimaryKeyConstraint('version_num', name='alembic_version_pkc'))


def create_schema(engine: sa.engine.Engine) -> bool:
    """On an empty database: create the schema from the models and stamp
    it at HEAD (alembic's own version table, written without loading
    alembic: a first start saves ~0.4 s).  A unit test checks that the
    migrations build the same schema.  Returns False, changing nothing,
    if the database has tables already (they need ``upgrade``)."""
    with engine.begin() as conn:
        if sa.inspect(conn).get_table_names():
            return False
        models.Base.metadata.create_all(conn)
        _VERSION_TABLE.create(conn)
        conn.execute(_VERSION_TABLE.insert().values(version_num=HEAD))
    return True


def revision(engine: sa.engine.Engine, message: str,
             autogenerate: bool = True) -> None:
    """Developer helper: write a new migration file."""
    import alembic.command
    with engine.begin() as conn:
        alembic.command.revision(_config(conn), message=message,
                                 autogenerate=autogenerate)
