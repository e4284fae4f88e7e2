"""`bk a` / `bk add`: a booking asked for at a terminal, wrong answers asked again,
booked as the equivalent `bk COUNT DURATION ...` would book it."""

import os
import re

from bktest import BK_BIN, BkTestCase
from pty_session import PtySession

COUNT = "how many GPUs (1-4) ["
DURATION = "how long (e.g. 30m, 1h30m, 2d) ["
MODE = "shared or exclusive ["
GPUS = "which GPUs (auto, or indexes such as 0,1) ["
MEMORY = "VRAM per GPU (auto, or e.g. 12g) ["
START = "start (now, +30m, 14:00, tomorrow 9, 12-24 09:00) ["
CONFIRM = "book it? [y/N] "


class GuidedBookingTest(BkTestCase):

    def guided(self, *args, env=None):
        e = dict(self.env)
        e.update(env or {})
        return PtySession(BK_BIN, list(args) or ["a"], e, self.tmp)

    def test_wrong_answers_are_asked_again_then_it_books_like_the_command(self):
        s = self.guided()
        for prompt, wrong, why, right in [
                (COUNT, "9", "  not accepted: GPU count must be between 1 and 4; answer a number of GPUs, 1-4\n", "2"),
                (DURATION, "7m", "not accepted: duration must be a positive multiple of 5 minutes", "1h"),
                (MODE, "both", "not accepted: --mode must be s, shared, x or exclusive", ""),
                (GPUS, "0", "--gpu lists 1 GPU(s) but the request is for 2", "0,1"),
                (MEMORY, "lots", "not accepted: memory must look like 12g or 4096m", "12g"),
                (START, "yesterday", "answer now, +30m, 14:00, \"tomorrow 9\" or 12-24 09:00", "20:00")]:
            s.answer(prompt, wrong)
            self.assertIn(why, s.expect(prompt))  # the same question again
            s.send(right + "\n")
        review = s.expect(CONFIRM)
        self.assertIn("GPUs:    0,1\nstart:   2026-11-29 20:00 +0000\nend:     2026-11-29 21:00 +0000\n", review)
        self.assertIn("command: bk 2 1h --gpu 0,1 --mem 12g --at 20:00\n", review)
        s.send("y\n")
        self.assertEqual(s.wait(), 0, s.output)
        booked = s.output.rpartition(CONFIRM + "y\n")[2]

        [r] = self.reservations()
        self.assertEqual((r["gpus"], r["mode"], r["start_at"], r["end_at"], r["expected_memory_mb_per_gpu"]),
                         ([0, 1], "shared", "2026-11-29T20:00:00Z", "2026-11-29T21:00:00Z", 12288))
        # The same output as the command shown, on a ledger of its own.
        alone = self.ok("2", "1h", "--gpu", "0,1", "--mem", "12g", "--at", "20:00",
                        env={"BK_DATA_DIR": os.path.join(self.tmp, "other")})
        mask = lambda text: re.sub(r"\b[0-9a-f]{8}\b", "ID", text)  # noqa: E731
        self.assertEqual(mask(booked), mask(alone))

    def test_a_request_that_cannot_be_placed_asks_again_with_the_answers_kept(self):
        self.ok("x", "4", "1h", "--at", "20:00")
        s = self.guided("add")
        for prompt in (COUNT, DURATION, MODE, GPUS, MEMORY):
            s.answer(prompt, "")
        s.answer(START, "20:00")
        self.assertIn("cannot be placed: ", s.expect("Change what does not fit (Enter keeps an answer), "
                                                     "or Ctrl-D to cancel.\n"))
        self.assertIn("command: bk 1 30m --at 20:00\n", s.output)
        for prompt in (COUNT, DURATION, MODE, GPUS, MEMORY):
            s.answer(prompt, "")
        s.expect(START + "20:00]: ")
        s.send("21:00\n")
        self.assertIn("command: bk 1 30m --at 21:00\n", s.expect(CONFIRM))
        s.send("yes\n")
        self.assertEqual(s.wait(), 0, s.output)
        self.assertEqual(sorted(r["start_at"] for r in self.reservations()),
                         ["2026-11-29T20:00:00Z", "2026-11-29T21:00:00Z"])

    def test_the_earliest_start_books_without_at(self):
        s = self.guided()
        for prompt in (COUNT, DURATION):
            s.answer(prompt, "")
        s.answer(MODE, "x")
        for prompt in (GPUS, MEMORY, START):
            s.answer(prompt, "")
        self.assertIn("command: bk x 1 30m\n", s.expect(CONFIRM))
        s.send("y\n")
        self.assertEqual(s.wait(), 0, s.output)
        [r] = self.reservations()
        self.assertEqual((r["mode"], r["start_at"]), ("exclusive", "2026-11-29T18:45:00Z"))

    def test_end_of_input_at_a_question_cancels(self):
        before = self.snapshot()
        s = self.guided()
        s.answer(COUNT, "2")
        s.expect(DURATION)
        s.end_of_input()
        self.assertEqual(s.wait(), 1, s.output)
        self.assertTrue(s.output.endswith("\ncancelled; nothing booked\n"), s.output)
        self.assertUnchanged(before)

    def test_anything_but_yes_at_the_end_cancels(self):
        before = self.snapshot()
        s = self.guided()
        for prompt in (COUNT, DURATION, MODE, GPUS, MEMORY, START):
            s.answer(prompt, "")
        s.answer(CONFIRM, "")
        self.assertEqual(s.wait(), 1, s.output)
        self.assertTrue(s.output.endswith("book it? [y/N] \ncancelled; nothing booked\n"), s.output)
        self.assertUnchanged(before)

    def test_host_budgets_are_asked_for_when_the_policy_has_them(self):
        s = self.guided(env={"BK_HOST_CPUS": "16", "BK_HOST_RAM_MB": "65536"})
        for prompt in (COUNT, DURATION, MODE, GPUS, MEMORY, START):
            s.answer(prompt, "")
        s.answer("host CPUs [1]: ", "99")
        self.assertIn("not accepted: --cpus 99 exceeds this host's budget of 16 CPUs", s.expect("host CPUs [1]: "))
        s.send("4\n")
        s.answer("host RAM (e.g. 32g) [", "8g")
        self.assertIn("command: bk 1 30m --cpus 4 --ram 8g\n", s.expect(CONFIRM))
        s.send("y\n")
        self.assertEqual(s.wait(), 0, s.output)

    def test_without_a_terminal_it_names_the_flags_in_one_line(self):
        for word in ("a", "add"):
            with self.subTest(word=word):
                msg = self.refused(word)
                self.assertEqual(msg, "bk add asks its questions at a terminal; without one, book with flags: "
                                      "bk [x] COUNT DURATION [--gpu LIST] [--mem SIZE] [--at TIME]")
        self.assertNoDataDir()

    def test_help_and_extra_words(self):
        self.assertIn("Usage: bk add", self.ok("add", "-h"))
        self.refused("add", "2", "1h")
