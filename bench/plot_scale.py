#!/usr/bin/env python3
"""Draw the curves of bench/scale.py: BUILD/bench/scale.json -> a PNG.

Panels (x: bookings in the ledger, log scale; solid lines the "history" series,
16,000 active at most and the rest past; dashed the "active" series; dotted
the empty server's figure; dash-dotted grey a target; a red cross a booking
that was refused, its refusal timed):
  1. whole `bk` commands through the daemon (ms)
  2. the same commands in private mode (ms)
  3. booking.create over the socket (admission) and daemon start-up (ms)
  4. daemon RSS after start-up and after the load (MB)
  5. durable bookings/s against clients on the 16,000-active server
  6. ledger file size (MB) and seconds to seed it

usage: bench/plot_scale.py [SCALE_JSON] [PNG]
       (default: build/bench/scale.json -> build/bench/scale.png)
Needs matplotlib (Debian: apt-get install python3-matplotlib; or pip install matplotlib).
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = [("book_ms", "bk 1 30m"), ("st_ms", "bk st"), ("l_ms", "bk l"), ("tl_ms", "bk tl")]
STYLE = {"history": "-", "active": "--"}


def series_points(doc, series, value):
    """[(bookings, value)] of one series, skipping runs without that figure."""
    points = []
    for key in doc["series"].get(series, []):
        run = doc["runs"].get(key)
        v = value(run) if run else None
        if v is not None:
            points.append((run["bookings"], v))
    return sorted(points)


def curves(ax, doc, figures, ylabel, empty=True):
    """One line per (figure, series); `figures`: [(label, value(run))]."""
    for i, (label, value) in enumerate(figures):
        color = f"C{i}"
        for series, style in STYLE.items():
            pts = series_points(doc, series, value)
            if pts:
                ax.plot(*zip(*pts), style, marker="o", color=color, label=f"{label} ({series})")
        base = doc["runs"].get("a0-h0")
        if empty and base and value(base) is not None:
            ax.axhline(value(base), color=color, linestyle=":", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("bookings in the ledger")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def mark_refused(ax, doc, mode, label):
    """A cross on the `bk 1 30m` points whose bookings were refused (no slot within the queue search)."""
    pts = [(r["bookings"], r[mode]["book_ms"]) for r in doc["runs"].values() if r[mode].get("book_refused")]
    if pts:
        ax.plot(*zip(*pts), "x", color="red", markersize=12, label=label)
        ax.legend(fontsize=7)


def throughput(ax, doc):
    run = doc["runs"].get("a16000-h0", {})
    points = sorted((int(c), t["per_second"]) for c, t in run.get("throughput", {}).items())
    if points:
        ax.plot(*zip(*points), marker="o", label="16,000 active")
    ax.axhline(3000, color="grey", linestyle=":", label="target, 32 clients")
    ax.set_xscale("log", base=2)
    ax.set_xticks([c for c, _ in points] or [1, 8, 32], [str(c) for c, _ in points] or ["1", "8", "32"])
    ax.set_xlabel("concurrent clients")
    ax.set_yscale("log")  # today's tens and the target's thousands on one panel
    ax.set_ylabel("durable bookings/s")
    ax.set_title("booking.create throughput")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("bench/plot_scale.py needs matplotlib: apt-get install python3-matplotlib "
                 "(or pip install matplotlib)")
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bench", "scale.json")
    png = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(src), "scale.png")
    with open(src) as f:
        doc = json.load(f)

    fig, axes = plt.subplots(2, 3, figsize=(17, 10))
    (a, b, c), (d, e, g) = axes
    curves(a, doc, [(name, lambda r, k=k: r["daemon"][k]) for k, name in COMMANDS], "ms (median)")
    a.set_yscale("log")
    a.set_title("whole commands through the daemon")
    mark_refused(a, doc, "daemon", "bk 1 30m refused (timed)")
    curves(b, doc, [(name, lambda r, k=k: r["private"][k]) for k, name in COMMANDS], "ms (median)")
    b.set_yscale("log")
    b.set_title("whole commands, private mode")
    mark_refused(b, doc, "private", "bk 1 30m refused (timed)")
    curves(c, doc, [("admission", lambda r: r["admission"]["median_ms"]), ("start-up", lambda r: r["startup_ms"])],
           "ms")
    c.axhline(2000, color="grey", linestyle="-.", linewidth=0.8, label="start-up target")
    c.set_yscale("log")
    c.legend(fontsize=7)
    c.set_title("booking.create over the socket; daemon start-up")
    curves(d, doc, [("after start-up", lambda r: r["rss_start_mb"]), ("after the load", lambda r: r["rss_end_mb"])],
           "MB (VmRSS)")
    d.axhline(300, color="grey", linestyle="-.", linewidth=0.8, label="target at 1M")
    d.set_title("daemon RSS")
    d.legend(fontsize=7)
    throughput(e, doc)
    curves(g, doc, [("ledger MB", lambda r: r["ledger_mb"]), ("seed s", lambda r: r.get("seed_seconds"))],
           "MB / s", empty=False)
    g.set_yscale("log")
    g.set_title("ledger file and seeding time")
    fig.suptitle(f"GPUBK scale, {doc['date']}, commit {doc['commit']}, {doc['cpus']} CPUs "
                 f"(dotted: the empty server)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
