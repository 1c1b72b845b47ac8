"""Config drives: what the agent writes to a partition at the end of the
disk for cloud-init (or Glean) in the deployed system.

Given as Ironic accepts it (API 1.56): a string — a gzipped, base64 ISO
9660 image, or a URL — passed on as it is; or an object with
``meta_data``, ``user_data``, ``network_data`` and ``vendor_data``, from
which the conductor builds the ``config-2`` ISO itself (the OpenStack
metadata layout under ``openstack/latest/``).
"""

import base64
import gzip
import io

import orjson

from baremetal.common import exception

_MAX_ISO = 64 * 1024 * 1024   # Ironic's limit for a config drive


def check(configdrive) -> None:
    """400 for a config drive of a shape Ironic refuses."""
    if configdrive is None or isinstance(configdrive, str):
        return
    if not isinstance(configdrive, dict):
        raise exception.InvalidParameterValue(
            'configdrive must be a string or an object, got %s'
            % type(configdrive).__name__)
    unknown = set(configdrive) - {'meta_data', 'user_data',
                                  'network_data', 'vendor_data'}
    if unknown:
        raise exception.InvalidParameterValue(
            'configdrive has unknown keys: %s' % ', '.join(sorted(unknown)))
    for key in ('meta_data', 'network_data', 'vendor_data'):
        if configdrive.get(key) is not None and \
                not isinstance(configdrive[key], dict):
            raise exception.InvalidParameterValue(
                'configdrive %s must be an object' % key)
    user = configdrive.get('user_data')
    if user is not None and not isinstance(user, (str, dict, list)):
        raise exception.InvalidParameterValue(
            'configdrive user_data must be a string or JSON')


def for_agent(configdrive, node_uuid: str) -> str | None:
    """The config drive as the agent takes it: a URL, or a gzipped
    base64 ISO (built here from an object)."""
    check(configdrive)
    if configdrive is None or isinstance(configdrive, str):
        return configdrive
    iso = build_iso(configdrive, node_uuid)
    return base64.b64encode(gzip.compress(iso, 6)).decode()


def build_iso(data: dict, node_uuid: str) -> bytes:
    """A config-2 ISO 9660 image of ``data``."""
    import pycdlib
    meta = dict(data.get('meta_data') or {})
    meta.setdefault('uuid', node_uuid)
    files = {'meta_data.json': orjson.dumps(meta)}
    if data.get('network_data') is not None:
        files['network_data.json'] = orjson.dumps(data['network_data'])
    if data.get('vendor_data') is not None:
        files['vendor_data.json'] = orjson.dumps(data['vendor_data'])
    user = data.get('user_data')
    if user is not None:
        files['user_data'] = (user.encode() if isinstance(user, str)
                              else orjson.dumps(user))
    iso = pycdlib.PyCdlib()
    iso.new(interchange_level=3, rock_ridge='1.09', joliet=3,
            vol_ident='config-2')
    for i, (d, rr) in enumerate((('/OPENSTAC', 'openstack'),
                                 ('/OPENSTAC/LATEST', 'latest'))):
        jpath = '/openstack' + ('/latest' if i else '')
        iso.add_directory(d, rr_name=rr, joliet_path=jpath)
    for n, (name, content) in enumerate(sorted(files.items())):
        iso_name = '/OPENSTAC/LATEST/F%d.;1' % n
        iso.add_fp(io.BytesIO(content), len(content), iso_name,
                   rr_name=name, joliet_path='/openstack/latest/' + name)
    out = io.BytesIO()
    iso.write_fp(out)
    iso.close()
    value = out.getvalue()
    if len(value) > _MAX_ISO:
        raise exception.InvalidParameterValue(
            'The config drive is %d bytes; at most %d are allowed'
            % (len(value), _MAX_ISO))
    return value
