"""[conductor] options: heartbeats, periodic tasks, timeouts, workers."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('heartbeat_interval', default=10, min=1,
               help='Seconds between conductor heartbeats.'),
    cfg.IntOpt('heartbeat_timeout', default=60, min=2,
               help='Seconds after its last heartbeat that a conductor '
                    'counts as dead and its nodes are taken over. Lower '
                    'reacts faster to a crash; too low flaps on load.'),
    cfg.IntOpt('sync_power_state_interval', default=60,
               help='Seconds between power state syncs; 0 or less '
                    'disables the sync.'),
    cfg.IntOpt('power_state_sync_max_retries', default=3, min=1,
               help='Failed power reads in a row before a node is put '
                    'into maintenance.'),
    cfg.IntOpt('sync_power_state_workers', default=8, min=1,
               help='The most power reads the sync runs at once (all '
                    'BMCs together); each BMC is sent one request at a '
                    'time. A round starts with one and adds workers, up '
                    'to this many, only while it would not read every '
                    'node within half of sync_power_state_interval: '
                    'raise it for many nodes behind slow BMCs (nodes '
                    'x BMC latency / (interval / 2), e.g. 32 for '
                    '10,000 nodes answering in 0.1 s on average).'),
    cfg.IntOpt('power_sync_max_backoff', default=600, min=0,
               help='Longest time, in seconds, the power sync leaves a '
                    'BMC alone after it failed (could not be reached, '
                    'timed out or answered with a server error): it '
                    'sits out 0, 1, 3, 7, ... sync intervals after its '
                    '1st, 2nd, 3rd, 4th, ... failure in a row, at most '
                    'this long; one successful read resets it. Its '
                    'nodes still go into maintenance after '
                    'power_state_sync_max_retries failed syncs. 0 '
                    'disables the back-off.'),
    cfg.IntOpt('power_state_change_timeout', default=60, min=1,
               help='Seconds to wait for a node to reach the power state '
                    'it was asked for before the change counts as '
                    'failed.'),
    cfg.IntOpt('soft_power_off_timeout', default=600, min=1,
               help='Seconds a soft power off or soft reboot waits for '
                    'the operating system to shut down, when the '
                    'request names no timeout.'),
    cfg.IntOpt('check_provision_state_interval', default=60, min=1,
               help='Seconds between checks for nodes stuck in a wait '
                    'state past their callback timeout.'),
    cfg.IntOpt('deploy_callback_timeout', default=1800, min=0,
               help='Seconds a node may stay in "wait call-back" before '
                    'it goes to "deploy failed". 0 disables.'),
    cfg.IntOpt('clean_callback_timeout', default=1800, min=0,
               help='Seconds a node may stay in "clean wait" before it '
                    'goes to "clean failed". 0 disables.'),
    cfg.IntOpt('service_callback_timeout', default=1800, min=0,
               help='Seconds a node may stay in "service wait" before it '
                    'goes to "service failed". 0 disables.'),
    cfg.IntOpt('max_conductor_wait_step_seconds', default=30, min=0,
               max=1800, mutable=True,
               help='Longest pause a reserved "wait" step with a '
                    '"seconds" argument may ask for; longer requests are '
                    'cut to it.'),
    cfg.IntOpt('inspect_wait_timeout', default=1800, min=0,
               help='Seconds a node may stay in "inspect wait". '
                    '0 disables.'),
    cfg.IntOpt('rescue_callback_timeout', default=1800, min=0,
               help='Seconds a node may stay in "rescue wait". '
                    '0 disables.'),
    cfg.StrOpt('rescue_password_hash_algorithm', default='sha256',
               choices=['sha256', 'sha512'],
               help='The crypt(3) scheme the rescue password is hashed '
                    'with before it is sent to the agent: the plain '
                    'password never leaves the conductor.'),
    cfg.IntOpt('workers_pool_size', default=100, min=3,
               help='Threads running long node work (steps, power '
                    'actions). A tenth (at least 2) is kept back for '
                    'periodic tasks so they never starve.'),
    cfg.BoolOpt('enable_health_monitoring', default=True,
                help='At each power state sync, also read the hardware '
                     'health the BMC reports (node field "health", API '
                     '1.109; a change is recorded in the node history). '
                     'Drivers that cannot report it are skipped; the '
                     'others cost one more BMC request per node and '
                     'sync.'),
    cfg.BoolOpt('automated_clean', default=True,
                deprecated_name='clean_nodes',
                deprecated_group='conductor',
                help='Clean nodes on provide and after tear-down (erase '
                     'their disks, reset their settings) when the node\'s '
                     'own automated_clean field (API 1.47) is unset. A '
                     'node whose automated_clean is true is cleaned and '
                     'one whose automated_clean is false is not, '
                     'whatever this says. Turning it off makes '
                     'tear-down and provide faster but hands the next '
                     'workload whatever the previous one left on the '
                     'disks.'),
    cfg.MultiStrOpt('clean_step_priority_override', default=[],
                    help='Override a clean step priority: '
                         '"interface.step:priority", repeatable. 0 '
                         'disables a step for automated cleaning.'),
    cfg.MultiStrOpt('deploy_step_priority_override', default=[],
                    help='Override a deploy step priority: '
                         '"interface.step:priority", repeatable. 0 '
                         'disables a step.'),
    cfg.StrOpt('conductor_group', default='',
               help='Group of this conductor; nodes with a matching '
                    'conductor_group are managed only by its members.'),
    cfg.IntOpt('hash_ring_replicas', default=64, min=1,
               help='Points each conductor takes on the hash ring; more '
                    'spreads nodes more evenly.'),
    cfg.IntOpt('hash_ring_reset_interval', default=15, min=1,
               help='Seconds a cached hash ring lives before it is '
                    'rebuilt from the conductor list.'),
    cfg.IntOpt('async_step_poll_interval', default=10, min=1,
               help='Seconds between asks to drivers whether the '
                    'asynchronous step a node waits on has finished, '
                    'for a step this conductor did not start (a node '
                    'taken over, a restart): a step it started is '
                    'polled from its start, up to '
                    '[agent]command_poll_max_interval apart.'),
    cfg.IntOpt('takeover_interval', default=10, min=1,
               help='Seconds between checks for nodes left by dead '
                    'conductors (and for this conductor\'s own nodes '
                    'after a restart).'),
    cfg.StrOpt('api_url',
               help='URL agents reach the API at (the ipa-api-url '
                    'kernel parameter of the ramdisk). Unset: '
                    'http://<[api]host_ip>:<[api]port> of this '
                    'machine, right only for the embedded server.'),
    cfg.StrOpt('deploy_kernel',
               help='Agent ramdisk kernel (http(s):// or file:// URL, or '
                    'an absolute path inside file_url_allowed_paths) for '
                    'nodes whose driver_info names none.'),
    cfg.StrOpt('deploy_ramdisk',
               help='Agent ramdisk initramfs, as deploy_kernel.'),
    cfg.StrOpt('bootloader',
               help='EFI System Partition image (a FAT image holding '
                    'EFI/BOOT/BOOTX64.EFI; http(s):// or file:// URL, or '
                    'an absolute path inside file_url_allowed_paths) '
                    'that boot ISOs carry for UEFI firmware, for nodes '
                    'whose driver_info names none. Unset: the conductor '
                    'builds one with GRUB (Debian packages '
                    'grub-efi-amd64-bin, dosfstools, mtools). The image\'s '
                    'boot loader must read the GRUB menu the ISO carries '
                    'at /EFI/BOOT/grub.cfg or /boot/grub/grub.cfg.'),
    cfg.ListOpt('file_url_allowed_paths',
                default=['/srv/baremetal', '/shared/html'],
                help='Directories whose files nodes may name as images '
                     '(file:// URLs and absolute paths in instance_info '
                     'image_source, kernel, ramdisk and boot_iso, in '
                     'driver_info deploy_kernel, deploy_ramdisk and '
                     'bootloader, and deploy_kernel/deploy_ramdisk/'
                     'bootloader above). The conductor '
                     'serves such files over HTTP without authentication '
                     'and builds them into boot ISOs: anything in these '
                     'directories can be read by whoever may set those '
                     'fields or reach [deploy]http_url. A file counts '
                     'where it really is, once ".." and symbolic links '
                     'are resolved. Each item must be an absolute path '
                     '(a relative one stops the conductor at start). '
                     'Never allowed, even inside a listed directory: '
                     '/boot, /dev, /etc, /proc, /root, /run, /sys, '
                     '/var/lock, /var/log, /var/run, and this service\'s '
                     'configuration files and SQLite database. Keep '
                     '[DEFAULT]state_path (database, certificates, '
                     'caches) out of the list. Empty: no local files at '
                     'all, only http(s):// URLs.'),
    cfg.IntOpt('image_cache_size', default=20480, min=0,
               help='MiB the conductor\'s image cache '
                    '($state_path/images: Glance images it serves to '
                    'agents, deploy kernels and ramdisks, ESP images, '
                    'boot ISOs and virtual media images it serves to '
                    'BMCs) may hold. Each time an image has been fetched '
                    'into it, the least recently used images past this '
                    'size are removed, except those in use: the image '
                    'just fetched, images a boot or deploy is still '
                    'fetching or building from, and images published '
                    'for an agent or a BMC (they go at a later fetch, '
                    'once withdrawn). 0: only images in use are kept. '
                    'A local file linked into the cache (file:// '
                    'sources) counts, but shares the disk space of the '
                    'original. A larger cache saves downloads; it needs '
                    'the disk space.'),
    cfg.IntOpt('iso_cache_size', default=4096, min=0,
               help='MiB the virtual media ISO cache ($state_path/isos) '
                    'may hold; past it, the least recently used ISOs no '
                    'BMC is being served are removed (rebuilt when asked '
                    'for again).'),
    cfg.IntOpt('node_locked_retry_attempts', default=3, min=1,
               help='Attempts to take a node that another task holds '
                    'before a request is answered 409 (Conflict): a '
                    'request waits up to (attempts - 1) x '
                    'node_locked_retry_interval seconds for the lock, '
                    'checking again as soon as it may be free. Periodic '
                    'tasks do not wait: they skip a busy node.'),
    cfg.FloatOpt('node_locked_retry_interval', default=1.0, min=0,
                 help='Seconds between two attempts to take a node that '
                      'another task holds (see '
                      'node_locked_retry_attempts); the first checks come '
                      'sooner, so a lock held for a moment costs a '
                      'moment.'),
    cfg.IntOpt('graceful_shutdown_timeout', default=60, min=0,
               help='Seconds a stopping conductor waits for running '
                    'work before it hands its nodes back.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='conductor')


def list_opts():
    return opts
