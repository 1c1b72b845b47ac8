"""/v1/nodes/{node}/vmedia: attach (POST) and detach (DELETE) an image
as a virtual media device (API 1.89); list the devices (GET, 1.93)."""

import urllib.parse

from baremetal.api import policy
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.common import states

PATH = '/v1/nodes/{node}/vmedia'
_SOURCES = ('http', 'local', 'swift')
_SCHEMES = ('http', 'https', 'nfs', 'cifs')


@route('GET', PATH, min_version=versions.VMEDIA_GET)
def get_vmedia(req, node):
    policy.authorize(req, 'baremetal:node:vmedia:get')
    row = nodes.get_row(req, node)
    return state.RPC.node_call(req.context, row, 'get_virtual_media')


def _check_attach(body) -> dict:
    if not isinstance(body, dict):
        raise exception.InvalidParameterValue(
            err='the body must be a JSON object')
    extra = sorted(set(body) - {'device_type', 'image_url',
                                'image_download_source'})
    if extra:
        raise exception.InvalidParameterValue(
            err='Additional properties are not allowed (%s unexpected)'
            % ', '.join(repr(k) for k in extra))
    for key in ('device_type', 'image_url'):
        if key not in body:
            raise exception.InvalidParameterValue(
                err="'%s' is a required property" % key)
    if body['device_type'] not in states.VMEDIA_DEVICES:
        raise exception.InvalidParameterValue(
            err='device_type %r is not one of %s'
            % (body['device_type'], ', '.join(states.VMEDIA_DEVICES)))
    url = body['image_url']
    if not isinstance(url, str) or \
            urllib.parse.urlparse(url).scheme not in _SCHEMES:
        raise exception.InvalidParameterValue(
            err='Unsupported or missing URL scheme in image_url %r; '
                'supported: %s' % (url, ', '.join(_SCHEMES)))
    source = body.get('image_download_source', 'local')
    if source not in _SOURCES:
        raise exception.InvalidParameterValue(
            err='image_download_source %r is not one of %s'
            % (source, ', '.join(_SOURCES)))
    if source == 'swift':
        raise exception.InvalidParameterValue(
            err='image_download_source "swift" needs the Object Storage '
                'service, which this deployment does not use; use "http" '
                '(the BMC reads image_url) or "local" (it reads a copy '
                'this service serves)')
    return {'device_type': body['device_type'], 'image_url': url,
            'image_download_source': source}


@route('POST', PATH, status=204, min_version=versions.VMEDIA)
def attach_vmedia(req, node):
    policy.authorize(req, 'baremetal:node:vmedia:attach')
    args = _check_attach(req.json_object())
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'attach_virtual_media', **args)
    return None


@route('DELETE', PATH, status=204, min_version=versions.VMEDIA)
def detach_vmedia(req, node):
    policy.authorize(req, 'baremetal:node:vmedia:detach')
    types = None
    if req.params.get('device_types'):
        types = [t for t in req.params['device_types'].split(',') if t]
        bad = [t for t in types if t not in states.VMEDIA_DEVICES]
        if bad:
            raise exception.InvalidParameterValue(
                err='Invalid device type(s) %s (valid are %s)'
                % (', '.join(bad), ', '.join(states.VMEDIA_DEVICES)))
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'detach_virtual_media',
                        device_types=types)
    return None
