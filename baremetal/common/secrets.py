"""Masking secrets in node fields (driver_info, instance_info...): what
the API shows and what the agent is told of a node; and in free text (an
error message, a log line): agent tokens and URL passwords."""

import functools
import re
from collections.abc import Mapping

from oslo_utils import secretutils
from oslo_utils import strutils

MASK = '******'

# secrets oslo.utils does not recognise by name (it does passwords,
# tokens, secrets...): the IPMI BMC key
_MORE_SECRETS = ('kg_key',)


@functools.lru_cache(maxsize=1024)
def _secret_key(key: str) -> bool:
    """Whether oslo.utils masks the value under ``key`` whatever it is."""
    return strutils.mask_dict_password({key: None}, MASK)[key] == MASK


@functools.lru_cache(maxsize=8192)
def _mask_str(value: str) -> str:
    return strutils.mask_password(value, MASK)


def _mask(info: Mapping) -> dict:
    """oslo.utils' mask_dict_password, with its per-key and per-string
    decisions remembered: node lists mask the same keys and mostly the
    same values over and over."""
    out = {}
    for k, v in info.items():
        if isinstance(v, Mapping):
            out[k] = _mask(v)
        elif isinstance(k, str) and _secret_key(k):
            out[k] = MASK
        elif isinstance(v, str):
            out[k] = _mask_str(v)
        elif isinstance(v, (list, tuple)):
            out[k] = strutils.mask_dict_password({'v': v}, MASK)['v']
        else:
            out[k] = v
    return out


def mask_secrets(info: dict | None, configdrive: bool = False) -> dict:
    if not info:
        return {}
    out = _mask(info)
    for k in out:
        if k.lower().endswith(_MORE_SECRETS) and out[k] is not None:
            out[k] = MASK
    if configdrive and 'configdrive' in out:
        out['configdrive'] = MASK
    return out


# ``agent_token=<value>`` as a query string carries it (IPA takes the
# token nowhere else), also URL-encoded (``agent_token%3D``) or as a key
# of JSON or a repr (``"agent_token": "..."``, and the node's
# ``agent_secret_token``); the value runs to the next delimiter of a
# query, a quoted string or a bracket
_AGENT_TOKEN = re.compile(
    r"""(agent_(?:secret_)?token(?:=|%3D|["']?\s*:\s*["']?))"""
    r"""[^&\s"'<>(){}\[\],;#]+""", re.IGNORECASE)
# ``scheme://user:password@`` or ``scheme://userinfo@`` (a token as the
# user name): the password, or the whole userinfo, goes; the password
# may hold a raw ``@`` (the last one before the host counts)
_URL_USERINFO = re.compile(
    r"""(\b[a-z][a-z0-9+.\-]*://)([^\s/?#@:'"]*)(:[^\s/?#'"]*)?@""",
    re.IGNORECASE)
# a known secret shorter than this is not searched for literally (it
# would mask ordinary words); tokens are 43 characters
_MIN_LITERAL = 8


def _mask_userinfo(m: re.Match[str]) -> str:
    if m.group(3) is None:
        return '%s%s@' % (m.group(1), MASK)
    return '%s%s:%s@' % (m.group(1), m.group(2), MASK)


def mask_text(text: str, *known: str | None) -> str:
    """``text`` without agent tokens (in query strings, JSON, and each of
    ``known`` wherever it appears) and without URL passwords: for any
    text that may quote a URL the conductor requested (an exception's
    message) before it reaches a node field, an API body or a log."""
    if not text:
        return text
    for secret in known:
        if secret and len(secret) >= _MIN_LITERAL and secret in text:
            text = text.replace(secret, MASK)
    if '://' in text:
        text = _URL_USERINFO.sub(_mask_userinfo, text)
    if '_token' in text.lower():
        text = _AGENT_TOKEN.sub(r'\1' + MASK, text)
    return text


_CRYPT_SCHEMES = {'sha256': 'SHA-256', 'sha512': 'SHA-512'}


def crypt_password(password: str, algorithm: str) -> str:
    """``password`` as crypt(3) hashes it for /etc/shadow, with a fresh
    salt: what the agent's rescue user gets, so the plain password never
    reaches the machine."""
    return secretutils.crypt_password(
        password, secretutils.crypt_mksalt(_CRYPT_SCHEMES[algorithm]))


# where a node keeps its rescue password while rescued: as given (for
# rescue interfaces that need it) and hashed (what the agent is sent);
# both masked in the API, both gone at unrescue
RESCUE_PASSWORD_KEYS = ('rescue_password', 'hashed_rescue_password')


def forget_rescue_password(node) -> None:
    for key in RESCUE_PASSWORD_KEYS:
        (node.instance_info or {}).pop(key, None)
