"""The conductor's client of the Image service (Glance v2), over a
keystoneauth1 session built from [glance] (and [service_user] when it
sends a service token).  Plain REST: the image record, its members, its
data.  The only module that talks to Glance; its errors become
``GlanceImageUnusable`` (the image cannot be used) or
``GlanceUnavailable`` (Glance could not be asked).
"""

import threading
import time
import typing

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import service_token
from oslo_log import log

from baremetal.common import exception

LOG = log.getLogger(__name__)

_LOCK = threading.Lock()
_CLIENTS: dict[int, 'Client'] = {}


def get(conf) -> 'Client':
    """The process's client for ``conf`` (one session, so one token,
    renewed by keystoneauth1 when it expires)."""
    with _LOCK:
        found = _CLIENTS.get(id(conf))
        if found is None:
            found = _CLIENTS[id(conf)] = Client(conf)
        return found


def forget() -> None:
    """Drop cached clients (tests that change [glance])."""
    with _LOCK:
        _CLIENTS.clear()


def _auth(conf):
    auth = ks_loading.load_auth_from_conf_options(conf, 'glance')
    if auth is None:
        raise exception.InvalidParameterValue(
            'Glance images need [glance]auth_type (password with '
            'auth_url, username, password, project_name...; or none '
            'with endpoint_override for a Glance without '
            'authentication)')
    if conf.service_user.send_service_user_token:
        service = ks_loading.load_auth_from_conf_options(conf,
                                                         'service_user')
        if service is None:
            raise exception.InvalidParameterValue(
                '[service_user]send_service_user_token is on but '
                '[service_user]auth_type is not set')
        auth = service_token.ServiceTokenAuthWrapper(user_auth=auth,
                                                     service_auth=service)
    return auth


class Client:
    def __init__(self, conf) -> None:
        self.conf = conf
        auth = _auth(conf)
        session = ks_loading.load_session_from_conf_options(
            conf, 'glance', auth=auth)
        self.adapter = ks_loading.load_adapter_from_conf_options(
            conf, 'glance', session=session, auth=auth)

    def project_id(self) -> str | None:
        """The project the conductor's own [glance] credentials are
        scoped to (None without authentication)."""
        try:
            return self.adapter.get_project_id()
        except ks_exc.ClientException as e:
            LOG.debug('No project of the [glance] credentials: %s', e)
            return None

    def _request(self, image_id: str, path: str, stream: bool = False):
        tries = 1 + self.conf.glance.num_retries
        for attempt in range(1, tries + 1):
            try:
                resp = self.adapter.get(path, stream=stream,
                                        raise_exc=False)
            except ks_exc.ClientException as e:
                reason = _reason(self.adapter, e)
            else:
                if resp.status_code != 503:
                    return resp
                resp.close()
                reason = 'HTTP 503 from %s' % resp.url
            if attempt == tries:
                raise exception.GlanceUnavailable(image=image_id,
                                                  reason=reason)
            LOG.warning('Glance request %s failed (attempt %d of %d): %s',
                        path, attempt, tries, reason)
            time.sleep(1)
        raise AssertionError('unreachable')

    def show(self, image_id: str) -> dict:
        """Glance's record of the image (v2 fields)."""
        resp = self._request(image_id, '/v2/images/%s' % image_id)
        if resp.status_code == 200:
            try:
                image = resp.json()
            except ValueError:
                image = None
            if isinstance(image, dict):
                return image
            raise exception.GlanceUnavailable(
                image=image_id, reason='its answer is not a JSON object')
        _raise_for(image_id, resp)

    def members(self, image_id: str) -> list[dict]:
        """The projects a shared image is shared with ([] when Glance
        does not tell us)."""
        resp = self._request(image_id, '/v2/images/%s/members' % image_id)
        if resp.status_code != 200:
            LOG.info('Glance did not list the members of image %s: '
                     'HTTP %d', image_id, resp.status_code)
            return []
        try:
            found = resp.json().get('members') or []
        except (ValueError, AttributeError):
            return []
        return [m for m in found if isinstance(m, dict)]

    def data(self, image_id: str):
        """The streamed response carrying the image's data (the caller
        closes it)."""
        resp = self._request(image_id, '/v2/images/%s/file' % image_id,
                             stream=True)
        if resp.status_code == 200:
            return resp
        resp.close()
        if resp.status_code == 204:
            raise exception.GlanceImageUnusable(
                image=image_id, reason='Glance holds no data for it')
        _raise_for(image_id, resp)


def _reason(adapter, e: Exception) -> str:
    try:
        where = adapter.get_endpoint() or 'Glance'
    except ks_exc.ClientException:
        where = 'Glance (no endpoint in the catalog)'
    text = str(e) or type(e).__name__
    return '%s: %s' % (where, text[:300])


def _raise_for(image_id: str, resp) -> typing.NoReturn:
    status = resp.status_code
    if status == 404:
        raise exception.GlanceImageUnusable(
            image=image_id, reason='Glance has no such image')
    if status in (401, 403):
        raise exception.GlanceImageUnusable(
            image=image_id, reason='Glance refuses the conductor access '
            'to it (HTTP %d): check the [glance] credentials' % status)
    raise exception.GlanceUnavailable(
        image=image_id, reason='HTTP %d from %s' % (status, resp.url))
