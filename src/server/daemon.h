#pragma once
// `bk server serve`: one process owns the ledger (locking_mode=EXCLUSIVE) and
// answers JSON-RPC over NDJSON on the server's Unix socket. One event-loop
// thread does all socket I/O without blocking, so an idle or half-open client
// never holds anyone up; requests run one at a time, which is also the single
// writer the ledger wants. Each round of the loop gives every connection one
// read and a few requests, and output is bounded per connection and in total,
// so no client can stall another or grow the daemon.

#include <functional>
#include <string>

#include "base/result.h"
#include "config/config.h"
#include "server/calendar_feed.h"

namespace bk::server {

struct ServeOptions {
  std::string config_path;
  size_t max_clients = 256;         // more connect: the longest-idle one is dropped
  size_t max_line_bytes = 1 << 20;  // a longer request line is refused and the connection closed
  int idle_timeout_ms = 60000;      // no complete request for this long: closed
  int partial_timeout_ms = 10000;   // a started line must finish within this
  // Unsent replies: above this a connection's next requests wait (and are not
  // read) until it reads; a client that never reads is pushed back by the
  // kernel and in the end closed as idle.
  size_t max_output_bytes = 1 << 20;
  // All connections' unsent replies together: above this only connections
  // with nothing pending are served.
  size_t max_total_output_bytes = 16 << 20;
  size_t cache_max_bytes = 4 << 20;  // the read cache's bound
  // How the calendar feeds (calendar_feed_dir) are written: the surfaces'
  // iCalendar encoding, handed down by the command that starts the daemon.
  CalendarRender calendar;
};

// Runs until SIGINT/SIGTERM. Returns the process exit status: 0 after a
// graceful stop, 75 when another instance runs, 77 when not run by the owner.
int Serve(const ServeOptions& options);

}  // namespace bk::server
