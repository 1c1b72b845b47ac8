import pytest

from tests.functional import processes
from tests.keystone_service import keystone  # noqa: F401  (fixture)


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    """One embedded baremetal-server per test module."""
    tmp = tmp_path_factory.mktemp('server')
    conf = processes.base_conf(tmp, conductor={
        'check_provision_state_interval': 1,
        'async_step_poll_interval': 1})
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    rc = svc.stop()
    assert rc == 0, svc.log()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and call.when == 'call':
        svc = item.funcargs.get('server')
        if svc is not None:
            rep.sections.append(('baremetal-server log', svc.log()))


def start_keystone_server(tmp, ks, **default) -> processes.Service:
    """baremetal-server with ``auth_strategy = keystone``, validating
    tokens at the Keystone fixture as its service user; the catalog's
    baremetal endpoint points at it.  ``default``: more [DEFAULT]
    options."""
    conf = processes.base_conf(tmp)
    conf['DEFAULT']['auth_strategy'] = 'keystone'
    conf['DEFAULT'].update(default)
    conf['keystone_authtoken'] = ks.authtoken_conf()
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    ks.set_baremetal_endpoint(svc.endpoint)
    return svc


@pytest.fixture(scope='module')
def agent_server(tmp_path_factory):
    """A baremetal-server whose agent the test plays with the agent
    double (processes.agent_server_conf: fake power and boot, the
    ``direct`` deploy interface; short agent command timeouts), one per
    test module."""
    tmp = tmp_path_factory.mktemp('agentserver')
    conf = processes.agent_server_conf(
        tmp, agent={'command_timeout': processes.AGENT_COMMAND_TIMEOUT,
                    'max_command_attempts': processes.AGENT_ATTEMPTS})
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()
