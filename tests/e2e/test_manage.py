"""Managing own reservations: bk e, bk renew, bk d and reservation references."""

import re
import unittest

from bktest import ME_UID, BkTestCase, upstream_reservation

SHARE1 = "share=1 slot (max 2) "


def line(status, rid, gpus, start, end, share=SHARE1, mode="shared"):
    return f"{status}: {rid[:8]} mode={mode} {share}gpu={gpus} {start} +0000 -> {end} +0000\n"


class EditStartedTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.rid = self.book_id("1", "30m")  # GPU 0, 18:45-19:15, started

    def test_duration_moves_the_end(self):
        out = self.ok("e", "1", "--duration", "2h")
        self.assertEqual(out, line("updated", self.rid, "0", "2026-11-29 18:45", "2026-11-29 20:45"))
        r = self.reservations()[0]
        self.assertEqual((r["start_at"], r["end_at"], r["edit_count"]), ("2026-11-29T18:45:00Z", "2026-11-29T20:45:00Z", 1))

    def test_end_moves_the_end_of_a_running_booking(self):
        self.assertEqual(self.ok("e", "1", "--end", "20:00"),
                         line("updated", self.rid, "0", "2026-11-29 18:45", "2026-11-29 20:00"))
        self.refused("e", "1", "--end", "20:00", "--duration", "1h")

    def test_duration_can_shorten_down_to_the_next_slice(self):
        self.assertEqual(self.ok("e", self.rid[:8], "-d", "5m"),
                         line("updated", self.rid, "0", "2026-11-29 18:45", "2026-11-29 18:50"))

    def test_started_booking_refuses_gpu(self):
        msg = self.refused("e", "1", "--gpu", "1")
        self.assertIn("a started reservation may only change its end time", msg)
        for args in (["--at", "20:00"], ["--mode", "x"], ["--mem", "4g"], ["-s", "2"], ["-c", "2"], ["-e", "0"],
                     ["-d", "1h", "--gpu", "1"]):
            self.refused("e", "1", *args)
        self.assertEqual(self.reservations()[0]["edit_count"], 0)

    def test_extension_into_a_conflict_is_refused(self):
        self.ok("x", "1", "1h", "--gpu", "0", "-t", "19:30", "-q")
        msg = self.refused("e", self.rid[:8], "-d", "1h")
        self.assertIn("exclusive conflict on GPU 0", msg)
        self.assertEqual(self.reservations()[0]["end_at"], "2026-11-29T19:15:00Z")

    def test_edit_json(self):
        doc = self.json("e", "1", "-d", "1h", "--json")
        self.assertEqual(doc["kind"], "booking_result")
        self.assertEqual(doc["status"], "updated")
        self.assertEqual(doc["reservation"]["end_at"], "2026-11-29T19:45:00Z")
        self.assertEqual(doc["reservation"]["edit_count"], 1)

    def test_edit_with_op_id_replays(self):
        self.ok("e", "1", "-d", "1h", "--op-id", "edit-1")
        before = self.snapshot()
        out = self.ok("e", "1", "-d", "1h", "--op-id", "edit-1")
        self.assertTrue(out.startswith("exists: ") or "replayed" in out, out)
        self.assertEqual(self.reservations()[0]["edit_count"], 1)
        self.assertEqual(before["rows"], self.snapshot()["rows"])


class EditFutureTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.rid = self.book_id("1", "30m", "--gpu", "1", "-t", "20:00")

    def test_move_with_at(self):
        self.assertEqual(self.ok("e", "1", "--at", "21:00"),
                         line("updated", self.rid, "1", "2026-11-29 21:00", "2026-11-29 21:30"))

    def test_end_with_a_new_start_keeps_the_end(self):
        self.assertEqual(self.ok("e", "1", "--at", "21:00", "--end", "22:30"),
                         line("updated", self.rid, "1", "2026-11-29 21:00", "2026-11-29 22:30"))

    def test_move_with_start(self):
        self.assertEqual(self.ok("e", "1", "--start", "2026-11-29T22:00"),
                         line("updated", self.rid, "1", "2026-11-29 22:00", "2026-11-29 22:30"))

    def test_change_gpu_mode_share_and_memory(self):
        self.assertEqual(self.ok("e", "1", "--gpu", "2"), line("updated", self.rid, "2", "2026-11-29 20:00",
                                                               "2026-11-29 20:30"))
        self.assertEqual(self.ok("e", "1", "-s", "2"),
                         line("updated", self.rid, "2", "2026-11-29 20:00", "2026-11-29 20:30",
                              share="share=2 slots (max 2) "))
        self.ok("e", "1", "--mem", "8g")
        self.assertEqual(self.reservations()[0]["expected_memory_mb_per_gpu"], 8192)
        self.ok("e", "1", "--mem", "-")
        self.assertIsNone(self.reservations()[0]["expected_memory_mb_per_gpu"])
        self.assertEqual(self.ok("e", "1", "--mode", "x"),
                         line("updated", self.rid, "2", "2026-11-29 20:00", "2026-11-29 20:30", share="",
                              mode="exclusive"))
        self.assertEqual(self.reservations()[0]["edit_count"], 5)

    def test_gpu_list_sets_the_count(self):
        self.ok("e", "1", "--gpu", "0,3")
        self.assertEqual(self.reservations()[0]["gpus"], [0, 3])

    def test_count_repicks(self):
        self.ok("e", "1", "-c", "3")
        self.assertEqual(len(self.reservations()[0]["gpus"]), 3)

    def test_conflict_without_queue_is_refused(self):
        self.ok("x", "1", "1h", "--gpu", "1", "-t", "22:00", "-q")
        msg = self.refused("e", self.rid[:8], "--at", "21:45")
        self.assertEqual(msg, "exclusive conflict on GPU 1; nearest available: GPU=1 2026-11-29 23:00 +0000 -> "
                              "2026-11-29 23:30 +0000")

    def test_queue_moves_to_the_next_legal_slot(self):
        self.ok("x", "1", "1h", "--gpu", "1", "-t", "22:00", "-q")
        self.assertEqual(self.ok("e", self.rid[:8], "--at", "21:45", "-q"),
                         line("queued", self.rid, "1", "2026-11-29 23:00", "2026-11-29 23:30"))
        self.assertEqual(self.ok("e", self.rid[:8], "--at", "21:00", "--queue"),
                         line("updated", self.rid, "1", "2026-11-29 21:00", "2026-11-29 21:30"))

    def test_future_start_cannot_move_into_the_current_slice(self):
        self.assertEqual(self.refused("e", "1", "--start", "now"),
                         "edit start must not be in the past; earliest editable slot is 2026-11-29 18:50 +0000")
        self.assertEqual(self.ok("e", "1", "-t", "+1m"),
                         line("updated", self.rid, "1", "2026-11-29 18:50", "2026-11-29 19:20"))

    def test_no_changes(self):
        msg = self.refused("e", "1")
        self.assertIn("edit needs at least one change", msg)


class RenewTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.rid = self.book_id("1", "30m")  # GPU 0, 18:45-19:15

    def test_renew_extends_the_end(self):
        self.assertEqual(self.ok("renew", "1", "30m"),
                         line("renewed", self.rid, "0", "2026-11-29 18:45", "2026-11-29 19:45"))
        self.assertEqual(self.ok("extend", self.rid[:8], "15m"),
                         line("renewed", self.rid, "0", "2026-11-29 18:45", "2026-11-29 20:00"))
        self.assertEqual(self.reservations()[0]["edit_count"], 2)
        actions = [l.split()[3] for l in self.ok("lg").splitlines()]
        self.assertEqual(actions, ["add", "renew", "renew"])

    def test_renew_conflicting_with_a_later_booking_on_the_same_gpu_is_refused(self):
        self.ok("x", "1", "1h", "--gpu", "0", "-t", "19:30", "-q")
        msg = self.refused("renew", "1", "30m")
        self.assertEqual(msg, f"cannot renew {self.rid[:8]} until 2026-11-29 19:45 +0000: exclusive conflict on GPU 0")
        # up to the later booking is fine
        self.assertEqual(self.ok("renew", "1", "15m"),
                         line("renewed", self.rid, "0", "2026-11-29 18:45", "2026-11-29 19:30"))

    def test_renew_keeps_the_gpus(self):
        self.ok("1", "1h", "--gpu", "0", "-s", "1", "-t", "19:15", "-q")
        self.ok("1", "1h", "--gpu", "0", "-s", "1", "-t", "19:15", "--mem", "1g", "-q")  # GPU 0 full 19:15-20:15
        self.refused("renew", "1", "30m", contains="GPU 0")

    def test_renew_bad_duration(self):
        self.assertIn("renewal must be a positive multiple of 5 minutes", self.refused("renew", "1", "7m"))
        self.refused("renew", "1", "0m")
        self.refused("renew", "1", "x")

    def test_renew_json(self):
        doc = self.json("renew", "1", "1h", "--json")
        self.assertEqual(doc["reservation"]["end_at"], "2026-11-29T20:15:00Z")


class CancelAndReferencesTest(BkTestCase):

    def test_cancel_by_number(self):
        a = self.book_id("1", "30m", "-t", "20:00")
        b = self.book_id("1", "30m", "-t", "19:00")
        self.assertEqual(self.ok("d", "1"), f"cancelled: {b[:8]}\n")
        self.assertEqual([r["id"] for r in self.reservations()], [a])
        self.assertEqual([r["status"] for r in self.reservations("--history") if r["id"] == b], ["cancelled"])

    def test_cancel_by_short_id(self):
        rid = self.book_id("1", "30m")
        self.assertEqual(self.ok("d", rid[:8]), f"cancelled: {rid[:8]}\n")
        self.assertEqual(self.reservations(), [])

    def test_cancel_by_full_id(self):
        rid = self.book_id("1", "30m")
        self.assertEqual(self.ok("rm", rid), f"cancelled: {rid[:8]}\n")

    def test_cancel_aliases(self):
        for cmd in ("d", "del", "delete", "rm", "cancel"):
            rid = self.book_id("1", "30m")
            self.assertEqual(self.ok(cmd, rid), f"cancelled: {rid[:8]}\n", cmd)

    def test_cancel_running_keeps_times(self):
        rid = self.book_id("1", "30m")
        self.ok("d", rid)
        r = self.json("history", rid, "--json")["reservation"]
        self.assertEqual((r["status"], r["start_at"], r["end_at"]), ("cancelled", "2026-11-29T18:45:00Z",
                                                                     "2026-11-29T19:15:00Z"))
        self.assertEqual(r["cancellation"]["kind"], "owner")

    def test_cancelled_reservation_frees_the_gpu(self):
        self.ok("x", "1", "1h", "--gpu", "0", "-q")
        self.ok("d", "1")
        self.assertIn("created:", self.ok("x", "1", "1h", "--gpu", "0", "-q"))

    def test_cancelling_twice_is_not_found(self):
        rid = self.book_id("1", "30m")
        self.ok("d", rid)
        self.assertEqual(self.refused("d", rid), f"reservation {rid[:8]} is cancelled; only active reservations can change")

    def test_ambiguous_prefix(self):
        self.import_ledger([
            upstream_reservation("abcd0001-0000-4000-8000-000000000001", [0], "2026-11-29T20:00:00Z",
                                 "2026-11-29T21:00:00Z"),
            upstream_reservation("abcd0002-0000-4000-8000-000000000002", [1], "2026-11-29T20:00:00Z",
                                 "2026-11-29T21:00:00Z"),
        ])
        msg = self.refused("d", "abcd")
        self.assertEqual(msg, "ambiguous reservation ID abcd; matches abcd0001, abcd0002; give more characters")
        self.refused("e", "abcd", "-d", "1h", contains="ambiguous")
        self.refused("renew", "abc", "30m", contains="ambiguous")
        self.assertEqual(self.ok("d", "abcd0002"), "cancelled: abcd0002\n")
        self.assertEqual(self.ok("d", "abcd"), "cancelled: abcd0001\n")  # the only active match left

    def test_list_numbers_out_of_range_are_never_id_prefixes(self):
        # Three bookings whose IDs start with the digits a user might mistype as list numbers.
        ids = ["40000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002",
               "99999900-0000-4000-8000-000000000003"]
        self.import_ledger([upstream_reservation(rid, [i], "2026-11-29T20:00:00Z", "2026-11-29T21:00:00Z")
                            for i, rid in enumerate(ids)])
        for ref in ("4", "0", "999999", "000004"):
            msg = self.refused("d", ref)
            self.assertIn("you have 3 active reservations", msg)
            self.assertIn("at least 7 characters", msg)
        self.refused("e", "4", "-d", "2h", contains="no active reservation number 4")
        self.refused("renew", "4", "30m", contains="no active reservation number 4")
        self.assertEqual(len(self.reservations()), 3)
        # An ID prefix of seven digits or more is a prefix; a list number still works.
        self.assertEqual(self.ok("d", "9999990"), "cancelled: 99999900\n")
        self.assertEqual(self.ok("d", "1"), "cancelled: 00000000\n")
        self.assertEqual([r["id"] for r in self.reservations()], [ids[0]])

    def test_unknown_reference(self):
        self.ok("1", "30m", "-q")
        line = self.refused("d", "zzz")
        self.assertTrue(line.startswith("reservation not found for current user: zzz; `bk l` lists your "
                                        "reservations (looked in your private ledger %s;" % self.data_dir), line)
        self.refused("d", "123456789", contains="not found")  # out of range, and no UUID has a digit 9th
        self.refused("e", "zzz", "-d", "1h", contains="not found")
        self.refused("renew", "zzz", "30m", contains="not found")
        self.refused("history", "zzz", contains="not found")

    def test_other_users_reservation_cannot_be_changed(self):
        self.import_ledger([upstream_reservation("0be00000-0000-4000-8000-000000000001", [0], "2026-11-29T20:00:00Z",
                                                 "2026-11-29T21:00:00Z", uid=1001, username="alice")])
        rid = "0be00000-0000-4000-8000-000000000001"
        self.assertEqual(self.refused("e", rid, "-d", "2h"),
                         "only the owner can edit a reservation; administrators may cancel it")
        self.assertEqual(self.refused("renew", rid, "30m"), "only the owner can renew a reservation")
        if ME_UID == 0:  # root administers a private data dir: cancelling needs a reason
            self.assertEqual(self.refused("d", rid),
                             "cancelling alice's reservation needs --reason TEXT; the owner is notified")
            before = self.row_counts()
            self.assertEqual(self.ok("d", rid, "--reason", "GPU maintenance"),
                             "cancelled: 0be00000 owner=alice reason=GPU maintenance\n")
            after = self.row_counts()
            self.assertEqual(after["notifications"], before["notifications"] + 1)
            self.assertEqual(self.reservations("--history"), [])  # not mine
        else:
            self.refused("d", rid, contains="alice")

    def test_history_accepts_cancelled_prefixes(self):
        rid = self.book_id("1", "30m")
        self.ok("d", rid)
        self.assertTrue(self.ok("history", rid[:4]).startswith(f"Reservation {rid[:8]} status=cancelled"))

    def test_cancel_json(self):
        rid = self.book_id("1", "30m")
        doc = self.json("d", rid, "--json")
        self.assertEqual(doc["reservation"]["id"], rid)
        self.assertEqual(doc["reservation"]["status"], "cancelled")

    def test_cancel_with_op_id_replays(self):
        rid = self.book_id("1", "30m")
        self.ok("d", rid, "--op-id", "c-1")
        p = self.bk("d", rid, "--op-id", "c-1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, f"cancelled: {rid[:8]}\n")


if __name__ == "__main__":
    unittest.main()
