"""`ledger.generation` on a server's socket: what a screen that stays open polls to learn that
anything was written, without reading anything else.

USER_A asks on the socket as itself; the server's owner books, dry-runs and cancels with `bk`.
Needs root like test_server_users (real accounts); skipped otherwise.
"""

import unittest

from server_fixture import rpc_as

import test_server_users as users


def ask(n):
    return [{"jsonrpc": "2.0", "id": i, "method": "ledger.generation"} for i in range(1, n + 1)]


@users.needs_root
class ChangeCounterTest(users.ServerCase):

    def setUp(self):
        self.own_server()
        self.srv.init(*users.INIT_ARGS)
        self.srv.start()
        self.ok(self.owner, "server", "connect", self.srv.config)

    def generation(self, n=1):
        """`n` answers on one connection of USER_A's; all must be the same number."""
        replies = rpc_as(self.a, self.srv.socket, ask(n))
        values = set()
        for reply in replies:
            self.assertIn("result", reply, reply)
            self.assertEqual(list(reply["result"]), ["generation"], reply)
            values.add(reply["result"]["generation"])
        self.assertEqual(len(values), 1, replies)
        return values.pop()

    def test_another_users_writes_move_the_counter(self):
        g0 = self.generation(3)  # asked again and again: nothing moves it
        booked = self.book(self.owner, "1", "1h", "-t", "20:00")
        g1 = self.generation()
        self.assertGreater(g1, g0)
        # Reads, refusals and dry runs write nothing.
        self.mine(self.owner)
        self.ok(self.owner, "st")
        self.fails(self.owner, "d", "ffffffff")
        self.ok(self.owner, "renew", "1", "30m", "--dry-run")
        self.assertEqual(self.generation(), g1)
        self.ok(self.owner, "d", booked["id"])
        self.assertGreater(self.generation(), g1)

    def test_params_are_refused(self):
        reply = rpc_as(self.a, self.srv.socket, [
            {"jsonrpc": "2.0", "id": 1, "method": "ledger.generation", "params": {"since": 3}}])[0]
        self.assertEqual(reply["error"]["code"], -32602, reply)
        self.assertIn("since", reply["error"]["message"])


if __name__ == "__main__":
    unittest.main()
