"""Writes from several threads at once, for the tests of what MariaDB
does when they meet (gap locks, deadlock victims)."""

import threading


def run(fn, items: list, threads: int = 8) -> list[Exception]:
    """``fn(item)`` for every item, spread over ``threads`` threads that
    start together; the exceptions raised."""
    errors: list[Exception] = []
    start = threading.Barrier(threads)

    def work(mine):
        start.wait()
        for item in mine:
            try:
                fn(item)
            except Exception as e:
                errors.append(e)
    workers = [threading.Thread(target=work, args=(items[i::threads],))
               for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return errors
