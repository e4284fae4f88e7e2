#include "cli/help.h"

namespace bk::cli {

std::string MainHelp() {
  return R"help(GPUBK - shared GPU booking from the terminal

BOOK
  bk 2 1h                        earliest shared slot for two GPUs
  bk book 2 1h                   explicit alias for the same booking
  bk x 1 1h                      earliest exclusive slot
  bk 1 1h --gpu 3 --mem 12g      GPU 3 (a device index) with 12 GiB VRAM per GPU
  bk 1 1h -s 2                   reserve two integer shared slots
  bk 1 1h -t +30m                exact friendly local time (20:00, "tomorrow 09:00")
  bk 1 2h --cpus 4 --ram 32g     declare host CPU and RAM budgets
  bk 1 30m --op-id exp-001       retry-safe: the same ID never books twice
  bk x 1 2h --gpu 1 -- CMD ...   book, then launch CMD at the start (by your worker)

VIEW
  bk st                          live GPU status and your reservations
  bk g [COUNT]                   your GPU now, or a suggestion
  bk tl [WINDOW] [--step auto]   aligned timeline
  bk slots 2 1h                  read-only earliest alternatives
  bk l [--history]               your reservations
  bk history REF                 edits and cancellation of one reservation
  bk lg [--limit 100]            your recent operation log
  bk n                           notifications for you (administrator cancels, reclaims)

MANAGE
  bk e REF --duration 2h         change a reservation (running: end only)
  bk e REF --at 20:00            move a future reservation
  bk renew REF 30m               extend the end, same GPUs, same checks
  bk d REF                       cancel (REF: list number, short ID or full ID)

JOBS AND SHELL
  bk run -- CMD                  run now on your active booking's GPUs
  bk run 1 30m -- CMD            book; run now, or queue for your worker if it starts later
  bk w [start|once|status]       your worker for scheduled commands
  bk service install worker      a systemd user unit for the worker (enables nothing)
  bk j / bk jl REF / bk jr REF   list jobs, show a job's log, retry a failed job
  eval "$(bk shell init)"        this shell sees only the GPUs you booked (bk_gpu_refresh)

MONITOR AND USAGE
  bk m [--once] [--json]         sample GPUs, record usage, reclaim no-shows (private mode)
  bk u [users|events|samples]    usage history, e.g. bk u users --since 30d

AGENTS
  bk agent context --compact     machine-readable context (bk.agent.v1)
  bk agent recommend 1 2h        read-only legal placement
  bk agent operation OP_ID       what a retry-safe write did
  bk mcp                         MCP server on stdio
  bk skill install --agent codex|claude

SHARED SERVER (no sudo)
  bk server init --directory DIR --gpu-count 8 --cpus 64 --ram 256g
  bk server connect DIR/config.json
  bk server serve --config DIR/config.json     keep it running in tmux
  bk server status | disconnect

SETUP
  bk config [--json]             effective configuration and where it came from
  bk doctor [--strict] [--json]  read-only health check: ledger, daemon, monitor, worker
  bk admin data import FILE      load a ledger.json of the Python original
  bk admin data backup FILE      consistent copy of the live ledger (also on a server)
  bk admin data verify [FILE]    integrity check plus the calendar's invariants

TIME AND POLICY
  Durations: 30m, 1h30m, 1d, multiples of the booking slot (default 5m).
  No start: the earliest legal slot from now. -t/--at: exact, never moved.
  GPU 1 is a device index (--gpu 1); the first number is a GPU count.
  --json prints the bk.agent.v1 document; errors become kind "error".

Run `bk COMMAND --help` or `bk help COMMAND` for options.
)help";
}

}  // namespace bk::cli
