"""Error bodies (api/errors.py): the message a conductor sends back may
quote what a library said about a URL; its secrets are masked."""

import json

from baremetal.api import errors
from baremetal.common import exception


def _fault(raw: bytes) -> dict:
    return json.loads(json.loads(raw)['error_message'])


def test_an_error_body_masks_tokens_and_url_passwords():
    exc = exception.AgentError(
        node='n-1', command='standby.sync',
        error='GET http://a:b1g-secret@10.0.0.5:9999/v1/commands/'
              '?agent_token=Zq3-4_tokenvalue-0123456789')
    status, raw = errors.render(exc)
    fault = _fault(raw)
    assert status == 500 and fault['faultcode'] == 'Server'
    assert fault['faultstring'] == (
        'Agent on node n-1: standby.sync failed: GET '
        'http://a:******@10.0.0.5:9999/v1/commands/?agent_token=******')
