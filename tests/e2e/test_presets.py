"""Presets: `bk preset save|list|show|rm` and booking with `bk p NAME [options]`, the user's
presets file and its checks, the lab's presets from the configuration, and the policy checked
when a preset is saved and again when it is used."""

import json
import os
import unittest

from bktest import BkTestCase

HEADER = "Name                             Mode GPUs Duration Share VRAM/GPU Placement    From"


class PresetsTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.dir = os.path.join(self.env["HOME"], ".config", "gpubk")
        self.file = os.path.join(self.dir, "presets.json")

    def test_save_list_show_use_and_delete(self):
        self.assertEqual(self.ok("p"), "No presets yet. Save one with `bk preset save NAME 1 30m`.\n")
        self.assertEqual(self.ok("preset", "save", "train", "2", "4h", "12g", "-s", "2"),
                         "saved preset: train (use with `bk p train`)\n")
        self.ok("presets", "set", "debug", "1", "30m", "-x", "--gpu", "0")
        self.ok("p", "save", "avoid", "1", "1h", "-e", "2,3")
        self.assertEqual(self.ok("p", "list").splitlines(), [
            HEADER,
            "avoid                            shar    1       1h     1     auto except 2,3   you",
            "debug                            excl    1      30m     -     auto GPU 0        you",
            "train                            shar    2       4h     2  12.0GiB auto         you"])
        self.assertEqual(self.ok("p"), self.ok("p", "ls"))
        st = os.stat(self.file)
        self.assertEqual((st.st_mode & 0o777, os.stat(self.dir).st_mode & 0o777), (0o600, 0o700))
        with open(self.file, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["schema_version"], "gpubk.presets.v1")
        self.assertEqual([p["name"] for p in doc["presets"]], ["avoid", "debug", "train"])
        shown = json.loads(self.ok("p", "show", "train"))
        self.assertEqual((shown["count"], shown["duration_seconds"], shown["expected_memory_mb"],
                          shown["share_units"], shown["source"]), (2, 14400, 12288, 2, "user"))
        self.assertEqual(self.ok("p", "get", "train", "--json").count("\n"), 1)
        # Booking with it: the booking command's result, the preset's shape.
        r = self.book("p", "train")["reservation"]
        self.assertEqual((r["mode"], len(r["gpus"]), r["share_units_per_gpu"]), ("shared", 2, 2))
        x = self.book("p", "debug")["reservation"]
        self.assertEqual((x["mode"], x["gpus"]), ("exclusive", [0]))
        self.assertEqual(self.ok("p", "rm", "avoid"), "deleted preset: avoid\n")
        self.assertEqual(self.refused("p", "delete", "avoid"), "preset not found: avoid")
        self.assertEqual(self.refused("p", "nosuch"), "preset not found: nosuch")

    def test_typed_options_win_over_the_preset(self):
        self.ok("p", "save", "pinned", "1", "1h", "-g", "0", "--mem", "4g")
        r = self.book("p", "pinned", "-t", "20:00", "-g", "2", "--mem", "8g")["reservation"]
        self.assertEqual((r["gpus"], r["start_at"], r["expected_memory_mb_per_gpu"]), ([2], "2026-11-29T20:00:00Z", 8192))
        r = self.book("p", "pinned", "-e", "0,1", "6g")["reservation"]  # -e replaces the pinned GPU
        self.assertNotIn(r["gpus"][0], (0, 1))
        self.assertEqual(r["expected_memory_mb_per_gpu"], 6144)
        self.assertIn("Usage: bk p pinned", self.ok("p", "pinned", "-h"))

    def test_saving_refuses_what_no_booking_could_be(self):
        for args, words in ((("list", "1", "30m"), "is a `bk preset` subcommand"),
                            (("a b", "1", "30m"), "preset name must be 1-32"),
                            (("big", "5", "1h"), "it books 5 GPUs and 4 are enabled"),
                            (("odd", "1", "7m"), "not a multiple of the 5m slot"),
                            (("wide", "1", "1h", "-s", "3"), "it takes 3 shared slots and a GPU has 2"),
                            (("x1", "1", "1h", "-x", "-s", "2"), "--share applies to shared presets"),
                            (("gone", "1", "1h", "-g", "7"), "GPU 7"),
                            (("start", "1", "1h", "-t", "20:00"), "-t")):
            with self.subTest(args=args):
                self.assertIn(words, self.fails("p", "save", *args))
        self.assertFalse(os.path.exists(self.file))
        self.assertNoDataDir()  # the policy was read without creating a ledger

    def test_a_preset_the_policy_no_longer_allows_is_refused_at_use(self):
        self.ok("p", "save", "long", "1", "4h")
        self.ok("p", "save", "zero", "1", "1h", "-g", "0")
        msg = self.refused("p", "long", env={"BK_MAX_BOOKING_DURATION_HOURS": "2"})
        self.assertEqual(msg, "preset long does not fit this deployment's policy: its duration 4h is longer than "
                              "the longest booking, 2h; save it again (`bk preset save long ...`)")
        self.assertIn("it pins GPU 0, which is not enabled", self.refused("p", "zero", env={"BK_DISABLED_GPUS": "0"}))
        doc = self.refused_json("p", "zero", "--json", env={"BK_DISABLED_GPUS": "0"})
        self.assertIn("pins GPU 0", doc["error"]["message"])

    def write_file(self, text, mode=0o600):
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        with open(self.file, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(self.file, mode)

    def test_bad_files_are_refused_in_one_line(self):
        self.ok("p", "save", "train", "1", "1h")
        os.chmod(self.file, 0o644)
        self.assertIn("is open to group or others (mode 0644); run chmod 600", self.fails("p"))
        self.assertIn("mode 0644", self.fails("p", "save", "other", "1", "1h"))
        os.chmod(self.file, 0o600)
        real = os.path.join(self.tmp, "elsewhere.json")
        os.rename(self.file, real)
        os.symlink(real, self.file)
        self.assertIn("is a symbolic link", self.fails("p", "list"))
        os.unlink(self.file)
        self.write_file("{not json")
        self.assertIn("is not valid JSON", self.fails("p"))
        self.write_file(json.dumps({"schema_version": "gpubk.presets.v1",
                                    "presets": [{"name": "t", "mode": "shared", "count": 0,
                                                 "duration_seconds": 3600}]}))
        self.assertIn("preset t: count must be a whole number from 1 to 1024", self.fails("p", "t"))
        self.write_file(" " * (1024 * 1024 + 1))
        self.assertIn("larger than 1 MiB", self.fails("p"))
        doc = self.json_error("p", "list", "--json")
        self.assertIn("larger than 1 MiB", doc["error"]["message"])

    def test_lab_presets_from_the_configuration(self):
        lab = {"train": {"mode": "exclusive", "count": 1, "duration_seconds": 3600},
               "big": {"mode": "shared", "count": 4, "duration_seconds": 7200, "expected_memory_mb": 40960}}
        os.makedirs(self.data_dir)
        with open(os.path.join(self.data_dir, "config.json"), "w", encoding="utf-8") as f:
            json.dump({"presets": lab}, f)
        self.assertEqual(self.ok("p").splitlines(), [
            HEADER,
            "big                              shar    4       2h     1  40.0GiB auto         lab",
            "train                            excl    1       1h     -     auto auto         lab"])
        self.ok("p", "save", "train", "2", "30m")
        listed = self.ok("p").splitlines()
        self.assertEqual(listed[2], "train                            shar    2      30m     1     auto auto"
                                    "         you (hides the lab's)")
        doc = self.json("p", "list", "--json")
        self.assertEqual([(p["name"], p["source"], p.get("hides_lab_preset")) for p in doc["presets"]],
                         [("big", "lab", None), ("train", "user", True)])
        self.assertEqual(self.book("p", "train")["reservation"]["mode"], "shared")  # yours wins
        self.assertIn("is the lab's", self.refused("p", "rm", "big"))
        self.ok("p", "rm", "train")
        self.assertEqual(self.book("p", "train")["reservation"]["mode"], "exclusive")
        self.assertEqual(json.loads(self.ok("config", "--json"))["effective"]["presets"], lab)
        self.assertIn("Lab presets: 2", self.ok("info"))
        # A bad lab preset: one line naming the key, the preset and the field.
        with open(os.path.join(self.data_dir, "config.json"), "w", encoding="utf-8") as f:
            json.dump({"presets": {"bad": {"mode": "sometimes", "count": 1, "duration_seconds": 60}}}, f)
        self.assertIn("presets: preset bad: mode must be shared or exclusive", self.fails("p"))

    def test_help(self):
        out = self.ok("p", "-h")
        for words in ("bk p save NAME COUNT DURATION", "bk p show NAME", "bk p rm NAME", "bk p NAME [booking options]"):
            self.assertIn(words, out)
        self.assertIn("Usage: bk preset save NAME", self.ok("p", "save", "-h"))


if __name__ == "__main__":
    unittest.main()
