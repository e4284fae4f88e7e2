"""Requests no GPU here can ever satisfy are refused at once, naming the limit.

An 80 GB card will never hold a 90 GB job, shared or exclusive: the answer is
an exit-2 line saying what the largest card offers and what to ask for, not a
week-long search reported as a full calendar (which invites retries), and
never a booking made without a word.
"""

import unittest

from bktest import BkTestCase, sim_gpu

H100 = 81559  # MiB of an H100 80GB


class ImpossibleRequests(BkTestCase):
    def setUp(self):
        super().setUp()
        self.use_sim([sim_gpu(0, total=H100), sim_gpu(1, total=H100)])

    def test_shared_vram_above_every_card(self):
        msg = self.refused("1", "1h", "90g", contains=["90.0GiB of VRAM per GPU is more than any GPU here",
                                                         "79.6GiB", "512MiB reserve", "ask for at most 79g"])
        self.assertNotIn("no available slot", msg)

    def test_exclusive_vram_above_every_card_books_nothing(self):
        self.refused("x", "1", "1h", "90g", contains=["more than any GPU here can hold (GPU 0 has 79.6GiB)",
                                                      "ask for at most 79g"])
        self.assertEqual(self.reservations(), [])

    def test_what_fits_still_books(self):
        self.ok("x", "1", "1h", "79g")
        self.ok("1", "1h", "79g")

    def test_more_vram_than_enough_cards_names_how_many_fit(self):
        self.use_sim([sim_gpu(0, total=H100), sim_gpu(1, total=40960)])
        self.refused("x", "2", "1h", "60g",
                     contains="fits only 1 of the 2 eligible GPU(s), and 2 were requested")

    def test_pinned_gpu_too_small(self):
        self.use_sim([sim_gpu(0, total=H100), sim_gpu(1, total=40960)])
        self.refused("x", "1", "1h", "60g", "-g", "1",
                     contains="more than GPU 1 can hold (GPU 1 has 40.0GiB)")
        self.ok("x", "1", "1h", "60g")

    def test_slots_and_agent_recommend_refuse_too(self):
        self.refused("slots", "1", "1h", "90g", contains="more than any GPU here can hold")
        doc = self.refused_json("agent", "rec", "1", "1h", "--mem", "90g",
                                contains="more than any GPU here can hold")
        self.assertEqual(doc["error"]["code"], "invalid")

    def test_edit_to_an_impossible_size_is_refused(self):
        ref = self.book_id("1", "1h", "-t", "+2h")
        self.refused("e", ref, "-m", "90g", contains="is more than GPU 0 can hold")

    def test_more_gpus_cpus_or_ram_than_the_host(self):
        self.refused("3", "1h", contains="GPU count must be between 1 and 2")
        env = {"BK_HOST_CPUS": "16", "BK_HOST_RAM_MB": "65536"}
        self.refused("1", "1h", "--cpus", "32", env=env, contains="exceeds this host's budget of 16 CPUs")
        self.refused("1", "1h", "--ram", "100g", env=env, contains="exceeds this host's budget of 64.0GiB")


if __name__ == "__main__":
    unittest.main()


class QueuedReason(BkTestCase):
    """A booking that had to wait says why the requested start was refused."""

    def test_host_budget_full_with_idle_gpus(self):
        env = {"BK_HOST_CPUS": "8", "BK_HOST_RAM_MB": "65536"}
        self.ok("1", "1h", "--cpus", "8", "-q", env=env)
        out = self.ok("1", "1h", "--cpus", "4", env=env)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("queued: "), out)
        self.assertEqual(lines[1], "why queued: host CPU budget full (request 4 CPUs, already declared 8 of 8)")
        doc = self.json("1", "1h", "--json", env=env)
        self.assertEqual(doc["status"], "queued")
        self.assertIn("host CPU budget full", doc["queued_reason"])

    def test_created_bookings_have_no_reason(self):
        self.assertNotIn("why queued", self.ok("1", "1h"))
        self.assertNotIn("queued_reason", self.json("1", "1h", "--json"))

    def test_quiet_keeps_one_line(self):
        self.ok("x", "4", "1h", "-q")
        out = self.ok("1", "1h", "-q")
        self.assertEqual(len(out.splitlines()), 1, out)
        self.assertTrue(out.startswith("queued: "), out)
