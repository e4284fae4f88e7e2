#include "cli/help.h"

#include <string_view>

namespace bk::cli {

std::string MainHelp(bool cluster) {
  std::string text = R"help(GPUBK - shared GPU booking from the terminal

START HERE
  bk st                         what is free now, and your bookings
  bk t                          terminal UI: look, book, edit
  bk 1 2h                       book one GPU for 2 hours, earliest slot
  bk run 1 30m -- CMD           book and run CMD on the booked GPU
  bk l / bk d 1                 your bookings / cancel the first
  bk info                       who administers this host
  bk a                          book by answering questions
  bk tutorial [--tui]           safe walkthrough on a sandbox

BOOK
  bk 2 1h                       earliest shared slot for two GPUs
  bk book 2 1h                  explicit alias for the same booking
  bk x 1 1h                     earliest exclusive slot
  bk 1 1h --gpu 3 --mem 12g     GPU index 3, 12 GiB VRAM per GPU
  bk 1 1h -s 2                  two integer shared slots
  bk 1 1h -t +30m               exact local time (20:00, tomorrow 9)
  bk 1 2h --cpus 4 --ram 32g    declare host CPU and RAM budgets
  bk 1 30m --op-id exp-001      retry-safe: never books twice
  bk x 1 2h -- CMD ...          book; your worker runs CMD at start
  bk preset save train 2 4h 12g save a booking pattern (bk p: list)
  bk p train [-t 20:00]         book with it; typed options win

VIEW
  bk st                         live GPU status and your bookings
  bk g [COUNT]                  your GPU now, or a suggestion
  bk tl [WINDOW] [--step auto]  aligned timeline
  bk t                          live calendar; book with keys
  bk slots 2 1h                 read-only earliest alternatives
  bk l [--history]              your reservations
  bk history REF                edits and cancellation of one
  bk lg [--limit 100]           your recent operation log
  bk n                          notifications and announcements
  bk login                      your bookings now and soon, notices
  bk login install              show it in every new shell (uninstall)
  bk cal [-o FILE]              your bookings as an iCalendar (--all)
  bk info                       administrator, deployment and policy

MANAGE
  bk e REF --duration 2h        change a booking (running: end only)
  bk e REF --at 20:00           move a future booking
  bk renew REF 30m              extend the end, same GPUs and checks
  bk d REF                      cancel (list number, short or full ID)

JOBS AND SHELL
  bk run -- CMD                 run now on your active booking's GPUs
  bk run 1 30m -- CMD           book; run now, or queue it if later
  bk w [start|once|status]      your worker for scheduled commands
  bk service install worker     systemd user unit for the worker
  bk j / bk jl REF / bk jr REF  jobs, a job's log, retry a job
  eval "$(bk shell init)"       the shell sees only your GPUs
  bk completion bash|zsh|fish   Tab completion for your shell

MONITOR AND USAGE
  bk m [--once] [--json]        sample GPUs, reclaim no-shows
  bk u [users|events|samples]   usage history (bk u users --since 30d)
  bk u limits                   fair-share limits and your use of them

AGENTS
  bk agent context --compact    machine-readable context
  bk agent recommend 1 2h       read-only legal placement
  bk agent operation OP_ID      what a retry-safe write did
  bk mcp                        MCP server on stdio
  bk skill install --agent codex|claude

@CLUSTER@SHARED SERVER (no sudo)
  bk server init --directory DIR --gpu-count 8
  bk server connect DIR/config.json
  bk server serve --config DIR/config.json
  bk server status | disconnect

SETUP
  bk config [--json]            effective settings and their source
  bk doctor [--probe]           health check (--strict: exit 2)
  bk reset [--yes]              empty this private ledger
  bk admin data import [FILE]   load the Python original's ledger
  bk admin data backup FILE     consistent copy of the live ledger
  bk admin data verify [FILE]   integrity and calendar invariants
  bk admin notice publish TEXT  announce to all (list, edit, archive)
  bk admin cancel REF --reason  cancel anyone's booking (owner told)
  bk admin data restore FILE    verified backup in place of the ledger
  bk admin data clear --yes     empty the ledger after a verified backup
  bk admin transfer REF USER    give a booking to another account
  bk admin policy [OPTIONS]     change the running server's policy
  bk admin blackout add S E WHY no bookings in a window (list, edit, rm)
  bk admin maintain             a blackout and its announcement at once
  sudo bk admin install         a system deployment with systemd

TIME AND POLICY
  Durations: 30m, 1h30m, 1d, multiples of the slot (default 5m).
  No start: the earliest legal slot. -t/--at: exact, never moved.
  GPU 1 is a device index (--gpu 1); the first number is a count.
  --json prints the document; errors become kind "error".
  --color=auto|always|never: colour for terminals (NO_COLOR: none).

Run `bk COMMAND --help` or `bk help COMMAND` for options.
)help";
  // Several hosts only where a catalog of them exists, as the original.
  static constexpr std::string_view kCluster = R"help(SEVERAL HOSTS (bk c -h)
  bk c                          every host's GPUs and bookings
  bk c rec 2 1h                 best host first, and why
  bk c 2 1h                     book on the best host
  bk @gpu-b 1 30m               book on that host only
  bk c d gpu-b/1a2b3c           cancel on its host (e, renew too)

)help";
  size_t at = text.find("@CLUSTER@");
  text.replace(at, 9, cluster ? std::string(kCluster) : "");
  return text;
}

}  // namespace bk::cli
