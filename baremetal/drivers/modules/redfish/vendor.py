"""``redfish`` vendor interface: event subscriptions on the BMC.

Vendor passthru methods with Ironic's names and Redfish-cased arguments
(``POST /v1/nodes/{node}/vendor_passthru?method=create_subscription``):

* ``create_subscription`` (POST): ``Destination`` (a URI with a scheme
  and a host; required), ``EventTypes`` (a list of what the BMC's
  EventService offers; ``["Alert"]`` when absent), ``Context`` (a
  string, ``""``), ``Protocol`` (a string, ``"Redfish"``) and
  ``HttpHeaders`` (a list of ``{name: value}`` objects the BMC sends
  with every event).  Answers the new subscription.
* ``get_all_subscriptions`` (GET): the BMC's subscription collection.
* ``get_subscription`` (GET) and ``delete_subscription`` (DELETE):
  ``id``, the subscription's identity on the BMC.

A subscription is shown as its ``Id``, ``Context``, ``Protocol``,
``Destination`` and ``EventTypes`` only: headers (often credentials of
the receiver) are never shown back, nor named in an error.
"""

from oslo_log import log
import rfc3986
from rfc3986 import exceptions as uri_errors
from rfc3986 import validators

from baremetal.common import exception
from baremetal.drivers import base
from baremetal.drivers.modules.redfish import client

LOG = log.getLogger(__name__)

SHOWN_FIELDS = ('Id', 'Context', 'Protocol', 'Destination', 'EventTypes')
DEFAULT_EVENT_TYPES = ['Alert']


def _shown(subscription_json: dict) -> dict:
    return {k: v for k, v in subscription_json.items() if k in SHOWN_FIELDS}


def _check_destination(destination) -> None:
    validator = validators.Validator().require_presence_of(
        'scheme', 'host').check_validity_of(
        'scheme', 'userinfo', 'host', 'path', 'query', 'fragment')
    try:
        validator.validate(rfc3986.uri_reference(destination))
    except (TypeError, AttributeError, uri_errors.RFC3986Exception):
        raise exception.InvalidParameterValue(
            err='Destination %s is not a valid URI' % destination) from None


def _check_subscription_args(kwargs: dict) -> None:
    """What needs no BMC: types and the destination."""
    context = kwargs.get('Context', '')
    protocol = kwargs.get('Protocol', 'Redfish')
    headers = kwargs.get('HttpHeaders')
    if not isinstance(context, str):
        raise exception.InvalidParameterValue(
            err='Context %s is not a valid string' % (context,))
    if not isinstance(protocol, str):
        raise exception.InvalidParameterValue(
            err='Protocol %s is not a string' % (protocol,))
    if headers is not None and not (
            isinstance(headers, list)
            and all(isinstance(h, dict) for h in headers)):
        # the value is not echoed: it may hold the receiver's secrets
        raise exception.InvalidParameterValue(
            err='HttpHeaders (a %s) is not a list of headers'
            % type(headers).__name__)
    _check_destination(kwargs.get('Destination'))
    event_types = kwargs.get('EventTypes')
    if event_types is not None and not (
            isinstance(event_types, list)
            and all(isinstance(t, str) for t in event_types)):
        raise exception.InvalidParameterValue(
            err='EventTypes %s is not a valid value, allowed values: a '
                'list of event type names' % (event_types,))


def _subscription_id(kwargs: dict) -> str:
    bmc_id = kwargs.get('id')
    if not bmc_id:
        raise exception.InvalidParameterValue(err="id can't be None")
    if not isinstance(bmc_id, str) or '/' in bmc_id:
        raise exception.InvalidParameterValue(
            err='id %s is not a subscription identity' % (bmc_id,))
    return bmc_id


def _member_path(subscriptions, bmc_id: str) -> str:
    # some BMCs leave the trailing slash off the collection's path
    return subscriptions.path.rstrip('/') + '/' + bmc_id


class RedfishVendor(client.Interface, base.VendorInterface):
    def vendor_routes(self) -> dict:
        def route(func, method, description):
            return {'func': func, 'http_methods': [method], 'async': False,
                    'attach': False, 'description': description}
        return {
            'create_subscription': route(
                self.create_subscription, 'POST',
                'Subscribe a URL to the BMC\'s events. Required: '
                '"Destination"; optional: "EventTypes", "Context", '
                '"Protocol", "HttpHeaders"'),
            'delete_subscription': route(
                self.delete_subscription, 'DELETE',
                'Delete the BMC\'s subscription "id"'),
            'get_all_subscriptions': route(
                self.get_all_subscriptions, 'GET',
                'The BMC\'s event subscriptions'),
            'get_subscription': route(
                self.get_subscription, 'GET',
                'The BMC\'s subscription "id"'),
        }

    def _events(self, task):
        return client.get_event_service(task.node, task.conductor.conf)

    def create_subscription(self, task, **kwargs) -> dict:
        _check_subscription_args(kwargs)
        node, conf = task.node, task.conductor.conf
        events = self._events(task)
        event_types = kwargs.get('EventTypes')
        if event_types is not None:
            with client.call(node, conf, 'read the event types'):
                allowed = client.enum_values(
                    events.get_event_types_for_subscription())
            if not set(event_types) <= allowed:
                raise exception.InvalidParameterValue(
                    err='EventTypes %s is not a valid value, allowed '
                        'values %s' % (event_types, sorted(allowed)))
        payload = {'Destination': kwargs['Destination'],
                   'Protocol': kwargs.get('Protocol', 'Redfish'),
                   'Context': kwargs.get('Context', ''),
                   'EventTypes': event_types or DEFAULT_EVENT_TYPES}
        if kwargs.get('HttpHeaders'):
            payload['HttpHeaders'] = kwargs['HttpHeaders']
        with client.call(node, conf, 'create a subscription to %s'
                         % payload['Destination']):
            created = events.subscriptions.create(payload)
            if created is None:
                raise exception.RedfishError(
                    error='the BMC of node %s did not say where it put '
                          'the subscription to %s'
                          % (node.uuid, payload['Destination']))
            shown = _shown(created.json)
        LOG.info('Node %s: events of types %s go to %s (subscription %s)',
                 node.uuid, payload['EventTypes'], payload['Destination'],
                 shown.get('Id'))
        return shown

    def get_all_subscriptions(self, task, **kwargs) -> dict:
        events = self._events(task)
        with client.call(task.node, task.conductor.conf,
                         'list the subscriptions'):
            return events.subscriptions.json

    def get_subscription(self, task, **kwargs) -> dict:
        bmc_id = _subscription_id(kwargs)
        events = self._events(task)
        with client.call(task.node, task.conductor.conf,
                         'read subscription %s' % bmc_id):
            subs = events.subscriptions
            return _shown(subs.get_member(_member_path(subs, bmc_id)).json)

    def delete_subscription(self, task, **kwargs) -> None:
        bmc_id = _subscription_id(kwargs)
        events = self._events(task)
        try:
            with client.call(task.node, task.conductor.conf,
                             'delete subscription %s' % bmc_id):
                subs = events.subscriptions
                subs.get_member(_member_path(subs, bmc_id)).delete()
        except exception.RedfishConnectionError:
            raise
        except exception.RedfishError as e:
            # as Ironic: a subscription that cannot be deleted is "not
            # found" (404), whatever the BMC said
            raise exception.RedfishSubscriptionNotFound(
                id=bmc_id, node=task.node.uuid, error=e) from None
        LOG.info('Node %s: subscription %s deleted', task.node.uuid,
                 bmc_id)
