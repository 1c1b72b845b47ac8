import pytest

from tests import harness


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path)
    yield h
    h.close()


@pytest.fixture(params=['sqlite', 'postgresql', 'mysql'])
def any_db_api(request, tmp_path):
    """The harness on each database baremetal supports (a fresh one;
    PostgreSQL and MariaDB as tests/services.py provides them)."""
    from tests import services
    h = harness.Harness(
        tmp_path, db_url=services.db_url(request.param, schema=True))
    h.db_kind = request.param
    yield h
    h.close()
