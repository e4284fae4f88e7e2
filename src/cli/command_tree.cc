#include "cli/command_tree.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cli/context.h"
#include "sys/clock.h"
#include "sys/local_zone.h"

namespace bk::cli {

bool CommandNode::Named(std::string_view word) const {
  return name == word || std::ranges::find(aliases, word) != aliases.end();
}

namespace {

using Nodes = std::vector<CommandNode>;

CommandNode Sub(std::string name, std::vector<std::string> aliases, std::string summary, Nodes subs = {},
                std::string usage = "") {
  return {std::move(name), std::move(aliases), "", std::move(summary), std::move(subs), std::move(usage)};
}

Nodes Build() {
  const std::string kBook = "BOOK", kView = "VIEW", kManage = "MANAGE", kJobs = "JOBS AND SHELL",
                    kMonitor = "MONITOR AND USAGE", kAgents = "AGENTS", kHosts = "SEVERAL HOSTS",
                    kServer = "SHARED SERVER", kSetup = "SETUP";
  auto top = [](std::string group, std::string name, std::vector<std::string> aliases, std::string summary,
                Nodes subs = {}, std::string usage = "") {
    return CommandNode{std::move(name),    std::move(aliases), std::move(group),
                       std::move(summary), std::move(subs),    std::move(usage)};
  };
  return {
      top(kBook, "book", {},
          "book COUNT GPUs for DURATION at the earliest legal slot (`bk COUNT DURATION` is the same)"),
      top(kBook, "shared", {"s", "auto"}, "book in shared mode (the default)"),
      top(kBook, "exclusive", {"x"}, "book whole GPUs: nobody shares them"),
      top(kBook, "add", {"a"}, "book by answering questions"),
      top(kBook, "preset", {"p", "presets"}, "save, list and book with booking patterns",
          {Sub("list", {"ls", "l"}, "your presets and the lab's"),
           Sub("save", {"set"}, "save a pattern under a name"), Sub("show", {"get"}, "one preset in full"),
           Sub("rm", {"delete", "del"}, "remove one of yours")},
          "bk preset [list|save|show|rm] ... | bk p NAME [BOOKING OPTIONS]"),
      top(kView, "status", {"st"}, "live GPU status and your bookings"),
      top(kView, "gpu", {"g"}, "your GPU now, or a suggestion"),
      top(kView, "timeline", {"tl"}, "an aligned timeline of every GPU"),
      top(kView, "tui", {"t"}, "the terminal UI: a live calendar where keys book, edit and cancel"),
      top(kView, "slots", {"slot", "free", "sl"}, "read-only earliest alternatives for a booking"),
      top(kView, "list", {"l", "ls"}, "your reservations"),
      top(kView, "history", {"hist"}, "the edits and cancellation of one reservation"),
      top(kView, "log", {"lg"}, "your recent operation log"),
      top(kView, "notifications", {"n", "notify", "notification"}, "notifications and announcements"),
      top(kView, "login", {"notice"}, "your bookings now and soon, and notices",
          {Sub("install", {}, "show it in every new shell"), Sub("uninstall", {}, "stop showing it")},
          "bk login [install|uninstall] [OPTIONS]"),
      top(kView, "cal", {"calendar"}, "your bookings as an iCalendar for the calendar you use"),
      top(kView, "info", {"i", "contact", "about"}, "who administers this host, the deployment and policy"),
      top(kManage, "edit", {"e"}, "change a booking's start, length, GPUs or size"),
      top(kManage, "renew", {"extend"}, "extend a booking's end with the same GPUs and checks"),
      top(kManage, "cancel", {"d", "del", "delete", "rm"}, "cancel a booking"),
      top(kJobs, "run", {"r"}, "run a command on your booked GPUs, booking first if asked"),
      top(kJobs, "worker", {}, "run your worker: it starts booked commands at their start"),
      top(kJobs, "w", {}, "your worker's status, or start it",
          {Sub("start", {}, "run the worker"), Sub("once", {}, "launch what is due and exit"),
           Sub("status", {}, "the worker's status")},
          "bk w [start|once|status] [OPTIONS]"),
      top(kJobs, "service", {}, "write, show or remove the systemd user unit of your worker or monitor"),
      top(kJobs, "jobs", {"j"}, "your jobs"),
      top(kJobs, "job-log", {"jl"}, "a job's log"),
      top(kJobs, "job-retry", {"jr"}, "run a failed job again"),
      top(kJobs, "shell", {}, "the hook that lets a shell see only the GPUs you booked"),
      top(kJobs, "completion", {}, "print the Tab-completion script for bash, zsh or fish"),
      top(kMonitor, "monitor", {"m"}, "sample the GPUs and reclaim bookings nobody uses"),
      top(kMonitor, "usage", {"u"}, "usage history recorded by the monitor"),
      top(kAgents, "agent", {"ai"}, "JSON for coding agents: context, recommend, edit, renew, cancel",
          {Sub("context", {"ctx"}, "machine-readable context"),
           Sub("recommend", {"rec"}, "a read-only legal placement"), Sub("edit", {"e"}, "change a booking"),
           Sub("renew", {"extend"}, "extend a booking"), Sub("cancel", {"del"}, "cancel a booking"),
           Sub("operation", {"op"}, "what a retry-safe write did")},
          "bk agent context|recommend|edit|renew|cancel|operation ..."),
      top(kAgents, "mcp", {}, "the MCP server on stdio"),
      top(kAgents, "skill", {}, "install the bundled agent Skill",
          {Sub("install", {}, "install it for an agent"), Sub("status", {}, "where it is installed"),
           Sub("show", {}, "print one of its files"), Sub("path", {}, "where a file of it is")},
          "bk skill install|status|show|path ..."),
      top(kHosts, "cluster", {"c"}, "several GPU hosts over SSH: status, booking on the best host",
          {Sub("status", {"st", "list", "ls", "l", "context", "ctx"}, "every host's GPUs and bookings"),
           Sub("check", {"health", "doctor"}, "whether every host is ready"),
           Sub("probe", {"p"}, "learn a new host's node ID and print its add command"),
           Sub("recommend", {"rec"}, "the best host first, and why"),
           Sub("book", {"b"}, "book on the best host"),
           Sub("exclusive", {"x"}, "book whole GPUs on the best host"),
           Sub("shared", {"s", "auto"}, "book shared GPUs on the best host"),
           Sub("edit", {"e"}, "change a booking on its host"),
           Sub("renew", {}, "extend a booking on its host"),
           Sub("cancel", {"d", "del"}, "cancel a booking on its host"),
           Sub("usage", {"u"}, "per-person usage across hosts")},
          "bk c [status|check|probe|rec|book|x|s|e|renew|d|u] ... | bk @NODE COUNT DURATION ..."),
      top(kServer, "server", {}, "a shared ledger without sudo: init, connect, serve",
          {Sub("init", {}, "make a server directory", {},
               "bk server init --directory DIR [--gpu-count N] [--cpus N] [--ram SIZE] [--access world|group "
               "--group NAME] [--slot-minutes M] [--max-shared N]"),
           Sub("connect", {}, "use a server's ledger from now on", {}, "bk server connect DIR/config.json"),
           Sub("disconnect", {}, "go back to the private ledger", {}, "bk server disconnect"),
           Sub("status", {}, "which ledger this account uses, and its daemon", {},
               "bk server status [--json]"),
           Sub("serve", {}, "run the daemon (broker and monitor)", {},
               "bk server serve --config DIR/config.json")},
          "bk server init|connect|disconnect|status|serve ..."),
      top(kSetup, "config", {"cfg"}, "effective settings and where each comes from"),
      top(kSetup, "doctor", {"dr"}, "health check"),
      top(kSetup, "reset", {}, "empty this private ledger"),
      top(kSetup, "tutorial", {"tour", "intro"}, "a safe walkthrough on a sandbox"),
      top(kSetup, "admin", {}, "administration of the deployment and its ledger",
          {Sub("data", {}, "the ledger: import, verify, backup, restore, clear",
               {Sub("import", {}, "load the Python original's ledger"),
                Sub("verify", {}, "integrity and calendar invariants"),
                Sub("backup", {}, "a consistent copy of the live ledger"),
                Sub("restore", {}, "a verified backup in place of the ledger"),
                Sub("clear", {}, "empty the ledger after a verified backup")}),
           Sub("policy", {"gpu-policy"}, "change the running server's policy"),
           Sub("blackout", {}, "windows without bookings",
               {Sub("list", {}, "the windows"), Sub("add", {}, "close a window"),
                Sub("edit", {}, "change a window"), Sub("rm", {"remove"}, "reopen a window")}),
           Sub("maintain", {}, "a blackout and its announcement at once"),
           Sub("notice", {}, "announcements to every user",
               {Sub("publish", {}, "announce"), Sub("list", {"ls"}, "the notices"),
                Sub("edit", {}, "change one"), Sub("archive", {"rm", "remove"}, "take one down")}),
           Sub("cancel", {}, "cancel anyone's booking (the owner is told)"),
           Sub("transfer", {}, "give a booking to another account"),
           Sub("install", {}, "a system deployment with systemd"),
           Sub("uninstall", {}, "remove the system deployment"),
           Sub("services", {}, "the system deployment's systemd unit"),
           Sub("cluster", {}, "the catalog of several hosts",
               {Sub("status", {"list", "ls"}, "the catalog"), Sub("init", {}, "start a catalog"),
                Sub("add", {}, "add a host"), Sub("rm", {"remove"}, "remove a host"),
                Sub("enable", {}, "let bk c use a host"), Sub("disable", {}, "keep bk c off a host"),
                Sub("set", {"update"}, "change a host's target, priority or timeout"),
                Sub("map", {}, "one person's accounts across hosts"), Sub("unmap", {}, "undo a map"),
                Sub("delete", {"destroy"}, "remove the catalog")})},
          "bk admin data|policy|blackout|maintain|notice|cancel|transfer|install|uninstall|services|cluster "
          "..."),
  };
}

}  // namespace

const std::vector<CommandNode>& CommandTree() {
  static const Nodes tree = Build();
  return tree;
}

const std::vector<std::string>& CommandGroups() {
  static const std::vector<std::string> groups = {
      "BOOK",   "VIEW",          "MANAGE",        "JOBS AND SHELL", "MONITOR AND USAGE",
      "AGENTS", "SEVERAL HOSTS", "SHARED SERVER", "SETUP"};
  return groups;
}

const CommandNode* FindCommand(const std::vector<std::string>& words, size_t* consumed) {
  const Nodes* level = &CommandTree();
  const CommandNode* found = nullptr;
  size_t n = 0;
  for (const auto& w : words) {
    auto it = std::ranges::find_if(*level, [&](const CommandNode& c) { return c.Named(w); });
    if (it == level->end()) break;
    found = &*it;
    level = &it->subcommands;
    ++n;
  }
  if (consumed) *consumed = n;
  return found;
}

std::vector<SpecInfo> Describe(const std::vector<std::string>& words) {
  Context ctx;
  ctx.clock = std::make_unique<sys::RealClock>();
  ctx.zone = std::make_unique<sys::LocalZone>();
  FILE* sink = std::fopen("/dev/null", "w");
  if (!sink) return {};
  ctx.out = ctx.err = sink;
  // A command that prints its help with printf rather than ctx.out must not
  // reach a completion's stdout either.
  std::fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  dup2(fileno(sink), STDOUT_FILENO);
  ArgSpec::Observer observer;
  std::vector<std::string> args = words;
  args.push_back("--help");
  (void)Dispatch(ctx, args);
  std::fflush(stdout);
  if (saved >= 0) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
  }
  std::fclose(sink);
  return observer.seen();
}

}  // namespace bk::cli
