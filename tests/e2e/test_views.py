"""Read-only views: l, st, tl, slots, g, history, lg, config, version and help."""

import os
import re
import shutil
import shlex
import unittest

from bktest import ME_NAME, BkTestCase, sim_gpu, upstream_reservation

ALICE = dict(uid=1001, username="alice")
FREE = "\u00b7\u00b7"
LEGEND = [
    f"Legend: {FREE} free | ## administrator blackout",
    "        M1-M9 slots in use (peak), includes mine",
    "        S1-S9 slots in use (peak), others only | MX/XX exclusive",
    "Control: --from 20:00 --window 8h --step 15m | --step auto",
]


def row(label, cells):
    return f"{label:<6}" + " ".join(cells)


class ReadOnlyViewsDoNotWriteTest(BkTestCase):

    def test_views_on_an_empty_data_dir_create_nothing(self):
        for args in (["l"], ["l", "--history"], ["l", "--json"], ["st"], ["st", "-v"], ["tl"], ["g"], ["g", "2"],
                     ["slots", "1", "30m"], ["lg"], ["lg", "--json"], ["n"], ["config"], ["config", "--json"], []):
            self.ok(*args)
            self.assertNoDataDir()

    def test_views_leave_a_ledger_untouched(self):
        self.ok("1", "30m", "-q")
        before = self.snapshot()
        for args in (["l"], ["l", "--history"], ["st", "-v"], ["tl", "8h", "--step", "15m"], ["g"], ["g", "2"],
                     ["slots", "2", "1h"], ["lg"], ["history", "1"], ["config", "--json"], ["n"]):
            self.ok(*args)
        self.assertUnchanged(before)


class ListTest(BkTestCase):

    HEADER = "  # ID       Mode      GPU        Slots Start       End         Dur"

    def test_empty(self):
        self.assertEqual(self.ok("l"), "No active reservations.\n")
        self.assertEqual(self.ok("l", "--history"), "No reservation history.\n")

    def test_table_rows_and_numbering(self):
        a = self.book_id("1", "30m")                       # 18:45-19:15 GPU 0
        b = self.book_id("2", "1h", "12g", "-t", "20:00")   # 20:00-21:00
        c = self.book_id("x", "1", "2h", "--gpu", "3")      # 18:45-20:45
        d = self.book_id("1", "1d", "--gpu", "1", "-t", "tomorrow 09:00", "-s", "2")
        lines = self.ok("l").splitlines()
        self.assertEqual(lines[0], "YOUR RESERVATIONS")
        self.assertEqual(lines[1], self.HEADER)
        self.assertEqual(lines[2], f"  1 {a[:8]} shared    0            1/2 11-29 18:45 11-29 19:15      30m")
        self.assertEqual(lines[3], f"  2 {c[:8]} exclusive 3            all 11-29 18:45 11-29 20:45       2h")
        self.assertRegex(lines[4], rf"^  3 {b[:8]} shared    \d,\d          1/2 11-29 20:00 11-29 21:00       1h$")
        self.assertEqual(lines[5], f"  4 {d[:8]} shared    1            2/2 11-30 09:00 12-01 09:00 24h (1d)")
        self.assertEqual(len(lines), 6)

    def test_numbers_are_what_d_and_e_accept(self):
        ids = [self.book_id("1", "30m", "-t", t) for t in ("21:00", "20:00", "19:00")]
        listed = [l.split()[1] for l in self.ok("l").splitlines()[2:]]
        self.assertEqual(listed, [ids[2][:8], ids[1][:8], ids[0][:8]])  # sorted by start
        self.assertEqual(self.ok("d", "2"), f"cancelled: {ids[1][:8]}\n")

    def test_history_shows_status_lines_and_dashes_for_inactive(self):
        a = self.book_id("1", "30m")
        b = self.book_id("1", "1h", "-t", "20:00")
        self.ok("d", b[:8])
        lines = self.ok("l", "--history").splitlines()
        self.assertEqual(lines[0], "YOUR RESERVATION HISTORY")
        self.assertEqual(lines[1], self.HEADER)
        # newest start first; only active ones get a number
        self.assertTrue(lines[2].startswith(f"  - {b[:8]} shared "), lines)
        self.assertEqual(lines[3], "    status=cancelled edits=0 reason=cancelled by reservation owner")
        self.assertTrue(lines[4].startswith(f"  1 {a[:8]} shared "), lines)
        self.assertEqual(lines[5], "    status=active edits=0")
        self.assertEqual(len(lines), 6)
        self.assertEqual(self.ok("l", "--all"), self.ok("l", "--history"))

    def test_history_counts_edits(self):
        self.ok("1", "30m", "-q")
        self.ok("e", "1", "-d", "1h")
        self.assertIn("    status=active edits=1", self.ok("l", "--history").splitlines())

    def test_limit_footer(self):
        for _ in range(3):
            self.ok("1", "30m", "-q")
        lines = self.ok("l", "-n", "1").splitlines()
        self.assertEqual(len(lines), 4)
        self.assertTrue(lines[2].startswith("  1 "))
        self.assertEqual(lines[3], "showing 1 of 3; use `bk l --no-limit` or `bk l -n N`")
        self.assertNotIn("showing", self.ok("l", "--limit", "3"))

    def test_default_text_limit_is_20(self):
        for _ in range(21):
            self.ok("1", "5m", "-q")
        lines = self.ok("l").splitlines()
        self.assertEqual(lines[-1], "showing 20 of 21; use `bk l --no-limit` or `bk l -n N`")
        self.assertEqual(len(self.ok("l", "--no-limit").splitlines()), 2 + 21)
        doc = self.json("l", "--json")
        self.assertEqual((doc["total"], len(doc["reservations"]), doc["truncated"]), (21, 21, False))

    def test_wide_layout_from_140_columns(self):
        self.ok("1", "30m", "12g", "-q")
        self.ok("x", "1", "30m", "-t", "20:00", "-q")
        lines = self.ok("l", env={"COLUMNS": "140"}).splitlines()
        self.assertEqual(lines[1], "  # ID       Mode      GPU        Slots     VRAM/GPU CPUs      RAM Start"
                                   "             End               Dur")
        self.assertRegex(lines[2], r"^  1 [0-9a-f]{8} shared    0            1/2      12.0GiB    -        - "
                                   r"11-29 18:45 \+0000 11-29 19:15 \+0000 30m$")
        self.assertRegex(lines[3], r"^  2 [0-9a-f]{8} exclusive 0            all          all    -        - 11-29 20:00 ")
        self.assertEqual(self.ok("l", env={"COLUMNS": "139"}).splitlines()[1], self.HEADER)

    def test_other_users_reservations_are_not_listed(self):
        self.import_ledger([upstream_reservation("0be00000-0000-4000-8000-000000000001", [0], "2026-11-29T19:00:00Z",
                                                 "2026-11-29T20:00:00Z", **ALICE)])
        self.assertEqual(self.ok("l"), "No active reservations.\n")


class StatusTest(BkTestCase):

    HEADER = "GPU  Model           Util  VRAM free/total Proc State      Used Max X-free     "
    SIM_HEADER = "GPU  Model                  Util  VRAM free/total Proc State      Used Max X-free     "

    def test_without_telemetry(self):
        lines = self.ok("st").splitlines()
        self.assertEqual(lines[0], "GPU status")
        self.assertEqual(lines[1], self.HEADER)
        for g in range(4):
            self.assertEqual(lines[2 + g], f"{g:<4} unknown            -                -    0 unknown       0   2 now        ")
        self.assertEqual(lines[6], "Reservations: 0 active, 0 yours | `bk l` details | `bk tl` timeline")
        self.assertEqual(len(lines), 7)

    def test_sim_file_model_util_vram_and_unreserved(self):
        self.use_sim()
        lines = self.ok("st").splitlines()
        self.assertEqual(lines[1], self.SIM_HEADER)
        self.assertEqual(lines[2:6], [
            "0    NVIDIA A100-SXM4-80GB    0%       79.0/80.0G    0 idle          0   2 now        ",
            "1    NVIDIA A100-SXM4-80GB   87%       40.0/80.0G    1 unreserved    0   2 now        ",
            "2    NVIDIA A100-SXM4-80GB    0%       80.0/80.0G    0 idle          0   2 now        ",
            "3    NVIDIA A100-SXM4-80GB    3%       80.0/80.0G    0 idle          0   2 now        ",
        ])

    def test_own_reservations_and_used_column(self):
        self.use_sim()
        a = self.book_id("1", "30m")                    # GPU 2
        b = self.book_id("x", "1", "1h", "--gpu", "3")
        c = self.book_id("1", "1h", "--gpu", "0", "-s", "2", "-t", "20:00")
        lines = self.ok("st").splitlines()
        self.assertEqual(lines[4], "2    NVIDIA A100-SXM4-80GB    0%       80.0/80.0G    0 idle          1   2 19:15      ")
        self.assertEqual(lines[5], "3    NVIDIA A100-SXM4-80GB    3%       80.0/80.0G    0 idle          X   2 19:45      ")
        # GPU 0 is free now: the 20:00 booking does not count yet
        self.assertTrue(lines[2].endswith(" 0   2 now        "), lines[2])
        self.assertEqual(lines[6], "Reservations: 3 active, 3 yours | `bk l` details | `bk tl` timeline")
        self.assertEqual(lines[7], f"   1 {a[:8]} shared    slots 1/2 GPU 2 11-29 18:45->19:15")
        self.assertEqual(lines[8], f"   2 {b[:8]} exclusive slots all GPU 3 11-29 18:45->19:45")
        self.assertEqual(lines[9], f"   3 {c[:8]} shared    slots 2/2 GPU 0 11-29 20:00->21:00")

    def test_own_process_on_a_reserved_gpu_is_not_unreserved(self):
        gpus = [
            {"index": 0, "name": "Tesla T4", "memory_used_mb": 2048, "memory_total_mb": 15360, "utilization_percent": 50,
             "processes": [{"pid": 77, "uid": __import__("os").getuid(), "username": "me", "command": "python a.py",
                            "gpu_memory_mb": 2048}]},
        ]
        self.use_sim(gpus)
        self.assertIn(" unreserved ", self.ok("st"))
        self.ok("1", "30m", "--gpu", "0", "-q")
        line = self.ok("st").splitlines()[2]
        self.assertEqual(line, "0    Tesla T4         50%       13.0/15.0G    1 busy          1   2 19:15      ")

    def test_verbose_lists_processes_and_other_reservations(self):
        self.use_sim()
        self.assertIn("mem=40960MiB state=unreserved cmd=python", self.ok("st", "-v"))
        self.import_ledger([
            upstream_reservation("0be00000-0000-4000-8000-000000000001", [2], "2026-11-29T18:45:00Z",
                                 "2026-11-29T20:45:00Z", **ALICE),
            upstream_reservation("0be00000-0000-4000-8000-000000000002", [1], "2026-11-29T18:45:00Z",
                                 "2026-11-29T19:30:00Z", mode="exclusive", **ALICE),
        ])
        lines = self.ok("st", "-v").splitlines()
        self.assertEqual(lines[3], "1    NVIDIA A100-SXM4-80GB   87%       40.0/80.0G    1 busy          X   2 19:30      ")
        # Each process says what the monitor would call it: alice's own booking covers GPU 1.
        self.assertEqual(lines[4], "     pid=4242 uid=1001 user=alice sm=85% mem=40960MiB state=ok cmd=python train.py")
        self.assertIn("Reservations: 2 active, 0 yours | `bk l` details | `bk tl` timeline", lines)
        i = lines.index("Other reservations")
        self.assertEqual(lines[i + 1], "  0be00000 exclusive slots all GPU 1 alice 2026-11-29 18:45 +0000 -> "
                                       "2026-11-29 19:30 +0000")
        self.assertEqual(lines[i + 2], "  0be00000 shared    slots 1/2 GPU 2 alice 2026-11-29 18:45 +0000 -> "
                                       "2026-11-29 20:45 +0000")
        self.assertNotIn("Other reservations", self.ok("st"))
        self.assertNotIn("pid=4242", self.ok("st"))

    def test_model_names_in_full_or_cut_at_a_word(self):
        name = "NVIDIA H100 NVL 94GB HBM3 PCIe Gen5"
        self.use_sim([sim_gpu(0, name=name)])
        wide = self.ok("st", env={"COLUMNS": "120"}).splitlines()
        self.assertTrue(wide[2].startswith(f"0    {name}    0%"), wide[2])
        narrow = self.ok("st", env={"COLUMNS": "100"}).splitlines()
        self.assertTrue(narrow[2].startswith("0    NVIDIA H100 NVL 94GB HBM3 PCIe\u2026       0%"), narrow[2])
        self.assertLessEqual(len(narrow[2]), 100)
        self.assertEqual(narrow[1].index("Util") + 2, narrow[2].index("0%"))  # aligned

    def test_narrow_terminal_drops_the_model_column(self):
        self.use_sim()
        lines = self.ok("st", env={"COLUMNS": "72"}).splitlines()
        self.assertEqual(lines[1], "GPU   Util  VRAM free/total Proc State      Used Max X-free     ")
        self.assertEqual(lines[3], "1      87%       40.0/80.0G    1 unreserved    0   2 now        ")

    def test_wide_terminal_lists_your_bookings_as_a_table(self):
        self.use_sim()
        a = self.book_id("1", "30m", "--gpu", "2")
        b = self.book_id("1", "1h", "12g", "--gpu", "0")
        c = self.book_id("x", "1", "2h", "--gpu", "3", "-t", "20:00")
        lines = self.ok("st", "-v", env={"COLUMNS": "130"}).splitlines()
        user = "User".ljust(len(ME_NAME))  # every column as wide as its widest cell
        me = ME_NAME.ljust(4)
        at = lines.index(f"   # ID       Mode      Slots GPU {user}     VRAM/GPU Job Start       End         Dur")
        self.assertEqual(lines[at + 1:at + 4], [
            f"   1 {a[:8]} shared      1/2 2   {me} auto~39.8GiB -   11-29 18:45 11-29 19:15 30m",
            f"   2 {b[:8]} shared      1/2 0   {me}      12.0GiB -   11-29 18:45 11-29 19:45  1h",
            f"   3 {c[:8]} exclusive   all 3   {me}          all -   11-29 20:00 11-29 22:00  2h",
        ])
        self.assertNotIn("slots 1/2 GPU", self.ok("st", env={"COLUMNS": "130"}))
        self.assertIn("shared    slots 1/2 GPU 2 11-29 18:45->19:15", self.ok("st", "-v", env={"COLUMNS": "109"}))

    def test_gpu_filter(self):
        lines = self.ok("st", "--gpu", "1,3").splitlines()
        self.assertEqual([l.split()[0] for l in lines[2:4]], ["1", "3"])
        self.assertTrue(lines[4].startswith("Reservations:"))

    def test_more_than_eight_own_reservations(self):
        for _ in range(9):
            self.ok("1", "30m", "-q")
        self.assertIn("  +1 more; use `bk l` for details", self.ok("st").splitlines())

    def test_with_timeline(self):
        out = self.ok("st", "-t")
        self.assertIn("\nTimeline | Sun 11-29 18:45->20:45 | 5m/cell | 24 cells\n", out)

    def test_no_arguments_shows_status_and_a_hint(self):
        lines = self.ok().splitlines()
        self.assertEqual(lines[0], "GPU status")
        self.assertEqual(lines[-1], "Book with `bk 1 30m`; `bk -h` lists every command.")
        self.assertNoDataDir()

    def test_driver_failure_in_the_sim_file_reads_as_unknown(self):
        path = self.write_json("err.json", {"error": "NVML_ERROR_GPU_IS_LOST", "gpus": [{"index": 0}, {"index": 1}]})
        out = self.ok("st", env={"BK_GPU_SIM_FILE": path, "BK_GPU_COUNT": None})
        self.assertIn("0    unknown            -                -    0 unknown       0   2 now", out)
        self.assertIn("NVML_ERROR_GPU_IS_LOST", out)


class BrokenSimulationFileTest(BkTestCase):
    """A missing or malformed BK_GPU_SIM_FILE is a failed sample, as a failing driver is: bookings,
    lists and edits go on without telemetry; st, g, config and doctor say it is unavailable and why."""

    CASES = [
        ("bad.json", "{bad", "is invalid: not valid JSON"),
        ("gap.json", {"gpus": [{"index": 0}, {"index": 2}]},
         "gpus indices must run from 0 to 1 without gaps, but index 1 is missing"),
        ("idx.json", {"gpus": [{"index": "0"}]}, "gpus[0].index must be an integer"),
        ("pid.json", {"gpus": [{"index": 0, "processes": [{"uid": 1}]}]}, "gpus[0].processes[0].pid is required"),
        ("nope.json", None, "cannot read simulation file"),
    ]

    def use_broken(self, name, doc, keep_gpu_count=False):
        path = self.write_json(name, doc) if doc is not None else os.path.join(self.tmp, name)
        self.env["BK_GPU_SIM_FILE"] = path
        if not keep_gpu_count:
            self.env.pop("BK_GPU_COUNT", None)  # an unreadable file counts as one GPU, as in the original
        return path

    def test_commands_go_on_and_say_why(self):
        for name, doc, needle in self.CASES:
            with self.subTest(file=name):
                shutil.rmtree(self.data_dir, ignore_errors=True)
                path = self.use_broken(name, doc)
                reason = next(l for l in self.ok("st").splitlines() if l.startswith("telemetry: "))
                self.assertTrue(reason.startswith("telemetry: unavailable: "), reason)
                self.assertIn(needle, reason)
                self.assertIn(path, reason)
                self.assertTrue(reason.endswith("fix the file or unset BK_GPU_SIM_FILE"), reason)
                why = reason[len("telemetry: unavailable: "):]
                out = self.ok("1", "30m", "-v")
                self.assertTrue(out.startswith("created: "), out)
                self.assertIn("note: GPU memory telemetry unavailable; shared admission used integer slots only", out)
                self.assertEqual(self.json("1", "30m", "-t", "20:00", "--json")["status"], "created")
                self.assertEqual(len(self.reservations()), 2)
                self.assertIn("updated: ", self.ok("e", "1", "-d", "1h"))
                self.assertIn(reason, self.ok("g").splitlines())
                self.assertIn(reason, self.ok("g", "1").splitlines())
                self.assertIn("telemetry: simulation %s unavailable: %s" % (path, why),
                              self.ok("config").splitlines())
                self.assertIn("warn gpu-telemetry: unavailable: " + why, self.ok("doctor").splitlines())
                self.assertIn("cancelled: ", self.ok("d", "1"))

    def test_an_existing_ledger_keeps_working(self):
        self.ok("1", "30m", "-q")
        self.use_broken("bad.json", "[{", keep_gpu_count=True)
        self.ok("x", "1", "30m", "--op-id", "new-1", "-q")
        self.assertEqual(len(self.reservations()), 2)


class TimelineTest(BkTestCase):

    def test_default_two_hours_of_5m_cells(self):
        self.ok("1", "30m", "-q")                              # G0 18:45-19:15
        self.ok("x", "1", "1h", "--gpu", "3", "-t", "19:30", "-q")
        self.ok("1", "1h", "--gpu", "1", "-s", "2", "-q")
        lines = self.ok("tl").splitlines()
        self.assertEqual(lines[:4], [
            "Timeline | Sun 11-29 18:45->20:45 | 5m/cell | 24 cells",
            "Day   29",
            "Hour  18       19                                  20",
            "Min   45 50 55 00 05 10 15 20 25 30 35 40 45 50 55 00 05 10 15 20 25 30 35 40",
        ])
        self.assertEqual(lines[4], row("G0", ["M1"] * 6 + [FREE] * 18))
        self.assertEqual(lines[5], row("G1", ["M2"] * 12 + [FREE] * 12))
        self.assertEqual(lines[6], row("G2", [FREE] * 24))
        self.assertEqual(lines[7], row("G3", [FREE] * 9 + ["MX"] * 12 + [FREE] * 3))
        self.assertEqual(lines[8:], LEGEND)

    def test_others_are_s_and_xx(self):
        self.import_ledger([
            upstream_reservation("0be00000-0000-4000-8000-000000000001", [0], "2026-11-29T18:45:00Z",
                                 "2026-11-29T19:15:00Z", **ALICE),
            upstream_reservation("0be00000-0000-4000-8000-000000000002", [1], "2026-11-29T19:00:00Z",
                                 "2026-11-29T19:30:00Z", mode="exclusive", **ALICE),
        ])
        self.ok("1", "30m", "--gpu", "0", "-t", "19:00", "-q")
        lines = self.ok("tl", "1h").splitlines()
        self.assertEqual(lines[0], "Timeline | Sun 11-29 18:45->19:45 | 5m/cell | 12 cells")
        # the cell shows the shared slots in use; M when any of them is mine
        self.assertEqual(lines[4], row("G0", ["S1"] * 3 + ["M2"] * 3 + ["M1"] * 3 + [FREE] * 3))
        self.assertEqual(lines[5], row("G1", [FREE] * 3 + ["XX"] * 6 + [FREE] * 3))

    def test_8h_15m_steps_two_gpus_wraps_in_blocks(self):
        self.ok("x", "1", "1h", "--gpu", "3", "-q")
        lines = self.ok("tl", "8h", "--step", "15m", "--gpu", "0,3").splitlines()
        self.assertEqual(lines[:6], [
            "Timeline | Sun 11-29 18:45->11-30 02:45 | 15m/cell | 32 cells",
            "Day   29                                                             30",
            "Hour  18 19          20          21          22          23          00",
            "Min   45 00 15 30 45 00 15 30 45 00 15 30 45 00 15 30 45 00 15 30 45 00 15 30",
            row("G0", [FREE] * 24),
            row("G3", ["MX"] * 4 + [FREE] * 20),
        ])
        self.assertEqual(lines[6], "")
        self.assertEqual(lines[7:12], [
            "Day   30",
            "Hour  00 01          02",
            "Min   45 00 15 30 45 00 15 30",
            row("G0", [FREE] * 8),
            row("G3", [FREE] * 8),
        ])
        self.assertEqual(lines[12:], LEGEND)

    def test_window_option_and_from(self):
        lines = self.ok("tl", "--from", "20:00", "--window", "1h", "--step", "10m").splitlines()
        self.assertEqual(lines[0], "Timeline | Sun 11-29 20:00->21:00 | 10m/cell | 6 cells")
        self.assertEqual(lines[3], "Min   00 10 20 30 40 50")

    def test_a_span_without_a_step_picks_a_zoom_level_that_fits(self):
        self.assertEqual(self.ok("tl", "24h").splitlines()[0],
                         "Timeline | Sun 11-29 18:00->11-30 18:00 | 1h/cell | 24 cells")
        self.assertEqual(self.ok("tl", "7d").splitlines()[0],
                         "Timeline | Sun 11-29 18:00->12-06 18:00 | 6h/cell | 28 cells")
        self.assertEqual(self.ok("tl", "-w", "24h", env={"COLUMNS": "300"}).splitlines()[0],
                         "Timeline | Sun 11-29 18:45->11-30 18:45 | 15m/cell | 96 cells")
        # what fits in the slot's cells keeps them
        self.assertEqual(self.ok("tl", "8h").splitlines()[0],
                         "Timeline | Sun 11-29 18:45->11-30 02:45 | 5m/cell | 96 cells")

    def test_a_coarse_cell_shows_the_peak_not_the_sum(self):
        self.ok("1", "30m", "--gpu", "0", "-q")                  # 18:45-19:15
        self.ok("1", "30m", "--gpu", "0", "-t", "19:15", "-q")   # 19:15-19:45: never both at once
        self.ok("1", "30m", "--gpu", "1", "-q")                  # 18:45-19:15
        self.ok("1", "30m", "--gpu", "1", "-t", "19:00", "-q")   # 19:00-19:30: both at 19:00
        lines = self.ok("tl", "4h", "--step", "1h").splitlines()
        self.assertEqual(lines[0], "Timeline | Sun 11-29 18:00->22:00 | 1h/cell | 4 cells")
        self.assertEqual(lines[4], row("G0", ["M1", "M1", FREE, FREE]))
        self.assertEqual(lines[5], row("G1", ["M1", "M2", FREE, FREE]))

    def test_step_auto_for_a_day(self):
        lines = self.ok("tl", "--step", "auto", "1d").splitlines()
        # a 1h step aligns the start to the hour
        self.assertEqual(lines[0], "Timeline | Sun 11-29 18:00->11-30 18:00 | 1h/cell | 24 cells")
        self.assertEqual(lines[1], "Day   29                30")
        self.assertEqual(lines[3], "Min   " + " ".join(["00"] * 24))

    def test_one_day_of_5m_cells_is_too_many(self):
        self.assertEqual(self.refused("tl", "1d", "--step", "5m"),
                         "timeline would contain 288 cells; increase --step or use --step auto (maximum 240)")

    def test_past_from_shows_expired_but_not_cancelled(self):
        self.ok("1", "30m", "--gpu", "0", "-q")
        rid = self.book_id("1", "30m", "--gpu", "1")
        self.ok("d", rid)
        lines = self.ok("tl", "1h", "--from", "18:45").splitlines()
        self.assertEqual(lines[4], row("G0", ["M1"] * 6 + [FREE] * 6))
        self.assertEqual(lines[5], row("G1", [FREE] * 12))


class SlotsTest(BkTestCase):

    def test_two_gpus_one_hour(self):
        self.ok("x", "1", "1h", "--gpu", "0", "-q")
        self.ok("1", "2h", "--gpu", "1", "-s", "2", "-q")
        lines = self.ok("slots", "2", "1h").splitlines()
        self.assertEqual(lines[0], "Earliest shared options | 2 GPU | 1h | slots 1/2 | local time | read-only")
        self.assertEqual(lines[1], " # GPUs         Start                  End                    Live       Free now")
        self.assertRegex(lines[2], r"^ 1 2,3          2026-11-29 18:45 \+0000 2026-11-29 19:45 \+0000 unknown     unknown$")
        self.assertTrue(all(re.match(r"^ \d \d,\d ", l) for l in lines[2:-1]), lines)
        self.assertLessEqual(len(lines), 8)
        self.assertEqual(lines[-1], 'Book option 1: bk 2 1h --gpu 2,3 --at "11-29 18:45"')

    def test_exclusive_narrow_with_limit(self):
        self.ok("1", "30m", "--gpu", "0", "-q")
        self.ok("1", "1h", "--gpu", "1", "-q")
        lines = self.ok("slots", "x", "1", "30m", "--limit", "3", env={"COLUMNS": "80"}).splitlines()
        self.assertEqual(lines, [
            "Earliest exclusive options | 1 GPU | 30m | local time | read-only",
            " # GPUs     Start       End         Live         Free",
            " 1 2        11-29 18:45 11-29 19:15 unknown   unknown",
            " 2 3        11-29 18:45 11-29 19:15 unknown   unknown",
            " 3 0        11-29 19:15 11-29 19:45 unknown   unknown",
            'Book option 1: bk x 1 30m --gpu 2 --at "11-29 18:45"',
        ])

    def test_mem_and_share_are_echoed_in_the_book_line(self):
        out = self.ok("slots", "1", "30m", "--mem", "12g", "-s", "2", "-f", "+1h")
        self.assertIn("| slots 2/2 |", out.splitlines()[0])
        self.assertEqual(out.splitlines()[-1], 'Book option 1: bk 1 30m --gpu 0 --at "11-29 19:50" --mem 12g --share 2')

    def test_the_book_line_books_what_was_asked(self):
        # --mode, not only the x word, and the host budget options reach the suggested command;
        # pasted as it is, it books exactly the first option.
        self.ok("1", "30m", "--gpu", "0", "-q")
        line = self.ok("slots", "2", "1h", "--mode", "x", "--cpus", "3", "--ram", "8g").splitlines()[-1]
        self.assertEqual(line, 'Book option 1: bk x 2 1h --gpu 1,2 --at "11-29 18:45" --cpus 3 --ram 8g')
        doc = self.book(*shlex.split(line[len("Book option 1: bk "):]))
        r = doc["reservation"]
        self.assertEqual((r["mode"], r["gpus"], r["cpus"], r["ram_mb"]), ("exclusive", [1, 2], 3, 8192))

    def test_with_telemetry(self):
        self.use_sim()
        lines = self.ok("slots", "1", "30m").splitlines()
        self.assertEqual(lines[2], " 1 2            2026-11-29 18:45 +0000 2026-11-29 19:15 +0000 idle        80.0GiB")
        self.assertIn(" busy        40.0GiB", self.last.stdout)

    def test_nothing_legal_exits_3(self):
        p = self.bk("slots", "1", "30m", env={"BK_QUEUE_SEARCH_HOURS": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)  # sanity: free host
        for g in range(4):
            self.ok("x", "1", "3h", "--gpu", g, "-q", env={"BK_QUEUE_SEARCH_HOURS": "1"})
        p = self.bk("slots", "1", "30m", env={"BK_QUEUE_SEARCH_HOURS": "1"})
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "No legal shared slot found in the next 1h.\n")


class GpuTest(BkTestCase):

    def test_suggestion_without_reservations(self):
        self.use_sim()
        self.assertEqual(self.ok("g"), "GPU 2 | suggested now | idle, 0% util, 80.0GiB free\nbook: bk 1 30m --gpu 2\n")

    def test_suggestion_for_two(self):
        self.use_sim()
        lines = self.ok("g", "2").splitlines()
        self.assertRegex(lines[0], r"^2 GPUs \| suggested now \| \d,\d$")
        gpus = lines[0].rsplit("| ", 1)[1]
        self.assertNotIn("1", gpus)  # the busy GPU is not suggested
        self.assertEqual(len(lines), 4)
        self.assertEqual(lines[3], f"book: bk 2 30m --gpu {gpus}")

    def test_future_suggestion_has_at(self):
        for g in range(4):
            self.ok("x", "1", "1h", "--gpu", g, "-q")
        lines = self.ok("g", "1").splitlines()
        self.assertEqual(lines[0], "GPU 0 | suggested 2026-11-29 19:45 +0000 | unknown, util unknown, free unknown")
        self.assertEqual(lines[1], 'book: bk 1 30m --gpu 0 --at "11-29 19:45"')

    def test_yours_now(self):
        self.use_sim()
        a = self.book_id("1", "30m")
        b = self.book_id("x", "1", "1h", "--gpu", "3")
        self.book_id("1", "30m", "-t", "21:00")  # not running: not listed
        lines = self.ok("g").splitlines()
        self.assertEqual(lines, [
            "GPU 2,3 | yours now | 2 active reservations",
            "   # ID       Mode      Slots GPU        Until      Left     VRAM/GPU",
            f"   1 {a[:8]} shared      1/2 2          19:15       26m auto~39.8GiB",
            f"   2 {b[:8]} exclusive   all 3          19:45       56m          all",
            "Live GPU state",
            "  GPU 2: idle, 0% util, 80.0GiB free",
            "  GPU 3: idle, 3% util, 80.0GiB free",
            "run one: bk run NUMBER -- COMMAND",
            "run all: bk run -- COMMAND (stops when the earliest reservation ends at 19:15)",
        ])

    def test_others_exclusive_is_listed_first(self):
        self.import_ledger([upstream_reservation("0be00000-0000-4000-8000-000000000002", [1], "2026-11-29T18:45:00Z",
                                                 "2026-11-29T19:30:00Z", mode="exclusive", **ALICE)])
        lines = self.ok("g").splitlines()
        self.assertEqual(lines[0], "avoid GPU 1: exclusive to alice until 19:30 (41m left)")
        self.assertTrue(lines[1].startswith("GPU 0 | suggested now"))


class HistoryLogTest(BkTestCase):

    def test_history_of_an_edited_and_cancelled_reservation(self):
        rid = self.book_id("1", "30m", "-t", "20:00", "--gpu", "2")
        self.ok("e", rid[:8], "-d", "1h")
        self.ok("d", rid[:8])
        lines = self.ok("history", rid[:6]).splitlines()
        self.assertEqual(lines, [
            f"Reservation {rid[:8]} status=cancelled owner={self.me_name()}",
            "Current: mode=shared GPU=2 2026-11-29 20:00 +0000 -> 2026-11-29 21:00 +0000",
            "Edits: 1",
            "   1 2026-11-29 18:49 +0000 edit shared GPU=2 2026-11-29 20:00 +0000 -> 2026-11-29 20:30 +0000 share=1 "
            "mem=auto -> shared GPU=2 2026-11-29 20:00 +0000 -> 2026-11-29 21:00 +0000 share=1 mem=auto",
            f"Cancellation: owner by {self.me_name()} reason=cancelled by reservation owner",
        ])

    def test_history_without_edits(self):
        rid = self.book_id("x", "1", "30m")
        self.assertEqual(self.ok("history", rid).splitlines()[1:], [
            "Current: mode=exclusive GPU=0 2026-11-29 18:45 +0000 -> 2026-11-29 19:15 +0000", "Edits: none"])

    def test_log_lists_own_operations_oldest_first(self):
        a = self.book_id("1", "30m")
        b = self.book_id("x", "1", "1h", "--gpu", "2", "-t", "20:00")
        self.ok("d", a[:8])
        lines = self.ok("lg").splitlines()
        self.assertEqual(lines, [
            f"2026-11-29 18:49 +0000 add ok {a[:8]} mode=shared share=1 gpu=0 2026-11-29 18:45 +0000 -> 2026-11-29 19:15 +0000",
            f"2026-11-29 18:49 +0000 add ok {b[:8]} mode=exclusive share=- gpu=2 2026-11-29 20:00 +0000 -> 2026-11-29 21:00 +0000",
            f"2026-11-29 18:49 +0000 cancel ok {a[:8]} mode=shared share=1 gpu=0 2026-11-29 18:45 +0000 -> 2026-11-29 19:15 +0000",
        ])
        self.assertEqual(self.ok("lg", "--limit", "1").splitlines(), lines[-1:])
        self.assertEqual(self.ok("log", "--limit", "2").splitlines(), lines[1:])

    def test_log_empty(self):
        self.assertEqual(self.ok("lg"), "No operations yet.\n")

    def me_name(self):
        import bktest
        return bktest.ME_NAME


class ConfigVersionHelpTest(BkTestCase):

    def test_config_text(self):
        lines = self.ok("config").splitlines()
        self.assertEqual(lines[0], "GPUBK configuration")
        self.assertEqual(lines[1], "deployment: private (BK_DATA_DIR is set)")
        self.assertIn(f"ledger: {self.data_dir}/ledger.db (created at the first booking)", lines)
        self.assertIn(f"source: {self.data_dir}/config.json (absent: defaults/environment)", lines)
        self.assertIn("environment overrides: BK_DATA_DIR, BK_GPU_COUNT, BK_TEST_NOW", lines)
        self.assertIn("scheduling: GPUs=4 (environment) slice=5m shared=2 queue=168h horizon=30d", lines)
        self.assertIn("maximum booking duration: 720h", lines)
        self.assertIn("host budgets: off (set host_cpus / host_ram_mb to enable)", lines)
        self.assertIn("telemetry: none (GPU count only)", lines)
        self.assertIn("ledger policy: unbound", lines)
        self.assertEqual(lines[-1], "Use `bk config --json` for every effective setting.")
        self.ok("1", "30m")
        lines = self.ok("cfg").splitlines()
        self.assertIn(f"ledger: {self.data_dir}/ledger.db", lines)
        self.assertIn("ledger policy: match", lines)

    def test_config_reflects_file_env_and_budgets(self):
        import os
        os.makedirs(self.data_dir)
        self.write_json("data/config.json", {"slot_minutes": 10, "max_shared_users": 3})
        lines = self.ok("config", env={"BK_HOST_CPUS": "8", "BK_HOST_RAM_MB": "65536"}).splitlines()
        self.assertIn(f"source: {self.data_dir}/config.json (present)", lines)
        self.assertIn("scheduling: GPUs=4 (environment) slice=10m shared=3 queue=168h horizon=30d", lines)
        self.assertIn("host budgets: cpus=8 ram=64.0GiB (per booking default 1 CPU, 1.0GiB)", lines)

    def test_config_telemetry_line(self):
        path = self.use_sim()
        self.assertIn(f"telemetry: simulation {path}", self.ok("config").splitlines())
        self.assertIn("scheduling: GPUs=4 (detected) ", self.last.stdout)
        self.assertEqual(self.json("config", "--json")["telemetry"], f"simulation {path}")

    def test_version(self):
        out = self.ok("--version")
        self.assertRegex(out, r"^bk \d+\.\d+\.\d+\S*\n$")
        self.assertEqual(self.ok("-V"), out)
        self.assertEqual(self.ok("version"), out)
        # works even with a broken configuration
        self.assertEqual(self.ok("--version", env={"BK_GPU_COUNT": "0"}), out)
        self.assertNoDataDir()

    def test_main_help(self):
        out = self.ok("-h")
        self.assertTrue(out.startswith("GPUBK - shared GPU booking from the terminal\n"))
        # The original's first block (START HERE) leads, and every line fits a 72-column terminal.
        self.assertEqual(out.split("\n\n")[1].splitlines()[0], "START HERE")
        for needle in ("BOOK\n", "VIEW\n", "MANAGE\n", "TIME AND POLICY\n", "bk 1 1h --gpu 3 --mem 12g",
                       "GPU 1 is a device index (--gpu 1); the first number is a count.",
                       "bk renew REF 30m", "bk admin data import [FILE]", "bk info"):
            self.assertIn(needle, out)
        self.assertEqual([line for line in out.splitlines() if len(line) > 72], [])
        self.assertEqual(self.ok("--help"), out)
        self.assertEqual(self.ok("help"), out)
        self.assertEqual(self.ok("help", env={"BK_GPU_COUNT": "x"}), out)
        self.assertNoDataDir()

    def test_command_help(self):
        out = self.ok("book", "--help")
        self.assertTrue(out.startswith("Book shared GPU slots at the earliest legal slot.\n"))
        self.assertIn("Usage: bk book [OPTIONS] count duration [memory]", out)
        for opt in ("--start", "-t,--at", "-g,--gpu", "-e,--exclude-gpu,--exclude", "-m,--mem", "-s,--share",
                    "--cpus", "--ram", "--op-id", "--json", "-q,--quiet", "-v,--verbose"):
            self.assertIn(opt, out)
        self.assertIn("number of GPUs (a count, not a GPU index)", out)
        self.assertIn("--op-id experiment-001 --json", out)
        self.assertEqual(self.ok("help", "book"), out)
        self.assertEqual(self.ok("book", "-h"), out)
        self.assertNoDataDir()

    def test_every_command_has_help(self):
        for cmd in ("x", "s", "l", "d", "e", "renew", "slots", "g", "st", "tl", "history", "lg", "n", "config"):
            out = self.ok(cmd, "--help")
            self.assertIn("Usage: bk ", out, cmd)
            self.assertIn("-h,--help", out, cmd)
        self.assertIn("Usage: bk exclusive", self.ok("help", "x"))
        self.assertIn("Usage: bk edit", self.ok("e", "-h"))
        self.assertIn("usage: bk admin data import", self.ok("admin", "--help"))
        self.assertNoDataDir()

    def test_count_then_help_is_booking_help(self):
        self.assertIn("Usage: bk [OPTIONS] count duration [memory]", self.ok("2", "--help"))
        self.assertNoDataDir()


if __name__ == "__main__":
    unittest.main()
