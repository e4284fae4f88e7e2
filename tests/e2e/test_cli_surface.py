"""The command line's surface: --color, the original's commands not built yet, and every command's help."""

import re
import unittest

from bktest import BkTestCase

RED_BK = "\x1b[1;31mbk:\x1b[0m "
YELLOW_WARNING = "\x1b[33mwarning:\x1b[0m "


class ColorTest(BkTestCase):
    """--color=auto|always|never; auto colours only a terminal, and NO_COLOR or TERM=dumb turn it off."""

    def test_always_colours_the_error_prefix(self):
        p = self.bk("--color=always", "frobnicate")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertTrue(p.stderr.startswith(RED_BK + "unknown command: frobnicate"), repr(p.stderr))

    def test_always_as_two_words_and_after_the_command(self):
        p = self.bk("frobnicate", "--color", "always")
        self.assertTrue(p.stderr.startswith(RED_BK), repr(p.stderr))

    def test_always_colours_the_warning_prefix(self):
        p = self.bk("--color=always", "1", "1h", "--cpus", "4")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, YELLOW_WARNING
                         + "this host declares no CPU budget; --cpus is recorded but not enforced\n")

    def test_always_outranks_no_color(self):
        p = self.bk("--color=always", "frobnicate", env={"NO_COLOR": "1"})
        self.assertTrue(p.stderr.startswith(RED_BK), repr(p.stderr))

    def test_never_auto_and_no_color_give_plain_text(self):
        for args, env in [(["--color=never"], {}), (["--color=auto"], {}), ([], {}),
                          ([], {"NO_COLOR": "1", "TERM": "xterm"})]:
            p = self.bk(*args, "frobnicate", env=env)
            self.assertEqual(p.returncode, 2)
            self.assertNotIn("\x1b", p.stderr)
            self.assertTrue(p.stderr.startswith("bk: unknown command: frobnicate"), repr(p.stderr))

    def test_piped_prompt_coloured_only_when_asked(self):
        plain = self.bk(input="frobnicate\nquit\n")
        self.assertNotIn("\x1b", plain.stdout)
        coloured = self.bk("--color=always", input="frobnicate\nquit\n")
        self.assertEqual(coloured.returncode, 0, coloured.stderr)
        self.assertIn("\x1b[1mbk>\x1b[0m " + RED_BK + "unknown command: frobnicate", coloured.stdout)

    def test_a_bad_value_is_refused(self):
        self.refused("--color=sometimes", "l", contains="--color must be auto, always or never")
        self.refused("l", "--color", contains="--color must be auto, always or never")

    def test_a_job_command_keeps_its_own_color_option(self):
        # After `--` the words belong to the job: taken as ours, the bad value would refuse the booking.
        p = self.bk("1", "30m", "--color=never", "--", "ls", "--color=bogus")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.json("j", "--json")["jobs"][0]["job"]["summary"], "ls (+1 args)")

    def test_the_main_help_names_it(self):
        self.assertIn("--color=auto|always|never", self.ok("-h"))


class NotInThisVersionTest(BkTestCase):
    """The original's commands that are not built yet say so, and what to use; other words stay unknown."""

    def test_each_missing_command_says_what_to_use(self):
        for words, use in [(["update", "--apply"], "--version"),
                           (["upgrade"], "--version"), (["broker"], "`bk server`"),
                           (["admin", "init"], "`bk admin -h`"), (["admin", "update"], "--version")]:
            with self.subTest(words=words):
                shown = " ".join(w for w in words[:2] if words[0] == "admin" or w == words[0])
                err = self.refused(*words, contains=f"bk {shown} is not in this version yet; ")
                self.assertIn(use, err)

    def test_json_callers_get_an_error_document(self):
        doc = self.json_error("broker", "--json")
        self.assertIn("bk broker is not in this version yet", doc["error"]["message"])

    def test_unknown_words_stay_unknown_with_a_suggestion(self):
        self.assertIn("did you mean `bk status`?", self.refused("stauts", contains="unknown command: stauts"))
        self.assertIn("did you mean `bk timeline`?", self.refused("timelin", contains="unknown command: timelin"))
        err = self.refused("frobnicate", contains="unknown command: frobnicate; `bk -h` lists the commands")
        self.assertNotIn("did you mean", err)

    def test_admin_data_still_works(self):
        self.assertIn("backup", self.ok("admin", "-h"))
        self.refused("admin", "data", "nope", contains="unknown data command nope")


COMMANDS = ["book", "s", "x", "l", "d", "e", "renew", "slots", "g", "st", "tl", "history", "lg", "n", "info",
            "config", "admin", "agent", "mcp", "skill", "server", "doctor", "reset", "run", "worker", "w",
            "service", "j", "jl", "jr", "shell", "m", "u"]


class CommandHelpTest(BkTestCase):
    """Every command's -h stands on its own and reads cleanly."""

    def test_every_command_has_clean_help(self):
        for c in COMMANDS:
            with self.subTest(command=c):
                out = self.ok(c, "-h")
                self.assertNotIn("Excludes:", out)
                self.assertNotIn("see bk --help", out)
                self.assertNotIn("see `bk --help`", out)

    def test_excluded_options_say_so_in_words(self):
        out = " ".join(self.ok("book", "-h").split())
        self.assertIn(" --start TIME exact start: now, ISO 8601 (naive = UTC) or the -t grammar (not with --at) ", out)
        self.assertIn(" -t,--at TIME exact friendly start: now, +30m, 20:00, \"tomorrow 09:00\", 12-24 09:00 "
                      "(not with --start) ", out)

    def test_option_descriptions_wrap_to_the_terminal(self):
        out = self.ok("book", "-h", env={"COLUMNS": "80"})
        options = out[out.index("Options:\n"):out.index("Examples:")]
        self.assertEqual([line for line in options.splitlines() if len(line) > 80], [])
        self.assertIn("\n  --start TIME                exact start: now, ISO 8601 (naive = UTC) or the\n"
                      "                              -t grammar (not with --at)\n", options)

    def test_needed_positionals_show_without_brackets(self):
        self.assertIn("Usage: bk book [OPTIONS] count duration [memory]\n", self.ok("book", "-h"))
        self.assertIn("Usage: bk exclusive [OPTIONS] count duration [memory]\n", self.ok("x", "-h"))
        self.assertIn("Usage: bk renew [OPTIONS] reservation duration\n", self.ok("renew", "-h"))
        self.assertIn("Usage: bk history [OPTIONS] reservation\n", self.ok("history", "-h"))
        self.assertIn("Usage: bk del [OPTIONS] [reservation]\n", self.ok("d", "-h"))  # asks when absent

    def test_run_lists_its_booking_options(self):
        out = self.ok("run", "-h")
        for option in ["-g,--gpu LIST", "--start TIME", "-m,--mem SIZE", "--op-id ID", "--keep", "--wait"]:
            self.assertRegex(out, r"\n  " + re.escape(option) + " ", option)


if __name__ == "__main__":
    unittest.main()
