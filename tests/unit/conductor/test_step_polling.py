"""The step poller watches a waiting step once, however many times it is
asked to (the step starting, then every heartbeat of its agent), and
forgets it when the watch ends so that a later wait is watched again."""

import types

from baremetal.conductor import step_polling

STEP = {'interface': 'deploy', 'step': 'erase_devices'}


class _Pool:
    def __init__(self):
        self.submitted = []

    def submit(self, fn, watch):
        self.submitted.append(watch)


def _poller(finished: bool):
    conductor = types.SimpleNamespace(
        periodic_pool=_Pool(),
        conf=types.SimpleNamespace(agent=types.SimpleNamespace(
            command_poll_max_interval=1.0)))
    poller = step_polling.StepPoller(conductor)
    poller._poll_once = lambda w: not finished
    poller.pushed = []
    push = poller._push

    def counting_push(w):
        poller.pushed.append(w.key)
        push(w)
    poller._push = counting_push
    return poller


def test_a_step_is_watched_once():
    poller = _poller(finished=False)
    try:
        for _ in range(5):
            poller.watch('n-1', 'clean wait', STEP)
        poller.watch('n-2', 'clean wait', STEP)
        assert [k[0] for k in poller.pushed] == ['n-1', 'n-2']
    finally:
        poller.stop()


def test_a_finished_watch_is_forgotten():
    poller = _poller(finished=True)
    try:
        poller.watch('n-1', 'clean wait', STEP)
        w = step_polling._Watch('n-1', 'clean wait',
                                ('deploy', 'erase_devices'))
        assert w.key in poller._watched
        poller._poll(w)             # the step ended: not polled again
        assert w.key not in poller._watched
        assert len(poller.pushed) == 1
        poller.watch('n-1', 'clean wait', STEP)     # a new wait
        assert len(poller.pushed) == 2
    finally:
        poller.stop()


def test_a_step_not_yet_saved_as_waiting_is_looked_at_again(tmp_path):
    """The task that starts an asynchronous step watches it before it
    saves the node's wait state (it holds the node until then): a poll
    that finds the node locked and not yet waiting looks again later;
    one that finds it released and elsewhere forgets the watch.  (Under
    load the first poll, 0.1 s after the step started, found the node
    still cleaning and dropped the watch: the step waited for the
    periodic poll.)"""
    from baremetal.conductor import task_manager
    from tests import harness
    h = harness.Harness(tmp_path)
    try:
        node = h.create_node()
        poller = h.conductor.step_poller
        w = step_polling._Watch(node['uuid'], 'clean wait',
                                ('deploy', 'erase_devices_metadata'))
        with task_manager.acquire(h.conductor, node['uuid'], shared=False,
                                  purpose='starting a step'):
            assert poller._poll_unshared(w) is True
        assert poller._poll_unshared(w) is False
    finally:
        h.close()
