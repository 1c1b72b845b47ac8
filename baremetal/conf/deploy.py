"""[deploy] options: disk clean step priorities, fast track, and the
files the conductor serves to BMCs and agents over HTTP."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('erase_devices_priority',
               help='Priority of the erase_devices clean step; unset '
                    'keeps the driver default, 0 disables it for '
                    'automated cleaning.'),
    cfg.IntOpt('erase_devices_metadata_priority',
               help='Priority of the erase_devices_metadata clean step; '
                    'unset keeps the driver default, 0 disables it for '
                    'automated cleaning.'),
    cfg.IntOpt('delete_configuration_priority',
               help='Priority of the agent RAID interface\'s '
                    'delete_configuration clean step; unset keeps the '
                    'agent\'s (0: manual cleaning only).'),
    cfg.IntOpt('create_configuration_priority',
               help='Priority of the agent RAID interface\'s '
                    'create_configuration clean step; unset keeps the '
                    'agent\'s (0: manual cleaning only).'),
    cfg.StrOpt('default_boot_mode', default='uefi',
               choices=[('uefi', 'UEFI firmware'),
                        ('bios', 'legacy BIOS (CSM)')],
               help='Boot mode of a node that asks for none: neither '
                    'boot_mode in properties/capabilities nor '
                    'deploy_boot_mode in instance_info. Every boot '
                    'device change sends the mode to the BMC (the EFI '
                    'flag over IPMI, BootSourceOverrideMode over '
                    'Redfish). Set bios for machines that boot legacy '
                    'BIOS only.'),
    cfg.BoolOpt('fast_track', default=False,
                help='Keep the agent ramdisk running between operations '
                     '(Ironic\'s fast track): a node whose agent was '
                     'booted for in-band inspection or cleaning stays '
                     'powered on with it (its lookup and heartbeats are '
                     'accepted in enroll, manageable and available too), '
                     'and the next cleaning or deployment uses the '
                     'running agent instead of rebooting the node, when '
                     'it heartbeated within fast_track_timeout and '
                     'answers. A node\'s driver_info fast_track (true or '
                     'false) overrides it. For standalone use on one '
                     'network (noop/flat network interfaces).'),
    cfg.IntOpt('fast_track_timeout', default=300, min=0, max=300,
               help='Seconds since an agent\'s last heartbeat within '
                    'which fast track uses it; an older heartbeat means '
                    'the node boots the agent again. Keep it at most '
                    '[api]ramdisk_heartbeat_timeout, and below the time '
                    'the node takes to reboot into the ramdisk.'),
    cfg.StrOpt('http_root', default='$state_path/httpboot',
               help='Directory whose files the conductor publishes over '
                    'HTTP (boot ISOs for virtual media, later iPXE '
                    'scripts and images).'),
    cfg.StrOpt('http_url',
               help='URL under which BMCs and agents reach http_root, '
                    'e.g. http://192.0.2.1:8089. Unset: '
                    'http://<http_server_host>:<port of the conductor\'s '
                    'own server>.'),
    cfg.StrOpt('external_http_url',
               help='URL under which BMCs reach http_root, when it '
                    'differs from http_url (which agents on the '
                    'provisioning network use): virtual media ISOs are '
                    'handed to BMCs with this one. Unset: http_url.'),
    cfg.BoolOpt('http_server_enabled', default=True,
                help='The conductor serves http_root itself (a small '
                     'read-only file server, started when the first file '
                     'is published). Turn off when a web server of your '
                     'own serves http_root at http_url.'),
    cfg.HostAddressOpt('http_server_host', default='127.0.0.1',
                       help='Address the conductor\'s file server listens '
                            'on. BMCs must reach it: set an address of '
                            'the provisioning network for real '
                            'hardware.'),
    cfg.PortOpt('http_server_port', default=8089,
                help='Port of the conductor\'s file server; 0 picks a '
                     'free one at start (tests; then set no http_url).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='deploy')


def list_opts():
    return opts
