"""[sensor_data] options: periodic hardware sensor notifications, as
Ironic's (what ironic-prometheus-exporter consumes).

Names, defaults and meanings are Ironic's; the old [conductor]
``send_sensor_data*`` names Ironic still accepts are accepted too.
"""

from oslo_config import cfg

opts = [
    cfg.BoolOpt('send_sensor_data', default=False,
                deprecated_group='conductor',
                deprecated_name='send_sensor_data',
                help='Send each node\'s sensor readings (temperatures, '
                     'fans, power supplies, drives...) as a '
                     '"hardware.<driver>.metrics" notification every '
                     '[sensor_data]interval seconds, on the notification '
                     'transport, to the [oslo_messaging_notifications] '
                     'topics. Each read is one round of requests to the '
                     'node\'s BMC.'),
    cfg.IntOpt('interval', default=600, min=1,
               deprecated_group='conductor',
               deprecated_name='send_sensor_data_interval',
               help='Seconds between two rounds of sensor readings by a '
                    'conductor. Shorter gives fresher metrics and more '
                    'load on the BMCs.'),
    cfg.IntOpt('workers', default=4, min=1,
               deprecated_group='conductor',
               deprecated_name='send_sensor_data_workers',
               help='Nodes whose sensors one conductor reads at once. '
                    'More finishes a round sooner on a large fleet; each '
                    'worker is a thread waiting on one BMC.'),
    cfg.IntOpt('wait_timeout', default=300,
               deprecated_group='conductor',
               deprecated_name='send_sensor_data_wait_timeout',
               help='Seconds a round waits for its workers before the '
                    'next round may start (reads still running go on in '
                    'the background and are sent when done). Should be '
                    'less than [sensor_data]interval.'),
    cfg.ListOpt('data_types', default=['ALL'],
                deprecated_group='conductor',
                deprecated_name='send_sensor_data_types',
                help='Sensor types sent (the payload\'s top-level keys, '
                     'compared without case: e.g. Temperature, Fan, '
                     'Voltage, Power, Drive). "ALL" sends every type.'),
    cfg.BoolOpt('enable_for_undeployed_nodes', default=False,
                deprecated_group='conductor',
                deprecated_name='send_sensor_data_for_undeployed_nodes',
                help='Read the sensors of every node, not only of nodes '
                     'in "active" (deployed) state: shows failing '
                     'hardware before it is used, at the cost of reading '
                     'idle BMCs too.'),
    cfg.BoolOpt('enable_for_conductor', default=True,
                help='With each round of sensor data, also send the '
                     'conductor\'s own "ironic.metrics" notification, as '
                     'Ironic does: a timer (runs, total milliseconds) per '
                     'periodic task, named as Ironic\'s ConductorManager '
                     'method for the same job. GET /metrics has the same '
                     'figures and more.'),
    cfg.BoolOpt('enable_for_nodes', default=True,
                help='Send sensor data of nodes at all. False sends none, '
                     'whatever enable_for_undeployed_nodes says.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='sensor_data')


def list_opts():
    return opts
