"""Unread notices and usage privacy on a shared server with real Unix accounts.

Needs root like test_server_users (it reuses its accounts and fixture); skipped otherwise.
"""

import unittest

import test_server_users as users
from server_fixture import USER_B, Account


@users.needs_root
class ServerNotices(users.ServerCase):
    """An administrator's cancel is announced on every summary until `bk n` reads it."""

    # The users tests' server: the owner serves, USER_A and USER_B are connected.
    setUpClass = classmethod(users.SharedServerUsers.setUpClass.__func__)
    _teardown = classmethod(users.SharedServerUsers._teardown.__func__)
    tearDownClass = classmethod(users.SharedServerUsers.tearDownClass.__func__)

    def notice_lines(self, text):
        return [line for line in text.splitlines() if line.startswith("notice: ")]

    def test_admin_cancel_is_announced_until_read(self):
        self.ok(self.a, "n")  # whatever earlier tests left unread
        self.assertEqual(self.notice_lines(self.ok(self.a, "st")), [])
        self.assertNotIn("unread_notifications", self.json_ok(self.a, "l", "--json"))
        victim = self.book(self.a, "1", "45m")
        ref = victim["id"][:8]
        self.ok(self.owner, "d", ref, "--reason", "GPU maintenance")
        line = "notice: 1 unread (admin cancelled %s: GPU maintenance); read it with `bk n`" % ref
        for args in (("st",), ("l",), ()):
            self.assertEqual(self.notice_lines(self.ok(self.a, *args)), [line], args)
        self.assertEqual(self.json_ok(self.a, "l", "--json")["unread_notifications"], 1)
        self.assertEqual(self.json_ok(self.a, "agent", "context")["unread_notifications"], 1)
        env = self.ok(self.a, "shell", "env")
        self.assertIn("BK_UNREAD_NOTICE=" + line, env.splitlines())
        # The bystander has nothing unread about it; the JSON listing marks nothing.
        self.assertNotIn(ref, " ".join(self.notice_lines(self.ok(self.b, "st"))))
        self.json_ok(self.a, "n", "--json")
        self.assertEqual(self.json_ok(self.a, "l", "--json")["unread_notifications"], 1)
        # `bk n` shows it in the original's table and marks it read, through the daemon.
        text = self.ok(self.a, "n")
        self.assertTrue(text.startswith("When                    Ref      Level     Event\n"), text)
        self.assertIn(ref, text)
        for args in (("st",), ("l",)):
            self.assertEqual(self.notice_lines(self.ok(self.a, *args)), [], args)
        self.assertNotIn("unread_notifications", self.json_ok(self.a, "l", "--json"))
        self.assertEqual(self.json_ok(self.a, "agent", "context")["unread_notifications"], 0)
        self.assertIn("BK_UNREAD_NOTICE=\n", self.ok(self.a, "shell", "env"))
        # Read ones stay in the archive.
        again = self.ok(self.a, "n")
        self.assertTrue(again.startswith("No unread notifications; the newest read ones:\n"), again)
        self.assertIn(ref, self.ok(self.a, "n", "--all"))

    def test_usage_rows_are_private_by_default(self):
        text = self.ok(self.a, "u", "users", "--since", "1h")
        self.assertIn("visibility: your own rows only (this server's usage_visibility is self; its owner sees "
                      "everyone's)", text)
        doc = self.json_ok(self.a, "u", "users", "--since", "1h", "--json")
        self.assertEqual(doc["visibility"], "self")
        self.assertEqual(doc["query"]["uid"], self.a.uid)
        self.assertTrue(all(u["uid"] == self.a.uid for u in doc["users"]), doc["users"])
        events = self.json_ok(self.a, "u", "events", "--since", "1h", "--json")
        self.assertEqual(events["query"]["uid"], self.a.uid)
        line = self.fails(self.a, "u", "users", "--user", USER_B)
        self.assertIn("usage_visibility is self", line)
        # The owner sees everyone's, without the note.
        owner = self.json_ok(self.owner, "u", "users", "--since", "1h", "--json")
        self.assertNotIn("visibility", owner)
        self.assertIsNone(owner["query"]["uid"])
        self.assertNotIn("visibility:", self.ok(self.owner, "u", "users", "--since", "1h"))


@users.needs_root
class ServerLabVisibility(users.ServerCase):
    """usage_visibility lab: everyone sees everyone's usage rows."""

    def test_lab_shows_everyone(self):
        self.own_server()
        self.b = Account.make(USER_B, self.base)
        self.srv.init(*users.INIT_ARGS)
        self.srv.patch_config(usage_visibility="lab")
        self.srv.start()
        for who in (self.a, self.b):
            self.ok(who, "server", "connect", self.srv.config)
        doc = self.json_ok(self.a, "u", "users", "--since", "1h", "--json")
        self.assertNotIn("visibility", doc)
        self.assertIsNone(doc["query"]["uid"])
        other = self.json_ok(self.a, "u", "users", "--user", USER_B, "--since", "1h", "--json")
        self.assertEqual(other["query"]["uid"], self.b.uid)
        self.assertEqual(self.json_ok(self.a, "config", "--json")["effective"]["usage_visibility"], "lab")


if __name__ == "__main__":
    unittest.main()
