"""[DEFAULT] options: enabled drivers, auth, RPC transport, host."""

import socket

from oslo_config import cfg

INTERFACE_TYPES = ('bios', 'boot', 'console', 'deploy', 'firmware',
                   'inspect', 'management', 'network', 'power', 'raid',
                   'rescue', 'storage', 'vendor')

_ENABLED_DEFAULTS = {
    'bios': ['no-bios', 'fake', 'redfish'],
    'boot': ['fake', 'ipxe', 'redfish-virtual-media'],
    'console': ['no-console', 'fake'],
    'deploy': ['fake', 'direct', 'ramdisk'],
    'firmware': ['no-firmware', 'fake', 'redfish'],
    'inspect': ['no-inspect', 'fake', 'redfish', 'agent'],
    'management': ['fake', 'noop', 'ipmi', 'ipmitool', 'redfish'],
    'network': ['noop', 'flat'],
    'power': ['fake', 'ipmi', 'ipmitool', 'redfish'],
    'raid': ['no-raid', 'fake', 'redfish', 'agent'],
    'rescue': ['no-rescue', 'fake', 'agent'],
    'storage': ['noop', 'fake'],
    'vendor': ['no-vendor', 'fake', 'redfish'],
}


def _iface_opts():
    opts = []
    for iface in INTERFACE_TYPES:
        opts.append(cfg.ListOpt(
            'enabled_%s_interfaces' % iface,
            default=_ENABLED_DEFAULTS[iface],
            help='%s interface implementations this service loads (entry '
                 'point names in baremetal.hardware.interfaces.%s). A '
                 'node may use only an enabled implementation; a missing '
                 'or broken one stops start-up.' % (iface.capitalize(),
                                                     iface)))
        opts.append(cfg.StrOpt(
            'default_%s_interface' % iface,
            help='%s interface a new node gets when it names none. Unset: '
                 'the first enabled one its hardware type supports.'
                 % iface.capitalize()))
    return opts


opts = [
    cfg.ListOpt('enabled_hardware_types',
                default=['fake-hardware', 'manual-management', 'ipmi',
                         'redfish'],
                help='Hardware types this service loads (entry point names '
                     'in baremetal.hardware.types).'),
    cfg.StrOpt('auth_strategy', default='noauth',
               choices=[('noauth', 'no authentication; only safe on '
                         'loopback'),
                        ('http_basic', 'HTTP basic auth against an Apache '
                         'htpasswd file with bcrypt hashes'),
                        ('keystone', 'keystonemiddleware auth_token')],
               help='How API requests are authenticated.'),
    cfg.StrOpt('http_basic_auth_user_file',
               default='/etc/baremetal/htpasswd',
               help='htpasswd file for auth_strategy=http_basic.'),
    cfg.StrOpt('rpc_transport', default='none',
               choices=[('none', 'API and conductor in one process, '
                         'direct calls (baremetal-server)'),
                        ('oslo', 'oslo.messaging over transport_url '
                         '(baremetal-api + baremetal-conductor)')],
               help='How the API reaches conductors.'),
    cfg.StrOpt('host', default=socket.gethostname(),
               sample_default='localhost',
               help='Name of this conductor; must be unique among '
                    'conductors sharing a database.'),
    cfg.StrOpt('state_path', default='~/.local/state/baremetal',
               help='Directory for state kept on disk (the default SQLite '
                    'database of baremetal-server).'),
    cfg.StrOpt('isolinux_bin', default='/usr/lib/ISOLINUX/isolinux.bin',
               help='isolinux boot loader put into boot ISOs (Debian '
                    'package isolinux) for legacy BIOS boot.'),
    cfg.StrOpt('ldlinux_c32', default='/usr/lib/syslinux/modules/bios/'
                                      'ldlinux.c32',
               help='ldlinux.c32 that isolinux needs beside it (Debian '
                    'package syslinux-common).'),
    cfg.IntOpt('webserver_connection_timeout', default=60, min=1,
               help='Seconds the conductor waits for a web server it '
                    'fetches an image from (deploy_kernel, '
                    'deploy_ramdisk) to accept the connection, and then '
                    'for each piece of data: a server silent that long '
                    'fails the download.'),
    cfg.IntOpt('image_download_timeout', default=1800, min=1,
               help='Seconds one image download by the conductor may take '
                    'in all, however steadily data arrives: a server '
                    'trickling bytes fails the step after this long. '
                    'Raise it for large images over slow links.'),
    cfg.IntOpt('rpc_response_timeout_api', default=60, min=1,
               help='Seconds the API waits for a conductor to answer an '
                    'RPC call before answering 503.'),
    cfg.BoolOpt('rbac_service_role_elevated_access', default=False,
                help='With the default policy, give users holding the '
                     '"service" role in the project named by '
                     'rbac_service_project_name system-member rights '
                     '(every node, not only their project\'s), as '
                     'Ironic does. Off: a service user sees only what '
                     'its project owns.'),
    cfg.StrOpt('rbac_service_project_name', default='service',
               help='The project of the service users '
                    'rbac_service_role_elevated_access elevates.'),
]


# Ironic's names and default, so that its consumers find them
notification_opts = [
    cfg.StrOpt('notification_level',
               choices=[('debug', 'send every notification'),
                        ('info', 'send info, warning, error and critical '
                         'ones (every start, end and success event)'),
                        ('warning', 'send warning, error and critical '
                         'ones'),
                        ('error', 'send error and critical ones (the '
                         '*.error events)'),
                        ('critical', 'send critical ones only')],
               help='Lowest priority of the versioned notifications this '
                    'service sends to the message bus '
                    '([oslo_messaging_notifications]transport_url, else '
                    '[DEFAULT]transport_url). Unset (the default): none '
                    'is sent and the hooks cost next to nothing (an '
                    'attribute check). Notifications are sent from a '
                    'thread of their '
                    'own and never delay the operation they report; they '
                    'may be lost (bus down for long).'),
    cfg.ListOpt('versioned_notifications_topics',
                default=['ironic_versioned_notifications'],
                help='Topics the versioned notifications go to, each '
                     'receiving all of them (as <topic>.<priority>). The '
                     'default is the one consumers written for Ironic '
                     'listen on; add a topic to give another consumer a '
                     'queue of its own.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts + _iface_opts() + notification_opts)


def list_opts():
    return opts + _iface_opts() + notification_opts
