"""The Keystone fixture itself: each persona's token is what its name
says, as the service user sees it when validating (what
keystonemiddleware does)."""

import pytest

from tests import keystone_service


@pytest.mark.parametrize('persona', keystone_service.personas())
def test_token_scope_and_roles_are_the_personas(keystone, persona):
    st, out, _ = keystone.request(
        'GET', '/auth/tokens', token=keystone.token('service'),
        headers={'X-Subject-Token': keystone.token(persona)})
    assert st == 200, out
    tok = out['token']
    roles = {r['name'] for r in tok['roles']}
    assert tok['user']['name'] == persona
    if persona.startswith('system-'):
        assert tok['system'] == {'all': True}
        assert persona.split('-', 1)[1] in roles
    elif persona == 'service':
        assert tok['project']['name'] == 'service'
        assert {'service', 'admin'} <= roles
    else:
        key, role = persona.split('-', 1)
        assert tok['project']['id'] == keystone.project_id(key)
        assert role in roles
        # implied roles: manager implies member implies reader
        assert 'reader' in roles
        if role == 'reader':
            assert not roles & {'member', 'manager', 'admin'}


def test_catalog_points_baremetal_at_the_given_endpoint(keystone):
    keystone.set_baremetal_endpoint('http://127.0.0.1:9/bm')
    st, out, _ = keystone.request('GET', '/auth/catalog',
                                  token=keystone.token('a-reader'))
    assert st == 200, out
    [svc] = [s for s in out['catalog'] if s['type'] == 'baremetal']
    assert sorted((e['interface'], e['url']) for e in svc['endpoints']) == [
        ('internal', 'http://127.0.0.1:9/bm'),
        ('public', 'http://127.0.0.1:9/bm')]


def test_bad_password_is_refused(keystone):
    st, _, _ = keystone.request('POST', '/auth/tokens', {'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': 'a-member', 'domain': {'id': 'default'},
            'password': 'wrong'}}}}})
    assert st == 401
