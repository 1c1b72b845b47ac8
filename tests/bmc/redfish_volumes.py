"""RAID volumes for the sushy-tools emulator.

sushy-tools serves Storage and Drives from its configuration
(``SUSHY_EMULATOR_STORAGE``/``SUSHY_EMULATOR_DRIVES``), but its Volumes
need a libvirt pool (its fake systems driver has none), keep no
``RAIDType`` or drives, and cannot be deleted.  tests/bmc/redfish_server.py
replaces the emulator's two Volumes views with these:

* ``GET``/``POST .../Storage/<sid>/Volumes``: a volume needs a
  ``RAIDType`` the controller knows and at least as many drives of that
  controller, not in another volume, as its level needs; without
  ``CapacityBytes`` it gets what its drives can hold;
* ``GET``/``DELETE .../Volumes/<vid>``;
* a system whose JSON says ``"raid_tasks": true`` answers POST and
  DELETE with 202 and a task monitor (``/redfish/v1/TaskMonitors/<n>``)
  that reports the task running for ``TASK_SECONDS`` and then done; the
  change shows only once the task is done;
* one that says ``"raid_on_reset": true`` offers only ``OnReset`` in its
  Volumes' ``@Redfish.OperationApplyTimeSupport``, refuses a request
  without ``@Redfish.OperationApplyTime: OnReset`` and answers 202 with a
  task that ends when the system next powers on or restarts
  (tests/bmc/redfish_server.py calls ``system_reset``), which applies the
  change.

Volumes live in memory (one emulator process per test module).
"""

import itertools
import threading
import time

import flask

TASK_SECONDS = 1.5
# RAIDType -> (fewest drives, data drives of n)
RAID_TYPES = {'RAID0': (1, lambda n: n), 'RAID1': (2, lambda n: 1),
              'RAID5': (3, lambda n: n - 1), 'RAID6': (4, lambda n: n - 2),
              'RAID10': (4, lambda n: n // 2)}

_VOLUMES: dict[tuple[str, str], dict[str, dict]] = {}
_TASKS: dict[str, dict] = {}
_AT_RESET: dict[str, list] = {}   # system uuid -> task ids
_LOCK = threading.Lock()
_IDS = itertools.count(1)
tasks = flask.Blueprint('TaskMonitors', __name__,
                        url_prefix='/redfish/v1/TaskMonitors')


def _error(status, message):
    return flask.jsonify({'error': {
        'code': 'Base.1.0.GeneralError', 'message': message}}), status


def _base(identity, storage_id):
    return '/redfish/v1/Systems/%s/Storage/%s/Volumes' % (identity,
                                                          storage_id)


def _system(app, identity):
    uuid = app.systems.uuid(identity)
    return uuid, next((s for s in app.config['SUSHY_EMULATOR_FAKE_SYSTEMS']
                       if s['uuid'] == uuid), {})


def _run_later(change) -> str:
    """A task that applies ``change`` after TASK_SECONDS; its monitor."""
    ident = str(next(_IDS))
    with _LOCK:
        _TASKS[ident] = {'done_at': time.monotonic() + TASK_SECONDS,
                         'change': change}
    return '/redfish/v1/TaskMonitors/%s' % ident


def _at_reset(uuid, change) -> str:
    """A task that applies ``change`` when the system resets."""
    ident = str(next(_IDS))
    with _LOCK:
        _TASKS[ident] = {'done_at': float('inf'), 'change': change}
        _AT_RESET.setdefault(uuid, []).append(ident)
    return '/redfish/v1/TaskMonitors/%s' % ident


def system_reset(uuid) -> None:
    """The system powered on or restarted: its OnReset tasks end."""
    with _LOCK:
        for ident in _AT_RESET.pop(uuid, []):
            _TASKS[ident]['done_at'] = 0


@tasks.route('/<ident>', methods=['GET'])
def task_monitor(ident):
    with _LOCK:
        t = _TASKS.get(ident)
        if t is None:
            return _error(404, 'no task %s' % ident)
        running = time.monotonic() < t['done_at']
        if not running and t['change'] is not None:
            t['change']()
            t['change'] = None
    doc = {'@odata.type': '#Task.v1_4_3.Task', 'Id': ident,
           'Name': 'Volume task %s' % ident,
           '@odata.id': '/redfish/v1/TaskService/Tasks/%s' % ident,
           'TaskState': 'Running' if running else 'Completed',
           'TaskStatus': 'OK', 'PercentComplete': 50 if running else 100}
    return flask.jsonify(doc), 202 if running else 200


def _volumes_view(app):
    def volumes_collection(identity, storage_id):
        uuid, system = _system(app, identity)
        key = (uuid, storage_id)
        drives = {d['Id']: d for d in app.drives.get_drives(uuid,
                                                            storage_id)}
        if flask.request.method == 'GET':
            with _LOCK:
                ids = sorted(_VOLUMES.get(key, {}), key=int)
            extra = ({'@Redfish.OperationApplyTimeSupport': {
                'SupportedValues': ['OnReset']}}
                if system.get('raid_on_reset') else {})
            return flask.jsonify({
                **extra,
                '@odata.type': '#VolumeCollection.VolumeCollection',
                '@odata.id': _base(identity, storage_id),
                'Name': 'Volumes', 'Members@odata.count': len(ids),
                'Members': [{'@odata.id': '%s/%s' % (
                    _base(identity, storage_id), i)} for i in ids]})
        body = flask.request.get_json(silent=True) or {}
        refused = _needs_on_reset(system, body)
        if refused:
            return refused
        raid_type = body.get('RAIDType')
        if raid_type not in RAID_TYPES:
            return _error(400, 'RAIDType %r is not supported' % raid_type)
        links = (body.get('Links') or {}).get('Drives') or []
        named = [str(d.get('@odata.id', '')).rstrip('/').rsplit('/', 1)[-1]
                 for d in links]
        with _LOCK:
            used = {d for v in _VOLUMES.get(key, {}).values()
                    for d in v['drives']}
        fewest, data = RAID_TYPES[raid_type]
        if (len(named) < fewest or any(d not in drives for d in named)
                or used & set(named)):
            return _error(400, 'drives %s cannot make a %s volume'
                          % (named, raid_type))
        room = min(drives[d]['CapacityBytes'] for d in named) * \
            data(len(named))
        size = body.get('CapacityBytes') or room
        if size > room:
            return _error(400, 'CapacityBytes %s exceeds %s' % (size, room))
        ident = str(next(_IDS))
        volume = {'Id': ident, 'Name': body.get('Name') or ident,
                  'RAIDType': raid_type, 'CapacityBytes': size,
                  'drives': named}

        def add():
            _VOLUMES.setdefault(key, {})[ident] = volume

        location = '%s/%s' % (_base(identity, storage_id), ident)
        if system.get('raid_on_reset'):
            return '', 202, {'Location': _at_reset(uuid, add)}
        if system.get('raid_tasks'):
            return '', 202, {'Location': _run_later(add)}
        with _LOCK:
            add()
        return '', 201, {'Location': location}
    return volumes_collection


def _volume_view(app):
    def volume(identity, stg_id, vol_id):
        uuid, system = _system(app, identity)
        key = (uuid, stg_id)
        with _LOCK:
            v = _VOLUMES.get(key, {}).get(vol_id)
        if v is None:
            return _error(404, 'no volume %s' % vol_id)
        if flask.request.method == 'DELETE':
            def remove():
                _VOLUMES.get(key, {}).pop(vol_id, None)
            refused = _needs_on_reset(
                system, flask.request.get_json(silent=True) or {})
            if refused:
                return refused
            if system.get('raid_on_reset'):
                return '', 202, {'Location': _at_reset(uuid, remove)}
            if system.get('raid_tasks'):
                return '', 202, {'Location': _run_later(remove)}
            with _LOCK:
                remove()
            return '', 204
        return flask.jsonify({
            '@odata.type': '#Volume.v1_6_0.Volume',
            '@odata.id': '%s/%s' % (_base(identity, stg_id), vol_id),
            'Id': vol_id, 'Name': v['Name'], 'RAIDType': v['RAIDType'],
            'CapacityBytes': v['CapacityBytes'],
            'Status': {'State': 'Enabled', 'Health': 'OK'},
            'Links': {'Drives': [{'@odata.id': '/redfish/v1/Systems/%s/'
                                  'Storage/%s/Drives/%s' % (
                                      identity, stg_id, d)}
                                 for d in v['drives']]}})
    return volume


def _needs_on_reset(system, body):
    if system.get('raid_on_reset') and \
            body.get('@Redfish.OperationApplyTime') != 'OnReset':
        return _error(400, 'this controller applies changes only OnReset')
    return None


def storage_config(systems: list[dict]) -> dict:
    """sushy-tools' Storage and Drives configuration from each system's
    ``storage``: ``[{"Id", "drives": [{"Id", "CapacityBytes",
    "Protocol"}]}]``."""
    storage, drives = {}, {}
    for s in systems:
        for st in s.get('storage') or []:
            storage.setdefault(s['uuid'], []).append({
                'Id': st['Id'], 'Name': st.get('Name', st['Id']),
                'StorageControllers': [{'MemberId': '0', 'Name': st['Id'],
                                        'SpeedGbps': 12}],
                'Drives': [d['Id'] for d in st['drives']]})
            drives[(s['uuid'], st['Id'])] = [
                dict(d, Name=d.get('Name', d['Id'])) for d in st['drives']]
    return {'SUSHY_EMULATOR_STORAGE': storage,
            'SUSHY_EMULATOR_DRIVES': drives}


def install(app) -> None:
    app.register_blueprint(tasks)
    app.view_functions['volumes_collection'] = _volumes_view(app)
    app.view_functions['volume'] = _volume_view(app)
    app.add_url_rule(
        '/redfish/v1/Systems/<identity>/Storage/<stg_id>/Volumes/<vol_id>',
        endpoint='volume_delete', view_func=_volume_view(app),
        methods=['DELETE'])
