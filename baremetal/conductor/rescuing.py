"""Rescue and unrescue; adoption and verification (small workflows that
run one driver call and finish)."""

from oslo_log import log

from baremetal.common import secrets
from baremetal.common import states
from baremetal.conductor import bios
from baremetal.conductor import firmware
from baremetal.conductor import power

LOG = log.getLogger(__name__)


def _one_call(task, call, what: str, wait_ok: bool = False) -> None:
    node = task.node
    try:
        result = call(task)
    except Exception as e:
        node.last_error = '%s failed for node %s: %s' % (what, node.uuid, e)
        LOG.error(node.last_error)
        task.process_event('fail')
        return
    if wait_ok and result in (states.RESCUEWAIT,):
        task.process_event('wait')
        return
    node.last_error = None
    bios.cache(task)
    task.process_event('done')


def keep_password(task, rescue_password: str) -> None:
    """The rescue password, as given and hashed, saved with the node
    when the rescue starts: a conductor that takes over a node caught
    rescuing rescues it again with it (conductor/takeover.py)."""
    info = task.node.instance_info
    info['rescue_password'] = rescue_password
    info['hashed_rescue_password'] = secrets.crypt_password(
        rescue_password,
        task.conductor.conf.conductor.rescue_password_hash_algorithm)


def rescue(task) -> None:
    """Worker: rescuing -> rescue wait / rescue, with the password
    kept_password saved."""
    node = task.node
    if not (node.instance_info or {}).get('rescue_password'):
        node.last_error = ('Rescue failed for node %s: no rescue password '
                           'was saved with it; ask for the rescue again'
                           % node.uuid)
        LOG.error(node.last_error)
        task.process_event('fail')
        return
    _one_call(task, task.driver.rescue.rescue, 'Rescue', wait_ok=True)


def unrescue(task) -> None:
    secrets.forget_rescue_password(task.node)
    _one_call(task, task.driver.rescue.unrescue, 'Unrescue')


def adopt(task) -> None:
    """manageable or adopt failed -> adopting -> active, for a machine
    already running what instance_info describes, without touching it:
    nothing is powered, booted or written.  As in Ironic, only an
    instance that boots through the boot interface (the ramdisk deploy)
    has its boot interface validated; power was proven when the node
    became manageable.  A failure leaves the node in ``adopt failed``
    with the reason, its power state unknown, ready for another adopt
    once fixed."""
    node = task.node
    try:
        if task.driver.deploy.instance_boots_via_boot_interface:
            task.driver.boot.validate(task)
        task.driver.deploy.take_over(task)
    except Exception as e:
        node.last_error = ('Error while attempting to adopt node %s: %s.'
                           % (node.uuid, e))
        LOG.error(node.last_error)
        node.power_state = None
        task.process_event('fail')
        return
    LOG.info('Adopted node %s', node.uuid)
    node.last_error = None
    task.process_event('done')


def verify(task) -> None:
    """enroll -> verifying -> manageable: can we control its power?
    What it reads from the BMC (power, health, BIOS, firmware, boot mode)
    is read once (``task.bmc_reads``): a Redfish BMC is asked for the
    ComputerSystem twice, not once for each.  The health is recorded
    here as the power sync records it, so a node is manageable with its
    health known (the first sync round after enrolling a fleet does not
    write every node)."""
    node = task.node
    with task.bmc_reads():
        try:
            task.driver.power.validate(task)
            task.driver.management.validate(task)
            node.power_state = task.driver.power.get_power_state(task)
        except Exception as e:
            node.last_error = ('Failed to get power state for node %s. '
                               'Error: %s' % (node.uuid, e))
            LOG.error(node.last_error)
            task.process_event('fail')
            return
        node.last_error = None
        power.cache_health(task)
        bios.cache(task)
        firmware.cache(task)
        _record_boot_mode(task)
    task.process_event('done')


def _record_boot_mode(task) -> None:
    """boot_mode and secure_boot as the BMC reports them (API 1.75);
    left as they are where it cannot tell."""
    mgmt = task.driver.management
    for field, read in (('boot_mode', mgmt.get_boot_mode),
                        ('secure_boot', mgmt.get_secure_boot_state)):
        try:
            value = read(task)
        except Exception as e:
            # e.g. a BMC with no Secure Boot in legacy BIOS mode
            LOG.warning('Node %s: could not read its %s: %s',
                        task.node.uuid, field, e)
            continue
        if value is not None:
            setattr(task.node, field, value)
