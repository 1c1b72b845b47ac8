"""Change tracking of records: only what changed is written, including
JSON fields mutated in place, also after a previous save."""

from baremetal import objects


def test_in_place_changes_are_saved_across_saves(api):
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    info = node.driver_internal_info
    info['step'] = 0
    node.save()
    info['step'] = 1          # the same dict, after the save
    assert node.changes() == {'driver_internal_info': {'step': 1}}
    node.save()
    assert objects.Node.get(n['uuid']).driver_internal_info == {'step': 1}


def test_a_json_field_replaced_then_mutated_is_saved(api):
    """A field given a new dict, saved, then that dict changed in place:
    the second change is seen (what was stored is the new dict's)."""
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    assert node.instance_info == {}
    node.instance_info = {'image_source': 'a'}
    node.save()
    node.instance_info['image_source'] = 'b'
    assert node.changes() == {'instance_info': {'image_source': 'b'}}
    node.save()
    assert objects.Node.get(n['uuid']).instance_info == {
        'image_source': 'b'}


def test_a_save_serialises_each_read_json_field_once(api, monkeypatch):
    """The change check of a save and the tracking after it share one
    serialisation of each JSON field read (it was three for a node)."""
    from baremetal.objects import base
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    node.driver_internal_info['a'] = 1
    assert node.properties == {}
    calls = []
    real = base._snapshot
    monkeypatch.setattr(base, '_snapshot',
                        lambda v: calls.append(v) or real(v))
    node.save()
    assert len(calls) == 2
    node.driver_internal_info['a'] = 2      # still seen after the save
    assert node.changes() == {'driver_internal_info': {'a': 2}}


def test_nothing_changed_writes_nothing(api):
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    assert node.driver_info == {}  # read only
    assert node.changes() == {}
    before = api.node(n['uuid'])['updated_at']
    node.save()
    assert api.node(n['uuid'])['updated_at'] == before


def test_assignment_is_tracked(api):
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    node.name = 'renamed'
    assert node.changes() == {'name': 'renamed'}
    node.save()
    assert api.node(n['uuid'])['name'] == 'renamed'


TOKEN = 'Zq3-4_tokenvalue-0123456789abcdefghijklmno'


def test_error_text_is_stored_and_shown_masked(api):
    """last_error and maintenance_reason are masked as they are set,
    whatever workflow sets them: the node's own agent token wherever it
    appears, any agent_token= in a URL, URL passwords.  The history
    (API 1.78) records the masked text."""
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    node.driver_internal_info['agent_secret_token'] = TOKEN
    node.save()
    error = ("Agent on node %s cannot be reached: Max retries exceeded "
             "with url: /v1/commands/?agent_token=%s; it said '%s'; "
             "image https://user:S3cr3t@images/x.img"
             % (n['uuid'], 'another-token-0123456789', TOKEN))
    node.last_error = error
    node.maintenance_reason = error
    node.maintenance = True
    node.save()
    for text in (node.last_error, node.maintenance_reason):
        assert TOKEN not in text and 'S3cr3t' not in text
        assert 'another-token' not in text
        assert 'agent_token=******' in text and "said '******'" in text
    shown = api.node(n['uuid'])
    assert shown['last_error'] == node.last_error
    assert shown['maintenance_reason'] == node.last_error
    status, history, _ = api.request(
        'GET', '/v1/nodes/%s/history?detail=true' % n['uuid'],
        version='1.78')
    assert status == 200, history
    assert [e['event'] for e in history['history']] == [node.last_error]
    node.last_error = None          # clearing is not masking
    assert node.last_error is None
