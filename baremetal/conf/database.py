"""[database]: oslo.db's options, with the embedded default."""

from oslo_config import cfg
from oslo_db import options as db_options

opts = [
    cfg.BoolOpt('sqlite_synchronous_normal', default=True,
                help='With SQLite, use WAL with synchronous=NORMAL: much '
                     'faster writes; a power loss may lose the last '
                     'transactions but never corrupts the database.'),
]


# oslo.db's default pool is 5 connections (and as many again in bursts);
# an API or conductor process serves dozens of requests and workers at
# once, each briefly on a connection
MAX_POOL_SIZE = 10


def register_opts(conf: cfg.ConfigOpts) -> None:
    db_options.set_defaults(conf, max_pool_size=MAX_POOL_SIZE)
    conf.register_opts(opts, group='database')


def list_opts():
    return opts
