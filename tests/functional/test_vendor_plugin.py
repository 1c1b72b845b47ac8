"""A conductor refuses to start with an interface whose steps conflict,
including one shipped by a separate distribution through entry points."""

import subprocess

from tests.functional import processes


def test_server_refuses_conflicting_vendor_interface(tmp_path):
    conf = processes.base_conf(tmp_path)
    conf['DEFAULT']['enabled_management_interfaces'] = [
        'fake', 'noop', 'vendor-conflict']
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    svc.start(wait=False)
    try:
        rc = svc.proc.wait(60)
    except subprocess.TimeoutExpired:
        svc.kill()
        raise AssertionError('server started despite the conflict')
    assert rc != 0
    log = svc.log()
    assert 'vendor-conflict' in log
    assert 'clear_job_queue' in log and 'reset_idrac' in log
    assert 'priority 42' in log
    assert 'Traceback' not in log
