"""A process's CPU and memory, and the machine's, read from /proc (the
benchmark tools' one reader: tools/bench-fleet, tools/hot_path.py)."""

import os

HZ = os.sysconf('SC_CLK_TCK')


def _tree(pid):
    pids, kids = [pid], {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/stat' % entry) as f:
                    ppid = int(f.read().rsplit(')', 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    i = 0
    while i < len(pids):
        pids.extend(kids.get(pids[i], []))
        i += 1
    return pids


def cpu_seconds(pid):
    """utime + stime of ``pid`` and its descendants (all threads)."""
    total = 0.0
    for p in _tree(pid):
        try:
            with open('/proc/%d/stat' % p) as f:
                fields = f.read().rsplit(')', 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / HZ
        except (OSError, ValueError, IndexError):
            pass
    return total


def named_cpu_seconds(prefix):
    """utime + stime of every process whose name starts with ``prefix``
    and of their children that have exited (the machine's PostgreSQL
    server: ``postgres``, its backends, those of closed connections
    too)."""
    total = 0.0
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                stat = f.read()
            if stat[stat.index('(') + 1:].startswith(prefix):
                fields = stat.rsplit(')', 1)[1].split()
                total += sum(int(v) for v in fields[11:15]) / HZ
        except (OSError, ValueError, IndexError):
            pass
    return total


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
