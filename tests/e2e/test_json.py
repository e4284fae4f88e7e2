"""Machine-readable output: --json / --compact documents and JSON errors."""

import json
import re
import unittest

from bktest import ME_NAME, ME_UID, BkTestCase, sim_gpu

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
RESERVATION_KEYS = {"cancellation", "cpus", "edit_count", "end_at", "expected_memory_mb_per_gpu", "gpus", "id", "job",
                    "mine", "mode", "ram_mb", "share_capacity_units_per_gpu", "share_units_per_gpu", "short_id",
                    "start_at", "status", "uid", "username"}


class JsonTestCase(BkTestCase):

    def assertPublicReservation(self, r):
        self.assertTrue(RESERVATION_KEYS <= set(r), RESERVATION_KEYS - set(r))
        self.assertRegex(r["id"], UUID)
        self.assertEqual(r["short_id"], r["id"][:8])
        self.assertRegex(r["start_at"], ISO_Z)
        self.assertRegex(r["end_at"], ISO_Z)
        self.assertLess(r["start_at"], r["end_at"])
        self.assertIn(r["mode"], ("shared", "exclusive"))
        self.assertIn(r["status"], ("active", "cancelled", "expired"))
        self.assertTrue(all(isinstance(g, int) for g in r["gpus"]))


class BookingResultTest(JsonTestCase):

    def test_booking_result_fields(self):
        p = self.bk("1", "30m", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertEqual(len(p.stdout.splitlines()), 1)  # one line, nothing else on stdout
        doc = json.loads(p.stdout)
        self.assertEqual(doc["schema_version"], "bk.agent.v1")
        self.assertEqual(doc["kind"], "booking_result")
        self.assertEqual(doc["status"], "created")
        self.assertEqual(doc["warnings"], [])
        self.assertIsNone(doc["worker"])
        self.assertEqual(doc["allocator"]["source"], "builtin")
        self.assertEqual(set(doc["node"]), {"hostname", "id", "schema"})
        r = doc["reservation"]
        self.assertPublicReservation(r)
        self.assertEqual(r["gpus"], [0])
        self.assertEqual(r["mode"], "shared")
        self.assertEqual(r["start_at"], "2026-11-29T18:45:00Z")
        self.assertEqual(r["end_at"], "2026-11-29T19:15:00Z")
        self.assertEqual(r["share_units_per_gpu"], 1)
        self.assertEqual(r["share_capacity_units_per_gpu"], 2)
        self.assertIsNone(r["cpus"])
        self.assertIsNone(r["ram_mb"])
        self.assertEqual((r["uid"], r["username"], r["mine"]), (ME_UID, ME_NAME, True))
        self.assertEqual((r["status"], r["edit_count"], r["cancellation"], r["job"]), ("active", 0, None, None))
        [sel] = doc["allocation"]["selected"]
        self.assertEqual(sel["gpu"], 0)
        self.assertEqual(sel["live_status"], "unknown")
        self.assertEqual(sel["live_reason"], "live state unavailable")
        self.assertIsInstance(sel["load_score"], float)

    def test_compact_is_the_same_document(self):
        a = self.json("1", "30m", "--compact", "--op-id", "c-1")
        b = self.json("1", "30m", "--json", "--op-id", "c-1")
        self.assertEqual(a["reservation"], b["reservation"])
        self.assertEqual((a["status"], b["status"]), ("created", "exists"))

    def test_exclusive_and_queued(self):
        a = self.book("x", "1", "1h", "--gpu", "2")
        self.assertEqual(a["reservation"]["mode"], "exclusive")
        self.assertIsNone(a["reservation"]["share_units_per_gpu"])
        self.assertIsNone(a["reservation"]["share_capacity_units_per_gpu"])
        self.assertEqual(a["allocator"]["source"], "fixed-gpu")
        b = self.book("1", "30m", "--gpu", "2")
        self.assertEqual(b["status"], "queued")
        self.assertEqual(b["reservation"]["start_at"], "2026-11-29T19:45:00Z")

    def test_share_and_memory(self):
        r = self.book("2", "1h", "12g", "--share", "2")["reservation"]
        self.assertEqual(r["share_units_per_gpu"], 2)
        self.assertEqual(r["expected_memory_mb_per_gpu"], 12288)
        self.assertEqual(len(r["gpus"]), 2)

    def test_seed_command_on_an_8_gpu_host(self):
        self.use_sim([sim_gpu(i, name="NVIDIA H100 80GB HBM3", total=81559) for i in range(8)])
        self.env.update({"BK_HOST_CPUS": "64", "BK_HOST_RAM_MB": "524288"})
        p = self.bk("1", "2h", "--gpu", "1", "--mem", "24g", "--cpus", "4", "--ram", "32g", "--op-id",
                    "experiment-001", "--json")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        doc = json.loads(p.stdout)
        self.assertEqual((doc["kind"], doc["status"]), ("booking_result", "created"))
        r = doc["reservation"]
        self.assertPublicReservation(r)
        self.assertEqual(r["gpus"], [1])
        self.assertEqual(r["expected_memory_mb_per_gpu"], 24576)
        self.assertEqual(r["cpus"], 4)
        self.assertEqual(r["ram_mb"], 32768)
        self.assertEqual(r["start_at"], "2026-11-29T18:45:00Z")
        self.assertEqual(r["end_at"], "2026-11-29T20:45:00Z")
        self.assertEqual(doc["allocator"]["source"], "fixed-gpu")
        [sel] = doc["allocation"]["selected"]
        self.assertEqual((sel["gpu"], sel["live_status"], sel["memory_total_mb"]), (1, "idle", 81559))
        # the retry is answered from the ledger
        again = self.json("1", "2h", "--gpu", "1", "--mem", "24g", "--cpus", "4", "--ram", "32g", "--op-id",
                          "experiment-001", "--json")
        self.assertEqual(again["status"], "exists")
        self.assertEqual(again["reservation"]["id"], r["id"])
        self.assertEqual(again["allocator"]["source"], "idempotent-replay")
        [again_sel] = again["allocation"]["selected"]  # the GPU the first answer selected
        self.assertEqual(again_sel["gpu"], 1)

    def test_seed_command_without_host_budgets_warns_in_the_document(self):
        self.use_sim([sim_gpu(i) for i in range(8)])
        p = self.bk("1", "2h", "--gpu", "1", "--mem", "24g", "--cpus", "4", "--ram", "32g", "--op-id",
                    "experiment-001", "--json")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        doc = json.loads(p.stdout)
        self.assertEqual(doc["reservation"]["cpus"], 4)
        self.assertEqual(len(doc["warnings"]), 2)
        self.assertIn("no CPU budget", doc["warnings"][0])

    def test_busy_gpu_in_allocation(self):
        self.use_sim()
        doc = self.book("1", "30m", "--gpu", "1")
        [sel] = doc["allocation"]["selected"]
        self.assertEqual((sel["gpu"], sel["live_status"], sel["live_reason"]), (1, "busy", "user=alice pid=4242"))
        self.assertIn("selected GPU is currently busy; live task end time is unknown", doc["warnings"])
        self.assertEqual(self.last.stderr, "")


class OtherDocumentsTest(JsonTestCase):

    def test_list(self):
        doc = self.json("l", "--json")
        self.assertEqual(doc, {"kind": "reservations", "reservations": [], "schema_version": "bk.agent.v1",
                               "total": 0, "truncated": False})
        ids = [self.book_id("1", "30m", "-t", t) for t in ("20:00", "19:00", "21:00")]
        doc = self.json("l", "--json")
        self.assertEqual((doc["total"], doc["truncated"]), (3, False))
        self.assertEqual([r["id"] for r in doc["reservations"]], [ids[1], ids[0], ids[2]])
        for r in doc["reservations"]:
            self.assertPublicReservation(r)
        doc = self.json("l", "--json", "-n", "2")
        self.assertEqual((doc["total"], doc["truncated"], len(doc["reservations"])), (3, True, 2))
        self.assertEqual(self.json("ls", "--compact"), self.json("list", "--json"))

    def test_list_history(self):
        a = self.book_id("1", "30m")
        self.ok("d", a)
        self.assertEqual(self.json("l", "--json")["reservations"], [])
        [r] = self.json("l", "--json", "--history")["reservations"]
        self.assertEqual((r["id"], r["status"]), (a, "cancelled"))
        self.assertEqual(r["cancellation"]["kind"], "owner")
        self.assertEqual(r["cancellation"]["reason"], "cancelled by reservation owner")

    def test_history(self):
        rid = self.book_id("1", "30m", "-t", "20:00")
        self.ok("e", rid, "-d", "1h")
        doc = self.json("history", rid[:8], "--json")
        self.assertEqual(doc["schema_version"], "gpubk.reservation-history.v1")
        self.assertEqual(doc["kind"], "reservation-history")
        self.assertEqual(doc["reservation"]["id"], rid)
        self.assertIsNone(doc["cancellation"])
        [edit] = doc["edits"]
        self.assertEqual(edit["before"]["end_at"], "2026-11-29T20:30:00Z")
        self.assertEqual(edit["after"]["end_at"], "2026-11-29T21:00:00Z")
        self.assertEqual(edit["actor_uid"], ME_UID)
        self.assertEqual([e["action"] for e in doc["events"]], ["add", "edit"])
        self.assertEqual(doc["notifications"], [])
        self.ok("d", rid)
        doc = self.json("history", rid, "--compact")
        self.assertEqual(doc["reservation"]["status"], "cancelled")
        # The original's raw cancel operation keeps its kind and signature.
        c = doc["cancellation"]
        self.assertEqual((c["action"], c["kind"], c["actor_uid"]), ("cancel", "owner", ME_UID))
        self.assertRegex(c["signature"], r"^[0-9a-f]{64}$")

    def test_log(self):
        doc = self.json("lg", "--json")
        self.assertEqual(doc["schema_version"], "gpubk.audit.v1")
        self.assertEqual(doc["kind"], "operation-log")
        self.assertEqual(doc["events"], [])
        self.assertEqual(doc["limit"], 100)
        rid = self.book_id("1", "30m")
        self.ok("d", rid)
        doc = self.json("lg", "--json", "--limit", "5")
        self.assertEqual(doc["limit"], 5)
        self.assertEqual(doc["uid"], ME_UID)
        self.assertEqual([e["action"] for e in doc["events"]], ["add", "cancel"])
        for e in doc["events"]:
            self.assertEqual(e["reservation_id"], rid)
            self.assertEqual(e["result"], "ok")
            self.assertRegex(e["ts"], ISO_Z)
            self.assertEqual(e["gpus"], [0])
        self.assertEqual(len(self.json("lg", "--json", "--limit", "1")["events"]), 1)

    def test_config(self):
        p = self.bk("config", "--json")
        self.assertEqual(p.returncode, 0)
        self.assertGreater(len(p.stdout.splitlines()), 10)  # indented
        doc = json.loads(p.stdout)
        self.assertEqual(doc["schema_version"], "gpubk.config.v1")
        self.assertEqual(doc["kind"], "configuration")
        self.assertEqual(doc["deployment"], "private")
        self.assertEqual(doc["config_file"], {"path": f"{self.data_dir}/config.json", "present": False})
        eff = doc["effective"]
        self.assertEqual(eff["slot_minutes"], 5)
        self.assertEqual(eff["max_shared_users"], 2)
        self.assertEqual(eff["booking_horizon_days"], 30)
        self.assertEqual(eff["data_dir"], self.data_dir)
        self.assertIsNone(eff["host_cpus"])
        self.assertEqual(doc["sources"]["gpu_count"], "environment")
        self.assertIn("BK_GPU_COUNT", doc["environment_overrides"])
        self.assertEqual(doc["ledger_policy"]["status"], "unbound")
        compact = self.bk("config", "--compact")
        self.assertEqual(len(compact.stdout.splitlines()), 1)
        self.assertEqual(json.loads(compact.stdout), doc)
        self.assertNoDataDir()

    def test_config_values_from_the_environment_keep_their_type(self):
        eff = self.json("config", "--json", env={"BK_SLOT_MINUTES": "10", "BK_HOST_CPUS": "8"})["effective"]
        self.assertEqual(eff["gpu_count"], 4)
        self.assertEqual(eff["slot_minutes"], 10)
        self.assertEqual(eff["host_cpus"], 8)

    def test_config_values_from_the_file_keep_their_type(self):
        import os
        os.makedirs(self.data_dir)
        self.write_json("data/config.json", {"slot_minutes": 10})
        doc = self.json("config", "--json", env={"BK_GPU_COUNT": None})
        self.assertEqual(doc["effective"]["slot_minutes"], 10)
        self.assertEqual(doc["sources"]["slot_minutes"], "file")
        self.assertTrue(doc["config_file"]["present"])

    def test_cancel(self):
        rid = self.book_id("1", "30m")
        doc = self.json("d", rid[:8], "--json")
        self.assertEqual(doc["reservation"]["status"], "cancelled")
        self.assertEqual(doc["reservation"]["cancellation"]["kind"], "owner")


class JsonErrorTest(JsonTestCase):

    def test_usage_errors_stay_on_stderr_as_argparse_does(self):
        # A command line the option grammar refuses is not a document, even with --json (the original's
        # channel): one "bk:" line on stderr, nothing on stdout, exit 2.
        for args, needle in [
            (["1", "30m", "--frobnicate", "--json"], "--frobnicate"),
            (["1", "30m", "-g", "0", "-e", "1", "--json"], "--gpu excludes --exclude-gpu"),
            (["l", "extra", "--compact"], "extra"),
            (["1", "30m", "--s", "1", "--json"], "ambiguous option: --s could match"),
        ]:
            self.assertIn(needle, self.refused(*args), args)
        # Agents read every error as a document, usage errors included.
        self.assertIn("--bogus", self.json_error("agent", "context", "--bogus")["error"]["message"])

    def test_unique_prefixes_of_long_options(self):
        doc = self.json("1", "30m", "--gp", "2", "--sh", "2", "--js")
        self.assertEqual(doc["reservation"]["gpus"], [2])
        self.assertEqual(doc["reservation"]["share_units_per_gpu"], 2)
        self.assertEqual(self.json("l", "--js", "--hist")["kind"], self.json("l", "--json", "--history")["kind"])

    def test_errors_become_documents(self):
        self.ok("1", "30m", "--gpu", "3", "-q")  # an existing ledger (empty data dirs: test_bad_input)
        for args, needle in [
            (["1", "30", "--json"], "duration must look like 30m"),
            (["1", "30m", "--gpu", "9", "--json"], "out of range"),
            (["d", "zzz", "--json"], "reservation not found"),
            (["l", "-n", "0", "--json"], "--limit"),
            (["history", "zzz", "--json"], "zzz"),
            (["lg", "--limit", "0", "--json"], "--limit"),
            (["1", "30m", "--share", "3", "--compact"], "share slots must be between 1 and 2"),
            (["nosuchcommand", "--json"], "unknown command"),
        ]:
            doc = self.refused_json(*args, contains=needle)
            self.assertEqual(set(doc), {"error", "kind", "node", "schema_version"}, args)

    def test_error_document_fields(self):
        doc = self.json_error("1", "0m", "--json")
        self.assertEqual(doc["error"]["message"], "duration must be positive")
        self.assertEqual(doc["error"]["type"], "BookingError")
        self.assertEqual(doc["error"]["code"], "invalid")
        self.assertEqual(set(doc["node"]), {"hostname", "id", "schema"})

    def test_conflict_error(self):
        self.ok("x", "1", "1h", "--gpu", "0", "-q")
        doc = self.refused_json("1", "30m", "--gpu", "0", "-t", "now", "--json")
        self.assertIn("exclusive conflict on GPU 0; nearest available: GPU=0 2026-11-29T19:45:00Z", doc["error"]["message"])
        self.assertEqual(doc["error"]["code"], "conflict")

    def test_config_error_with_json(self):
        doc = self.json_error("l", "--json", env={"BK_SLOT_MINUTES": "7"})
        self.assertIn("slot_minutes", doc["error"]["message"])
        self.assertNoDataDir()

    def test_json_after_double_dash_is_not_json(self):
        self.fails("1", "30m", "--", "--json")


if __name__ == "__main__":
    unittest.main()
