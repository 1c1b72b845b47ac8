"""API versions 1.97 to 1.111 on ports and port groups: description,
vendor and category (1.97, 1.100, 1.101), the conductor_groups filter
(1.99), the port group's physical_network and category (1.102, 1.103),
the OVN VTEP link keys gone again (1.105), the port group shard filter
(1.106) and dynamic port groups (1.111); each at its version and the
version gate on both sides of it."""

import pytest

from tests import harness

V = '1.111'
_MAC = '52:54:00:97:00:%02x'


def _err(body) -> str:
    return harness.error_message(body)


def _node(api, **fields) -> str:
    status, body, _ = api.request('POST', '/v1/nodes', dict(
        driver='fake-hardware', **fields), version=V)
    assert status == 201, body
    return body['uuid']


def _port(api, node, n, version=V, expect=201, **fields):
    status, body, _ = api.request('POST', '/v1/ports', dict(
        address=_MAC % n, node_uuid=node, **fields), version=version)
    assert status == expect, body
    return body


def _group(api, node, version=V, expect=201, **fields):
    status, body, _ = api.request('POST', '/v1/portgroups', dict(
        node_uuid=node, **fields), version=version)
    assert status == expect, body
    return body


def _get(api, path, version=V, expect=200):
    status, body, _ = api.request('GET', path, version=version)
    assert status == expect, body
    return body


def _patch(api, path, ops, version=V):
    return api.request('PATCH', path, ops, version=version)


def _uuids(body, key) -> set:
    return {i['uuid'] for i in body[key]}


# ------------------------------- 1.97, 1.100, 1.101: port text fields
@pytest.mark.parametrize('field,version,limit', [
    ('description', 97, 255), ('vendor', 100, 32), ('category', 101, 80)])
def test_port_text_field_from_its_version(api, field, version, limit):
    node = _node(api)
    new, old = '1.%d' % version, '1.%d' % (version - 1)
    # refused below its version: POST, PATCH, fields and sort_key
    _port(api, node, 1, version=old, expect=406, **{field: 'x'})
    p = _port(api, node, 1, version=old)
    path = '/v1/ports/%s' % p['uuid']
    assert field not in p
    status, _, _ = _patch(api, path, [
        {'op': 'add', 'path': '/' + field, 'value': 'x'}], version=old)
    assert status == 406
    _get(api, path + '?fields=' + field, version=old, expect=406)
    _get(api, '/v1/ports?sort_key=' + field, version=old, expect=406)
    assert field not in _get(api, path, version=old)
    assert field not in _get(api, '/v1/ports/detail', version=old)[
        'ports'][0]
    # shown (null) and accepted from it
    assert _get(api, path, version=new)[field] is None
    status, body, _ = _patch(api, path, [
        {'op': 'add', 'path': '/' + field, 'value': 'y' * limit}],
        version=new)
    assert status == 200 and body[field] == 'y' * limit
    assert _get(api, path + '?fields=' + field, version=new)[field] == \
        'y' * limit
    q = _port(api, node, 2, version=new, **{field: 'a'})
    assert q[field] == 'a'
    got = _get(api, '/v1/ports?sort_key=%s&sort_dir=asc' % field,
               version=new)
    assert [i['uuid'] for i in got['ports']] == [q['uuid'], p['uuid']]
    status, body, _ = _patch(api, path, [
        {'op': 'remove', 'path': '/' + field}], version=new)
    assert status == 200 and body[field] is None
    # validated: a string of at most `limit` characters
    for bad in ('z' * (limit + 1), 5, ['a'], {'a': 1}):
        _port(api, node, 3, version=new, expect=400, **{field: bad})
        status, body, _ = _patch(api, path, [
            {'op': 'replace', 'path': '/' + field, 'value': bad}],
            version=new)
        # Ironic's schema words (the value, not the field, is named)
        assert status == 400 and _err(body).startswith(
            'Schema error for patch: %r is ' % (bad,)), body
    assert _get(api, path)[field] is None


def test_port_description_contains_filter_from_1_97(api):
    node = _node(api)
    a = _port(api, node, 1, description='rack 12 uplink')
    _port(api, node, 2, description='storage')
    _port(api, node, 3)
    got = _get(api, '/v1/ports?description_contains=uplink')
    assert _uuids(got, 'ports') == {a['uuid']}
    got = _get(api, '/v1/ports/detail?description_contains=%25')
    assert got['ports'] == []          # "%" is no wildcard
    _get(api, '/v1/ports?description_contains=uplink', version='1.96',
         expect=406)


# -------------------------------------------- 1.99 conductor_groups
def test_conductor_groups_filter_on_ports_and_portgroups(api):
    n1 = _node(api, conductor_group='rack1')
    n2 = _node(api, conductor_group='rack2')
    n3 = _node(api)
    ports = {n: _port(api, n, i)['uuid']
             for i, n in enumerate((n1, n2, n3))}
    groups = {n: _group(api, n)['uuid'] for n in (n1, n2, n3)}
    for path, key, made in (('/v1/ports', 'ports', ports),
                            ('/v1/portgroups', 'portgroups', groups)):
        got = _get(api, path + '?conductor_groups=rack1', version='1.99')
        assert _uuids(got, key) == {made[n1]}
        got = _get(api, path + '/detail?conductor_groups=rack1,rack2')
        assert _uuids(got, key) == {made[n1], made[n2]}
        # repeated, as openstacksdk sends a list
        got = _get(api, path + '?conductor_groups=rack2'
                               '&conductor_groups=rack1')
        assert _uuids(got, key) == {made[n1], made[n2]}
        # empty: no filter
        got = _get(api, path + '?conductor_groups=')
        assert _uuids(got, key) == set(made.values())
        assert _get(api, path + '?conductor_groups=nope')[key] == []
        _get(api, path + '?conductor_groups=rack1', version='1.98',
             expect=406)
        status, body, _ = api.request(
            'GET', path + '?conductor_groups=rack1&node=%s' % n1,
            version=V)
        assert status == 400 and 'conductor_groups' in _err(body)
    status, body, _ = api.request(
        'GET', '/v1/ports?conductor_groups=rack1&address=%s' % (_MAC % 0),
        version=V)
    assert status == 400


# --------------------------- 1.102, 1.103: port group physnet, category
@pytest.mark.parametrize('field,version', [
    ('physical_network', 102), ('category', 103)])
def test_portgroup_field_from_its_version(api, field, version):
    node = _node(api)
    new, old = '1.%d' % version, '1.%d' % (version - 1)
    _group(api, node, version=old, expect=406, **{field: 'x'})
    g = _group(api, node, version=old)
    path = '/v1/portgroups/%s' % g['uuid']
    assert field not in g and field not in _get(api, path, version=old)
    status, _, _ = _patch(api, path, [
        {'op': 'add', 'path': '/' + field, 'value': 'x'}], version=old)
    assert status == 406
    _get(api, path + '?fields=' + field, version=old, expect=406)
    _get(api, '/v1/portgroups?sort_key=' + field, version=old, expect=406)
    assert _get(api, path, version=new)[field] is None
    status, body, _ = _patch(api, path, [
        {'op': 'add', 'path': '/' + field, 'value': 'x'}], version=new)
    assert status == 200 and body[field] == 'x'
    assert _group(api, node, version=new, **{field: 'y'})[field] == 'y'
    got = _get(api, '/v1/portgroups/detail?sort_key=%s&sort_dir=desc'
                    % field, version=new)
    assert [pg[field] for pg in got['portgroups']][:2] == ['y', 'x']


def test_portgroup_physnet_and_category_validated(api):
    node = _node(api)
    g = _group(api, node)
    path = '/v1/portgroups/%s' % g['uuid']
    for field, bad in (('physical_network', 'p' * 65),
                       ('physical_network', ''),
                       ('physical_network', 3),
                       ('category', 'c' * 81), ('category', {})):
        # the schema's words (as Ironic's) name the value; ours the field
        status, body, _ = api.request('POST', '/v1/portgroups', {
            'node_uuid': node, field: bad}, version=V)
        assert status == 400 and (field in _err(body) or _err(
            body).startswith('Schema error for portgroup: %r is ' % (bad,))
        ), body
        status, body, _ = _patch(api, path, [
            {'op': 'replace', 'path': '/' + field, 'value': bad}])
        assert status == 400 and (field in _err(body) or _err(
            body).startswith('Schema error for patch: %r is ' % (bad,))
        ), body
    got = _get(api, path)
    assert got['physical_network'] is None and got['category'] is None
    assert _group(api, node, physical_network='p' * 64,
                  category='c' * 80)['category'] == 'c' * 80


def test_portgroup_physnet_is_set_on_its_ports(api):
    node = _node(api)
    g = _group(api, node, physical_network='physnet1')
    path = '/v1/portgroups/%s' % g['uuid']
    a = _port(api, node, 1, portgroup_uuid=g['uuid'],
              physical_network='physnet1')
    b = _port(api, node, 2, portgroup_uuid=g['uuid'],
              physical_network='physnet1')
    other = _port(api, node, 3, physical_network='physnet1')
    status, body, _ = _patch(api, path, [
        {'op': 'replace', 'path': '/physical_network', 'value': 'physnet2'}])
    assert status == 200 and body['physical_network'] == 'physnet2'
    for p in (a, b):
        assert _get(api, '/v1/ports/%s' % p['uuid'])[
            'physical_network'] == 'physnet2'
    assert _get(api, '/v1/ports/%s' % other['uuid'])[
        'physical_network'] == 'physnet1'
    status, body, _ = _patch(api, path, [
        {'op': 'remove', 'path': '/physical_network'}])
    assert status == 200 and body['physical_network'] is None
    assert _get(api, '/v1/ports/%s' % a['uuid'])['physical_network'] is None


def test_member_port_physnet_changes_only_with_its_group(api):
    node = _node(api)
    g = _group(api, node, physical_network='physnet1')
    p = _port(api, node, 1, portgroup_uuid=g['uuid'],
              physical_network='physnet1')
    path = '/v1/ports/%s' % p['uuid']
    change = [{'op': 'replace', 'path': '/physical_network',
               'value': 'physnet2'}]
    # from 1.102 the port group owns it
    status, body, _ = _patch(api, path, change, version='1.102')
    assert status == 400
    assert 'physical_network cannot be changed' in _err(body)
    # before, the member ports' rule: a different network is a conflict
    status, body, _ = _patch(api, path, change, version='1.101')
    assert status == 409 and 'physnet1' in _err(body)
    assert _get(api, path)['physical_network'] == 'physnet1'
    # leaving the group and changing it together is fine
    status, body, _ = _patch(api, path, change + [
        {'op': 'remove', 'path': '/portgroup_uuid'}])
    assert status == 200 and body['physical_network'] == 'physnet2'
    assert body['portgroup_uuid'] is None
    # joining a group on another network is a conflict
    status, body, _ = _patch(api, path, [
        {'op': 'add', 'path': '/portgroup_uuid', 'value': g['uuid']}])
    assert status == 409 and 'physnet1' in _err(body)
    assert _get(api, path)['portgroup_uuid'] is None
    # a port on the group's network may join
    status, body, _ = _patch(api, path, [
        {'op': 'replace', 'path': '/physical_network', 'value': 'physnet1'}])
    assert status == 200
    status, body, _ = _patch(api, path, [
        {'op': 'add', 'path': '/portgroup_uuid', 'value': g['uuid']}])
    assert status == 200 and body['portgroup_uuid'] == g['uuid']


def test_port_joining_a_group_matches_its_network(api):
    node = _node(api)
    g = _group(api, node, physical_network='physnet1')
    for version in ('1.34', '1.101', V):
        # no physical network (None) is a different one
        status, body, _ = api.request('POST', '/v1/ports', {
            'address': _MAC % 1, 'node_uuid': node,
            'portgroup_uuid': g['uuid']}, version=version)
        assert status == 409, (version, body)
    _port(api, node, 2, portgroup_uuid=g['uuid'], expect=409,
          physical_network='physnet9')
    _port(api, node, 3, portgroup_uuid=g['uuid'],
          physical_network='physnet1')
    # a group with no network and no ports takes its first port's
    bare = _group(api, node)
    _port(api, node, 4, portgroup_uuid=bare['uuid'],
          physical_network='physnet7')
    assert _get(api, '/v1/portgroups/%s' % bare['uuid'])[
        'physical_network'] == 'physnet7'
    _port(api, node, 5, portgroup_uuid=bare['uuid'], expect=409,
          physical_network='physnet1')
    # the port's own physical_network: never empty
    _port(api, node, 6, physical_network='', expect=400)


# --------------------------------------------- 1.105 no more OVN VTEP
_VTEP_LINK = {'port_id': 'Eth1', 'vtep-logical-switch': 'ls1',
              'vtep-physical-switch': 'ps1'}


def test_vtep_link_keys_only_from_1_90_to_1_104(api):
    node = _node(api)
    for version in ('1.89', '1.105', V):
        _port(api, node, 1, version=version, expect=406,
              local_link_connection=_VTEP_LINK)
    p = _port(api, node, 1, version='1.104',
              local_link_connection=_VTEP_LINK)
    assert p['local_link_connection'] == _VTEP_LINK
    path = '/v1/ports/%s' % p['uuid']
    for version, shown in (('1.89', {}), ('1.90', _VTEP_LINK),
                           ('1.104', _VTEP_LINK), ('1.105', {}),
                           (V, {})):
        assert _get(api, path, version=version)[
            'local_link_connection'] == shown, version
        got = _get(api, '/v1/ports/detail', version=version)['ports'][0]
        assert got['local_link_connection'] == shown
    status, _, _ = _patch(api, path, [
        {'op': 'replace', 'path': '/local_link_connection',
         'value': _VTEP_LINK}], version='1.105')
    assert status == 406
    # a plain link replaces it
    link = {'port_id': 'Eth1', 'switch_id': '00:11:22:33:44:55'}
    status, body, _ = _patch(api, path, [
        {'op': 'replace', 'path': '/local_link_connection',
         'value': link}], version='1.105')
    assert status == 200 and body['local_link_connection'] == link
    assert _get(api, path, version='1.104')['local_link_connection'] == link
    # both VTEP keys or neither
    _port(api, node, 2, version='1.104', expect=400,
          local_link_connection={'port_id': 'Eth2',
                                 'vtep-logical-switch': 'ls1'})


# ----------------------------------------- 1.106 port group shard filter
def test_portgroup_shard_filter_from_1_106(api):
    n1 = _node(api, shard='s1')
    n2 = _node(api, shard='s2')
    n3 = _node(api)
    made = {n: _group(api, n)['uuid'] for n in (n1, n2, n3)}
    got = _get(api, '/v1/portgroups?shard=s1', version='1.106')
    assert _uuids(got, 'portgroups') == {made[n1]}
    got = _get(api, '/v1/portgroups/detail?shard=s1,s2')
    assert _uuids(got, 'portgroups') == {made[n1], made[n2]}
    _get(api, '/v1/portgroups?shard=s1', version='1.105', expect=406)
    _get(api, '/v1/portgroups/detail?shard=s1', version='1.105',
         expect=406)
    status, body, _ = api.request(
        'GET', '/v1/portgroups?shard=s1&node=%s' % n1, version=V)
    assert status == 400 and 'simultaneously' in _err(body)


# --------------------------------------------- 1.111 dynamic portgroups
def test_port_available_for_dynamic_portgroup_from_1_111(api):
    node = _node(api)
    _port(api, node, 1, version='1.110', expect=406,
          available_for_dynamic_portgroup=False)
    p = _port(api, node, 1, version='1.110')
    path = '/v1/ports/%s' % p['uuid']
    assert 'available_for_dynamic_portgroup' not in p
    status, _, _ = _patch(api, path, [
        {'op': 'replace', 'path': '/available_for_dynamic_portgroup',
         'value': False}], version='1.110')
    assert status == 406
    _get(api, path + '?fields=available_for_dynamic_portgroup',
         version='1.110', expect=406)
    assert _get(api, path)['available_for_dynamic_portgroup'] is True
    status, body, _ = _patch(api, path, [
        {'op': 'replace', 'path': '/available_for_dynamic_portgroup',
         'value': False}])
    assert status == 200
    assert body['available_for_dynamic_portgroup'] is False
    got = _get(api, '/v1/ports?sort_key=available_for_dynamic_portgroup'
                    '&fields=uuid,available_for_dynamic_portgroup')
    assert got['ports'][0]['available_for_dynamic_portgroup'] is False
    # removing it restores the default
    status, body, _ = _patch(api, path, [
        {'op': 'remove', 'path': '/available_for_dynamic_portgroup'}])
    assert status == 200 and body['available_for_dynamic_portgroup'] is True
    # a JSON boolean only, as Ironic's schema
    for bad in ('false', 0, 'yes'):
        _port(api, node, 2, expect=400,
              available_for_dynamic_portgroup=bad)
        status, body, _ = _patch(api, path, [
            {'op': 'replace', 'path': '/available_for_dynamic_portgroup',
             'value': bad}])
        assert status == 400
        assert _err(body) == (
            "Schema error for patch: %r is not of type 'boolean'" % (bad,))
    assert _port(api, node, 3, available_for_dynamic_portgroup=False)[
        'available_for_dynamic_portgroup'] is False


def test_portgroup_dynamic_portgroup_read_only_from_1_111(api):
    node = _node(api)
    g = _group(api, node)
    path = '/v1/portgroups/%s' % g['uuid']
    assert g['dynamic_portgroup'] is False
    assert 'dynamic_portgroup' not in _get(api, path, version='1.110')
    assert 'dynamic_portgroup' not in _get(
        api, '/v1/portgroups/detail', version='1.110')['portgroups'][0]
    _get(api, path + '?fields=dynamic_portgroup', version='1.110',
         expect=406)
    _get(api, '/v1/portgroups?sort_key=dynamic_portgroup',
         version='1.110', expect=406)
    assert _get(api, path + '?fields=dynamic_portgroup') == {
        'dynamic_portgroup': False, 'links': g['links']}
    # only the conductor makes dynamic port groups
    for version in ('1.110', V):
        _group(api, node, version=version, expect=400,
               dynamic_portgroup=True)
        status, body, _ = _patch(api, path, [
            {'op': 'replace', 'path': '/dynamic_portgroup', 'value': True}],
            version=version)
        assert status == 400 and 'dynamic_portgroup' in _err(body)
    assert _get(api, path)['dynamic_portgroup'] is False
