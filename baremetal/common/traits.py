"""Which trait names are valid: a standard trait (the os-traits library,
as Placement and Ironic use it) or a custom one, ``CUSTOM_`` followed by
upper-case letters, digits and underscores; at most 255 characters."""

import functools
import re

import os_traits

_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
MAX_LENGTH = 255


@functools.lru_cache(maxsize=1)
def _standard() -> frozenset:
    return frozenset(os_traits.get_traits())


def is_valid(trait) -> bool:
    return (isinstance(trait, str) and len(trait) <= MAX_LENGTH and
            (trait in _standard() or bool(_CUSTOM.match(trait))))


def describe(trait) -> str:
    """Why ``trait`` is refused, for a 400."""
    return ('Invalid trait %r: a trait is either a standard one (the '
            'os-traits list, e.g. HW_CPU_X86_AVX2) or a custom one, '
            'CUSTOM_ followed by A-Z, 0-9 or _, at most %d characters'
            % (trait, MAX_LENGTH))
