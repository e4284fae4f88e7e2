#!/usr/bin/env python3
"""Write a private GPUBK ledger holding N active shared reservations (and history), fast.

The schema and the bound-policy row are not written by hand: the script first
books one GPU with the real `bk` in a scratch data directory, copies that
ledger's schema (sqlite_master), PRAGMA user_version and meta rows into a new
database, and then bulk-inserts N reservations (with their operation and
event rows, as `bk` writes them) in one transaction. A schema change in
src/store/ledger_store.cc is therefore picked up automatically.

Layout of the N reservations (8 GPUs, max_shared_users=2 by default): every
GPU carries two lanes of back-to-back one-slot (5-minute) shared bookings, all
starting at NOW, with a one-slot gap after every 3-8 bookings (random, seeded).
Both share units of a GPU are taken at almost every instant and no lane has a
gap long enough for a second 30-minute booking, so a new `bk 1 30m` has to
search past the whole dense block (about four days for 16,000 bookings).
Owners rotate through 16 users, one of which is the user running the script,
so about 1/16 of the reservations are "yours" for `bk l` and `bk st`.

With --history H the ledger also holds H reservations of the past: one-GPU
shared or exclusive bookings of 5-60 minutes starting on the slot grid at
random over the last --history-days (60) days, all ended before NOW. About 1 in
5 was cancelled (by its owner, before its end), about 1 in 8 edited once (its
end moved), each with the operations and events rows `bk` writes for it. Past
bookings are only read (no placement looks behind NOW), so at 1M they may hold
more bookings per GPU and slot than the policy allows. `last_prune` is NOW and
the history lies inside the default 90-day ledger_retention_days: nothing is
pruned during a benchmark.

With --count 0 (and no --history) the result is an empty ledger (schema and
policy, no rows). Active bookings past the 30-day horizon are refused (8 GPUs
with 2 share slots hold about 117,000 with this layout's gaps).

Rows are streamed into one transaction with journalling and syncs off, the
indexes built after the rows; the finished file is an ordinary WAL ledger.
With --reuse an existing DIR whose seed.json matches the arguments and the
schema `bk` writes today is kept as it is (its NOW stays; read seed.json).

Usage: seed_ledger.py --bk build/bk --out DIR --count 16000 [--history 984000] --gpus 8 --now UNIX
"""

import argparse
import functools
import hashlib
import json
import os
import pwd
import random
import shutil
import sqlite3
import subprocess
import sys
import time


@functools.lru_cache(maxsize=1 << 16)
def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def bk_env(data_dir, gpus, now):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BK_")}
    env.update(BK_DATA_DIR=data_dir, BK_GPU_COUNT=str(gpus), BK_TEST_NOW=str(now), TZ="UTC")
    return env


def make_private_dir(path):
    if os.path.lexists(path):
        shutil.rmtree(path)
    os.makedirs(path, mode=0o700)
    os.chmod(path, 0o700)


def template_from_bk(bk, scratch, gpus, now):
    """Book once with bk; return (schema statements, user_version, meta rows)."""
    make_private_dir(scratch)
    proc = subprocess.run([bk, "1", "5m", "--gpu", "0", "--json"], env=bk_env(scratch, gpus, now),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"seed_ledger: `bk 1 5m --gpu 0` failed ({proc.returncode}): {proc.stderr or proc.stdout}")
    db = sqlite3.connect(os.path.join(scratch, "ledger.db"))
    schema = [row[0] for row in db.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    meta = db.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    columns = [row[1] for row in db.execute("PRAGMA table_info(reservations)")]
    db.close()
    shutil.rmtree(scratch)
    return schema, version, meta, columns


def lanes(count, gpus, share_capacity, now, slot, rng):
    """Yield (gpu, start, end) for `count` one-slot bookings spread over the lanes."""
    lane_total = gpus * share_capacity
    per_lane = [count // lane_total + (1 if i < count % lane_total else 0) for i in range(lane_total)]
    for lane, n in enumerate(per_lane):
        gpu = lane // share_capacity
        t = now
        run = rng.randint(3, 8)
        for _ in range(n):
            yield gpu, t, t + slot
            t += slot
            run -= 1
            if run == 0:
                t += slot  # a one-slot gap: too short for a 30-minute booking
                run = rng.randint(3, 8)


RES_COLS = ("id", "uid", "username", "mode", "gpus", "share_units", "memory_mb", "cpus", "ram_mb", "start_at",
            "end_at", "status", "created_at", "updated_at", "op_id", "op_signature", "edit_count", "cancel_at",
            "cancel_kind", "cancel_reason", "cancel_actor_uid", "cancel_actor_username", "cancel_op_id")
OP_COLS = ("uid", "op_id", "action", "reservation_id", "signature", "created_at")
EV_COLS = ("event_id", "transaction_id", "ts", "uid", "username", "actor_uid", "actor_username", "action",
           "reservation_id", "op_id", "gpus", "mode", "share_units", "start_at", "end_at", "result", "message",
           "before", "after", "signature")
HORIZON = 30 * 86400  # the default policy's booking horizon
CHUNK = 20000  # rows per executemany: bounded memory at 1M


def footprint(gpu, mode, units, memory, start, end):
    """The before/after JSON of an event, as `bk` writes it (compact, keys sorted), without json.dumps:
    it is written a million times at 1M."""
    null = "null"
    return (f'{{"cpus":0,"end_at":"{iso(end)}","expected_memory_mb":{null if memory is None else memory},'
            f'"gpus":[{gpu}],"mode":"{mode}","ram_mb":0,"share_units":{null if units is None else units},'
            f'"start_at":"{iso(start)}"}}')


def signature(kind, i):
    return hashlib.sha256(f"{kind}:{i}".encode()).hexdigest()


# Version-4 UUIDs from a seeded generator: as random as uuid.uuid4() for short-ID
# prefixes, several times faster, and the same on every reseed.
_ids = random.Random(4)


def new_id():
    x = _ids.getrandbits(128) & ~(0xF000 << 64) & ~(0xC000 << 48) | (0x4000 << 64) | (0x8000 << 48)
    h = f"{x:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Booking:
    """One reservation's rows: the reservation, its operations and its events."""

    def __init__(self, owner, gpu, mode, units, memory, start, end, created):
        self.uid, self.name = owner
        self.gpu, self.mode, self.units, self.memory = gpu, mode, units, memory
        self.start, self.end, self.created, self.updated = start, end, created, created
        self.id, self.op_id = new_id(), new_id()
        self.edits, self.cancel = 0, None
        self.ops, self.events = [], []

    def record(self, action, op_id, ts, message, before, after, sig):
        self.ops.append((self.uid, op_id, action, self.id, sig, ts))
        self.events.append((new_id(), new_id(), ts, self.uid, self.name, self.uid, self.name,
                            action if action != "create" else "add", self.id, op_id, str(self.gpu), self.mode,
                            self.units, self.start, self.end, "ok", message, before, after, sig))

    def fp(self):
        return footprint(self.gpu, self.mode, self.units, self.memory, self.start, self.end)

    def created_event(self, i):
        self.record("create", self.op_id, self.created, "created", None, self.fp(), signature("create", i))

    def edit_end(self, i, new_end, ts):
        before = self.fp()
        self.end, self.edits, self.updated = new_end, self.edits + 1, ts
        self.record("edit", new_id(), ts, "updated", before, self.fp(), signature("edit", i))

    def cancel_at(self, i, ts):
        op_id = new_id()
        self.cancel, self.updated = (ts, "owner", "cancelled by reservation owner", self.uid, self.name, op_id), ts
        self.record("cancel", op_id, ts, "cancelled", self.fp(), None, signature("cancel", i))

    def row(self):
        cancel = self.cancel or (None,) * 6
        return (self.id, self.uid, self.name, self.mode, str(self.gpu), self.units, self.memory, 0, 0, self.start,
                self.end, "cancelled" if self.cancel else "active", self.created, self.updated, self.op_id, "",
                self.edits) + cancel


def active_bookings(count, gpus, share_capacity, now, slot, owners, rng):
    for i, (gpu, start, end) in enumerate(lanes(count, gpus, share_capacity, now, slot, rng)):
        b = Booking(owners[i % len(owners)], gpu, "shared", 1, 4096 if i % 2 else None, start, end, now)
        b.created_event(i)
        yield b


def history_bookings(count, gpus, now, slot, days, owners, rng):
    """Past bookings over the last `days` days: ended, some cancelled, some edited."""
    slots_back = days * 86400 // slot
    for i in range(count):
        k = count + i  # signatures distinct from the active ones
        exclusive = rng.random() < 0.25
        length = rng.randint(1, 12) * slot
        start = now - rng.randint(length // slot + 1, slots_back) * slot
        created = start - rng.randint(0, 48) * slot
        b = Booking(owners[i % len(owners)], rng.randrange(gpus), "exclusive" if exclusive else "shared",
                    None if exclusive else 1, None if exclusive or i % 2 else 4096, start, start + length, created)
        b.created_event(k)
        roll = rng.random()
        if roll < 0.125 and b.end + slot <= now:  # the end moved once (not past NOW), soon after booking
            b.edit_end(k, b.end + slot * rng.randint(1, min(6, (now - b.end) // slot)), created + slot // 2)
        if 0.1 < roll < 0.3:  # cancelled by its owner before its end
            b.cancel_at(k, rng.randint(b.updated + 1, b.end - 1))
        yield b


def stream(db, bookings):
    """Inserts the bookings' rows in chunks; returns (reservations, yours, the latest end)."""
    res_sql = f"INSERT INTO reservations({', '.join(RES_COLS)}) VALUES({','.join('?' * len(RES_COLS))})"
    op_sql = f"INSERT INTO operations({', '.join(OP_COLS)}) VALUES({','.join('?' * len(OP_COLS))})"
    ev_sql = f"INSERT INTO events({', '.join(EV_COLS)}) VALUES({','.join('?' * len(EV_COLS))})"
    me = os.getuid()
    total, mine, last_end = 0, 0, None
    res, ops, evs = [], [], []
    for b in bookings:
        res.append(b.row())
        ops.extend(b.ops)
        evs.extend(b.events)
        total += 1
        mine += b.uid == me
        last_end = max(last_end or b.end, b.end)
        if len(res) >= CHUNK:
            db.executemany(res_sql, res)
            db.executemany(op_sql, ops)
            db.executemany(ev_sql, evs)
            res, ops, evs = [], [], []
    db.executemany(res_sql, res)
    db.executemany(op_sql, ops)
    db.executemany(ev_sql, evs)
    return total, mine, last_end


def write_ledger(path, schema, version, meta, fill):
    """A new ledger: tables, then fill(db) in one transaction, then indexes and triggers, then WAL."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.chmod(path, 0o600)
    db = sqlite3.connect(path, isolation_level=None)
    # Speed on a scratch file; the journal mode is set back to WAL at the end.
    for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-262144", "temp_store=MEMORY"):
        db.execute("PRAGMA " + pragma)
    db.execute("BEGIN")
    tables = [s for s in schema if s.lstrip().upper().startswith("CREATE TABLE")]
    for stmt in tables:
        db.execute(stmt)
    db.execute(f"PRAGMA user_version={int(version)}")
    db.executemany("INSERT INTO meta(key, value) VALUES(?, ?)", meta)
    result = fill(db)
    for stmt in schema:
        if stmt not in tables:
            db.execute(stmt)
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for extra in ("-wal", "-shm"):
        if os.path.exists(path + extra):
            os.remove(path + extra)
    return result


def schema_digest(schema, version):
    return hashlib.sha256(("\n".join(schema) + f"\n{version}").encode()).hexdigest()


def reusable(out, wanted):
    """The seed.json of an existing seed in `out` when it was made with the same arguments."""
    try:
        with open(os.path.join(out, "seed.json")) as f:
            have = json.load(f)
    except (OSError, ValueError):
        return None
    same = all(have.get(k) == v for k, v in wanted.items())
    return have if same and os.path.exists(os.path.join(out, "ledger.db")) else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bk", required=True, help="path to the built bk binary")
    ap.add_argument("--out", required=True, help="data directory to create (replaced if present)")
    ap.add_argument("--count", type=int, default=16000, help="active reservations to write")
    ap.add_argument("--history", type=int, default=0, help="past reservations to write")
    ap.add_argument("--history-days", type=int, default=60, help="how far back the past ones reach")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--now", type=int, required=True, help="BK_TEST_NOW as Unix seconds, on the slot grid")
    ap.add_argument("--seed", type=int, default=16000)
    ap.add_argument("--reuse", action="store_true", help="keep OUT when its seed.json matches these arguments")
    args = ap.parse_args()

    out = os.path.abspath(args.out)
    schema, version, meta, columns = template_from_bk(os.path.abspath(args.bk), out + ".scratch", args.gpus,
                                                      args.now)
    wanted = {"count": args.count, "history": args.history, "history_days": args.history_days,
              "gpus": args.gpus, "seed": args.seed, "schema": schema_digest(schema, version)}
    if args.reuse and (have := reusable(out, wanted)):
        print(f"reusing {out}/ledger.db: {have['count']} active, {have['history']} past, now {iso(have['now'])}")
        return
    missing = [c for c in RES_COLS if c not in columns]
    if missing:
        sys.exit(f"seed_ledger: the reservations table has no column(s) {missing}; update bench/seed_ledger.py")
    policy = json.loads(dict(meta)["policy"])
    slot = int(policy["granularity_seconds"])
    share_capacity = int(policy["max_shared_reservations_per_gpu"])
    if args.now % slot:
        sys.exit(f"seed_ledger: --now must lie on the {slot // 60}-minute grid")
    # Pruned "today": the first booking of a benchmark does not prune.
    meta = sorted(dict(meta, last_prune=str(args.now)).items())

    me = os.getuid()
    owners = [(me, pwd.getpwuid(me).pw_name)] + [(20000 + i, f"user{i:02d}") for i in range(1, 16)]
    rng = random.Random(args.seed)
    now = args.now
    started = time.monotonic()

    def fill(db):
        active = stream(db, active_bookings(args.count, args.gpus, share_capacity, now, slot, owners, rng))
        if active[2] is not None and active[2] > now + HORIZON:
            sys.exit(f"seed_ledger: {args.count} active bookings reach {iso(active[2])}, past the 30-day "
                     f"horizon; {args.gpus} GPUs cannot hold them")
        past = stream(db, history_bookings(args.history, args.gpus, now, slot, args.history_days, owners, rng))
        return active, past

    make_private_dir(out)
    (total, mine, last_end), (past, _, _) = write_ledger(os.path.join(out, "ledger.db"), schema, version, meta,
                                                         fill)
    with open(os.path.join(out, "seed.json"), "w") as f:
        json.dump(dict(wanted, now=now, seconds=round(time.monotonic() - started, 1)), f, indent=1)
    print(f"seeded {out}/ledger.db in {time.monotonic() - started:.1f} s: {total} active reservations ({mine} "
          f"yours) on {args.gpus} GPUs, {iso(now)} -> {iso(last_end or now)}; {past} past over "
          f"{args.history_days} days")


if __name__ == "__main__":
    main()
