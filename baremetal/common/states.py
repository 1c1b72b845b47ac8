"""Provision and power state names, as the REST API shows them.

Nothing else lives here: the transitions are in ``state_machine``.
"""

# Provision states
NOSTATE = None
ENROLL = 'enroll'
VERIFYING = 'verifying'
MANAGEABLE = 'manageable'
INSPECTING = 'inspecting'
INSPECTWAIT = 'inspect wait'
INSPECTFAIL = 'inspect failed'
CLEANING = 'cleaning'
CLEANWAIT = 'clean wait'
CLEANFAIL = 'clean failed'
AVAILABLE = 'available'
DEPLOYING = 'deploying'
DEPLOYWAIT = 'wait call-back'
DEPLOYFAIL = 'deploy failed'
ACTIVE = 'active'
DELETING = 'deleting'
DELETED = 'deleted'
ERROR = 'error'
RESCUING = 'rescuing'
RESCUEWAIT = 'rescue wait'
RESCUEFAIL = 'rescue failed'
RESCUE = 'rescue'
UNRESCUING = 'unrescuing'
UNRESCUEFAIL = 'unrescue failed'
ADOPTING = 'adopting'
ADOPTFAIL = 'adopt failed'

# Verbs accepted by PUT /v1/nodes/{node}/states/provision (API spelling)
VERBS = {
    'active': 'deploy',
    'deleted': 'deleted',
    'rebuild': 'rebuild',
    'manage': 'manage',
    'provide': 'provide',
    'inspect': 'inspect',
    'abort': 'abort',
    'clean': 'clean',
    'adopt': 'adopt',
    'rescue': 'rescue',
    'unrescue': 'unrescue',
}

# Power states
POWER_ON = 'power on'
POWER_OFF = 'power off'
REBOOT = 'rebooting'
SOFT_REBOOT = 'soft rebooting'
SOFT_POWER_OFF = 'soft power off'

# Targets accepted by PUT /v1/nodes/{node}/states/power
POWER_TARGETS = (POWER_ON, POWER_OFF, REBOOT, SOFT_REBOOT, SOFT_POWER_OFF)

# Boot devices
BOOT_DEVICES = ('pxe', 'disk', 'cdrom', 'bios', 'safe', 'wanboot', 'usb')

# Console
CONSOLE_ENABLED = True
