"""[inspection_rules] options: rules applied to inspection data (API
1.96) besides those kept in the database."""

from oslo_config import cfg

opts = [
    cfg.StrOpt('built_in_rules', mutable=True,
               help='Path of a YAML file holding a list of inspection '
                    'rules that apply to every inspected node besides '
                    'the rules created through the API. They are read '
                    'at each inspection (an edit takes effect on the '
                    'next one) and are not shown by the API; unlike API '
                    'rules their priority may be negative or above 9999. '
                    'Unset: no built-in rules.'),
    cfg.StrOpt('mask_secrets', default='always',
               choices=[('always', 'conditions and actions of every rule '
                                   'see passwords and tokens as "***"'),
                        ('never', 'every rule sees them'),
                        ('sensitive', 'only rules marked sensitive see '
                                      'them')],
               help='Whether passwords and tokens in the inventory and '
                    'plugin data are hidden from inspection rules '
                    '(keys password, auth_token and bmc_password).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='inspection_rules')


def list_opts():
    return opts
