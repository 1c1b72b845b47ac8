"""The power sync's scheduling (conductor/bmc_lanes.py): one read at a
time per BMC, a global bound, back-off from an erring BMC, nodes of a
busy BMC carried over without holding a worker.  Reads are stand-ins
that block on events; nothing here depends on timing."""

import threading

import futurist
import pytest

from baremetal.conductor import bmc_lanes


class Reads:
    """A read that records who ran when, and can be held."""

    def __init__(self, outcomes=None, hold=()):
        self.lock = threading.Lock()
        self.order = []
        self.in_flight = {}
        self.max_in_flight = {}
        self.total = 0
        self.max_total = 0
        self.outcomes = outcomes or {}
        self.hold = {k: threading.Event() for k in hold}
        self.started = {k: threading.Event() for k in hold}
        self.failed = []

    def read(self, payload):
        bmc, node = payload
        with self.lock:
            self.order.append(node)
            self.in_flight[bmc] = self.in_flight.get(bmc, 0) + 1
            self.max_in_flight[bmc] = max(self.max_in_flight.get(bmc, 0),
                                          self.in_flight[bmc])
            self.total += 1
            self.max_total = max(self.max_total, self.total)
        if node in self.hold:
            self.started[node].set()
            assert self.hold[node].wait(10)
        with self.lock:
            self.in_flight[bmc] -= 1
            self.total -= 1
        outcome = self.outcomes.get(node, self.outcomes.get(bmc,
                                                            bmc_lanes.OK))
        return outcome, ('error of %s' % bmc
                         if outcome != bmc_lanes.OK else None)

    def fail(self, payload, error):
        with self.lock:
            self.failed.append((payload[1], error))


def items(layout):
    """{bmc: n} -> (key, id, payload) items, nodes named bmc-i."""
    return [(bmc, '%s-%d' % (bmc, i), (bmc, '%s-%d' % (bmc, i)))
            for bmc, n in layout.items() for i in range(n)]


@pytest.fixture
def lanes():
    lanes = bmc_lanes.Lanes(workers=4, max_backoff_rounds=100)
    yield lanes
    lanes.shutdown()


def test_every_node_read_once_one_at_a_time_per_bmc(lanes):
    reads = Reads()
    layout = {'a': 20, 'b': 7, 'c': 1, 'd': 13, 'e': 5, 'f': 9}
    stats = lanes.run_round(items(layout), reads.read, reads.fail)
    assert sorted(reads.order) == sorted(i[1] for i in items(layout))
    assert set(reads.max_in_flight.values()) == {1}
    assert reads.max_total <= 4
    assert stats == dict(queued=55, carried=0, backing_off=0, lanes=6,
                         unfinished=0, workers=4)


def test_the_global_bound_holds_with_many_bmcs():
    lanes = bmc_lanes.Lanes(workers=3, max_backoff_rounds=0)
    try:
        reads = Reads()
        lanes.run_round(items({'b%d' % i: 2 for i in range(30)}),
                        reads.read, reads.fail)
        assert len(reads.order) == 60
        assert reads.max_total <= 3
    finally:
        lanes.shutdown()


def test_lanes_take_turns_a_big_bmc_does_not_go_first_to_the_end():
    # one worker: the order shows the turns; the small BMC's node is
    # read right after the big one's first, not after all twenty
    lanes = bmc_lanes.Lanes(workers=1, max_backoff_rounds=0)
    try:
        reads = Reads()
        lanes.run_round(items({'big': 20, 'small': 1}), reads.read,
                        reads.fail)
        assert reads.order.index('small-0') <= 2
    finally:
        lanes.shutdown()


def wait_until(check, what):
    for _ in range(10000):
        if check():
            return
        threading.Event().wait(0.001)
    raise AssertionError('never: %s' % what)


def test_a_busy_bmc_carries_its_nodes_and_the_others_go_on(lanes):
    reads = Reads(hold=['slow-0'])
    layout = {'slow': 3, 'x': 2, 'y': 2}
    stats = lanes.run_round(items(layout), reads.read, reads.fail,
                            timeout=0.01)
    assert reads.started['slow-0'].wait(10)
    # the round ended with the slow BMC still busy; the others are read
    # all the same
    assert stats['unfinished'] >= 1
    wait_until(lambda: len(reads.order) == 5, 'x and y read')
    assert set(reads.order) == {'slow-0', 'x-0', 'x-1', 'y-0', 'y-1'}
    # the next round reads the others again; the slow BMC's nodes
    # are not queued twice, and no worker waits on them
    stats = lanes.run_round(items(layout), reads.read, reads.fail,
                            timeout=0.01)
    assert stats['carried'] == 3 and stats['queued'] == 4
    wait_until(lambda: len(reads.order) == 9, 'x and y read again')
    assert reads.order.count('x-0') == 2 and reads.order.count('y-1') == 2
    reads.hold['slow-0'].set()
    # the round waits for the carried nodes too
    stats = lanes.run_round(items({'slow': 3}), reads.read, reads.fail)
    assert stats['unfinished'] == 0
    assert [n for n in reads.order if n.startswith('slow')][:3] == [
        'slow-0', 'slow-1', 'slow-2']
    assert reads.max_in_flight['slow'] == 1


def test_an_erring_bmc_drops_the_round_and_backs_off_growing(lanes):
    reads = Reads(outcomes={'bad': bmc_lanes.BMC_ERROR})
    layout = {'bad': 4, 'good': 2}
    sat_out = []
    tried = []
    for _ in range(16):
        before = len(reads.order)
        stats = lanes.run_round(items(layout), reads.read, reads.fail)
        tried.append(sum(1 for n in reads.order[before:]
                         if n.startswith('bad')))
        sat_out.append(stats['backing_off'])
    # one request per erring round (the others recorded as failed with
    # its error, without a request); the good BMC read every round
    assert set(tried) == {0, 1}
    assert reads.order.count('good-0') == 16
    assert reads.failed[:3] == [('bad-1', 'error of bad'),
                                ('bad-2', 'error of bad'),
                                ('bad-3', 'error of bad')]
    # tried at rounds 1, 2, 4, 8, 16: sitting out 0, 1, 3, 7 rounds
    assert [i + 1 for i, t in enumerate(tried) if t] == [1, 2, 4, 8, 16]
    assert sat_out[2] == 4 and sat_out[0] == sat_out[1] == 0


def test_a_successful_read_resets_the_back_off(lanes):
    reads = Reads(outcomes={'bad': bmc_lanes.BMC_ERROR})
    for _ in range(4):      # tried at 1, 2, 4: sits out 3 rounds next
        lanes.run_round(items({'bad': 1}), reads.read, reads.fail)
    assert lanes.backing_off() == {'bad': 3}
    for _ in range(3):
        lanes.run_round(items({'bad': 1}), reads.read, reads.fail)
    reads.outcomes = {}
    lanes.run_round(items({'bad': 1}), reads.read, reads.fail)
    assert reads.order.count('bad-0') == 4
    assert lanes.backing_off() == {}
    lanes.run_round(items({'bad': 1}), reads.read, reads.fail)
    assert reads.order.count('bad-0') == 5


def test_a_node_failure_is_not_the_bmc_failing(lanes):
    reads = Reads(outcomes={'a-0': bmc_lanes.FAILED})
    lanes.run_round(items({'a': 3}), reads.read, reads.fail)
    lanes.run_round(items({'a': 3}), reads.read, reads.fail)
    assert reads.order.count('a-1') == 2 and reads.failed == []
    assert lanes.backing_off() == {}


@pytest.mark.parametrize('errors,cap,rounds', [
    (1, 100, 0), (2, 100, 1), (3, 100, 3), (5, 100, 15), (5, 10, 10),
    (200, 10, 10), (3, 0, 0)])
def test_backoff_rounds(errors, cap, rounds):
    lanes = bmc_lanes.Lanes(workers=1, max_backoff_rounds=cap,
                            executor=futurist.SynchronousExecutor())
    assert lanes.backoff_rounds(errors) == rounds


def test_a_read_that_raises_counts_as_a_node_failure():
    lanes = bmc_lanes.Lanes(workers=1, max_backoff_rounds=5,
                            executor=futurist.SynchronousExecutor())
    seen = []

    def read(payload):
        seen.append(payload)
        raise RuntimeError('boom')

    stats = lanes.run_round([('k', 1, 'p1'), ('k', 2, 'p2')], read,
                            lambda p, e: None)
    assert seen == ['p1', 'p2'] and stats['unfinished'] == 0
    assert lanes.backing_off() == {}


def test_lanes_of_bmcs_gone_are_forgotten_unless_backing_off(lanes):
    reads = Reads(outcomes={'bad': bmc_lanes.BMC_ERROR})
    lanes.run_round(items({'bad': 1, 'gone': 1}), reads.read, reads.fail)
    lanes.run_round(items({'bad': 1}), reads.read, reads.fail)
    lanes.forget_idle({'bad'})
    assert set(lanes._lanes) == {'bad'}


# ---- the pace: as few workers as keep the round on time ----

def test_on_an_easy_pace_one_worker_reads_everything():
    # instant reads and a round that may take a thousand seconds: one
    # worker is enough, none is added
    lanes = bmc_lanes.Lanes(workers=8, max_backoff_rounds=0)
    try:
        reads = Reads()
        layout = {'bmc-%d' % i: 3 for i in range(40)}
        stats = lanes.run_round(items(layout), reads.read, reads.fail,
                                pace=1000)
        assert sorted(reads.order) == sorted(i[1] for i in items(layout))
        assert reads.max_total == 1
        assert stats['workers'] == 1
        assert stats['unfinished'] == 0
    finally:
        lanes.shutdown()


def test_behind_its_pace_a_round_adds_workers_up_to_the_bound():
    # every read waits until four run at once: only a round that adds
    # workers while behind (here: always, the pace is a nanosecond)
    # gets there; the bound and one read per BMC still hold
    lanes = bmc_lanes.Lanes(workers=4, max_backoff_rounds=0)
    barrier = threading.Barrier(4, timeout=10)

    class Waiting(Reads):
        calls = 0

        def read(self, payload):
            with self.lock:
                self.calls += 1
                first = self.calls <= 4
            if first:
                barrier.wait()
            return super().read(payload)

    try:
        reads = Waiting()
        layout = {'bmc-%d' % i: 2 for i in range(10)}
        stats = lanes.run_round(items(layout), reads.read, reads.fail,
                                pace=1e-9)
        assert sorted(reads.order) == sorted(i[1] for i in items(layout))
        assert set(reads.max_in_flight.values()) == {1}
        assert reads.max_total <= 4
        assert stats['workers'] == 4
    finally:
        lanes.shutdown()


def test_a_slow_read_does_not_stall_a_round_on_a_pace():
    # the only worker waits on a slow BMC: the round itself adds one,
    # which reads the other BMCs meanwhile
    lanes = bmc_lanes.Lanes(workers=2, max_backoff_rounds=0)
    try:
        reads = Reads(hold=('slow-0',))
        layout = {'slow': 1, 'a': 3, 'b': 3}
        done = []
        t = threading.Thread(target=lambda: done.append(lanes.run_round(
            [i for i in items(layout) if i[0] == 'slow']
            + [i for i in items(layout) if i[0] != 'slow'],
            reads.read, reads.fail, pace=0.01)))
        t.start()
        assert reads.started['slow-0'].wait(10)
        deadline = threading.Event()
        for _ in range(100):
            if len(reads.order) == 7:
                break
            deadline.wait(0.1)
        assert len(reads.order) == 7, reads.order
        reads.hold['slow-0'].set()
        t.join(10)
        assert done and done[0]['workers'] == 2
    finally:
        lanes.shutdown()


class Clock:
    """The lanes' monotonic clock, moved by the test."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now


def test_a_round_behind_adds_one_worker_not_one_per_worker(monkeypatch):
    # the first read hangs while the pace expects two reads done: the
    # round adds a worker, and that worker, having taken a read, does
    # not add another (the read it took counts): two in flight, not
    # three
    clock = Clock()
    monkeypatch.setattr(bmc_lanes, 'time', clock)
    lanes = bmc_lanes.Lanes(workers=4, max_backoff_rounds=0)
    release = threading.Event()
    started = [threading.Event(), threading.Event()]

    class FirstTwoHang(Reads):
        calls = 0

        def read(self, payload):
            with self.lock:
                n = self.calls
                self.calls += 1
            if n < 2:
                started[n].set()
                assert release.wait(10)
            return super().read(payload)

    try:
        reads = FirstTwoHang()
        layout = {k: 1 for k in 'abcdefghij'}
        done = []
        t = threading.Thread(target=lambda: done.append(lanes.run_round(
            items(layout), reads.read, reads.fail, pace=100)))
        t.start()
        assert started[0].wait(10)
        clock.now = 20.0            # two of ten reads expected by now
        assert started[1].wait(10)
        threading.Event().wait(1.2)  # two of the round's looks at its pace
        assert reads.calls == 2     # only the two hanging
        clock.now = 1000.0
        release.set()
        t.join(10)
        assert sorted(reads.order) == sorted(i[1] for i in items(layout))
        assert done and done[0]['unfinished'] == 0
    finally:
        lanes.shutdown()
