"""Collections: limit, marker, sort, fields, next links, one query a page."""

from typing import Any

from baremetal.api import state
from baremetal.api import versions
from baremetal.common import exception

TRUE_STRINGS = ('1', 't', 'true', 'on', 'y', 'yes')
FALSE_STRINGS = ('0', 'f', 'false', 'off', 'n', 'no')


def parse_bool(name: str, value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    v = str(value).strip().lower()
    if v in TRUE_STRINGS:
        return True
    if v in FALSE_STRINGS:
        return False
    raise exception.InvalidParameterValue(
        err='Invalid value for %s: %r; expected a boolean' % (name, value))


def parse_int(name: str, value: Any, minimum: int | None = None
              ) -> int | None:
    if value is None:
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise exception.InvalidParameterValue(
            err='Invalid value for %s: %r; expected an integer'
            % (name, value)) from None
    if minimum is not None and n < minimum:
        raise exception.InvalidParameterValue(
            err='%s must be >= %d, got %d' % (name, minimum, n))
    return n


def limit(req) -> int:
    max_limit = state.CONF.api.max_limit
    n = parse_int('limit', req.params.get('limit'))
    if n is None or n == 0:
        return max_limit
    if n < 0:
        raise exception.InvalidParameterValue(
            err='Limit must be positive: %d' % n)
    return min(n, max_limit)


def sort(req, allowed: set[str], field_versions: dict,
         default: str = 'id') -> tuple[str, str]:
    key = req.params.get('sort_key', default)
    direction = req.params.get('sort_dir', 'asc')
    if direction not in ('asc', 'desc'):
        raise exception.InvalidParameterValue(
            err="Invalid sort direction: %s. Acceptable values are 'asc' "
                "or 'desc'" % direction)
    if key in field_versions and field_versions[key] > req.version:
        raise exception.NotAcceptable(
            reason='sort_key %s needs API version 1.%d or later'
            % (key, field_versions[key]))
    if key not in allowed:
        raise exception.InvalidParameterValue(
            err='The sort_key value "%s" is an invalid field for sorting'
            % key)
    return key, direction


def fields(req, valid: set[str], field_versions: dict
           ) -> list[str] | None:
    raw = req.params.get('fields')
    if raw is None:
        return None
    if not req.allows(versions.FIELDS):
        raise exception.NotAcceptable(
            reason='the fields parameter needs API version 1.8 or later')
    wanted = [f.strip() for f in raw.split(',') if f.strip()]
    too_new = [f for f in wanted if field_versions.get(f, 0) >
               req.version]
    if too_new:
        raise exception.NotAcceptable(
            reason='Field(s) %s need a newer API version'
            % ', '.join(too_new))
    bad = [f for f in wanted if f not in valid]
    if bad:
        raise exception.InvalidParameterValue(
            err='Field(s) "%s" are not valid' % ', '.join(bad))
    return wanted


# Ironic 39's refusal of ?fields= with ?detail=true (its volume
# resources keep an older text)
DETAIL_AND_FIELDS = ('Can not specify ?detail=True and fields in the '
                     'same request.')


def shown(req, detail: bool, visible: list[str], valid: set[str],
          field_versions: dict, listed,
          refusal: str = DETAIL_AND_FIELDS) -> list[str]:
    """The fields a list answer shows: ``?fields=`` as asked (checked
    against ``valid`` and their versions; never with ``detail``: a 400
    saying ``refusal``; an empty one shows each item's links alone, as
    in Ironic), else every ``visible`` field for a detailed list, or
    those of ``listed`` that are visible."""
    wanted = fields(req, valid, field_versions)
    if wanted is None:
        return visible if detail else [f for f in listed if f in visible]
    if detail:
        raise exception.InvalidParameterValue(err=refusal)
    return wanted


def detail_flag(req, since: int = versions.DETAIL_QUERY) -> bool:
    """``?detail=``; ``since``: the minor version that introduced it for
    this resource (1.43 for most; volume resources had it from 1.32)."""
    raw = req.params.get('detail')
    if raw is None:
        return False
    if not req.allows(since):
        raise exception.NotAcceptable(
            reason='the detail parameter needs API version 1.%d or later'
            % since)
    return bool(parse_bool('detail', raw))


def next_link(req, resource: str, items: list, page_limit: int,
              marker_key: str | int = 'uuid') -> dict:
    """``{"next": url}`` when the page is full; the marker is the last
    item's ``marker_key`` (a key of dict rows, an index of tuple rows)."""
    if not items or len(items) < page_limit:
        return {}
    params = [(k, v) for k, v in req.params.items()
              if k not in ('marker', 'limit')]
    params.append(('limit', str(page_limit)))
    params.append(('marker', items[-1][marker_key]))
    from urllib.parse import urlencode
    return {'next': '%s/v1/%s?%s' % (req.host_url, resource,
                                     urlencode(params))}
