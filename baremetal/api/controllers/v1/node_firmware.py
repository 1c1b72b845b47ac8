"""/v1/nodes/{node}/firmware (API 1.86): the node's firmware components
and their versions, as its firmware interface last reported them."""

from baremetal.api import collection
from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.db import firmware as db_firmware

_FIELDS = ('component', 'initial_version', 'current_version',
           'last_version_flashed')
# what the hardware says a component is (API 1.114)
_IDENTITY = ('vendor', 'model', 'serial_number')


def _fields(req) -> tuple:
    """The fields to show: ``?fields=`` (identity fields from 1.114: a
    400 before, as Ironic) or all the version has; created_at and
    updated_at always."""
    new = req.allows(versions.FIRMWARE_IDENTITY)
    every = _FIELDS + (_IDENTITY if new else ())
    detail = collection.detail_flag(req, since=versions.FIRMWARE)
    if req.params.get('fields') is None:
        return every
    if detail:
        raise exception.InvalidParameterValue(
            err='Can not specify ?detail=True and fields in the same '
                'request.')
    wanted = collection.fields(req, set(_FIELDS + _IDENTITY), {})
    early = sorted(set(wanted) & set(_IDENTITY)) if not new else []
    if early:
        raise exception.InvalidParameterValue(
            err='Fields %s are not allowed in this API version. They '
                'require at least API version 1.%d.'
            % (', '.join(early), versions.FIRMWARE_IDENTITY))
    return tuple(wanted)


@route('GET', '/v1/nodes/{node}/firmware', min_version=versions.FIRMWARE)
def list_firmware(req, node):
    policy.authorize(req, 'baremetal:node:firmware:get')
    fields = _fields(req)
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return {'firmware': [
        dict({f: c[f] for f in fields},
             created_at=node_view.iso(c['created_at']),
             updated_at=node_view.iso(c['updated_at']))
        for c in db_firmware.components(row['id'])]}
