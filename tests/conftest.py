import importlib.metadata
import warnings

import pytest

warnings.filterwarnings('ignore', category=DeprecationWarning)
try:
    import eventlet  # noqa: F401  (imported by some libraries; quiet it)
except ImportError:
    pass


_UNGROUPED = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` every test of an xdist group must carry
    the group in its node id (pytest-xdist puts it there); where it does
    not, the group's tests would run on several workers at once (for the
    VM tests: two machines and two owners of one libvirtd). Such tests
    fail at once, saying why."""
    if not getattr(config.option, 'loadgroup', False):
        return
    for item in items:
        mark = item.get_closest_marker('xdist_group')
        if mark is not None and '@' not in item.nodeid:
            item.stash[_UNGROUPED] = (
                'pytest-xdist %s did not group this test (pytest %s): its '
                'xdist_group would run on several workers at once; see '
                'test-requirements.txt' % (
                    importlib.metadata.version('pytest-xdist'),
                    pytest.__version__))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if _UNGROUPED in item.stash:
        pytest.fail(item.stash[_UNGROUPED], pytrace=False)
