"""The conductor side of coalesced calls: each call of a batch runs as it
would alone, with its own context, and gets its own result or error;
only the quick methods are accepted."""

from baremetal.common import rpc_batch


def _call(rpc_method, **kwargs):
    return {'method': rpc_method, 'kwargs': kwargs,
            'context': {'request_id': 'req-' + rpc_method}}


def test_each_call_gets_its_own_outcome(api):
    one = api.create_node(name='one')
    two = api.create_node(name='two')
    out = api.conductor.manager.call_batch({}, [
        _call('do_provisioning_action', node_id=one['uuid'],
              action='manage'),
        _call('do_provisioning_action', node_id=two['uuid'],
              action='provide'),
        _call('do_provisioning_action', node_id='no-such-node',
              action='manage'),
        _call('vendor_passthru', node_id=one['uuid'], method='x',
              http_method='POST', info={}),
        _call('do_provisioning_action', node_id=two['uuid'],
              wrong='argument'),
    ])
    assert out[0] == {'result': None}
    errors = [rpc_batch.deserialize_error(o['error']) for o in out[1:]]
    assert [type(e).__name__ for e in errors] == [
        'InvalidStateRequested', 'NodeNotFound', 'InvalidParameterValue',
        'BaremetalException']
    assert [e.code for e in errors] == [400, 404, 400, 500]
    assert two['uuid'] in str(errors[0])
    assert 'cannot be called in a batch' in str(errors[2])
    assert 'TypeError' in str(errors[3])
    api.wait_for('one', 'manageable')
    assert api.node('two')['provision_state'] == 'enroll'


class _OldConductorAPI:
    """rpcapi.ConductorAPI over a fake transport: a conductor from before
    call_batch answers it with NoSuchMethod."""

    def __init__(self, batch_known: bool) -> None:
        import oslo_messaging as messaging

        from baremetal.conductor import rpcapi
        self.sent = []
        api = rpcapi.ConductorAPI.__new__(rpcapi.ConductorAPI)
        api._no_batch = set()
        api._serializer = None

        def rpc(host, method, context, **kwargs):
            self.sent.append((host, method))
            if method == 'call_batch':
                if not batch_known:
                    raise messaging.RemoteError('NoSuchMethod', 'no')
                return [{'result': 'batched'} for _ in kwargs['calls']]
            return 'alone'
        api._rpc = rpc
        self.api = api


def test_a_conductor_without_batches_is_called_one_by_one():
    fake = _OldConductorAPI(batch_known=False)
    calls = [{'method': 'do_provisioning_action', 'context': {},
              'kwargs': {'node_id': 'n%d' % i}} for i in range(3)]
    out = fake.api._send_batch('old-host', calls)
    assert out == [{'result': 'alone'}] * 3
    assert fake.sent == [('old-host', 'call_batch')] + [
        ('old-host', 'do_provisioning_action')] * 3
    # remembered: the next batch is not tried again
    fake.sent.clear()
    fake.api._send_batch('old-host', calls[:1])
    assert fake.sent == [('old-host', 'do_provisioning_action')]
    new = _OldConductorAPI(batch_known=True)
    assert new.api._send_batch('new-host', calls) == [
        {'result': 'batched'}] * 3
    assert new.sent == [('new-host', 'call_batch')]
