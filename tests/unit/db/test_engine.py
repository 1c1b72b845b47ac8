"""db/engine.py: what the other db modules learn from the configured
engine, and a database URL as the logs show it.  (Its connections and
blocks: test_connections.py and test_lost_database.py.)"""

from baremetal.db import engine as db_engine


def test_dialect_caches_are_emptied_when_configured(tmp_path):
    cache = db_engine.dialect_cache()
    cache['statement'] = object()
    db_engine.configure('sqlite:///%s' % (tmp_path / 'fresh.db'))
    try:
        assert cache == {}
    finally:
        db_engine.close_connections()
        db_engine.engine().dispose()


def test_autocommit_on_database_servers(any_db_api):
    with db_engine.reader() as conn:
        level = conn.get_execution_options().get('isolation_level')
    assert (level == 'AUTOCOMMIT') == (any_db_api.db_kind != 'sqlite')
    assert db_engine.prepared_cache is not None


def test_safe_url_hides_the_password():
    assert db_engine.safe_url(
        'postgresql+psycopg2://bm:s3cret@db.example/bm') \
        == 'postgresql+psycopg2://bm:***@db.example/bm'
    assert db_engine.safe_url('sqlite:////var/lib/baremetal/bm.db') == \
        'sqlite:////var/lib/baremetal/bm.db'
    assert db_engine.safe_url('not a url') == '<database>'
