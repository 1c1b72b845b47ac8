import warnings

warnings.filterwarnings('ignore', category=DeprecationWarning)
try:
    import eventlet  # noqa: F401  (imported by some libraries; quiet it)
except ImportError:
    pass
