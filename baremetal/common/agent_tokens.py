"""The agent token: a secret per boot of the ramdisk, required on every
heartbeat and sent back to the agent with every command (IPA rejects
commands without it).

Two ways for the agent to get it:

* on the boot medium (``pregenerate``): a boot interface that builds the
  ramdisk's medium itself (``redfish-virtual-media``) writes the token
  into the kernel command line (``ipa-agent-token``, as IPA reads it);
  every lookup then hands out ``******``, so a host that merely knows
  the node's MAC address learns nothing;
* at the first lookup of a boot (``issue``), for network boot, where
  the medium is fetched from the network by anyone who asks.  Later
  lookups get ``******``, unless no heartbeat has carried the token
  handed out for ``[DEFAULT]rpc_response_timeout_api`` seconds: that
  lookup's answer was lost (its conductor or the API died before it went
  out; the agent looks up again), and the next lookup gets a new token
  (``lost_in_transit``).  Until then, while no heartbeat has carried the
  token, a lookup is answered 409 (``in_transit``): IPA looks up again
  after a 409, where ``******`` would leave it without a token.

It lives in ``driver_internal_info['agent_secret_token']`` (the
conductor must present it to the agent, so it cannot be kept hashed);
the node API shows it masked.  Wiped when the ramdisk is torn down, so
the next boot gets a new one.
"""

import datetime
import hmac
import secrets

from oslo_log import log

from baremetal.common import exception

LOG = log.getLogger(__name__)

TOKEN_KEY = 'agent_secret_token'
# when a lookup handed it out
ISSUED_AT_KEY = 'agent_secret_token_issued_at'
# the token went onto the boot medium: no lookup hands it out
PREGENERATED_KEY = 'agent_secret_token_pregenerated'
MASK = '******'

# the agent command the running step waits on: {'name', 'id'[, 'adopted']}
COMMAND_KEY = 'agent_command'
# what an agent knows of the node besides the token: all re-asserted by
# the next boot's first heartbeat
_BOOT_KEYS = (TOKEN_KEY, PREGENERATED_KEY, ISSUED_AT_KEY, 'agent_url',
              'agent_verify_ca', COMMAND_KEY, 'agent_last_heartbeat')


def present(node) -> bool:
    return bool(node.driver_internal_info.get(TOKEN_KEY))


def issued(driver_internal_info) -> bool:
    """Whether this boot already has a token (a node row's
    driver_internal_info, as the API reads it)."""
    return bool((driver_internal_info or {}).get(TOKEN_KEY))


def issue(node) -> str:
    """A new token for this boot, handed out at a lookup (the caller
    holds the node's lock)."""
    token = secrets.token_urlsafe(32)
    node.driver_internal_info[TOKEN_KEY] = token
    node.driver_internal_info[ISSUED_AT_KEY] = _now().isoformat()
    return token


def pregenerate(node) -> str:
    """A new token for a boot medium that carries it (the caller holds
    the node's lock); lookups will not hand it out."""
    token = issue(node)
    info = node.driver_internal_info
    info.pop(ISSUED_AT_KEY, None)
    info[PREGENERATED_KEY] = True
    return token


def _uncarried_age(driver_internal_info) -> float | None:
    """Seconds since a lookup handed out this boot's token, while no
    heartbeat has carried it (None: no token, one on the boot medium,
    or one a heartbeat carried)."""
    info = driver_internal_info or {}
    if not info.get(TOKEN_KEY) or info.get(PREGENERATED_KEY) or \
            info.get('agent_last_heartbeat'):
        return None
    return _age(info.get(ISSUED_AT_KEY))


def lost_in_transit(driver_internal_info, after: float) -> bool:
    """Whether the token a lookup handed out at least ``after`` seconds
    ago has been carried by no heartbeat since: that lookup's answer most
    likely never reached the agent (the conductor or the API was lost
    before it went out), and the agent looks up again.  Never for a token
    on the boot medium, or one a heartbeat has carried."""
    age = _uncarried_age(driver_internal_info)
    return age is not None and age >= after


def in_transit(driver_internal_info, after: float) -> bool:
    """Whether the token a lookup handed out less than ``after`` seconds
    ago has been carried by no heartbeat yet: another lookup now is
    answered 409 (AgentTokenInTransit), not ``******``.  An agent whose
    first lookup's answer was lost looks up again, and with ``******``
    it would be left without a token for its boot (IPA stops, "FATAL");
    after the 409s it gets the token that replaces the lost one."""
    age = _uncarried_age(driver_internal_info)
    return age is not None and age < after


def pregenerated(node) -> bool:
    return bool(node.driver_internal_info.get(PREGENERATED_KEY))


def check(node_uuid: str, driver_internal_info: dict | None,
          token) -> None:
    """AgentTokenInvalid (401), logged, unless ``token`` is this boot's
    (a node's ``driver_internal_info``).  The API checks a heartbeat's
    token on the row it read before it calls the conductor, which checks
    again under the node's lock: a token on the node was committed before
    its agent could hold it, so a row read after the heartbeat arrived
    refuses only what the conductor would."""
    known = (driver_internal_info or {}).get(TOKEN_KEY)
    if known and isinstance(token, str) and hmac.compare_digest(
            known.encode(), token.encode()):
        return
    LOG.warning('Node %s: heartbeat refused: %s agent token', node_uuid,
                'a wrong' if known else 'no')
    raise exception.AgentTokenInvalid(
        node=node_uuid,
        reason='it does not match the token issued at this boot\'s '
               'lookup' if known else 'no token was issued for this '
               'boot (no lookup at API 1.62 or later)')


def wipe(node) -> None:
    """Forget this boot's agent: token, URL, CA, running command."""
    info = node.driver_internal_info
    for key in _BOOT_KEYS:
        info.pop(key, None)


def command_ended(driver_internal_info: dict) -> None:
    """The step whose agent command was recorded is over (the next one
    starts, or the plan ended): nothing waits on that command now."""
    driver_internal_info.pop(COMMAND_KEY, None)


def heartbeat_age(driver_internal_info: dict) -> float | None:
    """Seconds since this boot's agent last heartbeated (None: no
    heartbeat recorded, or not a time)."""
    return _age(driver_internal_info.get('agent_last_heartbeat'))


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def _age(when) -> float | None:
    """Seconds since ``when`` (an ISO time, UTC; None: not a time)."""
    if not isinstance(when, str):
        return None
    try:
        then = datetime.datetime.fromisoformat(when)
    except ValueError:
        return None
    return (_now() - then.replace(tzinfo=None)).total_seconds()
