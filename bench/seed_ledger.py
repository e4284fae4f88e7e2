#!/usr/bin/env python3
"""Write a private GPUBK ledger holding N active shared reservations, fast.

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

With --count 0 the result is an empty ledger (schema and policy, no rows).

Usage: seed_ledger.py --bk build/bk --out DIR --count 16000 --gpus 8 --now UNIX
"""

import argparse
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
import uuid


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bk", required=True, help="path to the built bk binary")
    ap.add_argument("--out", required=True, help="data directory to create (replaced if present)")
    ap.add_argument("--count", type=int, default=16000, help="active reservations to write")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--now", type=int, required=True, help="BK_TEST_NOW as Unix seconds, on the slot grid")
    ap.add_argument("--seed", type=int, default=16000)
    args = ap.parse_args()

    out = os.path.abspath(args.out)
    schema, version, meta, columns = template_from_bk(os.path.abspath(args.bk), out + ".scratch", args.gpus,
                                                      args.now)
    policy = json.loads(dict(meta)["policy"])
    slot = int(policy["granularity_seconds"])
    share_capacity = int(policy["max_shared_reservations_per_gpu"])
    if args.now % slot:
        sys.exit(f"seed_ledger: --now must lie on the {slot // 60}-minute grid")

    make_private_dir(out)
    path = os.path.join(out, "ledger.db")
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.chmod(path, 0o600)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN")
    for stmt in schema:
        db.execute(stmt)
    db.execute(f"PRAGMA user_version={int(version)}")
    db.executemany("INSERT INTO meta(key, value) VALUES(?, ?)", meta)

    me = os.getuid()
    me_name = pwd.getpwuid(me).pw_name
    owners = [(me, me_name)] + [(20000 + i, f"user{i:02d}") for i in range(1, 16)]
    rng = random.Random(args.seed)
    now = args.now
    res_rows, op_rows, ev_rows = [], [], []
    for i, (gpu, start, end) in enumerate(lanes(args.count, args.gpus, share_capacity, now, slot, rng)):
        uid, name = owners[i % len(owners)]
        rid, op_id = str(uuid.uuid4()), str(uuid.uuid4())
        memory = 4096 if i % 2 else None
        request = {"kind": "create", "count": 1, "duration_seconds": slot, "mode": "shared", "seed": i}
        signature = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
        res_rows.append((rid, uid, name, "shared", str(gpu), 1, memory, 0, 0, start, end, "active", now, now,
                         op_id, "", 0))
        op_rows.append((uid, op_id, "create", rid, signature, now))
        after = json.dumps({"cpus": 0, "end_at": iso(end), "expected_memory_mb": memory, "gpus": [gpu],
                            "mode": "shared", "ram_mb": 0, "share_units": 1, "start_at": iso(start)},
                           separators=(",", ":"), sort_keys=True)
        ev_rows.append((str(uuid.uuid4()), str(uuid.uuid4()), now, uid, name, uid, name, "add", rid, op_id,
                        str(gpu), "shared", 1, start, end, "ok", "created", None, after, signature))
    res_cols = ("id, uid, username, mode, gpus, share_units, memory_mb, cpus, ram_mb, start_at, end_at, status, "
                "created_at, updated_at, op_id, op_signature, edit_count")
    missing = [c for c in res_cols.replace(" ", "").split(",") if c not in columns]
    if missing:
        sys.exit(f"seed_ledger: the reservations table has no column(s) {missing}; update bench/seed_ledger.py")
    db.executemany(f"INSERT INTO reservations({res_cols}) VALUES({','.join('?' * 17)})", res_rows)
    db.executemany("INSERT INTO operations(uid, op_id, action, reservation_id, signature, created_at) "
                   "VALUES(?,?,?,?,?,?)", op_rows)
    db.executemany("INSERT INTO events(event_id, transaction_id, ts, uid, username, actor_uid, actor_username, "
                   "action, reservation_id, op_id, gpus, mode, share_units, start_at, end_at, result, message, "
                   "before, after, signature) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", ev_rows)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for extra in ("-wal", "-shm"):
        if os.path.exists(path + extra):
            os.remove(path + extra)
    last_end = max((r[10] for r in res_rows), default=now)
    mine = sum(1 for r in res_rows if r[1] == me)
    print(f"seeded {path}: {len(res_rows)} active reservations ({mine} yours) on {args.gpus} GPUs, "
          f"{iso(now)} -> {iso(last_end)}")


if __name__ == "__main__":
    main()
