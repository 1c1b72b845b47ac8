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
CLEANHOLD = 'clean hold'
DEPLOYHOLD = 'deploy hold'
SERVICING = 'servicing'
SERVICEWAIT = 'service wait'
SERVICEFAIL = 'service failed'
SERVICEHOLD = 'service hold'

# The wait state of each kind of step
STEP_WAIT_STATES = {'clean': CLEANWAIT, 'deploy': DEPLOYWAIT,
                    'service': SERVICEWAIT}

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
    'unhold': 'unhold',
    'service': 'service',
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

# Virtual media device types (API 1.89)
VMEDIA_DEVICES = ('cdrom', 'floppy', 'disk')

# Console
CONSOLE_ENABLED = True

# A node's hardware health as its BMC reports it (API 1.109)
HEALTH_OK = 'OK'
HEALTH_WARNING = 'Warning'
HEALTH_CRITICAL = 'Critical'
HEALTH_STATES = (HEALTH_OK, HEALTH_WARNING, HEALTH_CRITICAL)

# where a node's driver and interfaces may change without maintenance
DRIVER_CHANGE_STATES = (ENROLL, MANAGEABLE, INSPECTING, INSPECTWAIT,
                        AVAILABLE)

# A node's fault (API 1.42): why it was put in maintenance on its own
FAULTS = ('power failure', 'clean failure', 'rescue abort failure',
          'service failure')
