"""Masking agent tokens and URL passwords in free text
(``secrets.mask_text``): what an exception's message may quote before it
becomes a node's last_error, an API error body or a log line."""

import pytest

from baremetal.common import secrets

TOKEN = 'Zq3-4_tokenvalue-0123456789abcdefghijklmno'


@pytest.mark.parametrize('text, masked', [
    # requests' and urllib3's errors quote the URL with its query
    ("HTTPConnectionPool(host='10.0.0.5', port=9999): Max retries "
     "exceeded with url: /v1/commands/?wait=true&agent_token=%s "
     "(Caused by NewConnectionError('refused'))" % TOKEN,
     "HTTPConnectionPool(host='10.0.0.5', port=9999): Max retries "
     "exceeded with url: /v1/commands/?wait=true&agent_token=****** "
     "(Caused by NewConnectionError('refused'))"),
    ('"POST /v1/commands/?agent_token=%s&wait=false HTTP/1.1" 200'
     % TOKEN,
     '"POST /v1/commands/?agent_token=******&wait=false HTTP/1.1" 200'),
    ('next=%%2Fv1%%3Fagent_token%%3D%s' % TOKEN,
     'next=%2Fv1%3Fagent_token%3D******'),
    ('{"agent_token": "%s"}' % TOKEN, '{"agent_token": "******"}'),
    ("{'agent_secret_token': '%s'}" % TOKEN,
     "{'agent_secret_token': '******'}"),
    # URL credentials: the password goes, or a userinfo with none
    ('cannot fetch https://glance:S3cr3t@images.example.com/x.img',
     'cannot fetch https://glance:******@images.example.com/x.img'),
    ('rabbit://bm:p@ss:w0rd@rabbit-host:5672/',
     'rabbit://bm:******@rabbit-host:5672/'),
    ('https://%s@git.example.com/r' % TOKEN,
     'https://******@git.example.com/r'),
])
def test_secrets_in_text_are_masked(text, masked):
    assert secrets.mask_text(text) == masked
    assert secrets.mask_text(masked) == masked      # masking twice


@pytest.mark.parametrize('text', [
    'Agent on node n-1 cannot be reached at http://10.0.0.5:9999',
    'http://10.0.0.5:9999/v1/commands/?wait=true&who=a@b',
    'no agent token; the agent has not looked the node up',
    'mailto ops@example.com about agent_token rotation',
    '',
])
def test_text_without_secrets_is_left_alone(text):
    assert secrets.mask_text(text) == text


def test_a_known_token_is_masked_wherever_it_appears():
    text = 'the agent said: bad token %s (expected another)' % TOKEN
    assert secrets.mask_text(text, TOKEN) == \
        'the agent said: bad token ****** (expected another)'
    # too short to look for literally, and no token at all
    assert secrets.mask_text('abc def', 'abc', None) == 'abc def'
