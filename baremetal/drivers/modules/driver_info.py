"""Reading a node's driver_info: one clear error per missing or
malformed key, shared by the BMC drivers."""

from baremetal.common import exception


class Interface:
    """What every interface of one BMC protocol shares: its driver_info
    keys (``properties``) and their validation (``parse``, which raises
    on what is missing or malformed)."""

    properties: dict[str, str] = {}

    @staticmethod
    def parse(node, conf):
        raise NotImplementedError

    def get_properties(self):
        return dict(self.properties)

    def validate(self, task):
        self.parse(task.node, task.conductor.conf)


def required(node, keys: dict[str, str]) -> None:
    """Raise MissingParameterValue naming every missing key."""
    info = node.driver_info or {}
    missing = [k for k in keys if info.get(k) in (None, '')]
    if missing:
        raise exception.MissingParameterValue(
            'Missing the following %s properties in node %s driver_info: '
            '%s' % (_family(keys), node.uuid, ', '.join(sorted(missing))))


def _family(keys) -> str:
    first = next(iter(keys), '')
    return first.split('_', 1)[0].upper() if '_' in first else 'driver'


def port(node, key: str, default: int) -> int:
    value = (node.driver_info or {}).get(key)
    if value in (None, ''):
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if not 0 < number < 65536:
        raise exception.InvalidParameterValue(
            'Invalid %s %r in node %s driver_info: it must be an integer '
            'between 1 and 65535' % (key, value, node.uuid))
    return number


def choice(node, key: str, choices, default: str) -> str:
    value = (node.driver_info or {}).get(key)
    if value in (None, ''):
        return default
    if value not in choices:
        raise exception.InvalidParameterValue(
            'Invalid %s %r in node %s driver_info; valid values are: %s'
            % (key, value, node.uuid, ', '.join(choices)))
    return value


def string(node, key: str, default: str | None = None) -> str | None:
    value = (node.driver_info or {}).get(key)
    if value in (None, ''):
        return default
    if not isinstance(value, str):
        raise exception.InvalidParameterValue(
            'Invalid %s in node %s driver_info: it must be a string'
            % (key, node.uuid))
    return value


def bool_or_path(node, key: str, default=True):
    """``True``/``False`` (also as strings) or a CA bundle path."""
    value = (node.driver_info or {}).get(key)
    if value in (None, ''):
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ('true', 'yes', '1', 'on'):
            return True
        if low in ('false', 'no', '0', 'off'):
            return False
        return value
    raise exception.InvalidParameterValue(
        'Invalid %s %r in node %s driver_info: a boolean or a path to a '
        'CA bundle' % (key, value, node.uuid))
