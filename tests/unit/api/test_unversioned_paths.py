"""As Ironic, the v1 resources answer without the ``/v1`` prefix too
(older clients rely on it); anything else without it is a 404."""

import pytest

V = '1.115'


@pytest.mark.parametrize('path', [
    '/nodes', '/nodes/detail', '/ports', '/portgroups', '/drivers',
    '/chassis', '/conductors', '/allocations', '/deploy_templates',
    '/volume', '/shards', '/runbooks', '/inspection_rules'])
def test_v1_resources_answer_without_the_prefix(api, path):
    status, body, _ = api.request('GET', path, version=V)
    v1_status, v1_body, _ = api.request('GET', '/v1' + path, version=V)
    assert (status, v1_status) == (200, 200), body
    assert set(body) == set(v1_body)


def test_other_paths_without_the_prefix_are_404(api):
    assert api.request('GET', '/nope', version=V)[0] == 404
