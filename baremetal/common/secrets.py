"""Masking secrets in node fields (driver_info, instance_info...): what
the API shows and what the agent is told of a node."""

import functools
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
