"""/v1/nodes/{node}/states: provision, power, raid, console."""

from baremetal.api import collection
from baremetal.api import policy
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.controllers.v1 import nodes
from baremetal.api.controllers.v1 import runbooks
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.common import raid_config
from baremetal.common import retirement
from baremetal.common import state_machine
from baremetal.common import states
from baremetal.common import step_requests
from baremetal.db import traits as db_traits
from baremetal import objects

# verb -> the body keys it accepts besides "target"
_VERB_ARGS = {
    'active': {'configdrive', 'deploy_steps'},
    'rebuild': {'configdrive', 'deploy_steps'},
    'clean': {'clean_steps', 'disable_ramdisk', 'runbook'},
    'service': {'service_steps', 'disable_ramdisk', 'runbook'},
    'rescue': {'rescue_password'},
}
# API 1.73's spellings of two verbs
_ALIASES = {'deploy': 'active', 'undeploy': 'deleted'}


def _point_at_states(req, row: dict) -> None:
    """An accepted state change answers with where to watch it."""
    req.response_headers['Location'] = req.link('nodes', row['uuid'],
                                                'states')['href']


@route('GET', '/v1/nodes/{node}/states')
def get_states(req, node):
    row = nodes.get_row(req, node)
    out = {}
    for f in ('console_enabled', 'last_error', 'power_state',
              'provision_state', 'provision_updated_at',
              'target_power_state', 'target_provision_state'):
        out[f] = row[f]
    out['console_enabled'] = bool(row['console_enabled'])
    out['provision_updated_at'] = node_view.iso(row['provision_updated_at'])
    if out['provision_state'] == states.AVAILABLE and not req.allows(
            versions.AVAILABLE_STATE):
        out['provision_state'] = None
    if req.allows(versions.RAID):
        out['raid_config'] = row['raid_config'] or {}
        out['target_raid_config'] = row['target_raid_config'] or {}
    if req.allows(versions.BOOT_MODE):
        out['boot_mode'] = row['boot_mode']
        out['secure_boot'] = row['secure_boot']
    return out


@route('PUT', '/v1/nodes/{node}/states/boot_mode', status=202,
       min_version=versions.SET_BOOT_MODE)
def set_boot_mode(req, node):
    policy.authorize(req, 'baremetal:node:set_boot_mode')
    target = req.json_object().get('target')
    if target not in ('uefi', 'bios'):
        raise exception.InvalidParameterValue(
            err='Invalid boot mode %r; valid: uefi, bios' % (target,))
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'set_boot_mode', mode=target)
    _point_at_states(req, row)
    return None


@route('PUT', '/v1/nodes/{node}/states/secure_boot', status=202,
       min_version=versions.SET_BOOT_MODE)
def set_secure_boot(req, node):
    policy.authorize(req, 'baremetal:node:set_secure_boot')
    body = req.json_object()
    if 'target' not in body:
        raise exception.MissingParameterValue(
            err='"target" (a boolean) is required')
    target = collection.parse_bool('target', body['target'])
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'set_secure_boot', state=target)
    _point_at_states(req, row)
    return None


def _check_configdrive(req, verb: str, cd) -> None:
    if cd is None:
        return
    if verb == 'rebuild' and not req.allows(versions.REBUILD_CONFIGDRIVE):
        raise exception.NotAcceptable(
            reason='configdrive with rebuild needs API version 1.35')
    if isinstance(cd, dict):
        if not req.allows(versions.CONFIGDRIVE_JSON):
            raise exception.NotAcceptable(
                reason='a configdrive as a JSON object needs API version '
                       '1.56 or later')
        allowed = {'meta_data', 'network_data', 'user_data'}
        if req.allows(versions.CONFIGDRIVE_VENDOR_DATA):
            allowed.add('vendor_data')
        bad = set(cd) - allowed
        if bad:
            raise exception.InvalidParameterValue(
                err='Invalid configdrive key(s) %s; allowed: %s'
                % (', '.join(sorted(bad)), ', '.join(sorted(allowed))))
        for k in ('meta_data', 'network_data', 'vendor_data'):
            if k in cd and not isinstance(cd[k], dict):
                raise exception.InvalidParameterValue(
                    err='configdrive %s must be a JSON object' % k)
        if 'user_data' in cd and not isinstance(
                cd['user_data'], (str, dict, list)):
            raise exception.InvalidParameterValue(
                err='configdrive user_data must be a string, an object '
                    'or a list')
    elif not isinstance(cd, str):
        raise exception.InvalidParameterValue(
            err='configdrive must be a string (gzipped, base64 ISO or a '
                'URL) or a JSON object')


@route('PUT', '/v1/nodes/{node}/states/provision', status=202)
def set_provision_state(req, node):
    policy.authorize(req, 'baremetal:node:set_provision_state')
    body = req.json_object()
    verb = _verb(req, body)
    params = _params(req, verb, body)
    # only what the checks, the policy and the routing need
    row = nodes.get_row(req, node, _PROVISION_COLUMNS)
    _check_node(req, verb, row)
    if 'runbook' in body:
        _runbook_steps(req, verb, body['runbook'], row, params)
    if verb == 'provide':
        retirement.check_providable(objects.Node(row))
    state.RPC.do_provisioning_action(req.context, row, verb, params)
    _point_at_states(req, row)
    return None


def _verb(req, body: dict) -> str:
    """The request's verb (1.73's aliases resolved), checked with the
    arguments given for it against the version."""
    verb = body.get('target')
    if not isinstance(verb, str) or (verb not in states.VERBS and
                                     verb not in _ALIASES):
        raise exception.InvalidParameterValue(
            err='"%s" is not a valid provision state target; valid: %s'
            % (verb, ', '.join(sorted(set(states.VERBS) |
                                      set(_ALIASES)))))
    minv = versions.VERB_VERSIONS.get(verb, versions.MIN)
    if not req.allows(minv):
        raise exception.NotAcceptable(
            reason='The provision verb "%s" needs API version 1.%d or '
                   'later' % (verb, minv))
    verb = _ALIASES.get(verb, verb)
    extra = set(body) - {'target'}
    bad = extra - _VERB_ARGS.get(verb, set())
    if bad:
        raise exception.InvalidParameterValue(
            err='%s can not be used with target "%s"'
            % (', '.join(sorted(bad)), verb))
    for arg, minv in (('deploy_steps', versions.DEPLOY_STEPS_ARG),
                      ('disable_ramdisk', _no_ramdisk_version(verb)),
                      ('runbook', versions.RUNBOOKS)):
        if arg in body and not req.allows(minv):
            raise exception.NotAcceptable(
                reason='%s needs API version 1.%d or later' % (arg, minv))
    return verb


def _params(req, verb: str, body: dict) -> dict:
    """What the conductor gets for the verb, each argument checked."""
    params = {}
    if verb in ('active', 'rebuild') and 'configdrive' in body:
        _check_configdrive(req, verb, body['configdrive'])
        params['configdrive'] = body['configdrive']
    if body.get('deploy_steps') is not None:
        params['deploy_steps'] = step_requests.check_request_shape(
            body['deploy_steps'], 'deploy', require_priority=True)
    if 'disable_ramdisk' in body:
        params['disable_ramdisk'] = collection.parse_bool(
            'disable_ramdisk', body['disable_ramdisk']) or False
    if verb in ('clean', 'service'):
        key = '%s_steps' % verb
        if 'runbook' in body and key in body:
            raise exception.InvalidParameterValue(
                err='"runbook" and "%s" can not be given together' % key)
        if 'runbook' not in body:
            if key not in body:
                raise exception.MissingParameterValue(
                    err='"%s" is required when setting target provision '
                        'state to %s' % (key, verb))
            params[key] = step_requests.check_request_shape(body[key], verb)
    if verb == 'rescue':
        pw = body.get('rescue_password')
        if not isinstance(pw, str) or not pw.strip():
            raise exception.MissingParameterValue(
                err='A non-empty "rescue_password" is required when '
                    'setting target provision state to rescue')
        params['rescue_password'] = pw
    return params


def _check_node(req, verb: str, row: dict) -> None:
    """The verb is possible in the node's state (and at this version)
    and the node's protection allows it."""
    if state_machine.next_state(row['provision_state'],
                                states.VERBS[verb]) is None:
        raise exception.InvalidStateRequested(
            action=verb, node=row['uuid'], state=row['provision_state'])
    if verb == 'abort' and row['provision_state'] == states.DEPLOYWAIT \
            and not req.allows(versions.DEPLOYWAIT_ABORT):
        raise exception.NotAcceptable(
            reason='Aborting a deployment in "%s" needs API version 1.%d '
                   'or later' % (states.DEPLOYWAIT,
                                 versions.DEPLOYWAIT_ABORT))
    if verb in ('deleted', 'rebuild') and row['protected']:
        raise exception.NodeProtected(node=row['uuid'])


def _runbook_steps(req, verb: str, runbook: str, row: dict,
                   params: dict) -> None:
    """The steps (and disable_ramdisk) of the runbook the request names,
    once the node may use it."""
    params['%s_steps' % verb], no_ramdisk = runbooks.steps_for_node(
        req, runbook, row,
        db_traits.traits_for_nodes([row['id']]).get(row['id'], []))
    if no_ramdisk:
        # the runbook's disable_ramdisk holds for servicing from 1.108
        minv = _no_ramdisk_version(verb)
        if not req.allows(minv):
            raise exception.NotAcceptable(
                reason='Runbook %s has disable_ramdisk set; servicing '
                       'without the ramdisk needs API version 1.%d or '
                       'later' % (runbook, minv))
        params['disable_ramdisk'] = True


def _no_ramdisk_version(verb: str) -> int:
    """disable_ramdisk: manual cleaning from 1.70, servicing from
    1.108."""
    return (versions.SERVICE_DISABLE_RAMDISK if verb == 'service'
            else versions.DISABLE_RAMDISK)


_PROVISION_COLUMNS = ('id', 'uuid', 'name', 'driver', 'conductor_group',
                      'provision_state', 'protected', 'owner', 'lessee',
                      'retired', 'retired_reason')


@route('PUT', '/v1/nodes/{node}/states/power', status=202)
def set_power_state(req, node):
    policy.authorize(req, 'baremetal:node:set_power_state')
    body = req.json_object()
    target = body.get('target')
    bad = set(body) - {'target', 'timeout'}
    if bad:
        raise exception.InvalidParameterValue(
            err='Unknown argument(s): %s' % ', '.join(sorted(bad)))
    if target not in states.POWER_TARGETS:
        raise exception.InvalidParameterValue(
            err='"%s" is not a valid power state target; valid: %s'
            % (target, ', '.join(states.POWER_TARGETS)))
    soft = target in (states.SOFT_REBOOT, states.SOFT_POWER_OFF)
    timeout = body.get('timeout')
    if (soft or timeout is not None) and not req.allows(
            versions.SOFT_POWER):
        raise exception.NotAcceptable(
            reason='soft power actions and timeout need API version 1.27')
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int) or \
                timeout < 1:
            raise exception.InvalidParameterValue(
                err='timeout must be a positive integer, got %r' % timeout)
    row = nodes.get_row(req, node)
    if row['provision_state'] in state_machine.POWER_REFUSED_STATES:
        raise exception.InvalidState(
            reason='Node %s is in state "%s"; power actions are refused '
                   'until cleaning ends or fails'
            % (row['uuid'], row['provision_state']))
    state.RPC.change_node_power_state(req.context, row, target, timeout)
    _point_at_states(req, row)
    return None


@route('PUT', '/v1/nodes/{node}/states/raid', status=204,
       min_version=versions.RAID)
def set_raid_config(req, node):
    """Set the node's target RAID configuration.

    Checked with Ironic's RAID schema and messages
    (common/raid_config.py), and a software RAID configuration with the
    agent's rules; an empty object clears the target.  What a RAID
    interface cannot build (a level, a controller) fails its step."""
    policy.authorize(req, 'baremetal:node:set_raid_state')
    body = req.json_object()
    if body:
        raid_config.validate(body)
        # software RAID is the agent's: what it would refuse to build is
        # refused now
        raid_config.check_software(body)
    obj = nodes.get_node(req, node)
    if obj.driver_internal_info is not None and \
            (obj.raid_interface or '') == 'no-raid':
        raise exception.UnsupportedDriverExtension(driver=obj.driver,
                                                   extension='raid')
    obj.target_raid_config = body
    obj.save_unlocked(state.CONF)
    return None


@route('GET', '/v1/nodes/{node}/states/console')
def get_console(req, node):
    policy.authorize(req, 'baremetal:node:get_console')
    row = nodes.get_row(req, node)
    info = None
    if row['console_enabled']:
        info = state.RPC.node_call(req.context, row,
                                   'get_console_information')
    return {'console_enabled': bool(row['console_enabled']),
            'console_info': info}


@route('PUT', '/v1/nodes/{node}/states/console', status=202)
def set_console(req, node):
    policy.authorize(req, 'baremetal:node:set_console_state')
    body = req.json_object()
    enabled = collection.parse_bool('enabled', body.get('enabled'))
    if enabled is None:
        raise exception.MissingParameterValue(
            err='"enabled" (a boolean) is required')
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'set_console_mode',
                        enabled=enabled)
    req.response_headers['Location'] = req.link('nodes', row['uuid'],
                                                'states', 'console')['href']
    return None


# Ironic also serves a node's states and its console with the node after
# them (its pecan routing); ironic-tempest-plugin reads the console so
route('GET', '/v1/nodes/states/{node}')(get_states)
route('GET', '/v1/nodes/states/console/{node}')(get_console)
route('PUT', '/v1/nodes/states/console/{node}', status=202)(set_console)
