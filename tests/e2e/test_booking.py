"""Booking: bk N DUR [MEM], book, s, x and their options."""

import os
import re
import unittest

from bktest import BUSY_PROCESS, ME_NAME, ME_UID, BkTestCase, sim_gpu

ID = r"[0-9a-f]{8}"
NOTE_NO_TELEMETRY = "note: GPU memory telemetry unavailable; shared admission used integer slots only"


def result_line(status, gpus, start, end, share="share=1 slot (max 2) ", mode="shared", host=""):
    """The regex of a booking result line with local (UTC) times."""
    return re.compile(rf"^{status}: ({ID}) mode={mode} {re.escape(share)}{re.escape(host)}gpu={gpus} "
                      rf"{re.escape(start)} \+0000 -> {re.escape(end)} \+0000$")


class BookingTest(BkTestCase):

    def test_one_gpu_30m_created_on_gpu0_from_the_current_slice(self):
        self.assertFalse(os.path.exists(self.data_dir))
        out = self.ok("1", "30m")
        lines = out.splitlines()
        self.assertRegex(lines[0], result_line("created", "0", "2026-11-29 18:45", "2026-11-29 19:15"))
        self.assertEqual(lines[1:], [])  # the details are -v's
        self.assertEqual(self.last.stderr, "")
        self.assertTrue(os.path.exists(os.path.join(self.data_dir, "ledger.db")))
        [r] = self.reservations()
        self.assertEqual(r["short_id"], lines[0].split()[1])
        self.assertEqual((r["start_at"], r["end_at"]), ("2026-11-29T18:45:00Z", "2026-11-29T19:15:00Z"))
        self.assertEqual((r["gpus"], r["mode"], r["share_units_per_gpu"]), ([0], "shared", 1))
        self.assertIsNone(r["expected_memory_mb_per_gpu"])

    def test_second_booking_takes_the_next_free_gpu(self):
        self.ok("1", "30m")
        self.assertRegex(self.ok("1", "30m").splitlines()[0],
                         result_line("created", "1", "2026-11-29 18:45", "2026-11-29 19:15"))

    def test_memory_positional_is_vram_per_gpu(self):
        out = self.ok("2", "1h", "12g")
        self.assertRegex(out.splitlines()[0], result_line("created", r"\d,\d", "2026-11-29 18:45", "2026-11-29 19:45"))
        [r] = self.reservations()
        self.assertEqual(len(r["gpus"]), 2)
        self.assertEqual(r["expected_memory_mb_per_gpu"], 12288)
        # memory was declared: no "integer slots only" note
        self.assertNotIn("integer slots only", out)

    def test_mem_option_equals_positional(self):
        self.ok("1", "30m", "--mem", "4096m")
        self.assertEqual(self.reservations()[0]["expected_memory_mb_per_gpu"], 4096)

    def test_exclusive_x(self):
        out = self.ok("x", "1", "2h")
        self.assertRegex(out.splitlines()[0],
                         result_line("created", "0", "2026-11-29 18:45", "2026-11-29 20:45", share="", mode="exclusive"))
        [r] = self.reservations()
        self.assertEqual(r["mode"], "exclusive")
        self.assertIsNone(r["share_units_per_gpu"])
        self.assertIsNone(r["share_capacity_units_per_gpu"])

    def test_exclusive_long_name(self):
        self.assertIn("mode=exclusive", self.ok("exclusive", "1", "30m"))

    def test_book_s_shared_auto_are_shared_bookings(self):
        for i, cmd in enumerate(["book", "s", "shared", "auto"]):
            out = self.ok(cmd, "1", "30m", "-q")
            self.assertRegex(out, result_line("created", str(i), "2026-11-29 18:45", "2026-11-29 19:15"), cmd)
        self.assertEqual(len(self.reservations()), 4)

    def test_exclusive_blocks_later_shared_booking_on_that_gpu(self):
        self.ok("x", "1", "1h", "--gpu", "0")
        out = self.ok("1", "30m", "--gpu", "0")
        self.assertRegex(out.splitlines()[0], result_line("queued", "0", "2026-11-29 19:45", "2026-11-29 20:15"))

    def test_share_2_is_queued_when_the_slots_are_used(self):
        for g in range(4):
            self.ok("1", "1h", "--gpu", g)  # one of two slots on every GPU
        out = self.ok("1", "1h", "--share", "2")
        self.assertRegex(out.splitlines()[0],
                         result_line("queued", r"\d", "2026-11-29 19:45", "2026-11-29 20:45",
                                     share="share=2 slots (max 2) "))
        # one slot is still free now
        self.assertRegex(self.ok("1", "1h", "-s", "1").splitlines()[0],
                         result_line("created", r"\d", "2026-11-29 18:45", "2026-11-29 19:45"))

    def test_gpu_pins_a_device_index_not_a_count(self):
        out = self.ok("1", "1h", "--gpu", "1")
        self.assertRegex(out.splitlines()[0], result_line("created", "1", "2026-11-29 18:45", "2026-11-29 19:45"))
        self.assertEqual(self.reservations()[0]["gpus"], [1])

    def test_gpu_option_spellings(self):
        self.assertIn("gpu=3 ", self.ok("1", "30m", "-g", "3", "-q"))
        self.assertIn("gpu=2 ", self.ok("1", "30m", "-g2", "-q"))
        self.assertIn("gpu=1 ", self.ok("1", "30m", "--gpu=1", "-q"))

    def test_gpu_list_is_stored_sorted(self):
        self.ok("2", "30m", "--gpu", "3,1")
        self.assertEqual(self.reservations()[0]["gpus"], [1, 3])

    def test_pinned_full_gpu_queues_on_that_gpu(self):
        self.ok("1", "1h", "--gpu", "1", "--share", "2")
        out = self.ok("1", "30m", "--gpu", "1")
        self.assertRegex(out.splitlines()[0], result_line("queued", "1", "2026-11-29 19:45", "2026-11-29 20:15"))

    def test_exclude_gpus(self):
        out = self.ok("1", "30m", "-e", "0,1")
        self.assertRegex(out.splitlines()[0], result_line("created", "2", "2026-11-29 18:45", "2026-11-29 19:15"))
        self.assertIn("gpu=3 ", self.ok("1", "30m", "--exclude-gpu", "0,1,2", "-q"))
        self.assertIn("gpu=3 ", self.ok("1", "30m", "--exclude", "0,1,2", "-q"))

    def test_at_relative_rounds_up_to_the_next_slice(self):
        # 18:49 + 30m = 19:19 -> 19:20
        self.assertRegex(self.ok("1", "30m", "-t", "+30m", "-q"),
                         result_line("created", "0", "2026-11-29 19:20", "2026-11-29 19:50"))

    def test_at_clock_today(self):
        self.assertRegex(self.ok("1", "30m", "-t", "20:00", "-q"),
                         result_line("created", "0", "2026-11-29 20:00", "2026-11-29 20:30"))

    def test_at_clock_in_the_past_rolls_to_tomorrow(self):
        self.assertRegex(self.ok("1", "30m", "--at", "18:00", "-q"),
                         result_line("created", "0", "2026-11-30 18:00", "2026-11-30 18:30"))

    def test_at_tomorrow(self):
        self.assertRegex(self.ok("1", "30m", "-t", "tomorrow 09:00", "-q"),
                         result_line("created", "0", "2026-11-30 09:00", "2026-11-30 09:30"))

    def test_at_month_day(self):
        self.assertRegex(self.ok("1", "1h", "-t", "12-24 09:00", "-q"),
                         result_line("created", "0", "2026-12-24 09:00", "2026-12-24 10:00"))

    def test_exact_start_is_never_moved(self):
        self.ok("x", "1", "1h", "--gpu", "0")
        msg = self.refused("1", "30m", "--gpu", "0", "-t", "19:00")
        self.assertIn("GPU 0", msg)
        self.assertIn("nearest available", msg)

    def test_start_naive_iso_is_local_time(self):
        self.assertRegex(self.ok("1", "30m", "--start", "2026-11-29T20:00", "-q"),
                         result_line("created", "0", "2026-11-29 20:00", "2026-11-29 20:30"))
        self.assertEqual(self.reservations()[0]["start_at"], "2026-11-29T20:00:00Z")

    def test_naive_iso_is_local_with_at_and_utc_with_start(self):
        # POSIX TZ "CST-8" is UTC+8 and needs no tz database.
        out = self.ok("1", "30m", "-t", "2026-11-30T04:00", "-q", env={"TZ": "CST-8"})
        self.assertIn("2026-11-30 04:00 +0800 -> 2026-11-30 04:30 +0800", out)
        self.assertEqual(self.reservations()[0]["start_at"], "2026-11-29T20:00:00Z")
        out = self.ok("1", "30m", "--start", "2026-11-29T21:00", "-q", env={"TZ": "CST-8"})
        self.assertIn("2026-11-30 05:00 +0800 -> 2026-11-30 05:30 +0800", out)

    def test_start_with_offset_and_z(self):
        self.ok("1", "30m", "--start", "2026-11-30T04:00:00+08:00", "-q")
        self.ok("1", "30m", "--start", "2026-11-29T21:00:00Z", "-q")
        starts = sorted(r["start_at"] for r in self.reservations())
        self.assertEqual(starts, ["2026-11-29T20:00:00Z", "2026-11-29T21:00:00Z"])

    def test_start_now_is_the_current_slice(self):
        self.assertRegex(self.ok("1", "30m", "--start", "now", "-q"),
                         result_line("created", "0", "2026-11-29 18:45", "2026-11-29 19:15"))

    def test_quiet_prints_only_the_result_line(self):
        out = self.ok("1", "30m", "-q")
        self.assertEqual(len(out.splitlines()), 1)
        self.assertTrue(out.startswith("created: "))
        self.assertEqual(self.ok("1", "30m", "--quiet").count("\n"), 1)

    def test_verbose_adds_a_selection_line(self):
        lines = self.ok("1", "30m", "-v").splitlines()
        self.assertTrue(lines[0].startswith("created: "))
        sel = [l for l in lines if l.startswith("selection: ")]
        self.assertEqual(len(sel), 1, lines)
        self.assertEqual(lines[1], NOTE_NO_TELEMETRY)
        self.assertRegex(sel[0], r"^selection: GPU 0 score=\d+\.\d now=unknown ")

    def test_duration_forms(self):
        for dur, end in [("1h30m", "20:15"), ("30m1h", "20:15"), ("90m", "20:15"), ("1H", "19:45"), ("01h", "19:45")]:
            out = self.ok("1", dur, "-q", "-t", "now", "--gpu", "0", "--share", "1", "--op-id", f"d-{dur}")
            self.assertIn(f"2026-11-29 18:45 +0000 -> 2026-11-29 {end} +0000", out, dur)
            self.ok("d", out.split()[1])

    def test_one_day_booking(self):
        self.assertRegex(self.ok("1", "1d", "-q"), result_line("created", "0", "2026-11-29 18:45", "2026-11-30 18:45"))

    def test_third_positional_after_two_duration_tokens_is_memory(self):
        # upstream quirk kept: `bk 1 1h 30m` is 1 h with 30 MiB
        self.ok("1", "1h", "30m")
        r = self.reservations()[0]
        self.assertEqual(r["expected_memory_mb_per_gpu"], 30)
        self.assertEqual(r["end_at"], "2026-11-29T19:45:00Z")


class IdempotencyTest(BkTestCase):

    def test_op_id_replay_returns_exists_with_the_same_id(self):
        first = self.ok("1", "30m", "--op-id", "experiment-001").splitlines()[0]
        self.assertTrue(first.startswith("created: "))
        before = self.snapshot()
        again = self.ok("1", "30m", "--op-id", "experiment-001", "-v").splitlines()
        self.assertEqual(again[0], "exists: " + first[len("created: "):])
        self.assertEqual(again[1], "note: committed operation replayed; live GPU state and allocator were not rerun")
        self.assertEqual(len(self.reservations()), 1)
        self.assertEqual(before["rows"]["reservations"], self.snapshot()["rows"]["reservations"])

    def test_op_id_replay_json_keeps_the_id(self):
        a = self.book("1", "30m", "--op-id", "exp.2:a_b-c")
        b = self.book("1", "30m", "--op-id", "exp.2:a_b-c")
        self.assertEqual((a["status"], b["status"]), ("created", "exists"))
        self.assertEqual(a["reservation"]["id"], b["reservation"]["id"])
        self.assertEqual(b["allocator"]["source"], "idempotent-replay")

    def test_op_id_replay_after_cancel_still_returns_exists(self):
        rid = self.book_id("1", "30m", "--op-id", "k1")
        self.ok("d", rid)
        doc = self.book("1", "30m", "--op-id", "k1")
        self.assertEqual(doc["status"], "exists")
        self.assertEqual(doc["reservation"]["id"], rid)
        self.assertEqual(doc["reservation"]["status"], "cancelled")

    def test_naive_start_is_utc_while_naive_at_is_local(self):
        env = {"TZ": "Asia/Shanghai"}
        by_start = self.book("1", "30m", "--start", "2026-11-30T09:00", "--gpu", "0", env=env)["reservation"]
        by_at = self.book("1", "30m", "-t", "2026-11-30T09:00", "--gpu", "1", env=env)["reservation"]
        self.assertEqual(by_start["start_at"], "2026-11-30T09:00:00Z")
        self.assertEqual(by_at["start_at"], "2026-11-30T01:00:00Z")
        # Friendly forms are local in both.
        self.assertEqual(self.book("1", "30m", "--start", "tomorrow 09:00", "--gpu", "2", env=env)
                         ["reservation"]["start_at"], "2026-12-01T01:00:00Z")  # it is 02:49 on 11-30 there

    def test_op_id_of_a_pruned_reservation_never_books_again(self):
        env = {"BK_LEDGER_RETENTION_DAYS": "1"}
        rid = self.book_id("1", "30m", "--op-id", "old-run", env=env)
        later = dict(env, BK_TEST_NOW="2026-12-02T09:00:00Z")  # three days on: long finished
        self.book_id("1", "30m", env=later)  # a write runs the daily retention
        self.assertEqual([r["id"] for r in self.reservations("--history", env=later)
                          if r["id"] == rid], [], "retention kept the old reservation")
        counts = self.row_counts()
        msg = self.refused("1", "30m", "--op-id", "old-run", env=later)
        self.assertIn("operation ID old-run already did its create of reservation %s" % rid[:8], msg)
        self.assertIn("retention", msg)
        self.assertEqual(self.row_counts(), counts)
        # The audit log says where it went.
        log = [l for l in self.ok("lg", env=later).splitlines() if rid[:8] in l]
        self.assertTrue(any("prune" in l for l in log), log)

    def test_same_op_id_for_a_different_request_is_refused(self):
        self.ok("1", "30m", "--op-id", "experiment-001")
        msg = self.refused("1", "1h", "--op-id", "experiment-001")
        self.assertIn("experiment-001", msg)
        self.assertIn("different", msg)
        self.refused("x", "1", "30m", "--op-id", "experiment-001")
        self.refused("1", "30m", "--gpu", "3", "--op-id", "experiment-001")
        self.assertEqual(len(self.reservations()), 1)

    def test_exact_duplicate_without_op_id_returns_exists(self):
        first = self.ok("1", "30m", "-t", "20:00", "-q").strip()
        before = self.snapshot()
        again = self.ok("1", "30m", "-t", "20:00").strip()
        self.assertEqual(again, "exists: " + first[len("created: "):])
        self.assertUnchanged(before)
        # the same time written differently is the same request
        self.assertEqual(self.ok("1", "30m", "--start", "2026-11-29T20:00", "-q").strip(), again)

    def test_queued_requests_are_never_duplicates(self):
        self.ok("1", "30m", "-q")
        self.ok("1", "30m", "-q")
        self.assertEqual(len(self.reservations()), 2)

    def test_exact_request_differing_in_memory_is_not_a_duplicate(self):
        a = self.book("1", "30m", "-t", "20:00", "--gpu", "0")
        b = self.book("1", "30m", "-t", "20:00", "--gpu", "0", "--mem", "8g")
        self.assertEqual(b["status"], "created")
        self.assertNotEqual(a["reservation"]["id"], b["reservation"]["id"])


class HostBudgetTest(BkTestCase):

    BUDGET = {"BK_HOST_CPUS": "8", "BK_HOST_RAM_MB": "65536"}

    def setUp(self):
        super().setUp()
        self.env.update(self.BUDGET)

    def test_cpus_and_ram_are_shown_and_stored(self):
        out = self.ok("1", "1h", "--cpus", "4", "--ram", "32g")
        self.assertRegex(out.splitlines()[0], result_line("created", "0", "2026-11-29 18:45", "2026-11-29 19:45",
                                                          host="cpus=4 ram=32.0GiB "))
        r = self.reservations()[0]
        self.assertEqual((r["cpus"], r["ram_mb"]), (4, 32768))

    def test_defaults_apply_with_a_budget(self):
        self.ok("1", "1h")
        r = self.reservations()[0]
        self.assertEqual((r["cpus"], r["ram_mb"]), (1, 1024))

    def test_two_fit_and_the_third_overlapping_one_queues(self):
        self.assertIn("created:", self.ok("1", "1h", "--cpus", "4", "-q"))
        self.assertIn("created:", self.ok("1", "1h", "--cpus", "4", "-q"))
        out = self.ok("1", "1h", "--cpus", "4", "-q")
        self.assertRegex(out, result_line("queued", r"\d", "2026-11-29 19:45", "2026-11-29 20:45",
                                          host="cpus=4 ram=1.0GiB "))

    def test_third_overlapping_exact_booking_fails_and_writes_nothing(self):
        self.ok("1", "1h", "--cpus", "4", "-q")
        self.ok("1", "1h", "--cpus", "4", "-q")
        msg = self.refused("1", "1h", "--cpus", "4", "-t", "now", "--gpu", "2")
        self.assertIn("host CPU budget full (request 4 CPUs, already declared 8 of 8)", msg)

    def test_ram_budget(self):
        self.ok("1", "1h", "--ram", "40g", "-q")
        msg = self.refused("1", "1h", "--ram", "30g", "-t", "now", "--gpu", "1")
        self.assertIn("host RAM budget full", msg)
        # a later start fits
        self.assertIn("created:", self.ok("1", "1h", "--ram", "30g", "-t", "19:45", "--gpu", "1", "-q"))

    def test_more_than_the_whole_budget_is_refused_at_once(self):
        self.assertIn("exceeds this host's budget of 8 CPUs", self.refused("1", "1h", "--cpus", "9"))
        self.assertNoDataDir()

    def test_exact_duplicate_check_compares_host_budgets(self):
        a = self.book("1", "1h", "--cpus", "4", "-t", "now", "--gpu", "0")
        b = self.book("1", "1h", "--cpus", "1", "-t", "now", "--gpu", "0")
        # a request for 1 CPU must not be answered with the 4-CPU reservation
        self.assertEqual(b["reservation"]["cpus"], 1)
        self.assertNotEqual(a["reservation"]["id"], b["reservation"]["id"])
        c0 = self.book("1", "1h", "-t", "now", "--gpu", "1")  # the defaults: 1 CPU, 1g
        c = self.book("1", "1h", "--ram", "2g", "-t", "now", "--gpu", "1")
        self.assertEqual(c["status"], "created")
        self.assertNotEqual(c0["reservation"]["id"], c["reservation"]["id"])
        self.assertEqual(c["reservation"]["ram_mb"], 2048)
        # the identical request is still a duplicate
        self.assertEqual(self.book("1", "1h", "--cpus", "4", "-t", "now", "--gpu", "0")["status"], "exists")


class HostBudgetOffTest(BkTestCase):

    def test_cpus_without_a_budget_are_recorded_with_a_warning(self):
        p = self.bk("1", "1h", "--cpus", "4", "--ram", "16g")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("cpus=4 ram=16.0GiB gpu=0 ", p.stdout)
        self.assertEqual(p.stderr.splitlines(), [
            "warning: this host declares no CPU budget; --cpus is recorded but not enforced",
            "warning: this host declares no RAM budget; --ram is recorded but not enforced"])
        r = self.reservations()[0]
        self.assertEqual((r["cpus"], r["ram_mb"]), (4, 16384))

    def test_without_cpus_nothing_is_declared(self):
        self.ok("1", "1h")
        r = self.reservations()[0]
        self.assertEqual((r["cpus"], r["ram_mb"]), (None, None))
        self.assertNotIn("cpus=", self.ok("l"))

    def test_budget_cannot_be_added_to_a_ledger_later(self):
        self.ok("1", "1h")
        msg = self.refused("1", "1h", env={"BK_HOST_CPUS": "8"})
        self.assertIn("host_cpus", msg)


class TelemetryTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.use_sim()

    def test_busy_gpu_is_avoided_and_vram_reported(self):
        lines = self.ok("1", "30m", "-v").splitlines()
        self.assertRegex(lines[0], result_line("created", "2", "2026-11-29 18:45", "2026-11-29 19:15"))
        self.assertEqual(lines[1], "note: avoided currently busy GPU 1 (user=alice pid=4242)")
        self.assertEqual(lines[2], "VRAM: GPU 2 physical-free-now=80.0GiB, reservation-budget-after=39.8GiB")
        self.assertEqual(lines[3], "assumption: --mem omitted; budgeted this reservation at 39.8GiB/GPU "
                                   "(based on 1 slot (max 2))")
        self.assertRegex(lines[4], r"^selection: GPU 2 ")
        self.assertEqual(len(lines), 5)
        self.assertNotIn("telemetry unavailable", self.last.stdout)

    def test_declared_memory_has_no_assumption_line(self):
        lines = self.ok("1", "30m", "12g", "-v").splitlines()
        self.assertTrue(lines[2].startswith("VRAM: GPU "), lines)
        self.assertIn("reservation-budget-after=67.5GiB", lines[2])
        self.assertFalse(any(l.startswith("assumption:") for l in lines))

    def test_exclusive_vram_line_has_no_budget(self):
        lines = self.ok("x", "1", "30m", "-v").splitlines()
        self.assertRegex(lines[2], r"^VRAM: GPU \d physical-free-now=\d+\.\dGiB$")

    def test_pinning_the_busy_gpu_warns_on_stderr(self):
        p = self.bk("1", "30m", "--gpu", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("gpu=1 ", p.stdout)
        self.assertIn("warning: selected GPU currently busy: GPU 1 (user=alice pid=4242)", p.stderr.splitlines())
        self.assertNotIn("avoided", p.stdout)

    def test_a_booking_prints_one_line_by_default(self):
        p = self.bk("1", "30m")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertEqual(len(p.stdout.splitlines()), 1, p.stdout)
        self.assertRegex(p.stdout, result_line("created", "2", "2026-11-29 18:45", "2026-11-29 19:15"))

    def test_a_busy_gpu_is_one_warning_not_two(self):
        err = self.bk("1", "30m", "--gpu", "1").stderr
        self.assertEqual([l for l in err.splitlines() if "busy" in l],
                         ["warning: selected GPU currently busy: GPU 1 (user=alice pid=4242)"])

    def test_a_later_booking_on_a_busy_gpu_is_not_warned(self):
        p = self.bk("1", "30m", "--gpu", "1", "-t", "+10h")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertEqual(len(p.stdout.splitlines()), 1, p.stdout)
        self.assertNotIn("physical-free-now", p.stdout)

    def test_the_bookers_own_process_is_not_warned(self):
        mine = dict(BUSY_PROCESS, uid=ME_UID, username=ME_NAME)
        self.use_sim([sim_gpu(0, used=40960, util=85, processes=[mine])])
        p = self.bk("1", "30m", "--gpu", "0")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertNotIn("selected GPU is currently busy; live task end time is unknown",
                         self.book("1", "30m", "--gpu", "0")["warnings"])

    def test_gpu_count_comes_from_the_file(self):
        self.refused("1", "30m", "--gpu", "4", contains="out of range")
        self.assertEqual(self.json("config", "--json")["effective"]["gpu_count"], 4)

    def test_declared_vram_over_the_gpu_is_refused(self):
        self.ok("1", "30m", "--gpu", "0", "-q")  # the data dir exists (see test_bad_input for an empty one)
        # More than the card holds at all: the limit, not a full calendar (see test_refusals).
        self.assertIn("90.0GiB of VRAM per GPU is more than GPU 1 can hold (GPU 1 has 80.0GiB, 79.5GiB for "
                      "shared bookings after the 512MiB reserve)",
                      self.refused("1", "30m", "--gpu", "1", "--mem", "90g", "-t", "now"))

    def test_declared_vram_is_summed_per_gpu(self):
        self.ok("1", "30m", "--gpu", "2", "--mem", "50g", "-t", "now")
        msg = self.refused("1", "30m", "--gpu", "2", "--mem", "40g", "-t", "now")
        self.assertIn("shared memory full on GPU 2", msg)
        # queued instead, it waits for the first one to end
        self.assertRegex(self.ok("1", "30m", "--gpu", "2", "--mem", "40g", "-q"),
                         result_line("queued", "2", "2026-11-29 19:15", "2026-11-29 19:45"))


if __name__ == "__main__":
    unittest.main()
