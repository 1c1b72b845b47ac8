"""What every baremetal process does at start: config, logging, db.

A start-up that fails for a reason of the configuration or the
environment (an option's value, a database that cannot be reached, a
state directory that cannot be made, an address already in use) ends
the process with one line, ``Cannot start: ...``, and exit status 1
(``entrypoint``), not a traceback."""

import faulthandler
import functools
import gc
import os
import re
import signal
import sys
import threading
import warnings

from oslo_config import cfg
from oslo_log import log

from baremetal import conf as baremetal_conf
from baremetal.common import exception
from baremetal.common import masked_logging
from baremetal.common import notifications
from baremetal.conf import database as database_conf
from baremetal.db import engine as db_engine
from baremetal.db import migration

CONF = baremetal_conf.CONF
LOG = log.getLogger(__name__)


def _fewer_malloc_arenas() -> None:
    """glibc gives each thread its own malloc arena, which keeps freed
    memory; with a hundred worker threads that grows the RSS by tens of
    MiB for nothing.  Two arenas (as MALLOC_ARENA_MAX=2) cost no
    measurable throughput here.  Must run before the threads start."""
    if 'MALLOC_ARENA_MAX' in os.environ or not sys.platform.startswith(
            'linux'):
        return
    try:
        import ctypes
        ctypes.CDLL(None).mallopt(-8, 2)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass  # not glibc


def settle_gc() -> None:
    """Once start-up is done, move everything loaded so far (modules,
    config, drivers, SQLAlchemy's tables: most of the heap) out of the
    cyclic collector's sight.  Without this, each full collection walked
    all of it again: rendering a node list of 1,000 entries (tens of
    thousands of new dicts) triggered several, ~20% of its time.
    (Raising the collection thresholds as well bought little more and
    let a list-heavy run peak at 540 MiB, so they stay as they are.)"""
    gc.collect()
    gc.freeze()


class CannotStart(Exception):
    """The configuration or the environment keeps the process from
    starting (not a bug): ``entrypoint`` says why in one line."""


def entrypoint(main):
    """A console script's ``main``: CannotStart, or an invalid
    configuration a component finds as it starts, ends it with one line,
    ``Cannot start: ...``, and exit status 1."""
    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> None:
        try:
            return main(argv)
        except (CannotStart, exception.ConfigInvalid,
                db_engine.Unusable) as e:
            failed = e
        # outside the except block: the line is the message alone (before
        # logging is set up it goes to stderr)
        LOG.error('Cannot start: %s', failed)
        sys.exit(1)
    return run


def _invalid_options(conf) -> list[str]:
    """Every option whose configured value is not valid, as
    ``[group]name in FILE: why``; oslo.config would otherwise raise
    only when the option is first read, perhaps much later."""
    bad = []
    # values that are not valid; not RequiredOptError: a library's
    # required option may belong to a mode that is not in use
    invalid = (cfg.ConfigSourceValueError, cfg.TemplateSubstitutionError)

    def read(group: str, section, name: str):
        """The option's value (a group's: its section), else None."""
        try:
            return section[name]
        except invalid as e:
            # oslo.config's: "Value for option N from LocationInfo(...,
            # detail='FILE') is not valid: WHY"
            text = str(e)
            why = text.split(' is not valid: ', 1)[-1]
            where = re.search(r"detail='([^']*)'", text)
            bad.append('[%s]%s%s: %s' % (
                group, name, ' in %s' % where.group(1) if where else '',
                why))
        except cfg.Error:
            pass
        return None

    for name in list(conf):
        value = read('DEFAULT', conf, name)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for opt in list(value):
                read(name, value, opt)
    return bad


def _invalid_in_files() -> list[str]:
    """What ``_invalid_options`` finds in the configuration files as they
    are now, read into a ConfigOpts of their own: a reload checks them
    before the running configuration takes any of their values."""
    probe = cfg.ConfigOpts()
    baremetal_conf.register_all(probe)
    log.register_options(probe)
    args = []
    for path in CONF.config_file or ():
        args += ['--config-file', path]
    for path in CONF.config_dir or ():
        args += ['--config-dir', path]
    try:
        probe(args, project='baremetal', default_config_files=[],
              default_config_dirs=[])
    except cfg.Error as e:
        return [str(e)]         # a file that does not parse
    except SystemExit:
        # argparse refuses the file's value of a command-line option
        # (--debug), saying which on standard error, and exits
        return ['a command-line option\'s value in a file (standard '
                'error says which)']
    try:
        return _invalid_options(probe)
    finally:
        probe.clear()


def parse_args(argv: list[str] | None, prog: str) -> None:
    _fewer_malloc_arenas()
    warnings.filterwarnings('ignore', module='futurist')
    log.register_options(CONF)
    log.set_defaults(default_log_levels=log.get_default_log_levels() + [
        'cheroot=WARNING', 'stevedore=WARNING', 'alembic=WARNING',
        'pyghmi=WARNING', 'sushy=WARNING'])
    CONF(argv if argv is not None else sys.argv[1:], project='baremetal',
         prog=prog)
    bad = _invalid_options(CONF)
    if bad:
        raise CannotStart('invalid configuration: %s' % '; '.join(bad))
    log.setup(CONF, 'baremetal')
    # agent tokens ride in the query of every URL the conductor asks the
    # agent; nothing logged, ours or a library's, may show one
    masked_logging.install()
    if prog != 'baremetal-dbsync':
        notifications.setup(CONF)


def database_url(create_dir: bool = True) -> str:
    url = CONF.database.connection
    if url:
        return url
    state = os.path.expanduser(CONF.state_path)
    if create_dir:
        try:
            os.makedirs(state, exist_ok=True)
        except OSError as e:
            raise CannotStart('cannot make [DEFAULT]state_path %s: %s'
                              % (state, e.strerror or e)) from None
    return 'sqlite:///%s' % os.path.join(state, 'baremetal.sqlite')


def setup_database(auto_upgrade: bool) -> None:
    url = database_url()
    with db_engine.first_use(url):
        engine = db_engine.configure(
            url, CONF.database.sqlite_synchronous_normal,
            CONF.database.max_pool_size or database_conf.MAX_POOL_SIZE)
        if auto_upgrade:
            if not migration.is_current(engine) and \
                    not migration.create_schema(engine):
                migration.upgrade(engine)
            return
        head = migration.version(engine)
    if head is None:
        LOG.error('The database at %s has no schema: run '
                  '"baremetal-dbsync --config-file ... upgrade" first',
                  db_engine.safe_url(url))
        sys.exit(2)


def load_conductor(conf):
    """Build the conductor (drivers loaded, step priorities checked);
    a configuration error stops the process with a clear message."""
    from baremetal.conductor import service
    try:
        return service.Conductor(conf)
    except (exception.StepConflict, exception.DriverLoadError,
            exception.ConfigInvalid) as e:
        raise CannotStart(str(e)) from None


def start_metrics_listener():
    """baremetal-conductor's metrics listener ([metrics]
    conductor_listen_port), or None; an address that cannot be bound
    stops the process with a clear message."""
    port = CONF.metrics.conductor_listen_port
    if not port:
        return None
    from baremetal.common import metrics
    host = CONF.metrics.conductor_listen_host
    try:
        listener = metrics.start_listener(host, port)
    except OSError as e:
        raise CannotStart('cannot serve metrics on %s port %d ([metrics]'
                          'conductor_listen_host, conductor_listen_port): '
                          '%s' % (host, port, e)) from None
    LOG.info('Metrics served on http://%s:%d/metrics', host, port)
    return listener


class Stopper:
    """SIGTERM/SIGINT stop the process gracefully; SIGHUP reloads
    mutable configuration; SIGUSR2 writes every thread's stack to
    standard error.

    Python runs a signal's handler in the main thread, and only when
    that thread runs Python code.  The kernel delivers a signal sent to
    the process to any of its threads; when another thread takes it,
    a main thread blocked in ``Event.wait()`` never wakes to run the
    handler.  ``wait`` therefore wakes every ``poll`` seconds.
    """

    poll = 1.0

    def __init__(self, on_reload=None) -> None:
        self.event = threading.Event()
        self.on_reload = on_reload
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        if hasattr(signal, 'SIGHUP'):
            signal.signal(signal.SIGHUP, self._reload)
        if hasattr(signal, 'SIGUSR2'):
            # every thread's stack to standard error, written by the
            # interpreter's C handler: it works in a process whose
            # Python code is stuck too (a hang's first question)
            try:
                faulthandler.register(signal.SIGUSR2, all_threads=True)
            except (RuntimeError, ValueError, OSError, AttributeError) as e:
                # no usable standard error (closed, detached)
                LOG.warning('SIGUSR2 will not show the threads\' '
                            'stacks: %s', e)

    def wait(self) -> None:
        """Return once a stop signal has been handled."""
        while not self.event.wait(self.poll):
            pass

    def _stop(self, signum, frame) -> None:
        LOG.info('Signal %s received: stopping', signum)
        self.event.set()

    def _reload(self, signum, frame) -> None:
        LOG.info('SIGHUP received: reloading mutable configuration')
        bad = _invalid_in_files()
        if bad:
            # oslo.config would take a mutable option's invalid value,
            # and every later read of the option would raise
            LOG.error('Configuration reload refused, the running '
                      'configuration is kept: invalid configuration: %s',
                      '; '.join(bad))
            return
        try:
            CONF.mutate_config_files()
        except cfg.Error as e:
            LOG.error('Configuration reload failed: %s', e)
            return
        # a changed log_config_append brings new handlers
        masked_logging.install()
        if self.on_reload:
            self.on_reload()
