"""A process's CPU and memory, and the machine's, read from /proc (the
benchmark tools' one reader: tools/bench-fleet, tools/hot_path.py)."""

import os

HZ = os.sysconf('SC_CLK_TCK')


def _stat(pid):
    """(name, the fields after it) of /proc/PID/stat; None once gone."""
    try:
        with open('/proc/%s/stat' % pid) as f:
            stat = f.read()
    except OSError:
        return None
    name, rest = stat.split('(', 1)[1].rsplit(')', 1)
    return name, rest.split()


def _pids():
    return [int(e) for e in os.listdir('/proc') if e.isdigit()]


def _tree(pid):
    pids, kids = [pid], {}
    for p in _pids():
        st = _stat(p)
        if st is not None:
            kids.setdefault(int(st[1][1]), []).append(p)
    i = 0
    while i < len(pids):
        pids.extend(kids.get(pids[i], []))
        i += 1
    return pids


def _ticks(fields, children=False):
    """utime + stime (and of the exited children: cutime + cstime)."""
    return sum(int(v) for v in fields[11:15 if children else 13])


def cpu_seconds(pid):
    """utime + stime of ``pid`` and its descendants (all threads)."""
    stats = [_stat(p) for p in _tree(pid)]
    return sum(_ticks(st[1]) for st in stats if st is not None) / HZ


def named_cpu_seconds(prefix):
    """utime + stime of every process whose name starts with ``prefix``
    and of their children that have exited (the machine's PostgreSQL
    server: ``postgres``, its backends, those of closed connections
    too)."""
    stats = [_stat(p) for p in _pids()]
    return sum(_ticks(st[1], children=True) for st in stats
               if st is not None and st[0].startswith(prefix)) / HZ


def machine_ticks():
    """(busy, all) clock ticks of every CPU since boot (/proc/stat)."""
    with open('/proc/stat') as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]      # idle, iowait
    return sum(ticks) - idle, sum(ticks)


def rss_mb(pid):
    total = 0
    for p in _tree(pid):
        try:
            with open('/proc/%d/status' % p) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        total += int(line.split()[1])
        except OSError:
            pass
    return round(total / 1024.0, 1)
