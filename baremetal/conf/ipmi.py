"""[ipmi] options (filled in with the ipmi hardware type)."""

from oslo_config import cfg

opts: list[cfg.Opt] = []


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='ipmi')


def list_opts():
    return opts
