"""An independent admission checker for a GPUBK ledger (ledger.db).

It shares no code with bk: it reads the SQLite file with Python's sqlite3 in
read-only mode and re-derives, from the reservations table alone, whether any
instant is over-admitted:

* per GPU, an exclusive reservation overlaps nothing else on that GPU;
* per GPU, the share units of overlapping shared reservations never exceed the
  per-GPU capacity (``max_shared_users``);
* when host budgets are given, the CPUs and the RAM of all overlapping
  reservations (on any GPU) never exceed the host's.

Only reservations that can still hold capacity count: status 'active' and
end_at > now. Intervals are half-open [start_at, end_at), in unix seconds.

Usage from a test::

    problems = ledger_checker.check_ledger(path, now=..., capacity=2,
                                           gpu_count=4, host_cpus=16,
                                           host_ram_mb=65536)
    assert problems == []
    assert ledger_checker.integrity_check(path) == "ok"

Or from a shell: ``python3 ledger_checker.py LEDGER --now UNIX --capacity N
[--gpus N] [--host-cpus N] [--host-ram-mb N]`` (exit 1 when anything is wrong).
"""

import collections
import sqlite3
import sys
import urllib.parse

Reservation = collections.namedtuple(
    "Reservation", "id uid mode gpus share_units cpus ram_mb start end status")


def _connect_ro(path):
    uri = "file:%s?mode=ro" % urllib.parse.quote(path)
    return sqlite3.connect(uri, uri=True, timeout=30)


def parse_gpus(text):
    """'2,0' -> [2, 0]. Raises ValueError on anything that is not a list of integers."""
    text = (text or "").strip()
    if not text:
        return []
    return [int(part) for part in text.split(",")]


def load_reservations(path):
    """Every row of the reservations table, as Reservation tuples."""
    con = _connect_ro(path)
    try:
        rows = con.execute(
            "SELECT id, uid, mode, gpus, share_units, cpus, ram_mb, start_at, end_at, status "
            "FROM reservations ORDER BY start_at, id").fetchall()
    finally:
        con.close()
    out = []
    for (rid, uid, mode, gpus, units, cpus, ram, start, end, status) in rows:
        out.append(Reservation(rid, uid, mode, gpus, units, cpus or 0, ram or 0, start, end, status))
    return out


def _elementary(intervals):
    """Yields (a, b, [items covering all of [a, b)]) for consecutive boundary points.

    `intervals` is a list of (start, end, item). Quadratic, which is plenty for
    the few hundred reservations a test writes, and obviously correct.
    """
    points = sorted({p for (s, e, _) in intervals for p in (s, e)})
    for a, b in zip(points, points[1:]):
        cover = [item for (s, e, item) in intervals if s < b and e > a]
        if cover:
            yield a, b, cover


def find_violations(reservations, *, now, capacity, gpu_count=None, host_cpus=None, host_ram_mb=None):
    """Returns a list of human-readable problems; empty when the ledger admits nothing it should not."""
    problems = []
    live = []
    for r in reservations:
        if r.status != "active":
            continue
        if now is not None and r.end <= now:
            continue
        if r.end <= r.start:
            problems.append("reservation %s has end_at %d <= start_at %d" % (r.id, r.end, r.start))
            continue
        try:
            gpus = parse_gpus(r.gpus)
        except ValueError:
            problems.append("reservation %s has unreadable gpus %r" % (r.id, r.gpus))
            continue
        if not gpus:
            problems.append("reservation %s holds no GPU" % r.id)
        if len(set(gpus)) != len(gpus):
            problems.append("reservation %s lists a GPU twice: %r" % (r.id, r.gpus))
        for g in gpus:
            if g < 0 or (gpu_count is not None and g >= gpu_count):
                problems.append("reservation %s uses GPU %d outside 0..%s" % (r.id, g, gpu_count))
        if r.mode not in ("shared", "exclusive"):
            problems.append("reservation %s has unknown mode %r" % (r.id, r.mode))
            continue
        if r.mode == "shared":
            if r.share_units is None or r.share_units < 1:
                problems.append("shared reservation %s has share_units %r" % (r.id, r.share_units))
                continue
        live.append((r, sorted(set(gpus))))

    per_gpu = collections.defaultdict(list)
    for r, gpus in live:
        for g in gpus:
            per_gpu[g].append((r.start, r.end, r))
    for g in sorted(per_gpu):
        for a, b, cover in _elementary(per_gpu[g]):
            exclusive = [r for r in cover if r.mode == "exclusive"]
            if exclusive and len(cover) > 1:
                problems.append("GPU %d over-admitted in [%d, %d): exclusive %s overlaps %s" % (
                    g, a, b, ",".join(r.id for r in exclusive),
                    ",".join(r.id for r in cover if r not in exclusive[:1])))
            units = sum(r.share_units for r in cover if r.mode == "shared")
            if units > capacity:
                problems.append("GPU %d over-admitted in [%d, %d): %d share units > capacity %d (%s)" % (
                    g, a, b, units, capacity, ",".join(r.id for r in cover)))

    if host_cpus is not None or host_ram_mb is not None:
        host = [(r.start, r.end, r) for r, _ in live]
        for a, b, cover in _elementary(host):
            if host_cpus is not None:
                cpus = sum(r.cpus for r in cover)
                if cpus > host_cpus:
                    problems.append("host over-admitted in [%d, %d): %d CPUs > budget %d" % (a, b, cpus, host_cpus))
            if host_ram_mb is not None:
                ram = sum(r.ram_mb for r in cover)
                if ram > host_ram_mb:
                    problems.append("host over-admitted in [%d, %d): %d MB RAM > budget %d" % (
                        a, b, ram, host_ram_mb))
    return problems


def check_ledger(path, *, now, capacity, gpu_count=None, host_cpus=None, host_ram_mb=None):
    """find_violations() over the reservations of the ledger at `path`."""
    return find_violations(load_reservations(path), now=now, capacity=capacity, gpu_count=gpu_count,
                           host_cpus=host_cpus, host_ram_mb=host_ram_mb)


def integrity_check(path):
    """PRAGMA integrity_check as one string: 'ok' for a sound file, otherwise what SQLite says."""
    try:
        con = _connect_ro(path)
        try:
            rows = con.execute("PRAGMA integrity_check").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as e:
        return "error: %s" % e
    return "; ".join(str(r[0]) for r in rows)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ledger")
    ap.add_argument("--now", type=int, default=None)
    ap.add_argument("--capacity", type=int, required=True)
    ap.add_argument("--gpus", type=int, default=None)
    ap.add_argument("--host-cpus", type=int, default=None)
    ap.add_argument("--host-ram-mb", type=int, default=None)
    a = ap.parse_args(argv)
    problems = check_ledger(a.ledger, now=a.now, capacity=a.capacity, gpu_count=a.gpus,
                            host_cpus=a.host_cpus, host_ram_mb=a.host_ram_mb)
    integrity = integrity_check(a.ledger)
    if integrity != "ok":
        problems.append("integrity_check: " + integrity)
    for p in problems:
        print(p)
    if not problems:
        print("ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
