"""Deleting a node takes everything hanging off it (ports, port groups,
traits, BIOS settings, volume connectors and targets) and unlinks its
allocations, at once, on every database (on PostgreSQL as one statement);
a node someone holds the lock of is left whole."""

import sqlalchemy as sa

from baremetal.db import engine as db_engine
from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import reservations as db_reservations
from baremetal.db import rows as db_rows

ALLOCATIONS = models.TABLES['allocations']
CHILDREN = ('ports', 'portgroups', 'node_traits', 'bios_settings',
            'volume_connectors', 'volume_targets')


def _dress(node_id: int, tag: str) -> None:
    now = db_rows.utcnow()
    with db_engine.writer() as conn:
        conn.execute(models.TABLES['portgroups'].insert().values(
            uuid=db_rows.new_uuid(), node_id=node_id, name='pg-' + tag,
            address='52:54:00:00:01:%s' % tag, created_at=now))
        conn.execute(models.TABLES['ports'].insert().values(
            uuid=db_rows.new_uuid(), node_id=node_id,
            address='52:54:00:00:00:%s' % tag, created_at=now))
        conn.execute(models.TABLES['node_traits'].insert().values(
            node_id=node_id, trait='CUSTOM_' + tag, created_at=now))
        conn.execute(models.TABLES['bios_settings'].insert().values(
            node_id=node_id, name='boot_mode', value='uefi', created_at=now))
        conn.execute(models.TABLES['volume_connectors'].insert().values(
            uuid=db_rows.new_uuid(), node_id=node_id, type='iqn',
            connector_id='iqn.%s' % tag, created_at=now))
        conn.execute(models.TABLES['volume_targets'].insert().values(
            uuid=db_rows.new_uuid(), node_id=node_id, volume_type='iscsi',
            boot_index=0, volume_id='vol-' + tag, created_at=now))
        conn.execute(ALLOCATIONS.insert().values(
            uuid=db_rows.new_uuid(), node_id=node_id, state='active',
            name='alloc-' + tag, created_at=now))


def _counts(node_id: int) -> dict:
    with db_engine.reader() as conn:
        out = {name: conn.execute(
            sa.select(sa.func.count()).select_from(models.TABLES[name])
            .where(models.TABLES[name].c.node_id == node_id)).scalar()
            for name in CHILDREN + ('allocations',)}
        out['nodes'] = conn.execute(
            sa.select(sa.func.count()).select_from(db_nodes.NODES)
            .where(db_nodes.NODES.c.id == node_id)).scalar()
        out['allocations (any node)'] = conn.execute(
            sa.select(sa.func.count()).select_from(
                ALLOCATIONS)).scalar()
    return out


def test_delete_takes_what_hangs_off_the_node(any_db_api):
    api = any_db_api
    gone = db_nodes.get_node(api.create_node(name='gone')['uuid'])
    kept = db_nodes.get_node(api.create_node(name='kept')['uuid'])
    _dress(gone['id'], '0a')
    _dress(kept['id'], '0b')
    before = _counts(kept['id'])
    assert api.request('DELETE', '/v1/nodes/gone')[0] == 204
    after = _counts(gone['id'])
    assert after == {**{name: 0 for name in CHILDREN},
                     'allocations': 0, 'nodes': 0,
                     'allocations (any node)': 2}
    # the allocation stays, unlinked; the other node keeps everything
    assert _counts(kept['id']) == before
    with db_engine.reader() as conn:
        assert conn.execute(sa.select(ALLOCATIONS.c.node_id).where(
            ALLOCATIONS.c.name == 'alloc-0a')).scalar() is None


def test_a_locked_node_is_left_whole(any_db_api):
    api = any_db_api
    node = db_nodes.get_node(api.create_node(name='busy')['uuid'])
    _dress(node['id'], '0c')
    before = _counts(node['id'])
    db_reservations.reserve_node('other-host', node['uuid'])
    status, body, _ = api.request('DELETE', '/v1/nodes/busy')
    assert status == 409, body
    assert 'other-host' in body['error_message']
    assert _counts(node['id']) == before
    assert db_nodes.destroy_node(node['id'], only_unreserved=True) == 0
    assert db_nodes.destroy_node(node['id']) == 1     # forced: no lock check
    assert _counts(node['id'])['nodes'] == 0
