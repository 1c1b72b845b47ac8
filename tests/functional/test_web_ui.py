"""The web page at /ui/ in a real headless browser: Debian's chromium
(tools/install-browser) driven by Playwright, against a real
baremetal-server.  Nodes are driven over the API while the page is open:
its counts by provision state and its feed follow live (the change feed,
GET /events, read by the page as a stream); after a fake-hardware
deployment the node's timeline has one bar per step.  The screenshot of
the page goes to doc/source/admin/web-ui.png for the docs when
``BAREMETAL_SCREENSHOTS=1`` is set.

Without chromium (or Playwright) the tests are skipped with the reason,
except in CI (``CI=true``), where they fail.
"""

import base64
import os
import urllib.request

import bcrypt
import pytest

from tests import services
from tests.functional import bmc_server as bs
from tests.functional import processes

CHROMIUM = '/usr/bin/chromium'
ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
        '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync']
STEP_SECONDS = 0.3
SCREENSHOT = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                          'source', 'admin', 'web-ui.png')
TIMEOUT_MS = 20000


def _browser_or_skip():
    why = None
    if not os.access(CHROMIUM, os.X_OK):
        why = '%s is not installed (run tools/install-browser)' % CHROMIUM
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            why = 'playwright is not installed (test-requirements.txt)'
    if why:
        if services.required():
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope='module')
def browser(tmp_path_factory):
    """A fresh chromium profile; Playwright never downloads a browser."""
    _browser_or_skip()
    os.environ['PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD'] = '1'
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


def _context(browser, tmp_path, **kw):
    profile = tmp_path / 'profile'
    ctx = browser.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=ARGS, headless=True,
        viewport={'width': 1280, 'height': 900}, **kw)
    ctx.set_default_timeout(TIMEOUT_MS)
    return ctx


def _server(tmp, **default):
    conf = processes.base_conf(tmp, conductor={
        'check_provision_state_interval': 1,
        'automated_clean': 'false'})
    conf['DEFAULT'].update(default)
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    return svc.start()


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    svc = _server(tmp_path_factory.mktemp('webui'))
    yield svc
    assert svc.stop() == 0, svc.log()


def _provision(server, node, target):
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, {'target': target})
    assert status == 202, body


def _count(page, state):
    """The page's count of nodes in ``state`` (0 when not shown)."""
    loc = page.locator('#counts li[data-state="%s"] .n' % state)
    return int(loc.inner_text()) if loc.count() else 0


def _wait_count(page, state, n):
    page.wait_for_function(
        '([s, n]) => { const e = document.querySelector('
        '`#counts li[data-state="${s}"] .n`); '
        'return (e ? +e.textContent : 0) === n; }', arg=[state, n])


def _plan(server, node):
    status, body = bs.http(server, 'GET', '/nodes/%s/plan' % node)
    assert status == 200, body
    return body


def test_page_follows_the_fleet_live_and_draws_a_deploy(server, browser,
                                                         tmp_path):
    ctx = _context(browser, tmp_path)
    errors = []
    try:
        page = ctx.new_page()
        page.on('pageerror', lambda e: errors.append(str(e)))
        page.goto(server.endpoint + '/ui/')
        page.wait_for_selector('#status[data-state="live"]')
        # the change feed and the fleet's first list load side by side:
        # either may come first.  (A function, not an expression: the
        # page's CSP forbids eval, with which Playwright evaluates an
        # expression when its first try finds it false.)
        page.wait_for_function(
            "() => document.getElementById('total').textContent !== ''")
        assert page.locator('#total').inner_text() == '(0 nodes)'

        # nodes created and driven over the API: the page follows
        nodes = [bs.create(server, driver='fake-hardware',
                           name='rack1-node%d' % i,
                           driver_info={'fake_step_seconds': STEP_SECONDS}
                           )['uuid'] for i in range(3)]
        _wait_count(page, 'enroll', 3)
        for n in nodes:
            _provision(server, n, 'manage')
        for n in nodes:
            bs.wait_provision(server, n, 'manageable')
        _wait_count(page, 'manageable', 3)
        assert _count(page, 'enroll') == 0
        page.wait_for_selector('#feed li[data-field="provision_state"]'
                               '[data-node="%s"]' % nodes[0])
        _provision(server, nodes[0], 'provide')
        _provision(server, nodes[1], 'provide')
        bs.wait_provision(server, nodes[0], 'available')
        bs.wait_provision(server, nodes[1], 'available')
        _wait_count(page, 'available', 2)
        _wait_count(page, 'manageable', 1)
        status, body = bs.http(server, 'DELETE', '/v1/nodes/%s' % nodes[2])
        assert status == 204, body
        _wait_count(page, 'manageable', 0)
        assert page.locator('#total').inner_text() == '(2 nodes)'

        # a deployment: the feed shows its steps, the counts its end
        _provision(server, nodes[0], 'active')
        bs.wait_provision(server, nodes[0], 'active')
        _wait_count(page, 'active', 1)
        _wait_count(page, 'available', 1)
        page.wait_for_selector('#feed li[data-field="deploy_step"]'
                               '[data-node="%s"]' % nodes[0])
        # every feed entry came from the stream: none was made up
        feed = page.locator('#feed li').count()
        assert feed >= 3 * 2 + 2

        # the node's timeline: one bar per step of the last deployment
        deploy = _plan(server, nodes[0])['timings']['deploy']
        page.fill('#node-ident', 'rack1-node0')
        page.click('#pick button')
        page.wait_for_selector('#timeline svg[data-kind="deploy"]')
        bars = page.locator('#timeline rect.step-bar')
        assert bars.count() == len(deploy['steps']) > 0
        assert [bars.nth(i).get_attribute('data-step')
                for i in range(bars.count())] == [
            s['step'] for s in deploy['steps']]
        # later steps start further right
        xs = [float(bars.nth(i).get_attribute('x'))
              for i in range(bars.count())]
        assert xs == sorted(xs) and xs[-1] > xs[0]
        assert page.locator('#node-title').inner_text().startswith(
            'rack1-node0')
        assert 'active' in page.locator('#node-summary').inner_text()
        assert not errors, errors
        # the docs' picture, when asked for (a test run leaves the
        # checkout as it was otherwise)
        shot = SCREENSHOT if os.environ.get('BAREMETAL_SCREENSHOTS') \
            else str(tmp_path / 'web-ui.png')
        page.screenshot(path=shot, full_page=True)
        assert os.path.getsize(shot) > 10000
    finally:
        ctx.close()


def test_a_running_step_is_shown_with_what_it_waits_on(server, browser,
                                                       tmp_path):
    node = bs.create(server, driver='fake-hardware', driver_info={
        'fake_async_steps': ['bios.factory_reset']})['uuid']
    _provision(server, node, 'manage')
    bs.wait_provision(server, node, 'manageable')
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, {'target': 'clean', 'clean_steps': [
                               {'interface': 'bios',
                                'step': 'factory_reset'}]})
    assert status == 202, body
    bs.wait(server, node, lambda n: n['provision_state'] == 'clean wait'
            and n['reservation'] is None, what='clean wait')
    ctx = _context(browser, tmp_path)
    try:
        page = ctx.new_page()
        page.goto(server.endpoint + '/ui/#node=' + node)
        page.wait_for_selector('#plan tr[data-state="running"]')
        row = page.locator('#plan tr[data-state="running"]').inner_text()
        assert 'bios.factory_reset' in row and 'waiting on bmc' in row
        page.select_option('#kind', 'clean')
        page.wait_for_selector('#timeline rect.step-bar.running')
    finally:
        ctx.close()


def test_under_http_basic_the_browser_signs_in_once(browser, tmp_path):
    htpasswd = tmp_path / 'htpasswd'
    htpasswd.write_text('admin:%s\n' % bcrypt.hashpw(
        b'secret', bcrypt.gensalt(4)).decode())
    svc = _server(tmp_path / 'srv', auth_strategy='http_basic',
                  http_basic_auth_user_file=str(htpasswd))
    try:
        creds = 'Basic ' + base64.b64encode(b'admin:secret').decode()
        req = urllib.request.Request(
            svc.endpoint + '/v1/nodes', method='POST',
            data=b'{"driver": "fake-hardware"}',
            headers={'Authorization': creds,
                     'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 201
        # without credentials the browser is asked for them, and has
        # none to give: the page itself is refused
        from playwright.sync_api import Error
        ctx = _context(browser, tmp_path / 'anon')
        try:
            with pytest.raises(Error, match='ERR_INVALID_AUTH_CREDENTIALS'):
                ctx.new_page().goto(svc.endpoint + '/ui/')
            assert ctx.request.get(svc.endpoint + '/ui/').status == 401
        finally:
            ctx.close()
        ctx = _context(browser, tmp_path / 'signed',
                       http_credentials={'username': 'admin',
                                         'password': 'secret'})
        try:
            page = ctx.new_page()
            page.goto(svc.endpoint + '/ui/')
            page.wait_for_selector('#status[data-state="live"]')
            # (created at API 1.1: available at once, as in Ironic)
            _wait_count(page, 'available', 1)
        finally:
            ctx.close()
    finally:
        assert svc.stop() == 0, svc.log()


def test_after_a_drop_the_page_resumes_where_it_stopped(browser,
                                                         tmp_path):
    """The server restarts; changes made before the page is back on the
    stream reach it all the same (it resumes with Last-Event-ID)."""
    svc = _server(tmp_path / 'srv')
    ctx = _context(browser, tmp_path)
    try:
        page = ctx.new_page()
        streams = []
        page.on('request', lambda r: streams.append(
            r.headers.get('last-event-id')) if r.url.endswith('/events')
            else None)
        page.goto(svc.endpoint + '/ui/')
        page.wait_for_selector('#status[data-state="live"]')
        node = bs.create(svc, driver='fake-hardware')['uuid']
        _wait_count(page, 'enroll', 1)
        # the page may not reconnect until told
        held = []
        page.route('**/events', lambda route: (held.append(1),
                                               route.abort()))
        assert svc.stop() == 0, svc.log()
        page.wait_for_selector('#status[data-state="reconnecting"]')
        svc.start()
        _provision(svc, node, 'manage')
        bs.wait_provision(svc, node, 'manageable')
        page.wait_for_timeout(2500)         # a retry or two, refused
        assert held and _count(page, 'enroll') == 1
        page.unroute('**/events')
        page.wait_for_selector('#status[data-state="live"]')
        _wait_count(page, 'manageable', 1)
        assert _count(page, 'enroll') == 0
        # the first stream started at the newest event; the last one
        # resumed after the event the page had seen (its node created)
        assert streams[0] is None and streams[-1] is not None
    finally:
        ctx.close()
        assert svc.stop() == 0, svc.log()


def test_under_keystone_the_page_asks_for_a_token_and_sends_it(browser,
                                                               tmp_path):
    """No identity service listens: the API refuses every request, the
    page's files are served all the same, and the token the page is
    given goes with its API requests as X-Auth-Token."""
    nowhere = 'http://127.0.0.1:9'
    conf = processes.base_conf(tmp_path, conductor={
        'check_provision_state_interval': 1})
    conf['DEFAULT']['auth_strategy'] = 'keystone'
    conf['keystone_authtoken'] = {
        'www_authenticate_uri': nowhere + '/', 'auth_type': 'password',
        'auth_url': nowhere + '/v3', 'username': 'baremetal',
        'password': 'x', 'project_name': 'service',
        'user_domain_name': 'Default', 'project_domain_name': 'Default',
        'http_connect_timeout': 2, 'http_request_max_retries': 0}
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port()).start()
    ctx = _context(browser, tmp_path)
    try:
        page = ctx.new_page()
        sent = []
        page.on('request', lambda r: sent.append(
            (r.url, r.headers.get('x-auth-token'))))
        resp = page.goto(svc.endpoint + '/ui/')
        assert resp.status == 200
        page.wait_for_selector('#login:not([hidden])')
        assert page.locator('#main').is_hidden()
        assert all(tok is None for _, tok in sent)
        page.fill('#token', 'a-token-from-keystone')
        del sent[:]
        page.click('#login button')
        page.wait_for_function(
            '() => document.getElementById("status").dataset.state '
            '!== "starting"')
        asked = [tok for url, tok in sent if '/v1/nodes' in url]
        assert asked and set(asked) == {'a-token-from-keystone'}
        streamed = [tok for url, tok in sent if url.endswith('/events')]
        assert 'a-token-from-keystone' in streamed
        # the token stays in this tab only
        assert page.evaluate('sessionStorage.getItem("baremetal-token")') \
            == 'a-token-from-keystone'
    finally:
        ctx.close()
        assert svc.stop() == 0, svc.log()
