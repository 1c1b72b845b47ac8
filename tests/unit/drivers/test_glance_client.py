"""The conductor's Glance client against a stand-in for its keystoneauth1
adapter: which answers count as Glance unreachable (retried
[glance]num_retries times) and which as an image that cannot be used."""

import types

import pytest
from keystoneauth1 import exceptions as ks_exc

from baremetal.common import exception
from baremetal.drivers.modules import glance_client

UUID = '4a9bd2b7-8a4e-4c0f-9f27-0e8c2f1d3b11'
ENDPOINT = 'http://glance.test:9292'


class _Response:
    def __init__(self, status: int) -> None:
        self.status_code = status
        self.url = '%s/v2/images/%s' % (ENDPOINT, UUID)
        self.closed = False

    def json(self):
        return {'id': UUID, 'status': 'active'}

    def close(self):
        self.closed = True


class _Adapter:
    """Answers each GET with the next of ``answers``: a status, or an
    exception to raise."""

    def __init__(self, answers) -> None:
        self.answers = list(answers)
        self.responses: list[_Response] = []

    def get(self, path, stream=False, raise_exc=True):
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        self.responses.append(_Response(answer))
        return self.responses[-1]

    def get_endpoint(self):
        return ENDPOINT


@pytest.fixture
def sleeps(monkeypatch):
    waited: list[float] = []
    monkeypatch.setattr(glance_client.time, 'sleep', waited.append)
    return waited


def _client(answers, retries: int = 0):
    client = glance_client.Client.__new__(glance_client.Client)
    client.conf = types.SimpleNamespace(
        glance=types.SimpleNamespace(num_retries=retries))
    client.adapter = _Adapter(answers)
    return client


def test_a_503_is_tried_again_num_retries_times(sleeps):
    client = _client([503, 503, 200], retries=2)
    assert client.show(UUID)['id'] == UUID
    assert client.adapter.answers == []
    assert sleeps == [1, 1]
    assert [r.closed for r in client.adapter.responses] == [True, True,
                                                            False]


def test_a_503_past_the_retries_is_glance_unavailable(sleeps):
    client = _client([503, 503], retries=1)
    with pytest.raises(exception.GlanceUnavailable) as e:
        client.show(UUID)
    assert 'HTTP 503 from %s' % ENDPOINT in str(e.value)
    assert UUID in str(e.value)
    assert sleeps == [1]


def test_a_connection_error_is_retried_then_names_the_endpoint(sleeps):
    refused = ks_exc.ConnectFailure('Connection refused')
    client = _client([refused, refused], retries=1)
    with pytest.raises(exception.GlanceUnavailable) as e:
        client.show(UUID)
    assert '%s: Connection refused' % ENDPOINT in str(e.value)
    assert sleeps == [1]


def test_another_5xx_is_glance_unavailable_without_retries(sleeps):
    client = _client([500], retries=3)
    with pytest.raises(exception.GlanceUnavailable) as e:
        client.show(UUID)
    assert 'HTTP 500 from %s' % ENDPOINT in str(e.value)
    assert sleeps == []


@pytest.mark.parametrize('status,words', [
    (404, 'no such image'),
    (403, 'refuses the conductor access to it (HTTP 403)'),
    (401, 'refuses the conductor access to it (HTTP 401)'),
])
def test_an_image_glance_will_not_give_is_unusable(sleeps, status, words):
    with pytest.raises(exception.GlanceImageUnusable) as e:
        _client([status], retries=2).show(UUID)
    assert words in str(e.value) and UUID in str(e.value)
    assert sleeps == []


def test_no_data_in_glance_is_unusable(sleeps):
    client = _client([204])
    with pytest.raises(exception.GlanceImageUnusable, match='no data'):
        client.data(UUID)
    assert client.adapter.responses[0].closed
