import pytest

from tests import harness


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path)
    yield h
    h.close()


# each database baremetal supports
any_db_api = harness.on_databases(harness.DATABASES,
                                  name='any_db_api')
