"""Serve Glance's API (glance.common.wsgi_app) with cheroot on loopback.

Run by tests/glance_service.py with the Python of Glance's own venv
(tools/glance-venv), never baremetal's: ``python glance_wsgi.py PORT
REQUEST_LOG``.  Glance reads its configuration from
``$OS_GLANCE_CONFIG_DIR``.  Each request is appended to REQUEST_LOG as
``METHOD PATH STATUS SERVICE_TOKEN`` once answered (SERVICE_TOKEN:
``service-token`` when the request carried an X-Service-Token, else
``-``), so that tests can count what the conductor asked of Glance.
"""

import signal
import sys
import threading


def main() -> None:
    port, request_log = int(sys.argv[1]), sys.argv[2]
    # imported now: Glance's exit handler builds a thread pool, which
    # cannot import this module once the interpreter is shutting down
    import concurrent.futures.thread  # noqa: F401
    from cheroot import wsgi

    from glance.common import wsgi_app
    app = wsgi_app.init_app()
    lock = threading.Lock()

    def logged(environ, start_response):
        def start(status, headers, exc_info=None):
            with lock, open(request_log, 'a') as f:
                f.write('%s %s %s %s\n' % (
                    environ['REQUEST_METHOD'], environ.get('PATH_INFO', ''),
                    status.split()[0],
                    'service-token' if environ.get('HTTP_X_SERVICE_TOKEN')
                    else '-'))
            return start_response(status, headers, exc_info)
        return app(environ, start)

    server = wsgi.Server(('127.0.0.1', port), logged, numthreads=8,
                         server_name='glance-test')

    def stop(*_):
        threading.Thread(target=server.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.start()


if __name__ == '__main__':
    main()
