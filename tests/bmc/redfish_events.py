"""A Redfish EventService for the sushy-tools emulator, which has none.

A Flask blueprint that tests/bmc/redfish_server.py adds to the
emulator's app (behind its basic auth):

* ``/redfish/v1/EventService`` with ``EventTypesForSubscription`` and the
  ``#EventService.SubmitTestEvent`` action;
* ``/redfish/v1/EventService/Subscriptions``: GET (links), POST (201 and
  ``Location``; ``Destination`` required);
* ``/redfish/v1/EventService/Subscriptions/<id>``: GET (``HttpHeaders``
  read back as null, as the schema says: they are write-only), DELETE;
* ``SubmitTestEvent``: POSTs a Redfish ``Event`` to every subscription
  whose ``EventTypes`` hold the event's type, with its ``HttpHeaders``
  and ``Context``, and answers once every destination has answered.

The subscriptions live in memory: one emulator process per test module.
"""

import itertools
import json
import threading
import urllib.request

import flask

PATH = '/redfish/v1/EventService'
EVENT_TYPES = ['StatusChange', 'ResourceUpdated', 'ResourceAdded',
               'ResourceRemoved', 'Alert']

events = flask.Blueprint('EventService', __name__, url_prefix=PATH)
_SUBS: dict[str, dict] = {}
_LOCK = threading.Lock()
_IDS = itertools.count(1)


def _error(status, message):
    return flask.jsonify({'error': {
        'code': 'Base.1.0.GeneralError', 'message': message}}), status


@events.route('', methods=['GET'])
def service():
    return flask.jsonify({
        '@odata.type': '#EventService.v1_7_0.EventService',
        '@odata.id': PATH, 'Id': 'EventService', 'Name': 'Event Service',
        'ServiceEnabled': True, 'DeliveryRetryAttempts': 1,
        'DeliveryRetryIntervalSeconds': 1,
        'EventTypesForSubscription': EVENT_TYPES,
        'Subscriptions': {'@odata.id': PATH + '/Subscriptions'},
        'Actions': {'#EventService.SubmitTestEvent': {
            'target': PATH + '/Actions/EventService.SubmitTestEvent'}}})


@events.route('/Subscriptions', methods=['GET'])
def subscriptions():
    with _LOCK:
        ids = sorted(_SUBS, key=int)
    return flask.jsonify({
        '@odata.type':
            '#EventDestinationCollection.EventDestinationCollection',
        '@odata.id': PATH + '/Subscriptions', 'Name': 'Subscriptions',
        'Members@odata.count': len(ids),
        'Members': [{'@odata.id': '%s/Subscriptions/%s' % (PATH, i)}
                    for i in ids]})


@events.route('/Subscriptions', methods=['POST'])
def create():
    body = flask.request.get_json(silent=True)
    if not isinstance(body, dict) or not body.get('Destination'):
        return _error(400, 'Destination is required')
    unknown = set(body.get('EventTypes') or []) - set(EVENT_TYPES)
    if unknown:
        return _error(400, 'unsupported event types %s' % sorted(unknown))
    ident = str(next(_IDS))
    sub = {'@odata.type': '#EventDestination.v1_9_0.EventDestination',
           '@odata.id': '%s/Subscriptions/%s' % (PATH, ident),
           'Id': ident, 'Name': 'Subscription %s' % ident,
           'Destination': body['Destination'],
           'EventTypes': body.get('EventTypes') or ['Alert'],
           'Context': body.get('Context', ''),
           'Protocol': body.get('Protocol', 'Redfish'),
           'HttpHeaders': body.get('HttpHeaders') or []}
    with _LOCK:
        _SUBS[ident] = sub
    return '', 201, {'Location': sub['@odata.id']}


@events.route('/Subscriptions/<ident>', methods=['GET'])
def subscription(ident):
    with _LOCK:
        sub = _SUBS.get(ident)
    if sub is None:
        return _error(404, 'no subscription %s' % ident)
    return flask.jsonify(dict(sub, HttpHeaders=None))


@events.route('/Subscriptions/<ident>', methods=['DELETE'])
def delete(ident):
    with _LOCK:
        sub = _SUBS.pop(ident, None)
    if sub is None:
        return _error(404, 'no subscription %s' % ident)
    return '', 204


@events.route('/Actions/EventService.SubmitTestEvent', methods=['POST'])
def submit_test_event():
    body = flask.request.get_json(silent=True) or {}
    event_type = body.get('EventType', 'Alert')
    with _LOCK:
        targets = [dict(s) for s in _SUBS.values()
                   if event_type in s['EventTypes']]
    failed = []
    for sub in targets:
        record = {k: body[k] for k in (
            'EventId', 'EventTimestamp', 'Message', 'MessageArgs',
            'MessageId', 'Severity') if k in body}
        record['EventType'] = event_type
        if body.get('OriginOfCondition'):
            record['OriginOfCondition'] = {
                '@odata.id': body['OriginOfCondition']}
        event = {'@odata.type': '#Event.v1_7_0.Event', 'Id': '1',
                 'Name': 'Test event', 'Context': sub['Context'],
                 'Events': [record]}
        headers = {'Content-Type': 'application/json'}
        for h in sub['HttpHeaders']:
            headers.update(h)
        req = urllib.request.Request(
            sub['Destination'], data=json.dumps(event).encode(),
            headers=headers, method='POST')
        try:
            with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310
                r.read()
        except OSError as e:
            failed.append('%s: %s' % (sub['Destination'], e))
    if failed:
        return _error(502, 'delivery failed: %s' % '; '.join(failed))
    return '', 204


def install(app) -> None:
    """Add the blueprint and name the service in the service root."""
    app.register_blueprint(events)
    root = app.view_functions['root_resource']

    def root_with_events():
        response = flask.make_response(root())
        doc = json.loads(response.get_data())
        doc['EventService'] = {'@odata.id': PATH}
        response.set_data(json.dumps(doc))
        return response

    app.view_functions['root_resource'] = root_with_events
