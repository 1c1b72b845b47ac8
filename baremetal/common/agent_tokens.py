"""The agent token: a secret issued to the ramdisk at its first lookup
of each boot, required on every heartbeat after, and sent back to the
agent with every command (IPA rejects commands without it).

It lives in ``driver_internal_info['agent_secret_token']`` (the
conductor must present it to the agent, so it cannot be kept hashed);
the node API shows it masked and it is never logged.  Wiped when the
ramdisk is torn down, so the next boot gets a new one.
"""

import hmac
import secrets

TOKEN_KEY = 'agent_secret_token'
MASK = '******'

# what an agent knows of the node besides the token: all re-asserted by
# the next boot's first heartbeat
_BOOT_KEYS = (TOKEN_KEY, 'agent_url', 'agent_verify_ca',
              'agent_command', 'agent_last_heartbeat')


def present(node) -> bool:
    return bool(node.driver_internal_info.get(TOKEN_KEY))


def issue(node) -> str:
    """A new token for this boot (the caller holds the node's lock)."""
    token = secrets.token_urlsafe(32)
    node.driver_internal_info[TOKEN_KEY] = token
    return token


def valid(node, token) -> bool:
    known = node.driver_internal_info.get(TOKEN_KEY)
    if not known or not isinstance(token, str):
        return False
    return hmac.compare_digest(known.encode(), token.encode())


def wipe(node) -> None:
    """Forget this boot's agent: token, URL, CA, running command."""
    info = node.driver_internal_info
    for key in _BOOT_KEYS:
        info.pop(key, None)
