"""How the API reaches conductors.

``rpc_transport = none``: the conductor lives in this process and is
called directly.  ``oslo``: oslo.messaging to the conductor the hash ring
maps the node to.  Either way, a node whose driver/group no live
conductor serves is a 503, and an RPC timeout is a 503 with a message,
never a hung request.  Each conductor may hold at most
``[api]max_waiting_per_conductor`` of the API's threads waiting on its
answers: one that died or hangs leaves the others for every other node.
One whose heartbeat is [api]conductor_silent_after old is routed around
(hash_ring.RingManager), and the requests for a node that wait on it
then stop waiting (``_watched``, rpc_batch): a 503, or, not yet sent,
routed again.
"""

import random
import threading
from typing import Any

from oslo_log import log

from baremetal.common import exception
from baremetal.common import metrics
from baremetal.common import rpc_batch
from baremetal.common import rpc_threads
from baremetal.conductor import hash_ring

LOG = log.getLogger(__name__)


def silent_after(conf) -> int:
    """Seconds without a heartbeat after which the API routes around a
    conductor ([api]conductor_silent_after)."""
    c = conf.conductor
    return conf.api.conductor_silent_after or min(
        3 * c.heartbeat_interval, c.heartbeat_timeout)


class ConductorAPI:
    def __init__(self, conf, local=None, threads: int = 64) -> None:
        """``threads``: the most the API serves requests with (its
        [api]api_workers default)."""
        self.conf = conf
        self.local = local          # a service.Conductor, embedded mode
        self.rings = local.rings if local else hash_ring.RingManager(
            conf, silent_after(conf))
        self._client = None
        self._batches = None
        self._threads = threads
        self._rpc_threads = None    # RPCs waited on while watching (_watched)
        self._waiting_lock = threading.Lock()
        # conductor -> requests waiting on it now, and the most that may
        self._waiting_on: dict[str, int] = {}
        self._per_conductor = conf.api.max_waiting_per_conductor or max(
            1, (conf.api.api_workers or threads) // 2)
        if local is None:
            # oslo.messaging only where it is used: the embedded server
            # never loads it (start-up time and memory)
            from baremetal.common import rpc
            self._client = rpc.client(conf, conf.rpc_response_timeout_api)
            self._serializer = rpc.ContextSerializer()
            self._batches = rpc_batch.Coalescer(self._send_batch)
            self._no_batch: set[str] = set()   # hosts without call_batch

    def host_for(self, node: dict) -> str:
        return self.rings.host_for(node['uuid'], node['driver'],
                                   node.get('conductor_group') or '')

    def _call(self, node: dict | None, rpc_method: str, context=None,
              host: str | None = None, **kwargs) -> Any:
        if self.local is not None:
            if node is not None:
                from baremetal.conductor import service
                service.check_node_routable(self.local, node)
            return getattr(self.local.manager, rpc_method)(context,
                                                           **kwargs)
        if host is None:
            host = self.host_for(node)
        for rerouted in (False, True):
            try:
                return self._call_host(host, rpc_method, context,
                                       node=node, **kwargs)
            except rpc_batch.NotSent as e:
                # queued behind a batch its conductor did not answer:
                # routed again, once (the ring may route around it by
                # now), never sent to it to wait a second time
                again = self.host_for(node) if node is not None else host
                if rerouted or again == host:
                    raise e.cause from None
                LOG.info('A %s call queued for conductor %s goes to '
                         'conductor %s (%s)', rpc_method, host, again,
                         e.cause)
                metrics.conductor_call_moved(host, 'rerouted')
                host = again

    def _call_host(self, host: str, rpc_method: str, context,
                   node: dict | None = None, **kwargs) -> Any:
        with self._waiting_lock:
            waiting = self._waiting_on.get(host, 0)
            if waiting >= self._per_conductor:
                metrics.conductor_call_refused(host)
                raise exception.NoValidHost(
                    reason='Conductor %s has not answered the %d requests '
                           'waiting on it yet ([api]'
                           'max_waiting_per_conductor); it may be '
                           'overloaded or gone. Retry later.'
                           % (host, waiting))
            self._waiting_on[host] = waiting + 1
        moved = None if node is None else \
            (lambda: self._routed_around(host, node))
        try:
            if rpc_method in rpc_batch.BATCHED and \
                    host not in self._no_batch:
                return self._batches.call(host, {
                    'method': rpc_method, 'kwargs': kwargs,
                    'context': self._serializer.serialize_context(context)},
                    moved=moved)
            try:
                return self._watched(host, moved, lambda: self._rpc(
                    host, rpc_method, context, **kwargs))
            except rpc_batch.GivenUp:
                metrics.conductor_call_moved(host, 'given_up')
                raise
        finally:
            with self._waiting_lock:
                left = self._waiting_on[host] - 1
                if left:
                    self._waiting_on[host] = left
                else:
                    del self._waiting_on[host]

    def _watched(self, host: str, moved, call) -> Any:
        """``call()``, an RPC to ``host``.  With ``moved`` (whether the
        node's requests are routed around ``host`` now: it went silent),
        the RPC runs in a thread of its own while this one looks every
        ``rpc_batch.RECHECK`` seconds: once ``moved``, GivenUp (a 503),
        the RPC left to end or time out alone.  A request sent to a
        conductor that died no longer waits the whole
        ``rpc_response_timeout_api`` when the API routes around it
        sooner (``[api]conductor_silent_after``)."""
        if moved is None:
            return call()
        if self._rpc_threads is None:
            # each of the API's threads waits on one RPC at most, and
            # those given up on go on for up to the RPC timeout
            self._rpc_threads = rpc_threads.RpcThreads(2 * self._threads + 8)
        future = self._rpc_threads.submit(call)
        while True:
            try:
                return future.result(timeout=rpc_batch.RECHECK)
            except TimeoutError:
                if future.done():
                    raise       # the RPC's own
                if rpc_batch.moved_now(moved):
                    raise rpc_batch.GivenUp(host) from None

    def _routed_around(self, host: str, node: dict) -> bool:
        """Whether ``node``'s requests no longer go to ``host`` because
        it went silent (not a ring that changed for another reason: a
        conductor that joined, whose host still answers)."""
        return self.rings.is_silent(host) and self.host_for(node) != host

    def waiting(self) -> int:
        """How many threads wait on a conductor's answer right now."""
        return sum(self._waiting_on.values())

    def _rpc(self, host: str, rpc_method: str, context, **kwargs) -> Any:
        import oslo_messaging as messaging
        cctxt = self._client.prepare(server=host)
        try:
            return cctxt.call(context or {}, rpc_method, **kwargs)
        except messaging.MessagingTimeout:
            self.rings.reset()
            raise exception.NoValidHost(
                reason='Conductor %s did not answer %s in time (%ss); it '
                       'may be overloaded or gone. Retry later.'
                % (host, rpc_method, self.conf.rpc_response_timeout_api)
            ) from None
        except messaging.MessageDeliveryFailure as e:
            raise exception.NoValidHost(
                reason='Could not reach conductor %s: %s' % (host, e)
            ) from None

    def _send_batch(self, host: str, calls: list[dict],
                    moved=None) -> list[dict]:
        """One RPC for calls coalesced by rpc_batch (its sender's
        ``moved``: see _watched); a conductor from before call_batch
        gets them one by one."""
        import oslo_messaging as messaging
        if host not in self._no_batch:
            try:
                return self._watched(host, moved, lambda: self._rpc(
                    host, 'call_batch', calls[0]['context'], calls=calls))
            except messaging.RemoteError as e:
                if e.exc_type != 'NoSuchMethod':
                    raise
                LOG.warning('Conductor %s cannot take batched calls (an '
                            'older version); calling it one by one', host)
                self._no_batch.add(host)
        outcomes = []
        for c in calls:
            try:
                outcomes.append({'result': self._rpc(
                    host, c['method'], c['context'], **c['kwargs'])})
            except Exception as e:
                outcomes.append({'raise': e})
        return outcomes

    def any_host_for_driver(self, driver: str) -> str:
        for (hw, _group), ring in self.rings.rings().items():
            if hw == driver and ring.hosts:
                return ring.hosts[0]
        raise exception.NoValidHost(
            reason='No conductor service registered which supports '
                   'driver %s.' % driver)

    # ---- node calls: the node dict needs uuid, driver, conductor_group
    def do_provisioning_action(self, ctx, node: dict, action: str,
                               params: dict | None = None) -> None:
        self._call(node, 'do_provisioning_action', ctx,
                   node_id=node['uuid'], action=action, params=params)

    def change_node_power_state(self, ctx, node, new_state, timeout=None):
        self._call(node, 'change_node_power_state', ctx,
                   node_id=node['uuid'], new_state=new_state,
                   timeout=timeout)

    def node_call(self, ctx, node: dict, rpc_method: str, **kwargs) -> Any:
        """Any other per-node method of ConductorManager."""
        return self._call(node, rpc_method, ctx, node_id=node['uuid'],
                          **kwargs)

    def driver_call(self, ctx, driver: str, rpc_method: str, **kwargs
                    ) -> Any:
        if self.local is not None:
            return getattr(self.local.manager, rpc_method)(
                ctx, driver_name=driver, **kwargs)
        return self._call(None, rpc_method, ctx,
                          host=self.any_host_for_driver(driver),
                          driver_name=driver, **kwargs)

    def any_call(self, ctx, rpc_method: str, **kwargs) -> Any:
        """A call any live conductor can answer (e.g. allocations)."""
        if self.local is not None:
            return getattr(self.local.manager, rpc_method)(ctx, **kwargs)
        hosts = sorted({h for ring in self.rings.rings().values()
                        for h in ring.hosts})
        if not hosts:
            raise exception.NoValidHost(
                reason='No conductor service is alive')
        return self._call(None, rpc_method, ctx,
                          host=random.choice(hosts),
                          **kwargs)
