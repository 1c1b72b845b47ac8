"""No log line shows an agent token or a URL password, whoever logs it
(urllib3's request lines) and however (arguments, an exception's text
in oslo.log's error summary, a traceback)."""

import io
import logging

import pytest
import requests
from oslo_config import cfg
from oslo_log import formatters
from oslo_log import log as oslo_log

from baremetal.common import masked_logging

TOKEN = 'Zq3-4_tokenvalue-0123456789abcdefghijklmno'
URL = 'http://10.0.0.5:9999/v1/commands/?wait=true&agent_token=' + TOKEN


@pytest.fixture
def output():
    """A logger whose handler formats as the services do (oslo.log's
    ContextFormatter), masked by ``install``."""
    conf = cfg.ConfigOpts()
    oslo_log.register_options(conf)
    conf([])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatters.ContextFormatter(
        project='baremetal', version='1', config=conf))
    logger = logging.getLogger('test-masked-logging')
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    masked_logging.install(logger)
    masked_logging.install(logger)      # twice: once is enough
    assert len(handler.filters) == 1
    assert isinstance(handler.formatter, masked_logging.MaskingFormatter)
    assert not isinstance(handler.formatter.inner,
                          masked_logging.MaskingFormatter)
    yield logger, stream
    logger.removeHandler(handler)


def _error():
    try:
        raise requests.ConnectionError(
            "HTTPConnectionPool(host='10.0.0.5', port=9999): Max retries "
            "exceeded with url: /v1/commands/?wait=true&agent_token=%s"
            % TOKEN)
    except requests.ConnectionError as e:
        return e


def _check(stream):
    text = stream.getvalue()
    assert TOKEN not in text, text
    assert 'agent_token=******' in text, text
    return text


def test_a_librarys_request_line_is_masked(output):
    logger, stream = output
    # as urllib3.connectionpool logs every request at DEBUG
    logger.debug('%s://%s:%s "%s %s %s" %s %s', 'http', '10.0.0.5', 9999,
                 'POST', URL[len('http://10.0.0.5:9999'):], 'HTTP/1.1',
                 200, 105)
    _check(stream)


def test_an_exception_as_argument_is_masked(output):
    logger, stream = output
    logger.error('Node n-1: %s', _error())
    _check(stream)


def test_the_error_summary_of_the_exception_being_handled_is_masked(
        output):
    """oslo.log appends the exception being handled to a warning, read
    from the live exception when it formats the line."""
    logger, stream = output
    try:
        raise _error()
    except requests.ConnectionError:
        logger.warning('the agent is unreachable')
    text = _check(stream)
    assert 'ConnectionError' in text


def test_a_traceback_is_masked(output):
    logger, stream = output
    try:
        raise _error()
    except requests.ConnectionError:
        logger.exception('Node n-1: step raised')
    text = _check(stream)
    assert 'Traceback' in text and 'raise _error()' in text


def test_url_passwords_are_masked(output):
    logger, stream = output
    logger.info('fetching %s', 'https://glance:S3cr3t@images/x.img')
    assert 'S3cr3t' not in stream.getvalue()
    assert 'https://glance:******@images/x.img' in stream.getvalue()


def test_a_record_is_masked_for_handlers_that_do_not_format_it(output):
    logger, _ = output
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 1,
                               'asked %s', (URL,), None)
    assert masked_logging.MaskingFilter().filter(record)
    assert TOKEN not in record.msg and record.args is None
    assert record.getMessage().endswith('agent_token=******')
