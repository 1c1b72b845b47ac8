"""``redfish`` BIOS interface: read, apply and reset BIOS settings.

Redfish stages BIOS changes as pending settings that the firmware applies
while the machine boots.  ``apply_configuration`` and ``factory_reset``
therefore stage the change, restart the node and return the wait state
(``clean wait`` / ``deploy wait``); ``poll_step`` finishes the step once
the BMC reports the new settings as current.  The conductor then stores
the settings it reads (``GET /v1/nodes/{node}/bios``).
"""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import power

LOG = log.getLogger(__name__)

_PENDING = 'redfish_bios_pending'
_SETTINGS_ARGS = {'settings': {
    'description': 'A list of {"name": ..., "value": ...} BIOS settings '
                   'to apply', 'required': True}}


def _wait_state(task) -> str:
    return (states.CLEANWAIT
            if task.node.provision_state in (states.CLEANING,
                                             states.CLEANWAIT)
            else states.DEPLOYWAIT)


def _settings(attributes, which: str = 'current') -> dict:
    """A Bios resource's ``Attributes``: an object, or none (TypeError,
    a BMC's answer that is no Redfish resource, for anything else: a
    step would otherwise wait for ever for settings it cannot read)."""
    if attributes is None:
        return {}
    if not isinstance(attributes, dict):
        raise TypeError('the %s BIOS settings are %s, not an object'
                        % (which, type(attributes).__name__))
    return attributes


def _staged_in(bios) -> bool:
    """Whether the Bios resource names the settings object its changes
    are staged in (``@Redfish.Settings``; without one, a BIOS's settings
    are read-only)."""
    settings = bios.json.get('@Redfish.Settings')
    link = settings.get('SettingsObject') if isinstance(settings, dict) \
        else None
    return isinstance(link, dict) and isinstance(link.get('@odata.id'), str)


class RedfishBIOS(client.Interface, base.BIOSInterface):
    def _bios(self, task):
        system = self._system(task)
        with client.call(task.node, task.conductor.conf, 'read BIOS'):
            return system, system.bios

    def cache_bios_settings(self, task):
        _, bios = self._bios(task)
        with client.call(task.node, task.conductor.conf,
                         'read BIOS attributes'):
            bios.refresh()
            attrs = _settings(bios.attributes)
        return [{'name': k, 'value': v} for k, v in sorted(attrs.items())]

    @base.clean_step(priority=0, argsinfo=_SETTINGS_ARGS,
                     requires_ramdisk=False)
    @base.deploy_step(priority=0, argsinfo=_SETTINGS_ARGS)
    def apply_configuration(self, task, settings):
        """Stage the settings, reboot, wait until they are current."""
        if not isinstance(settings, list) or not settings or not all(
                isinstance(s, dict) and isinstance(s.get('name'), str)
                and 'value' in s for s in settings):
            raise exception.InvalidParameterValue(
                'settings must be a non-empty list of {"name", "value"} '
                'objects')
        wanted = {s['name']: s['value'] for s in settings}
        system, bios = self._bios(task)
        with client.call(task.node, task.conductor.conf,
                         'stage BIOS settings'):
            unknown = sorted(set(wanted) - set(_settings(bios.attributes)))
            if unknown:
                raise exception.InvalidParameterValue(
                    'BIOS of node %s has no setting(s) %s'
                    % (task.node.uuid, ', '.join(unknown)))
            if not _staged_in(bios):
                raise exception.RedfishError(
                    error='the BMC of node %s names no settings object '
                          '(@Redfish.Settings) in its Bios resource: its '
                          'BIOS settings cannot be changed' % task.node.uuid)
            bios.set_attributes(wanted)
        return self._reboot_and_wait(task, system, wanted)

    @base.clean_step(priority=0, requires_ramdisk=False)
    @base.deploy_step(priority=0)
    def factory_reset(self, task):
        """Reset the BIOS to its defaults (applied at the reboot)."""
        system, bios = self._bios(task)
        with client.call(task.node, task.conductor.conf, 'reset BIOS'):
            bios.reset_bios()
        return self._reboot_and_wait(task, system, None)

    def _reboot_and_wait(self, task, system, wanted):
        task.node.driver_internal_info[_PENDING] = {
            'settings': wanted,
            'was': power._state(system.json)}
        task.power_action(states.REBOOT)
        return _wait_state(task)

    polls_steps = True

    def poll_step(self, task, step):
        pending = task.node.driver_internal_info.get(_PENDING)
        if pending is None:
            return True
        _, bios = self._bios(task)
        with client.call(task.node, task.conductor.conf,
                         'read BIOS attributes'):
            bios.refresh()
            current = _settings(bios.attributes)
        wanted = pending.get('settings')
        if wanted is not None:
            differ = {k: current.get(k) for k, v in wanted.items()
                      if current.get(k) != v}
            if differ:
                LOG.debug('Node %s: BIOS settings not applied yet: %s',
                          task.node.uuid, differ)
                return False
        elif _staged_in(bios):
            # (a BIOS that stages nothing has nothing left to apply)
            with client.call(task.node, task.conductor.conf,
                             'read pending BIOS settings'):
                staged = _settings(bios.pending_attributes, 'staged')
                if staged and staged != current:
                    return False
        task.node.driver_internal_info.pop(_PENDING, None)
        return True
