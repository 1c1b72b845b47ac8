"""db/read_ahead.py: the next page of a node list read while the client
reads this one (PostgreSQL), through the API as a client walks a list:
the same pages as without it, never a stale one."""

import collections
import threading

import pytest
import sqlalchemy as sa

from baremetal.common import metrics
from baremetal.db import engine
from baremetal.db import nodes as db_nodes
from baremetal.db import read_ahead
from baremetal.db import rows as db_rows
from tests import harness
from tests import services

NOVA = ('fields=uuid,power_state,provision_state,maintenance,properties,'
        'instance_uuid,traits,resource_class')


@pytest.fixture
def pg_api(tmp_path):
    read_ahead.clear()
    h = harness.Harness(tmp_path, version='1.115',
                        db_url=services.postgresql_url(schema=True))
    yield h
    _settle()
    h.close()
    read_ahead.clear()
    read_ahead.enabled = True


def counts() -> dict:
    """The metric's count of each event."""
    return {e: metrics.REGISTRY.get_sample_value(
        'baremetal_api_list_read_ahead_pages_total', {'event': e}) or 0
        for e in metrics.READ_AHEAD_EVENTS}


def _enroll(h, n, prefix='n'):
    uuids = []
    for i in range(n):
        st, body, _ = h.request('POST', '/v1/nodes', {
            'driver': 'fake-hardware', 'name': '%s%d' % (prefix, i),
            'properties': {'cpus': i}})
        assert st == 201, body
        uuids.append(body['uuid'])
    return uuids


def _settle():
    """Wait for the pages being read ahead."""
    for ahead in list(read_ahead._pages.values()):
        ahead.future.result(30)


def _walk(h, limit, query=NOVA):
    """Every page, following the markers as a client does; the pages'
    nodes."""
    pages, marker = [], None
    while True:
        path = '/v1/nodes?%s&limit=%d' % (query, limit)
        if marker:
            path += '&marker=' + marker
        st, body, _ = h.request('GET', path)
        assert st == 200, body
        pages.append(body['nodes'])
        if 'next' not in body:
            return pages
        marker = body['nodes'][-1]['uuid']
        _settle()


@pytest.fixture
def page_statements():
    """The node page statements each thread runs."""
    seen = []

    def listen(conn, cursor, statement, *args):
        if 'FROM nodes' in statement and 'LIMIT' in statement:
            seen.append(threading.get_ident())
    sa.event.listen(engine.engine(), 'before_cursor_execute', listen)
    yield seen
    sa.event.remove(engine.engine(), 'before_cursor_execute', listen)


def test_the_same_pages_with_the_next_read_ahead(pg_api, page_statements):
    _enroll(pg_api, 7)
    read_ahead.enabled = False
    read = counts()['read']
    plain = _walk(pg_api, 2)
    assert [len(p) for p in plain] == [2, 2, 2, 1]
    assert counts()['read'] == read
    read_ahead.enabled = True
    # pages 2 and 3 came with a marker and full: 3 and 4 are read ahead
    # (nothing after the last, short page, nor after the first, asked
    # for without a marker).  A commit anywhere on the server
    # between a read and its request (the conductor's periodic work,
    # other tests' databases) makes the page stale, and fewer are read
    # ahead after it: walk until one was used
    for _ in range(30):
        before = counts()
        page_statements.clear()
        assert _walk(pg_api, 2) == plain
        got = {k: v - before[k] for k, v in counts().items()}
        assert got['read'] <= 2
        assert got['used'] + got['stale'] == got['read']
        # the request's thread ran the statements of pages 1 and 2, of
        # each page not read ahead and of each stale one; the reader's
        # thread those it read
        mine = [t for t in page_statements if t == threading.get_ident()]
        assert len(mine) == 4 - got['used']
        assert len(page_statements) == 4 + got['stale']
        if got['used']:
            break
    assert got['used'] >= 1


def test_one_snapshot_a_page_read_ahead(pg_api):
    # a page read ahead starts from the snapshot its request asked for
    # to take the page before it: one round trip a page, not two (the
    # reader asks for one itself only for the first page it reads)
    _enroll(pg_api, 11)
    asked = []

    def listen(conn, cursor, statement, *args):
        if statement == read_ahead._SNAPSHOT:
            asked.append(threading.get_ident())
    sa.event.listen(engine.engine(), 'before_cursor_execute', listen)
    try:
        # a commit anywhere on the server makes pages stale and fewer
        # are read after it (test_the_same_pages_with_the_next_read_ahead):
        # walk until a walk had every page after the second read ahead
        for _ in range(30):
            before = counts()
            asked.clear()
            pages = _walk(pg_api, 2)
            _settle()
            assert [len(p) for p in pages] == [2, 2, 2, 2, 2, 1]
            got = {k: v - before[k] for k, v in counts().items()}
            if got['used'] == got['read'] == 4:
                break
        assert got['used'] == got['read'] == 4
        mine = [t for t in asked if t == threading.get_ident()]
        # the request's thread: one for each page it took; the reader's:
        # one, before the first
        assert len(mine) == 4
        assert len(asked) == 5
    finally:
        sa.event.remove(engine.engine(), 'before_cursor_execute', listen)


def test_a_commit_after_the_read_makes_it_stale(pg_api):
    uuids = _enroll(pg_api, 6)
    st, first, _ = pg_api.request('GET', '/v1/nodes?%s&limit=2' % NOVA)
    st, second, _ = pg_api.request(
        'GET', '/v1/nodes?%s&limit=2&marker=%s' % (NOVA, uuids[1]))
    assert [n['uuid'] for n in second['nodes']] == uuids[2:4]
    _settle()
    assert len(read_ahead._pages) == 1      # the third page, read
    # a node of the third page changes after it was read ahead
    st, body, _ = pg_api.request(
        'PATCH', '/v1/nodes/%s' % uuids[4],
        [{'op': 'add', 'path': '/properties/cpus', 'value': 64}])
    assert st == 200, body
    stale = counts()['stale']
    st, third, _ = pg_api.request(
        'GET', '/v1/nodes?%s&limit=2&marker=%s' % (NOVA, uuids[3]))
    assert st == 200
    assert [n['uuid'] for n in third['nodes']] == uuids[4:6]
    assert third['nodes'][0]['properties'] == {'cpus': 64}
    assert counts()['stale'] == stale + 1


def test_a_node_enrolled_after_the_read_is_listed(pg_api):
    uuids = _enroll(pg_api, 5)
    pg_api.request('GET', '/v1/nodes?limit=2&marker=%s' % uuids[1])
    _settle()
    assert len(read_ahead._pages) == 1      # nodes 5 and 6, read: 5 only
    new = _enroll(pg_api, 1, prefix='new')
    st, body, _ = pg_api.request(
        'GET', '/v1/nodes?limit=2&marker=%s' % uuids[3])
    assert [n['uuid'] for n in body['nodes']] == [uuids[4]] + new


def test_another_query_does_not_take_the_page(pg_api, monkeypatch):
    # the rows are kept under the page's SQL and values: a page of other
    # fields, other filters or another limit is read itself
    uuids = _enroll(pg_api, 6)
    monkeypatch.setattr(read_ahead, 'MAX_PAGES', 8)
    pg_api.request('GET', '/v1/nodes?%s&limit=2&marker=%s'
                   % (NOVA, uuids[1]))
    _settle()
    used = counts()['used']
    st, body, _ = pg_api.request(
        'GET', '/v1/nodes?fields=uuid,name&limit=2&marker=%s' % uuids[3])
    assert [(n['uuid'], n['name']) for n in body['nodes']] == [
        (uuids[4], 'n4'), (uuids[5], 'n5')]
    st, body, _ = pg_api.request(
        'GET', '/v1/nodes?%s&limit=2&marker=%s&maintenance=true'
        % (NOVA, uuids[3]))
    assert body['nodes'] == []
    # the same SQL, other values: another marker, another limit
    st, body, _ = pg_api.request(
        'GET', '/v1/nodes?%s&limit=2&marker=%s' % (NOVA, uuids[2]))
    assert [n['uuid'] for n in body['nodes']] == uuids[3:5]
    st, body, _ = pg_api.request(
        'GET', '/v1/nodes?%s&limit=1&marker=%s' % (NOVA, uuids[3]))
    assert [n['uuid'] for n in body['nodes']] == uuids[4:5]
    assert counts()['used'] == used
    # still there, unasked, beside the pages after those asked for
    assert len(read_ahead._pages) == 4
    _settle()


def test_walking_a_list_builds_its_page_statement_once(pg_api, monkeypatch):
    # a page after a node (the marker its UUID) is one statement, kept
    # and run with the marker's value: walking a list builds no
    # statement and looks no shape up a page, for the pages asked for
    # nor for those read ahead (both were a third of the API's CPU for a
    # Nova-like list of every node); so is one filtered by a flag
    # (maintenance=); a page after a marker built per request is still
    # built each time, with the right nodes
    uuids = _enroll(pg_api, 9)
    monkeypatch.setattr(db_rows, '_FIXED_STMTS', collections.OrderedDict())
    built, statements, keyed = [], [], []
    real_page = db_rows._page

    def page(*a):
        built.append(a[4])      # the marker
        statements.append(real_page(*a))
        return statements[-1]
    monkeypatch.setattr(db_rows, '_page', page)
    real_key = sa.Select._generate_cache_key

    def key(stmt):
        # a page's statement keyed (not another thread's statements)
        if any(stmt is s for s in statements):
            keyed.append(stmt)
        return real_key(stmt)
    monkeypatch.setattr(sa.Select, '_generate_cache_key', key)
    before = counts()
    # a commit anywhere on the server makes a page read ahead stale
    # (test_the_same_pages_with_the_next_read_ahead): walk until one
    # was used, three times at least
    for walks in range(30):
        pages = _walk(pg_api, 2)
        assert [n['uuid'] for p in pages for n in p] == uuids
        if walks >= 2 and counts()['used'] > before['used']:
            break
    assert counts()['used'] > before['used']
    # the first page's statement and that of a page after a node
    assert len(built) == 2 and built[0] is None
    assert built[1]['id'] is db_nodes._AFTER_UUID
    assert len(keyed) <= 2
    built.clear()
    pages = _walk(pg_api, 4, query=NOVA + '&maintenance=false')
    assert [n['uuid'] for p in pages for n in p] == uuids
    assert len(built) == 2
    built.clear()
    # sorted by name: a marker's value is the name, built per request
    pages = _walk(pg_api, 4, query=NOVA + '&sort_key=name')
    assert [n['uuid'] for p in pages for n in p] == uuids
    assert len(built) >= 3
    _settle()


def test_after_stale_pages_fewer_are_read_ahead(pg_api, monkeypatch):
    uuids = _enroll(pg_api, 4)
    monkeypatch.setattr(read_ahead, '_stale_streak', 2)
    started = counts()['read']
    for _ in range(4):
        read_ahead._pages.clear()
        pg_api.request('GET', '/v1/nodes?limit=1&marker=%s' % uuids[0])
    # one page in 2**2 read ahead
    assert counts()['read'] == started + 1
    _settle()


def test_no_more_reads_queued_than_pages_kept(pg_api, monkeypatch):
    uuids = _enroll(pg_api, 3)
    monkeypatch.setattr(read_ahead, '_busy', read_ahead.MAX_PAGES)
    read = counts()['read']
    pg_api.request('GET', '/v1/nodes?limit=1&marker=%s' % uuids[0])
    assert counts()['read'] == read and not read_ahead._pages
    monkeypatch.setattr(read_ahead, '_busy', read_ahead.MAX_PAGES - 1)
    pg_api.request('GET', '/v1/nodes?limit=1&marker=%s' % uuids[0])
    assert counts()['read'] == read + 1
    _settle()
    assert read_ahead._busy == read_ahead.MAX_PAGES - 1


def test_not_on_sqlite(api):
    # the embedded server's database: nothing read ahead
    h = api
    uuids = _enroll(h, 3)
    started = counts()['read']
    h.request('GET', '/v1/nodes?limit=1&marker=%s' % uuids[0])
    assert counts()['read'] == started
    assert not read_ahead._pages


def test_few_pages_kept(pg_api, monkeypatch):
    monkeypatch.setattr(read_ahead, 'MAX_PAGES', 2)
    uuids = _enroll(pg_api, 8)
    unused = counts()['unused']
    # pages after 1, 3 and 5 read ahead (none asked for)
    for i in (0, 2, 4):
        pg_api.request('GET', '/v1/nodes?limit=1&marker=%s' % uuids[i])
        _settle()
    assert len(read_ahead._pages) == 2
    assert counts()['unused'] == unused + 1
    monkeypatch.setattr(read_ahead, 'KEEP_FOR', 0.0)
    pg_api.request('GET', '/v1/nodes?limit=1&marker=%s' % uuids[6])
    assert len(read_ahead._pages) == 1
    assert counts()['unused'] == unused + 3


def test_the_option_turns_it_off(tmp_path):
    read_ahead.clear()
    h = harness.Harness(tmp_path, version='1.115',
                        overrides={'api.list_read_ahead': False},
                        db_url=services.postgresql_url(schema=True))
    try:
        uuids = _enroll(h, 3)
        started = counts()['read']
        h.request('GET', '/v1/nodes?limit=1&marker=%s' % uuids[0])
        assert counts()['read'] == started
    finally:
        h.close()
        read_ahead.enabled = True
