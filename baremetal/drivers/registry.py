"""Loads enabled hardware types and interfaces from entry points.

One ``Registry`` is built at service start from the ``enabled_*``
options, after config is parsed: step priorities are resolved here
(operator overrides included) and conflicting priorities refuse start-up.
"""

import dataclasses
from typing import Any

import stevedore
from oslo_config import cfg
from oslo_log import log

from baremetal.common import exception
from baremetal.conf import default as default_conf
from baremetal.drivers import base
from baremetal.drivers.modules import local_files

LOG = log.getLogger(__name__)

TYPES_NS = 'baremetal.hardware.types'
IFACE_NS = 'baremetal.hardware.interfaces.%s'
INTERFACE_TYPES = default_conf.INTERFACE_TYPES
_IFACE_FIELDS = tuple('%s_interface' % it for it in INTERFACE_TYPES)

# [deploy] options that set one step's priority, as in Ironic.
_NAMED_PRIORITY_OPTS = {
    ('clean', 'deploy', 'erase_devices'): ('deploy',
                                           'erase_devices_priority'),
    ('clean', 'deploy', 'erase_devices_metadata'): (
        'deploy', 'erase_devices_metadata_priority'),
}


def _parse_overrides(values: list[str], option: str) -> dict:
    out = {}
    for item in values:
        for part in item.split(','):
            part = part.strip()
            if not part:
                continue
            try:
                name, prio = part.rsplit(':', 1)
                iface, step = name.split('.', 1)
                out[(iface, step)] = int(prio)
            except ValueError:
                raise exception.ConfigInvalid(
                    error_msg='[conductor]%s: %r is not '
                              '"interface.step:priority"'
                              % (option, part)) from None
    return out


def _error_on_conflict(ns, name, extensions):
    raise exception.DriverLoadError(
        driver=name, reason='several entry points named %s in %s: %s'
        % (name, ns, ', '.join(str(e.entry_point) for e in extensions)))


@dataclasses.dataclass
class DriverSet:
    """The interface instances of one node: ``driver.power`` etc."""

    hardware_type: Any
    interfaces: dict

    def __getattr__(self, name):
        try:
            return self.__dict__['interfaces'][name]
        except KeyError:
            raise AttributeError(name) from None


def _entry_point_name(hw_name: str, it: str, cls) -> str:
    """The entry point of ``baremetal.hardware.interfaces.<it>`` that
    names class ``cls``; DriverLoadError saying what to list if none."""
    from importlib import metadata
    target = '%s:%s' % (getattr(cls, '__module__', ''),
                        getattr(cls, '__qualname__', repr(cls)))
    names = sorted(ep.name for ep in metadata.entry_points(
        group=IFACE_NS % it) if ep.value.replace(' ', '') == target)
    if not names:
        raise exception.DriverLoadError(
            driver=hw_name,
            reason='supported_%s_interfaces lists the class %s, but no '
                   'entry point in %s names it; register it in your '
                   'package\'s entry points and list its name (or the '
                   'class) there' % (it, target, IFACE_NS % it))
    return names[0]


class Registry:
    """Enabled hardware types and interface implementations."""

    def __init__(self, conf: cfg.ConfigOpts,
                 hardware_types: dict | None = None,
                 interfaces: dict | None = None) -> None:
        self.conf = conf
        if hardware_types is None:
            hardware_types = self._load(
                TYPES_NS, conf.enabled_hardware_types,
                'enabled_hardware_types')
        self.hardware_types: dict[str, Any] = hardware_types
        if interfaces is None:
            interfaces = {
                it: self._load(IFACE_NS % it,
                               getattr(conf, 'enabled_%s_interfaces' % it),
                               'enabled_%s_interfaces' % it)
                for it in INTERFACE_TYPES}
        self.interfaces: dict[str, dict[str, Any]] = interfaces
        self._driver_sets: dict[tuple, DriverSet] = {}
        self._supported: dict[tuple[str, str], list[str]] = {}
        self._resolve_priorities()
        self._check_hardware_types()
        # the files nodes may name: a bad list refuses start-up too
        local_files.check_config(conf)

    @staticmethod
    def _load(namespace: str, names: list[str], option: str) -> dict:
        names = list(dict.fromkeys(names))
        if not names:
            return {}
        failed = []

        def on_fail(manager, ep, err):
            failed.append((ep.name, err))

        mgr = stevedore.NamedExtensionManager(
            namespace, names, invoke_on_load=True,
            on_load_failure_callback=on_fail,
            on_missing_entrypoints_callback=lambda missing: failed.extend(
                (n, 'no entry point %s in %s' % (n, namespace))
                for n in missing),
            conflict_resolver=lambda ns, n, exts: _error_on_conflict(
                ns, n, exts))
        if failed:
            raise exception.DriverLoadError(
                driver=', '.join(str(n) for n, _ in failed),
                reason='enabled in [DEFAULT]%s but could not be loaded: %s'
                % (option, '; '.join('%s: %s' % f for f in failed)))
        return {ext.name: ext.obj for ext in mgr}

    @classmethod
    def from_objects(cls, conf, hardware_types: dict,
                     interfaces: dict) -> 'Registry':
        """A registry from ready objects (tests, make_test_instance)."""
        full = {it: dict(interfaces.get(it, {})) for it in INTERFACE_TYPES}
        return cls(conf, hardware_types=dict(hardware_types),
                   interfaces=full)

    # ---- steps ----
    def _resolve_priorities(self) -> None:
        c = self.conf.conductor
        overrides = {
            'clean': _parse_overrides(c.clean_step_priority_override,
                                      'clean_step_priority_override'),
            'deploy': _parse_overrides(c.deploy_step_priority_override,
                                       'deploy_step_priority_override'),
            'service': {},
        }
        for it, impls in self.interfaces.items():
            for impl_name, obj in impls.items():
                if not isinstance(obj, base.BaseInterface):
                    continue
                for kind in base.STEP_KINDS:
                    # kept for steps only known at run time (an agent's)
                    obj.step_overrides[kind] = {
                        step: p for (i, step), p in overrides[kind].items()
                        if i == it}
                    prios = obj.step_priorities[kind]
                    for step in prios:
                        named = _NAMED_PRIORITY_OPTS.get((kind, it, step))
                        if named:
                            value = getattr(getattr(self.conf, named[0]),
                                            named[1])
                            if value is not None:
                                prios[step] = value
                        if (it, step) in overrides[kind]:
                            prios[step] = overrides[kind][(it, step)]
                    self._check_conflicts(it, impl_name, kind, prios)

    @staticmethod
    def _check_conflicts(it: str, impl: str, kind: str,
                         prios: dict[str, int]) -> None:
        seen: dict[int, str] = {}
        for step in sorted(prios):
            p = prios[step]
            if not p:
                continue
            if p in seen:
                raise exception.StepConflict(
                    reason='%s interface %r: %s steps %s.%s and %s.%s both '
                           'have priority %d; change one with [conductor]'
                           '%s_step_priority_override'
                    % (it, impl, kind, it, seen[p], it, step, p, kind))
            seen[p] = step

    # ---- hardware types ----
    def supported(self, hw_name: str, it: str) -> list[str]:
        """Entry point names of the ``it`` interfaces hardware type
        ``hw_name`` supports, in its order.  A hardware type may list
        interface classes, as Ironic's do: each stands for the entry
        point that names it."""
        key = (hw_name, it)
        found = self._supported.get(key)
        if found is None:
            hw = self.hardware_types[hw_name]
            found = self._supported[key] = [
                item if isinstance(item, str)
                else _entry_point_name(hw_name, it, item)
                for item in hw.supported(it)]
        return found

    def _check_hardware_types(self) -> None:
        for name in self.hardware_types:
            for it in INTERFACE_TYPES:
                supported = self.supported(name, it)
                if it in ('power', 'management') and \
                        not set(supported) & set(self.interfaces[it]):
                    raise exception.DriverLoadError(
                        driver=name,
                        reason='none of its %s interfaces %s is enabled '
                               '(enabled_%s_interfaces = %s)'
                        % (it, supported, it,
                           sorted(self.interfaces[it])))

    def default_interface(self, hw_name: str, it: str) -> str | None:
        conf_default = getattr(self.conf, 'default_%s_interface' % it)
        supported = self.supported(hw_name, it)
        if conf_default and conf_default in supported and \
                conf_default in self.interfaces[it]:
            return conf_default
        for impl in supported:
            if impl in self.interfaces[it]:
                return impl
        return None

    def offered(self) -> list[dict]:
        """Rows for conductor_hardware_interfaces: what we can run."""
        rows = []
        for hw_name in self.hardware_types:
            for it in INTERFACE_TYPES:
                default = self.default_interface(hw_name, it)
                for impl in self.supported(hw_name, it):
                    if impl in self.interfaces[it]:
                        rows.append({'hardware_type': hw_name,
                                     'interface_type': it,
                                     'interface_name': impl,
                                     'default': impl == default})
        return rows

    def driver_for(self, node) -> DriverSet:
        """The interface instances a node uses (its fields must be valid:
        checked at create/update).  One DriverSet per combination of
        hardware type and interface fields, built once."""
        data = getattr(node, '_data', None)   # a Record's row
        if isinstance(data, dict):
            key = (data.get('driver'),) + tuple(
                data.get(f) for f in _IFACE_FIELDS)
        else:
            key = (node.driver,) + tuple(
                getattr(node, f, None) for f in _IFACE_FIELDS)
        found = self._driver_sets.get(key)
        if found is None:
            found = self._driver_sets[key] = self._driver_set(key)
        return found

    def _driver_set(self, key: tuple) -> DriverSet:
        hw_name = key[0]
        if hw_name not in self.hardware_types:
            raise exception.DriverNotFound(driver_name=hw_name)
        ifaces = {}
        for it, impl in zip(INTERFACE_TYPES, key[1:], strict=True):
            impl = impl or self.default_interface(hw_name, it)
            obj = self.interfaces[it].get(impl)
            if obj is None:
                raise exception.InterfaceNotFoundInEntrypoint(
                    iface=impl, entrypoint=IFACE_NS % it,
                    valid=sorted(self.interfaces[it]))
            ifaces[it] = obj
        return DriverSet(self.hardware_types[hw_name], ifaces)
