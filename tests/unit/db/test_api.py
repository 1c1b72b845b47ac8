"""db/api.py: a database URL as the logs show it."""

from baremetal.db import api as db


def test_safe_url_hides_the_password():
    assert db.safe_url('postgresql+psycopg2://bm:s3cret@db.example/bm') \
        == 'postgresql+psycopg2://bm:***@db.example/bm'
    assert db.safe_url('sqlite:////var/lib/baremetal/bm.db') == \
        'sqlite:////var/lib/baremetal/bm.db'
    assert db.safe_url('not a url') == '<database>'
