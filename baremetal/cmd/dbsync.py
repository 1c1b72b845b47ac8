"""baremetal-dbsync: schema migrations (alembic)."""

import sys

from oslo_config import cfg

from baremetal.cmd import common
from baremetal.db import engine as db_engine
from baremetal.db import migration


def _add_commands(subparsers):
    p = subparsers.add_parser('upgrade', help='Upgrade the schema.')
    p.add_argument('--revision', default='head')
    subparsers.add_parser('version', help='Print the schema revision.')
    subparsers.add_parser('create_schema',
                          help='Create the schema in an empty database.')


@common.entrypoint
def main(argv: list[str] | None = None) -> None:
    common.CONF.register_cli_opt(cfg.SubCommandOpt(
        'command', title='Commands', handler=_add_commands))
    common.parse_args(argv, 'baremetal-dbsync')
    url = common.database_url()
    cmd = common.CONF.command.name
    with db_engine.first_use(url):
        engine = db_engine.configure(url)
        if cmd == 'upgrade':
            migration.upgrade(engine, common.CONF.command.revision)
        elif cmd == 'create_schema' and not migration.create_schema(engine):
            print('create_schema needs an empty database; use "upgrade" '
                  'for an existing one', file=sys.stderr)
            sys.exit(1)
        print(migration.version(engine))


if __name__ == '__main__':
    main()
