"""`bk admin data import FILE`: loading the ledger.json of GPUBK 0.2.8."""

import copy
import json
import os
import re
import unittest

from bktest import FIXTURES, ME_NAME, ME_UID, BkTestCase, upstream_ledger, upstream_reservation

FIXTURE = os.path.join(FIXTURES, "upstream-ledger.json")
SUMMARY = re.compile(r"^imported: (\d+) reservations \((\d+) active, (\d+) cancelled, (\d+) expired\), (\d+) edits, "
                     r"(\d+) notifications, (\d+) operation IDs$")


def inline_ledger():
    """A small ledger of the current user: active, edited, cancelled and expired records."""
    r = upstream_reservation
    return upstream_ledger([
        r("11111111-0000-4000-8000-000000000001", [0], "2026-11-29T18:45:00Z", "2026-11-29T19:45:00Z"),
        r("22222222-0000-4000-8000-000000000002", [1, 2], "2026-11-29T20:00:00Z", "2026-11-29T21:00:00Z",
          expected_memory_mb=8192,
          edit_operations=[{
              "actor_uid": ME_UID, "actor_username": ME_NAME, "at": "2026-11-29T18:46:00Z", "op_id": "e-1",
              "signature": "a" * 64,
              "before": {"start_at": "2026-11-29T20:00:00Z", "end_at": "2026-11-29T20:30:00Z", "gpus": [1, 2],
                         "mode": "shared", "share_units": 1, "expected_memory_mb": 8192},
              "after": {"start_at": "2026-11-29T20:00:00Z", "end_at": "2026-11-29T21:00:00Z", "gpus": [1, 2],
                        "mode": "shared", "share_units": 1, "expected_memory_mb": 8192}}]),
        r("33333333-0000-4000-8000-000000000003", [3], "2026-11-29T19:00:00Z", "2026-11-29T20:00:00Z",
          status="cancelled", mode="exclusive",
          cancel_operation={"actor_uid": ME_UID, "actor_username": ME_NAME, "at": "2026-11-29T18:47:00Z",
                            "kind": "owner", "op_id": "c-1", "reason": "changed plans", "signature": "b" * 64}),
        r("44444444-0000-4000-8000-000000000004", [0], "2026-11-29T10:00:00Z", "2026-11-29T11:00:00Z",
          status="expired"),
        r("55555555-0000-4000-8000-000000000005", [3], "2026-11-29T18:45:00Z", "2026-11-29T20:45:00Z",
          mode="exclusive", uid=1001, username="alice"),
    ])


class OriginalDataTest(BkTestCase):
    """GPUBK 0.2.8's private ledger is found, mentioned, and imported without naming it."""

    def place(self, directory):
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "ledger.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(inline_ledger(), f)
        return path

    def test_in_the_originals_default_directory(self):
        del self.env["BK_DATA_DIR"]
        path = self.place(os.path.join(self.env["HOME"], ".local", "share", "bk"))
        p = self.bk("l")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("note: found GPUBK 0.2.8 bookings in %s; bring them in with `bk admin data import`" % path,
                      p.stderr)
        self.assertNotIn("job logs", p.stderr)
        logs = os.path.join(self.env["HOME"], ".local", "state", "bk", "jobs")
        os.makedirs(logs)
        with open(os.path.join(logs, "0b0e1c2a.log"), "w") as f:
            f.write("x\n")
        self.assertIn("note: its job logs stay in %s (not imported" % logs, self.bk("l").stderr)
        self.assertEqual(self.bk("l", "--json").stderr, "")  # agents read JSON and are not told
        out = self.ok("admin", "data", "import")
        self.assertTrue(out.startswith("imported: 5 reservations"), out)
        self.assertEqual(self.bk("l").stderr, "")  # said until our ledger exists

    def test_in_bk_data_dir(self):
        path = self.place(self.data_dir)
        self.assertIn("found GPUBK 0.2.8 bookings in %s" % path, self.bk("st").stderr)
        self.assertTrue(self.ok("admin", "data", "import").startswith("imported: 5 reservations"))

    def test_nothing_to_find(self):
        del self.env["BK_DATA_DIR"]
        self.assertEqual(self.bk("l").stderr, "")
        self.refused("admin", "data", "import", contains="no GPUBK 0.2.8 ledger")


class InlineImportTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.path = self.write_json("ledger.json", inline_ledger())

    def test_summary_line(self):
        out = self.ok("admin", "data", "import", self.path)
        self.assertEqual(out, "imported: 5 reservations (3 active, 1 cancelled, 1 expired), 1 edits, "
                              "0 notifications, 7 operation IDs\n")
        self.assertEqual(self.last.stderr, "")

    def test_records_keep_their_ids_and_states(self):
        self.ok("admin", "data", "import", self.path)
        lines = self.ok("l", "--history").splitlines()
        self.assertEqual(lines[2:], [
            "  2 22222222 shared    1,2          1/2 11-29 20:00 11-29 21:00  1h",
            "    status=active edits=1",
            "  - 33333333 exclusive 3            all 11-29 19:00 11-29 20:00  1h",
            "    status=cancelled edits=0 reason=changed plans",
            "  1 11111111 shared    0            1/2 11-29 18:45 11-29 19:45  1h",
            "    status=active edits=0",
            "  - 44444444 shared    0            1/2 11-29 10:00 11-29 11:00  1h",
            "    status=expired edits=0",
        ])
        docs = {r["id"]: r for r in self.reservations("--history")}
        self.assertEqual(set(docs), {"11111111-0000-4000-8000-000000000001", "22222222-0000-4000-8000-000000000002",
                                     "33333333-0000-4000-8000-000000000003", "44444444-0000-4000-8000-000000000004"})
        self.assertEqual(docs["22222222-0000-4000-8000-000000000002"]["expected_memory_mb_per_gpu"], 8192)

    def test_history_of_imported_records(self):
        self.ok("admin", "data", "import", self.path)
        self.assertEqual(self.ok("history", "2222").splitlines()[2:], [
            "Edits: 1",
            "   1 2026-11-29 18:46 +0000 edit shared GPU=1,2 2026-11-29 20:00 +0000 -> 2026-11-29 20:30 +0000 share=1 "
            "mem=8.0GiB -> shared GPU=1,2 2026-11-29 20:00 +0000 -> 2026-11-29 21:00 +0000 share=1 mem=8.0GiB",
        ])
        self.assertEqual(self.ok("history", "33333333").splitlines()[-1],
                         f"Cancellation: owner by {ME_NAME} reason=changed plans")
        actions = [l.split()[3] for l in self.ok("lg").splitlines()]
        self.assertEqual(actions, ["import"] * 4 + ["edit", "cancel"])

    def test_imported_reservations_take_capacity(self):
        self.ok("admin", "data", "import", self.path)
        # alice's exclusive GPU 3 until 20:45
        self.assertIn("exclusive conflict on GPU 3", self.refused("1", "30m", "--gpu", "3", "-t", "now"))
        self.assertIn("gpu=3 2026-11-29 20:45 +0000", self.ok("1", "30m", "--gpu", "3", "-q"))
        self.assertIn("XX", self.ok("tl", "--gpu", "3"))

    def test_imported_operation_ids_are_remembered(self):
        self.ok("admin", "data", "import", self.path)
        msg = self.refused("1", "30m", "--op-id", "op-11111111-0000-4000-8000-000000000001")
        self.assertIn("was already used for a different write", msg)

    def test_imported_reservations_can_be_managed(self):
        self.ok("admin", "data", "import", self.path)
        self.assertEqual(self.ok("d", "1"), "cancelled: 11111111\n")
        self.assertIn("updated: 22222222 ", self.ok("e", "22222222", "-d", "2h"))
        self.assertEqual(self.reservations()[0]["edit_count"], 2)

    def test_json_summary(self):
        doc = self.json("admin", "data", "import", self.path, "--json")
        self.assertEqual(doc, {"active": 3, "cancelled": 1, "edits": 1, "expired": 1, "kind": "import",
                               "notifications": 0, "operations": 7, "reservations": 5,
                               "schema_version": "gpubk.import.v1"})

    def test_a_second_import_is_refused(self):
        self.ok("admin", "data", "import", self.path)
        msg = self.refused("admin", "data", "import", self.path)
        self.assertIn("needs an empty ledger", msg)
        self.assertIn("5 reservations", msg)

    def test_import_after_a_booking_is_refused(self):
        self.ok("1", "30m", "-q")
        self.refused("admin", "data", "import", self.path, contains="needs an empty ledger")


class InvalidImportTest(BkTestCase):

    def refuse(self, ledger, needles, name="bad.json"):
        path = self.write_json(name, ledger)
        msg = self.refused("admin", "data", "import", path, contains=needles)
        self.assertIn("nothing was imported", msg)
        self.assertNoDataDir()
        self.refused_json("admin", "data", "import", path, "--json", contains=needles)
        self.assertNoDataDir()
        return msg

    def with_record_2(self, **changes):
        ledger = inline_ledger()
        ledger["reservations"][1].update(changes)
        return ledger

    def test_bad_gpus_in_record_2_names_the_path(self):
        msg = self.refuse(self.with_record_2(gpus=["x"]), ["reservations[1].gpus[0] must be an integer"])
        self.assertTrue(msg.startswith("ledger import refused: "), msg)

    def test_gpu_out_of_range(self):
        self.refuse(self.with_record_2(gpus=[9]), ["reservations[1].gpus[0] is GPU 9 but this ledger has 4 GPUs",
                                                   "BK_GPU_COUNT=10"])

    def test_empty_and_repeated_gpus(self):
        self.refuse(self.with_record_2(gpus=[]), ["reservations[1].gpus must be a non-empty list of GPU indexes"])
        self.refuse(self.with_record_2(gpus=[1, 1]), ["reservations[1].gpus[1] repeats GPU 1"])

    def test_later_bad_record_refuses_the_earlier_good_ones_too(self):
        ledger = inline_ledger()
        ledger["reservations"][4]["mode"] = "sometimes"
        self.refuse(ledger, ["reservations[4].mode"])

    def test_duplicate_operation_ids(self):
        ledger = inline_ledger()
        ledger["reservations"][1]["op_id"] = ledger["reservations"][0]["op_id"]
        self.refuse(ledger, ["reservations[1].op_id", "must be unique"])

    def test_missing_signature(self):
        ledger = inline_ledger()
        del ledger["reservations"][1]["edit_operations"][0]["signature"]
        self.refuse(ledger, ["reservations[1].edit_operations[0].signature is required"])

    def test_an_over_admitted_calendar_names_its_bookings(self):
        # Three shared bookings on GPU 1 at once where two slots exist: refused before anything is written.
        ledger = upstream_ledger([
            upstream_reservation("aaaaaaaa-0000-4000-8000-000000000001", [1], "2026-11-29T19:00:00Z",
                                 "2026-11-29T20:00:00Z"),
            upstream_reservation("bbbbbbbb-0000-4000-8000-000000000002", [1], "2026-11-29T19:30:00Z",
                                 "2026-11-29T20:30:00Z"),
            upstream_reservation("cccccccc-0000-4000-8000-000000000003", [1, 2], "2026-11-29T19:45:00Z",
                                 "2026-11-29T21:00:00Z"),
            upstream_reservation("dddddddd-0000-4000-8000-000000000004", [1], "2026-11-29T19:00:00Z",
                                 "2026-11-29T21:00:00Z", status="cancelled"),
        ])
        msg = self.refuse(ledger, ["the file's active bookings over-admit this host",
                                   "GPU 1 shared slots over capacity (3/2) at 2026-11-29",  # text: local, JSON: UTC
                                   "19:45", "(aaaaaaaa, bbbbbbbb, cccccccc)"])
        self.assertNotIn("dddddddd", msg)

    def test_not_json(self):
        self.refuse("{", ["the file is not valid JSON"])

    def test_missing_file(self):
        path = os.path.join(self.tmp, "missing.json")
        self.refused("admin", "data", "import", path, contains=["cannot read", path, "No such file or directory"])
        self.assertNoDataDir()

    def test_missing_file_message_names_the_path_once(self):
        path = os.path.join(self.tmp, "missing.json")
        self.assertEqual(self.fails("admin", "data", "import", path).count(path), 1)

    def test_usage(self):
        self.refused("admin", "data", "import", contains="give the ledger.json to import")
        self.refused("admin", "data", contains="usage: bk admin data import")
        self.refused("admin", "data", "import", "a.json", "b.json", contains="b.json")
        self.assertNoDataDir()


class UpstreamFixtureTest(BkTestCase):
    """tests/fixtures/upstream-ledger.json, a ledger written by GPUBK 0.2.8 itself."""

    def setUp(self):
        super().setUp()
        if not os.path.exists(FIXTURE):
            self.skipTest(f"{FIXTURE} is missing")
        with open(FIXTURE, encoding="utf-8") as f:
            self.fixture = json.load(f)

    def expected_counts(self):
        recs = self.fixture["reservations"]
        by_status = {s: sum(1 for r in recs if r["status"] == s) for s in ("active", "cancelled", "expired")}
        edits = sum(len(r.get("edit_operations") or []) for r in recs)
        notes = sum(len(r.get("notifications") or []) for r in recs)
        ops = sum(1 + len(r.get("edit_operations") or []) + (1 if r.get("cancel_operation") else 0) for r in recs)
        return len(recs), by_status, edits, notes, ops

    def test_import_summary_matches_the_file(self):
        out = self.ok("admin", "data", "import", FIXTURE)
        m = SUMMARY.match(out.rstrip("\n"))
        self.assertIsNotNone(m, out)
        total, by_status, edits, notes, ops = self.expected_counts()
        got = [int(x) for x in m.groups()]
        self.assertEqual(got[0], total)
        self.assertEqual(sum(got[1:4]), total)
        self.assertEqual(got[1:4], [by_status["active"], by_status["cancelled"], by_status["expired"]])
        self.assertEqual(got[4:], [edits, notes, ops])

    def test_history_lists_the_original_ids(self):
        self.ok("admin", "data", "import", FIXTURE)
        mine = [r for r in self.fixture["reservations"] if r["uid"] == ME_UID]
        if not mine:
            self.skipTest("the fixture holds no reservation of the current uid")
        out = self.ok("l", "--history")
        for r in mine:
            self.assertIn(f" {r['id'][:8]} {r['mode']:<9} ", out)
        listed = {r["id"]: r for r in self.reservations("--history")}
        self.assertEqual(set(listed), {r["id"] for r in mine})
        for r in mine:
            got = listed[r["id"]]
            self.assertEqual((got["start_at"], got["end_at"], got["gpus"], got["status"]),
                             (r["start_at"], r["end_at"], r["gpus"], r["status"]), r["id"])
        others = [r for r in self.fixture["reservations"] if r["uid"] != ME_UID]
        for r in others:
            self.assertNotIn(r["id"][:8], out)

    def test_edits_and_cancellations_survive(self):
        self.ok("admin", "data", "import", FIXTURE)
        for r in self.fixture["reservations"]:
            if r["uid"] != ME_UID:
                continue
            doc = self.json("history", r["id"], "--json")
            self.assertEqual(len(doc["edits"]), len(r.get("edit_operations") or []), r["id"])
            self.assertEqual(doc["cancellation"] is not None, bool(r.get("cancel_operation")), r["id"])
            if r.get("cancel_operation"):
                self.assertEqual(doc["reservation"]["cancellation"]["reason"], r["cancel_operation"]["reason"])

    def test_invalid_gpus_in_record_2_imports_nothing(self):
        bad = copy.deepcopy(self.fixture)
        bad["reservations"][1]["gpus"] = ["x"]
        path = self.write_json("bad.json", bad)
        msg = self.refused("admin", "data", "import", path, contains="reservations[1].gpus[0]")
        self.assertIn("nothing was imported", msg)
        self.assertNoDataDir()
        # the good file still imports afterwards
        self.assertTrue(self.ok("admin", "data", "import", FIXTURE).startswith("imported: "))

    def test_json_summary(self):
        doc = self.json("admin", "data", "import", FIXTURE, "--json")
        total, by_status, edits, notes, ops = self.expected_counts()
        self.assertEqual((doc["kind"], doc["schema_version"]), ("import", "gpubk.import.v1"))
        self.assertEqual((doc["reservations"], doc["edits"], doc["notifications"], doc["operations"]),
                         (total, edits, notes, ops))


if __name__ == "__main__":
    unittest.main()
