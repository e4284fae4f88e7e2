"""Protocol abuse against the shared-server daemon while a normal client keeps getting answers.

Garbage lines, a 2 MiB line, half-open connections, 300 idle connections at once, wrong JSON
types, unknown methods and notifications: each is refused the JSON-RPC 2.0 way (or ignored, for
notifications) and, during and after every abuse, a prober thread pinging on fresh connections,
a long-lived connection and a whole `bk l` process still get prompt answers; the daemon stays up.

Each test has its own server (the daemon as bksrvown when root, else as the current account);
the test talks to the socket itself. Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_server_protocol
"""

import contextlib
import json
import os
import threading
import time
import unittest

from server_fixture import (BK_BIN, OWNER, Account, Rpc, Server, bk_ok, describe, is_root, make_base_dir,
                            poll_until, remove_tree)

MAX_LINE = 1 << 20     # the daemon's line limit
MAX_CLIENTS = 256      # the daemon's connection limit
PARTIAL_TIMEOUT = 10   # seconds a started line may stay unfinished
# Set by ctest in a sanitizer build (make check-asan, check-tsan), where the daemon runs
# ten or more times slower: loads sized for timing limits shrink, and the limits grow.
SANITIZED = bool(os.environ.get("BK_E2E_SANITIZER"))
PROMPT = 5.0 if SANITIZED else 1.0  # seconds: what "promptly" means for one answer


class Prober:
    """A background normal client: fresh connection, server.ping, close, again, until stopped.
    Records every failure and the slowest answer."""

    def __init__(self, path):
        self.path = path
        self.stop_flag = threading.Event()
        self.failures = []
        self.count = 0
        self.slowest = 0.0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop_flag.is_set():
            t0 = time.monotonic()
            try:
                c = Rpc(self.path, timeout=PROMPT * 3)
                try:
                    reply = c.call("server.ping", timeout=PROMPT * 3)
                finally:
                    c.close()
                if "result" not in reply:
                    self.failures.append(repr(reply))
            except Exception as e:  # noqa: BLE001 - every failure is a finding
                self.failures.append(repr(e))
            self.slowest = max(self.slowest, time.monotonic() - t0)
            self.count += 1

    def __enter__(self):
        self.thread.start()
        # Wait until at least one probe has gone through, so the prober is known to work.
        poll_until(lambda: self.count > 0 or self.failures, 10, "the first probe")
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join(10)
        return False


class ProtocolAbuse(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        if not bk_ok():
            self.skipTest("bk binary not found at %s; build it or set BK_BIN" % BK_BIN)
        self.base = make_base_dir("bk-proto-")
        self.addCleanup(remove_tree, self.base)
        owner = Account.make(OWNER, self.base) if is_root() else Account.current(self.base, "owner")
        self.me = Account.current(self.base, "client") if is_root() else owner
        self.srv = Server(self.base, owner)
        self.addCleanup(self.srv.cleanup)
        self.srv.init("--gpu-count", "4", "--cpus", "16", "--ram", "64g")
        self.srv.start()
        self.normal = Rpc(self.srv.socket)  # a long-lived, well-behaved connection
        self.addCleanup(self.normal.close)
        self.assertIn("result", self.normal.call("server.ping"))

    def tearDown(self):
        # Whatever a test did, the daemon still stops cleanly.
        if self.srv.alive():
            self.assertEqual(self.srv.stop(), 0, self.srv.log())

    # -- helpers

    def prober(self):
        return Prober(self.srv.socket)

    def assertProber(self, prober):
        self.assertEqual(prober.failures, [], "the normal client was refused during the abuse")
        self.assertGreater(prober.count, 0)
        self.assertLess(prober.slowest, PROMPT, "a normal ping took %.3f s during the abuse" % prober.slowest)

    def assertServing(self, normal=True):
        """The daemon is alive and answers promptly: the long-lived connection (when it should
        still be open), a fresh connection, and a whole `bk l` process."""
        self.assertTrue(self.srv.alive(), "the daemon died:\n" + self.srv.log())
        if normal:
            t0 = time.monotonic()
            self.assertIn("result", self.normal.call("server.ping", timeout=PROMPT))
            self.assertLess(time.monotonic() - t0, PROMPT)
        t0 = time.monotonic()
        self.srv.ping(timeout=PROMPT)
        self.assertLess(time.monotonic() - t0, PROMPT)
        args = ("l", "--json")
        p = self.me.bk(*args, env=self.me.env(BK_CONFIG_FILE=self.srv.config), timeout=10)
        self.assertEqual(p.returncode, 0, describe(args, p))
        self.assertEqual(json.loads(p.stdout)["kind"], "reservations")

    def assertError(self, reply, code, id_=None, kind=None, contains=None):
        self.assertIsNotNone(reply)
        self.assertEqual(reply.get("jsonrpc"), "2.0", reply)
        self.assertNotIn("result", reply, reply)
        self.assertEqual(reply["id"], id_, reply)
        self.assertEqual(reply["error"]["code"], code, reply)
        self.assertIsInstance(reply["error"]["message"], str)
        if kind is not None:
            self.assertEqual((reply["error"].get("data") or {}).get("kind"), kind, reply)
        if contains is not None:
            self.assertIn(contains, reply["error"]["message"], reply)

    def everyone_total(self):
        reply = self.normal.call("reservations.list", {"everyone": True, "history": True})
        return reply["result"]["total"]

    def fd_count(self):
        return len(os.listdir("/proc/%d/fd" % self.srv.proc.pid))

    # ------------------------------------------------------------------ tests

    def test_garbage_lines_each_get_a_parse_error(self):
        garbage = [b"hello", b"{", b"[1, 2", b"\x00\x01\x02", b"\xff\xfe\xfd", b"{'single': 'quotes'}",
                   b'{"jsonrpc":"2.0","id":1,"method":"server.ping"', b"}{", b"nul\x00", b"--",
                   b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', b"1 2", b"true false"]
        c = Rpc(self.srv.socket)
        self.addCleanup(c.close)
        with self.prober() as prober:
            for g in garbage:
                c.send_raw(g + b"\n")
                self.assertError(c.read(PROMPT), -32700)
            # Blank lines are skipped; CRLF ends a line as well.
            c.send_raw(b"\n  \n\r\n")
            c.send_raw(b'{"jsonrpc":"2.0","id":"crlf","method":"server.ping"}\r\n')
            reply = c.read(PROMPT)
            self.assertEqual(reply["id"], "crlf", reply)
            self.assertIn("result", reply)
            # All of it in one write: one reply per line, in order.
            c.send_raw(b"\n".join(garbage) + b"\n")
            for _ in garbage:
                self.assertError(c.read(PROMPT), -32700)
            # Valid JSON that is not a request object.
            for line in (b"[]", b"1", b'"ping"', b"null", b'[{"jsonrpc":"2.0","id":1,"method":"server.ping"}]'):
                c.send_raw(line + b"\n")
                self.assertError(c.read(PROMPT), -32600)
            # The same connection still works.
            self.assertIn("result", c.call("server.ping", timeout=PROMPT))
        self.assertProber(prober)
        self.assertServing()

    def test_a_key_named_twice_is_refused_not_last_wins(self):
        c = Rpc(self.srv.socket)
        self.addCleanup(c.close)
        before = self.everyone_total()
        dupes = [b'{"jsonrpc":"2.0","id":1,"id":2,"method":"server.ping"}',
                 b'{"jsonrpc":"2.0","id":3,"method":"booking.create","params":'
                 b'{"count":1,"duration_seconds":1800,"count":2}}',
                 b'{"jsonrpc":"2.0","id":4,"method":"server.ping","method":"server.ping"}']
        for line in dupes:
            c.send_raw(line + b"\n")
            reply = c.read(PROMPT)
            self.assertError(reply, -32600)
            self.assertIn("twice", reply["error"]["message"])
        self.assertEqual(self.everyone_total(), before)
        self.assertIn("result", c.call("server.ping", timeout=PROMPT))

    def test_2mib_line_is_refused_and_closed(self):
        # Just under the limit is an ordinary (invalid-params) request.
        near = Rpc(self.srv.socket)
        self.addCleanup(near.close)
        pad = "x" * (MAX_LINE - 200)
        near.send({"jsonrpc": "2.0", "id": 1, "method": "server.ping", "params": {"pad": pad}})
        self.assertError(near.read(5), -32602, id_=1, kind="invalid", contains="pad")
        self.assertIn("result", near.call("server.ping"))

        big = Rpc(self.srv.socket, timeout=10)
        self.addCleanup(big.close)
        line = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "server.ping",
                           "params": {"pad": "y" * (2 << 20)}}).encode() + b"\n"
        sent = []

        def send_big():
            try:
                big.sock.sendall(line)
                sent.append("all")
            except OSError as e:  # the daemon may close before it has read everything
                sent.append(repr(e))

        with self.prober() as prober:
            sender = threading.Thread(target=send_big, daemon=True)
            sender.start()
            reply = big.read(10)
            self.assertError(reply, -32600, contains="exceeds")
            self.assertTrue(big.closed_by_peer(5), "the connection of the oversized line stayed open")
            sender.join(10)
            self.assertFalse(sender.is_alive())
            # Others were not affected; the same happens again without harm.
            self.assertIn("result", near.call("server.ping", timeout=PROMPT))
            again = Rpc(self.srv.socket, timeout=10)
            self.addCleanup(again.close)
            # A 2 MiB line without any newline at all.
            t = threading.Thread(target=lambda: _quiet_send(again.sock, b"z" * (2 << 20)), daemon=True)
            t.start()
            self.assertError(again.read(10), -32600)
            self.assertTrue(again.closed_by_peer(5))
            t.join(10)
        self.assertProber(prober)
        self.assertServing()

    def test_half_open_connections_do_not_block_anyone(self):
        halves = []
        for i in range(20):
            c = Rpc(self.srv.socket)
            self.addCleanup(c.close)
            c.send_raw(b'{"jsonrpc":"2.0","id":%d,"method":"server.pi' % i)
            halves.append(c)
        silent = []
        for _ in range(20):  # connected, nothing sent at all
            c = Rpc(self.srv.socket)
            self.addCleanup(c.close)
            silent.append(c)
        t_open = time.monotonic()
        with self.prober() as prober:
            self.assertServing()
            # A request split across writes is fine when it completes.
            c = Rpc(self.srv.socket)
            self.addCleanup(c.close)
            c.send_raw(b'{"jsonrpc":"2.0","id":"split",')
            self.assertServing()
            c.send_raw(b'"method":"server.ping"}\n')
            self.assertEqual(c.read(PROMPT)["id"], "split")
            # The half lines are dropped after the partial-line timeout; their connections closed.
            for h in halves:
                left = PARTIAL_TIMEOUT + 5 - (time.monotonic() - t_open)
                self.assertTrue(h.closed_by_peer(max(0.0, left)),
                                "a half-open connection was still open %.1f s later" % (time.monotonic() - t_open))
            # Not before the timeout (nothing had been answered on them either).
            self.assertGreaterEqual(time.monotonic() - t_open, PARTIAL_TIMEOUT - 1)
            for h in halves:
                self.assertEqual(h.buf, b"", "a half line was answered")
            self.assertServing()
        self.assertProber(prober)
        # The silent ones are within their idle allowance and still served when they speak.
        for c in silent[:3]:
            self.assertIn("result", c.call("server.ping", timeout=PROMPT))

    def test_300_idle_connections_evict_the_longest_idle(self):
        fds_before = self.fd_count()
        idle = []
        with self.prober() as prober:
            for _ in range(300):
                idle.append(Rpc(self.srv.socket))
            for c in idle:
                self.addCleanup(c.close)
            self.assertServing(normal=False)
            # At most MAX_CLIENTS connections are held: the longest idle were closed to make room
            # (the long-lived normal connection, idle since setUp, first; then the oldest of the 300).
            need = 300 + 1 - MAX_CLIENTS - 1
            closed = set()

            def evicted():
                closed.update(i for i, c in enumerate(idle) if i not in closed and c.closed_by_peer(0))
                return len(closed) >= need

            poll_until(evicted, 5, "at least %d evictions" % need)
            self.assertEqual(sorted(closed), list(range(len(closed))), "the evicted were not the longest idle")
            self.assertTrue(self.normal.closed_by_peer(1), "the longest-idle connection was not evicted")
            self.assertLessEqual(self.fd_count(), fds_before + MAX_CLIENTS)
            # The newest idle connections are still served when they speak.
            for c in idle[-5:]:
                self.assertIn("result", c.call("server.ping", timeout=PROMPT))
        self.assertProber(prober)
        self.assertServing(normal=False)

    def test_wrong_json_types_are_refused(self):
        c = Rpc(self.srv.socket)
        self.addCleanup(c.close)
        before = self.everyone_total()

        def req(method, params, id_=1):
            return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}

        invalid_params = [
            req("booking.create", {"count": "1", "duration_seconds": 1800}),
            req("booking.create", {"count": 1, "duration_seconds": 1800, "gpus": "0"}),
            req("booking.create", {"count": 1, "duration_seconds": 1800, "gpus": ["0"]}),
            req("booking.create", {"count": 1, "duration_seconds": 1800, "gpus": [-1]}),
            req("booking.create", {"count": 1.5, "duration_seconds": 1800}),
            req("booking.create", {"count": True, "duration_seconds": 1800}),
            req("booking.create", {"count": 1, "duration_seconds": "30m"}),
            req("booking.create", {"count": 1, "duration_seconds": 1800, "mode": "both"}),
            req("booking.create", {"count": 1, "duration_seconds": 1800, "op_id": 7}),
            req("booking.create", {"count": 1, "duration_seconds": 1800, "cpus": None, "extra": 1}),
            req("booking.create", {"duration_seconds": 1800}),
            req("booking.create", {"count": 0, "duration_seconds": 1800}),
            req("booking.create", [1, 1800]),
            req("booking.create", "count=1"),
            req("booking.create", 1),
            req("booking.cancel", {"ref": 5}),
            req("booking.cancel", {"ref": ""}),
            req("booking.renew", {"ref": "abc", "extend_seconds": "1h"}),
            req("booking.edit", {"ref": "abc", "allow_queue": "yes"}),
            req("reservations.list", {"limit": "5"}),
            req("reservations.list", {"history": "yes"}),
            req("reservations.list", {"limit": 0}),
            req("audit.log", {"limit": 1.0}),
            req("notifications.list", {"limit": -1}),
            req("reservation.history", {"ref": ["abc"]}),
            req("operation.get", {"op_id": {}}),
            req("status.get", {"from": "now"}),
            req("placement.slots", {"request": {"count": "1", "duration_seconds": 1800}}),
            req("placement.slots", {"request": {"count": 1, "duration_seconds": 1800}, "limit": 99}),
            req("server.ping", {"verbose": True}),
            req("policy.check", []),
            req("admin.import", {"ledger_json": {"version": 1}}),
        ]
        with self.prober() as prober:
            for r in invalid_params:
                c.send(r)
                reply = c.read(PROMPT)
                with self.subTest(params=r["params"], method=r["method"]):
                    self.assertError(reply, -32602, id_=1, kind="invalid")
            invalid_requests = [
                ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "server.ping"}, None),
                ({"jsonrpc": "2.0", "id": [1], "method": "server.ping"}, None),
                ({"jsonrpc": "2.0", "id": 1.5, "method": "server.ping"}, None),
                ({"jsonrpc": "2.0", "id": True, "method": "server.ping"}, None),
                ({"jsonrpc": "1.0", "id": 3, "method": "server.ping"}, 3),
                ({"id": 4, "method": "server.ping"}, 4),
                ({"jsonrpc": "2.0", "id": 6, "method": 5}, 6),
                ({"jsonrpc": "2.0", "id": 7}, 7),
                ({"jsonrpc": "2.0", "id": 8, "method": "server.ping", "uid": 0}, 8),
            ]
            for r, id_ in invalid_requests:
                c.send(r)
                reply = c.read(PROMPT)
                with self.subTest(request=r):
                    self.assertError(reply, -32600, id_=id_)
            # Members of the wrong type (a daemon that trips over them dies for everyone).
            for i, value in enumerate((2.0, 2, None, True, ["2.0"], {"v": "2.0"})):
                c.send({"jsonrpc": value, "id": 100 + i, "method": "server.ping"})
                reply = c.read(PROMPT)
                with self.subTest(jsonrpc=value):
                    self.assertError(reply, -32600, id_=100 + i)
            for i, value in enumerate((None, {"x": 1}, ["server.ping"], True)):
                c.send({"jsonrpc": "2.0", "id": 200 + i, "method": value})
                reply = c.read(PROMPT)
                with self.subTest(method=value):
                    self.assertError(reply, -32600, id_=200 + i)
            for method in ("booking.delete", "", "server.shutdown", "Server.Ping", "rpc.discover"):
                c.send({"jsonrpc": "2.0", "id": "m", "method": method})
                self.assertError(c.read(PROMPT), -32601, id_="m")
            # String ids are echoed; the connection survived all of it.
            reply = c.call("server.ping")
            self.assertIn("result", reply)
            c.send({"jsonrpc": "2.0", "id": "abc", "method": "server.ping"})
            self.assertEqual(c.read(PROMPT)["id"], "abc")
            # Application errors carry -32000 and a kind.
            c.send(req("booking.cancel", {"ref": "ffffffff"}))
            self.assertError(c.read(PROMPT), -32000, id_=1, kind="not-found")
        self.assertProber(prober)
        self.assertEqual(self.everyone_total(), before, "a refused request wrote something")
        self.assertServing()

    def test_notifications_get_no_reply(self):
        c = Rpc(self.srv.socket)
        self.addCleanup(c.close)
        c.send({"jsonrpc": "2.0", "method": "server.ping"})
        c.send({"jsonrpc": "2.0", "method": "reservations.list", "params": {"limit": "5"}})
        c.send({"jsonrpc": "2.0", "method": "no.such.method"})
        c.send({"jsonrpc": "2.0", "method": "status.get", "params": [1]})
        c.send({"jsonrpc": "2.0", "id": 42, "method": "server.ping"})
        reply = c.read(PROMPT)
        self.assertEqual(reply.get("id"), 42, "a notification was answered: %r" % reply)
        self.assertIn("result", reply)
        self.assertEqual(c.buf, b"")
        self.assertFalse(c.closed_by_peer(0.2) or c.buf, "more replies than requests: %r" % c.buf)
        self.assertServing()

    def test_many_requests_on_one_connection(self):
        c = Rpc(self.srv.socket, timeout=30)
        self.addCleanup(c.close)
        n = 200 if SANITIZED else 3000
        lines = []
        for i in range(n):
            method = "reservations.list" if i % 10 == 0 else "server.ping"
            lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": method}).encode())
        t0 = time.monotonic()
        with self.prober() as prober:
            c.send_raw(b"\n".join(lines) + b"\n")  # pipelined: everything before reading anything
            for i in range(n):
                reply = c.read(10)
                self.assertEqual(reply.get("id"), i, reply)
                self.assertIn("result", reply, reply)
            # And a conversation: request, answer, request, answer.
            for i in range(500):
                self.assertIn("result", c.call("reservations.list" if i % 2 else "server.ping"))
        self.assertProber(prober)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertServing()


def _quiet_send(sock, data):
    with contextlib.suppress(OSError):
        sock.sendall(data)


if __name__ == "__main__":
    unittest.main()
