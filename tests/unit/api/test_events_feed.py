"""GET /events through the API app: policy scoping, pages and their
next links (streams are driven over HTTP in tests/functional)."""

import urllib.parse

import pytest

from baremetal.api import auth
from baremetal.api import policy
from tests import harness


@pytest.fixture
def scoped(tmp_path, monkeypatch):
    """A harness whose one request context the test turns into another
    caller's."""
    ctx = auth.admin_context()
    monkeypatch.setattr(auth, 'admin_context', lambda: ctx)
    monkeypatch.setattr(policy, '_enforcer', None)
    h = harness.Harness(tmp_path)
    h.ctx = ctx
    yield h
    h.close()


def _as(ctx, roles, project=None, system=None):
    ctx.is_admin = 'admin' in roles
    ctx.roles, ctx.project_id, ctx.system_scope = roles, project, system


def _nodes(events):
    return {e['node'] for e in events}


def test_a_project_sees_only_the_events_of_its_nodes(scoped):
    h = scoped
    own = h.create_node(owner='p1')
    status, body, _ = h.request(
        'POST', '/v1/nodes', {'driver': 'fake-hardware', 'lessee': 'p1'},
        version='1.65')
    assert status == 201, body
    leased = body
    other = h.create_node(owner='p2')
    _as(h.ctx, ['member', 'reader'], project='p1')
    status, page, _ = h.request('GET', '/events')
    assert status == 200, page
    assert _nodes(page['events']) == {own['uuid'], leased['uuid']}
    # a filter does not widen it
    status, page, _ = h.request('GET', '/events?owner=p2')
    assert status == 200 and page['events'] == []
    _as(h.ctx, ['reader'], system='all')
    status, page, _ = h.request('GET', '/events')
    assert _nodes(page['events']) == {own['uuid'], leased['uuid'],
                                      other['uuid']}
    _as(h.ctx, ['member'], project='p1')    # no reader role
    status, body, _ = h.request('GET', '/events')
    assert status == 403, body
    assert 'baremetal:events:get' in harness.error_message(body)


def test_pages_follow_next_with_their_filters(api):
    for i in range(5):
        api.create_node(name='pg%d' % i, resource_class='rc')
    api.create_node(name='other')
    seen = []
    url = '/events?limit=2&resource_class=rc'
    while True:
        status, page, _ = api.request('GET', url)
        assert status == 200, page
        if not page['events']:
            break
        seen.extend(page['events'])
        parts = urllib.parse.urlsplit(page['next'])
        query = urllib.parse.parse_qs(parts.query)
        assert query['resource_class'] == ['rc'] and query['limit'] == ['2']
        url = '%s?%s' % (parts.path, parts.query)
    assert [e['id'] for e in seen] == [1, 2, 3, 4, 5]
    assert {e['field'] for e in seen} == {'node'}
    # the largest page is [api]max_limit
    harness.CONF.set_override('max_limit', 3, group='api')
    try:
        status, page, _ = api.request('GET', '/events?limit=50')
        assert len(page['events']) == 3
        assert 'limit=3' in page['next']
    finally:
        harness.CONF.clear_override('max_limit', group='api')


def test_get_events_is_not_ironics_v1_events(api):
    status, body, _ = api.request('GET', '/v1/events', version='1.54')
    assert status == 405
    status, body, _ = api.request('GET', '/events', version='1.1')
    assert status == 200 and body['events'] == []
