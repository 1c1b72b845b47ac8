import pytest

from tests import harness


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path)
    yield h
    h.close()
