#include "cli/manpages.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "base/strings.h"
#include "base/version.h"
#include "cli/command_tree.h"
#include "cli/help.h"
#include "config/keys.h"
#include "rpc/methods.h"

namespace bk::cli {
namespace {

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// Text as roff shows it: backslashes escaped, a line that would start with a
// control character guarded, `code` in bold (its hyphens as minus signs, so
// that a copied option is typed as one).
std::string Roff(std::string_view text) {
  std::string out;
  bool code = false;
  bool strong = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '*' && !code && i + 1 < text.size() && text[i + 1] == '*') {  // **strong**, as in the guides
      out += strong ? "\\fR" : "\\fB";
      strong = !strong;
      ++i;
    } else if (c == '`') {
      out += code ? "\\fR" : "\\fB";
      code = !code;
    } else if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && code) {
      out += "\\-";
    } else {
      if ((c == '.' || c == '\'') && (out.empty() || out.back() == '\n')) out += "\\&";
      out += c;
    }
  }
  if (code || strong) out += "\\fR";
  return out;
}

// A literal word in bold: a command or an option.
std::string Code(std::string_view text) { return "\\fB" + Roff(fmt::format("`{}`", text)).substr(3); }

std::string Header(std::string_view name, int section, std::string_view date, std::string_view title) {
  return fmt::format(
      ".\\\" Made by `bk __generate` from bk's own tables; edit the code, not this file.\n"
      ".TH {} {} \"{}\" \"GPUBK {}\" \"{}\"\n",
      ToUpper(std::string(name)), section, date, kVersion, title);
}

std::string UsageLine(const SpecInfo& spec) {
  std::string line = Code(spec.prog);
  bool options = false;
  for (const auto& o : spec.options) {
    if (!o.positional) {
      options = true;
      continue;
    }
    std::string name = ToUpper(o.names.front());
    line += o.needed ? fmt::format(" \\fI{}\\fR", Roff(name)) : fmt::format(" [\\fI{}\\fR]", Roff(name));
  }
  if (options) line += " [\\fIOPTIONS\\fR]";
  return line;
}

std::string OptionsList(const SpecInfo& spec) {
  std::string out;
  for (const auto& o : spec.options) {
    std::string names;
    for (const auto& n : o.names)
      names += (names.empty() ? "" : ", ") + (o.positional ? "\\fI" + Roff(ToUpper(n)) + "\\fR" : Code(n));
    if (!o.positional && !o.metavar.empty()) names += " \\fI" + Roff(o.metavar) + "\\fR";
    out += fmt::format(".TP\n{}\n{}\n", names, Roff(o.help));
  }
  return out;
}

std::string Paragraphs(std::string_view text) {
  std::string out;
  for (const auto& line : Split(text, '\n')) {
    if (Trim(line).empty()) continue;
    // Indented lines are examples: kept as they are, one per line.
    out += line.starts_with("  ") ? fmt::format(".RS\n.nf\n{}\n.fi\n.RE\n", Roff(Trim(line)))
                                  : Roff(line) + "\n.br\n";
  }
  return out;
}

// Commands already rendered, by what they declare: an alias-like command
// (`bk shared` beside `bk book`) points to the first instead of repeating it.
using Rendered = std::map<std::string, std::string>;

std::string Fingerprint(const SpecInfo& spec) {
  std::string key = spec.description + "\n" + spec.footer;
  for (const auto& o : spec.options) key += "\n" + Join(o.names, ",") + " " + o.metavar + " " + o.help;
  return key;
}

// One command and, below it, its subcommands: what `bk WORDS --help` declares.
std::string RenderCommand(const CommandNode& node, const std::vector<std::string>& words,
                          Rendered& rendered) {
  std::string heading = "bk";
  for (const auto& w : words) heading += " " + w;
  std::string out = fmt::format(".TP\n{}", Code(heading));
  if (!node.aliases.empty()) {
    std::string aliases;
    for (const auto& a : node.aliases) aliases += (aliases.empty() ? "" : ", ") + Code(a);
    out += " (also " + aliases + ")";
  }
  out += "\n" + Roff(node.summary) + ".\n.RS\n";
  std::vector<SpecInfo> specs = Describe(words);
  if (!node.usage.empty()) out += fmt::format(".PP\nUsage: {}\n", Code(node.usage));
  if (!specs.empty() && node.subcommands.empty()) {
    const SpecInfo& spec = specs.back();
    if (node.usage.empty()) out += fmt::format(".PP\nUsage: {}\n", UsageLine(spec));
    auto [first, fresh] = rendered.emplace(Fingerprint(spec), heading);
    if (!fresh) {
      out += fmt::format(".PP\nIts options are those of {}.\n", Code(first->second));
    } else {
      out += ".PP\n" + Paragraphs(spec.description);
      if (!spec.options.empty()) out += ".PP\n" + OptionsList(spec);
      if (!spec.footer.empty()) out += ".PP\n" + Paragraphs(spec.footer);
    }
  }
  for (const auto& sub : node.subcommands) {
    std::vector<std::string> deeper = words;
    deeper.push_back(sub.name);
    out += RenderCommand(sub, deeper, rendered);
  }
  return out + ".RE\n";
}

// `bk -h` as it prints: its sections, each line a command and what it does.
std::string Overview() {
  std::string out = ".PD 0\n";
  for (const auto& line : Split(MainHelp(true), '\n')) {
    if (line.empty() || line.starts_with("GPUBK") || line.starts_with("Run `bk")) continue;
    if (!line.starts_with(" ")) {
      out += fmt::format(".SS {}\n", Roff(line));
      continue;
    }
    std::string_view body = Trim(line);
    size_t gap = body.find("  ");
    if (!body.starts_with("bk ") && !body.starts_with("sudo ") && !body.starts_with("eval "))
      gap = std::string::npos;
    if (gap == std::string::npos) {
      out += Roff(body) + "\n.br\n";
    } else {
      out += fmt::format(".TP\n{}\n{}\n", Code(Trim(body.substr(0, gap))), Roff(Trim(body.substr(gap))));
    }
  }
  return out + ".PD\n";
}

const std::string kSeeAlso =
    ".SH SEE ALSO\n\\fBbk\\fR(1), \\fBbk-server\\fR(1), \\fBbk-admin\\fR(8), \\fBgpubk-config\\fR(5), "
    "\\fBgpubk-protocol\\fR(7)\n.PP\nThe guides in /usr/share/doc/gpubk (README.md first).\n";

std::string ExitStatus() {
  return ".SH EXIT STATUS\n"
         ".TP\n0\nsuccess\n"
         ".TP\n1\na managed job failed, or a check found problems\n"
         ".TP\n2\nbad input or a refused request: one line on stderr says what and how to fix it, and "
         "nothing "
         "changed\n"
         ".TP\n3\na search found nothing (no slot, no host ready); \\fBbk w --once\\fR: work still waiting\n"
         ".TP\n75\nanother instance holds the lock\n"
         ".TP\n77\na daemon started by the wrong account\n"
         ".TP\n78\nthe configuration no longer matches the ledger\n"
         ".TP\n124\na job stopped at its booking's end, or cancelled\n"
         ".TP\n130\ninterrupted\n";
}

// The variables Load reads besides the keys' own.
std::string LoadVariables() {
  std::string out;
  for (const auto& v : config::EnvironmentVariables())
    out += fmt::format(".TP\n{}\n{}\n", Code(v.name), Roff(v.doc));
  return out;
}

std::string Environment() {
  std::string out = ".SH ENVIRONMENT\n" + LoadVariables();
  out +=
      ".TP\n\\fBBK_\\fR\\fIKEY\\fR\nevery configuration key, e.g. \\fBBK_SLOT_MINUTES\\fR; see "
      "\\fBgpubk-config\\fR(5) for which apply where\n"
      ".TP\n\\fBBK_CLUSTER_CONFIG\\fR\nthe catalog of several hosts (default /etc/gpubk/cluster.json)\n"
      ".TP\n\\fBBK_CLUSTER_SSH_CONTROL\\fR\n\\fBoff\\fR: no shared SSH connections for \\fBbk c\\fR\n"
      ".TP\n\\fBNO_COLOR\\fR\nno colour\n"
      ".TP\n\\fBTZ\\fR\nthe zone times are read and shown in\n";
  return out;
}

ManPage BkPage(std::string_view date) {
  std::string t = Header("bk", 1, date, "GPUBK Manual");
  t += ".SH NAME\nbk \\- book GPUs on a shared Linux GPU server\n"
       ".SH SYNOPSIS\n.B bk\n[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]\n.br\n.B bk\n\\fICOUNT DURATION\\fR "
       "[\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR \\fICOMMAND\\fR ...]\n"
       ".SH DESCRIPTION\n"
       "\\fBbk\\fR keeps a calendar of who uses which GPU of this host, and when. "
       "\\fBbk 1 2h\\fR books the earliest legal slot on the best GPU; \\fBbk st\\fR shows what is free now. "
       "Alone, each user has a private ledger; on a lab server everyone books through one daemon "
       "(\\fBbk-server\\fR(1)) that takes each caller's identity from the kernel. "
       "A monitor samples the GPUs and reclaims bookings nobody used; a shell hook shows each shell only "
       "the GPUs it booked; coding agents book through JSON and MCP.\n"
       ".PP\nWithout a command, \\fBbk\\fR shows the status page and, at a terminal, waits for commands.\n"
       ".SH OVERVIEW\nWhat \\fBbk \\-h\\fR prints.\n" +
       Overview() + ".SH COMMANDS\nEvery command, in the sections of \\fBbk \\-h\\fR.\n";
  Rendered rendered;
  for (const auto& group : CommandGroups()) {
    std::string part;
    for (const auto& node : CommandTree()) {
      if (node.group != group) continue;
      if (node.name == "server" || node.name == "admin") {
        part += fmt::format(".TP\n{}\n{}; see \\fBbk-{}\\fR({}).\n", Code("bk " + node.name),
                            Roff(node.summary), node.name, node.name == "admin" ? 8 : 1);
        continue;
      }
      part += RenderCommand(node, {node.name}, rendered);
    }
    if (!part.empty()) t += fmt::format(".SS {}\n{}", group, part);
  }
  t += ".SH OPTIONS OF EVERY COMMAND\n"
       ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nwhat the command takes\n"
       ".TP\n\\fB\\-\\-color\\fR=\\fIauto\\fR|\\fIalways\\fR|\\fInever\\fR\ncolour on terminals (NO_COLOR: "
       "none)\n"
       ".TP\n\\fB\\-\\-json\\fR\nwhere a command has it: print its JSON document; errors become a document "
       "of kind \\fBerror\\fR\n"
       ".SH TIMES AND DURATIONS\n"
       "Durations are 30m, 1h30m, 1d: multiples of the booking slot (slot_minutes, 5 by default). "
       "Times are local (\\fBTZ\\fR): 20:00, tomorrow 9, +30m, or ISO 8601. Without a start, a booking takes "
       "the earliest legal slot; with \\fB\\-t\\fR it starts exactly then or not at all. "
       "The first number is a count of GPUs; a GPU index is given with \\fB\\-\\-gpu\\fR.\n" +
       Environment() +
       ".SH FILES\n"
       ".TP\n~/.local/share/gpubk/ledger.db\nthe private ledger (\\fBBK_DATA_DIR\\fR moves it)\n"
       ".TP\n~/.config/gpubk/server.json\nthe server this account connected to\n"
       ".TP\n~/.config/gpubk/presets.json\nyour presets\n"
       ".TP\n/etc/gpubk/config.json\na system deployment's configuration (\\fBbk-admin\\fR(8))\n" +
       ExitStatus() + kSeeAlso;
  return {"bk.1", t};
}

ManPage SubtreePage(std::string_view date, const std::string& word, int section, std::string_view title,
                    std::string_view description) {
  const CommandNode* node = FindCommand({word});
  std::string t = Header("bk-" + word, section, date, title);
  t += fmt::format(".SH NAME\nbk\\-{} \\- {}\n.SH SYNOPSIS\n{}\n.SH DESCRIPTION\n{}\n.SH COMMANDS\n", word,
                   Roff(node->summary), Code(node->usage), description);
  Rendered rendered;
  for (const auto& sub : node->subcommands) t += RenderCommand(sub, {word, sub.name}, rendered);
  return {fmt::format("bk-{}.{}", word, section), t + ExitStatus() + kSeeAlso};
}

ManPage ConfigPage(std::string_view date) {
  std::string t = Header("gpubk-config", 5, date, "GPUBK Manual");
  t +=
      ".SH NAME\ngpubk-config \\- the settings of GPUBK's bk, its files and environment\n"
      ".SH DESCRIPTION\n"
      "Each setting is a key of a JSON object in one file:\n"
      ".TP\n~/.local/share/gpubk/config.json\na private ledger's (\\fB$BK_DATA_DIR/config.json\\fR when "
      "set)\n"
      ".TP\n\\fIDIR\\fR/config.json\na shared server's, written by \\fBbk server init\\fR\n"
      ".TP\n/etc/gpubk/config.json\na system deployment's, written by \\fBbk admin install\\fR\n"
      ".PP\nA key left out takes its default. \\fBbk config\\fR prints every effective value and where it "
      "came from; \\fBbk config \\-\\-keys\\fR lists the keys. An unknown key, a value of the wrong type or "
      "out "
      "of range is refused with one line naming the key and what it accepts.\n"
      ".PP\nEvery key has an environment variable, \\fBBK_\\fR and its name in capitals. A deployment's keys "
      "(the policy and the monitor) take it only for a private ledger: a server's policy is its file's. "
      "A user's keys (their worker) take it everywhere, where the server's file says nothing.\n"
      ".PP\nA \\fBBound\\fR key is part of the policy a ledger is bound to at its first write: a later "
      "configuration that differs from it is refused for bookings (exit 2, naming the keys) until it is "
      "restored. A running server's policy is changed with \\fBbk admin policy\\fR (\\fBbk-admin\\fR(8)).\n";
  for (auto [scope, heading] : {std::pair{config::KeyScope::kDeployment, "DEPLOYMENT KEYS"},
                                std::pair{config::KeyScope::kUser, "USER KEYS"}}) {
    t += fmt::format(".SH {}\n", heading);
    for (const auto& k : config::Keys()) {
      if (k.scope != scope) continue;
      config::KeyDoc d = config::Document(k);
      t += fmt::format(".TP\n{}\n{}.\n.br\nDefault: {}.\n.br\nAccepted: {}.\n.br\nEnvironment: {}{}.\n",
                       Code(k.name), Roff(k.doc), Roff(d.default_value), Roff(d.accepted), Code(d.env),
                       d.env_json ? " (JSON text)" : "");
    }
  }
  t += ".SH OTHER ENVIRONMENT VARIABLES\n" + LoadVariables();
  return {"gpubk-config.5", t + kSeeAlso};
}

ManPage ProtocolPage(std::string_view date) {
  std::string t = Header("gpubk-protocol", 7, date, "GPUBK Manual");
  t +=
      ".SH NAME\ngpubk-protocol \\- how clients talk to the GPUBK daemon\n"
      ".SH DESCRIPTION\n"
      "The daemon (\\fBbk server serve\\fR) answers JSON-RPC 2.0 on a Unix stream socket, "
      "\\fIDIR\\fR/run/broker.sock (\\fBsocket\\fR in the server's config.json), as newline-delimited JSON: "
      "one request per line (a UTF\\-8 JSON object of at most 1 MiB ending in a newline), one reply line per "
      "request, in order. Requests may be pipelined on one connection; blank lines are ignored.\n"
      ".PP\nA request has \\fBjsonrpc\\fR \"2.0\", \\fBid\\fR (a string or an integer; without it the "
      "request "
      "is a notification and gets no reply), \\fBmethod\\fR, and \\fBparams\\fR (an object, optional when "
      "the "
      "method takes none). Any other member, positional params and batches are refused. Every parameter is "
      "typed strictly and unknown parameters are errors. Times are Unix seconds (UTC); durations are "
      "seconds and must be whole slots.\n"
      ".PP\nThere is no login: the caller is the connection's \\fBSO_PEERCRED\\fR UID, from the kernel. "
      "Administrators are root, the server's owner and the members of \\fBadmin_group\\fR.\n"
      ".SH REPLIES\n"
      "\\fB{\"jsonrpc\":\"2.0\",\"id\":\\fR\\fIID\\fR\\fB,\"result\":...}\\fR, or an error object with "
      "\\fBcode\\fR, \\fBmessage\\fR (the line bk prints) and \\fBdata.kind\\fR:\n"
      ".TP\n\\-32700\nthe line is not JSON\n"
      ".TP\n\\-32600\nnot a valid request (the connection is closed after a line over 1 MiB)\n"
      ".TP\n\\-32601\nunknown method\n"
      ".TP\n\\-32602\ninvalid params: wrong type, out of range, missing or unknown (kind \\fBinvalid\\fR)\n"
      ".TP\n\\-32000\nunderstood but refused: kind \\fBconflict\\fR, \\fBno\\-slot\\fR, \\fBnot\\-found\\fR, "
      "\\fBpermission\\fR, \\fBpolicy\\fR, \\fBbusy\\fR, \\fBunavailable\\fR, \\fBcorrupt\\fR, \\fBio\\fR or "
      "\\fBinternal\\fR\n"
      ".SH METHODS\n"
      "A \\fIwrite\\fR commits one transaction before it replies; a read writes nothing. \\fIcached\\fR: "
      "the answer may be served again, unchanged, while the ledger's generation and the second stay the "
      "same. \\fIadministrators\\fR: refused to anyone else. The parameters and results of each are in "
      "server\\-admin.md of the guides.\n";
  std::apply(
      [&](const auto&... m) {
        ((t += fmt::format(".TP\n{}\n{}{}{}\n", Code(m.name), m.write ? "write" : "read",
                           m.cacheable ? ", cached" : "",
                           m.caller == rpc::Caller::kAdmin ? ", administrators only" : "")),
         ...);
      },
      rpc::methods::kAll);
  return {"gpubk-protocol.7", t + kSeeAlso};
}

}  // namespace

std::vector<ManPage> ManPages(std::string_view date) {
  return {BkPage(date),
          SubtreePage(
              date, "server", 1, "GPUBK Manual",
              "A shared ledger for a lab's GPU server, run by an ordinary account: \\fBbk server init\\fR "
              "makes its directory, \\fBbk server serve\\fR runs the daemon (broker and monitor in one "
              "process), and each user runs \\fBbk server connect\\fR once. Every booking then goes "
              "through the daemon, which takes each caller's identity from the kernel. No root is "
              "needed; a system deployment with systemd is \\fBbk admin install\\fR "
              "(\\fBbk-admin\\fR(8))."),
          SubtreePage(date, "admin", 8, "GPUBK Administration",
                      "What a lab's administrators run: the ledger's data (import, verify, backup, restore, "
                      "clear), the policy of a running server, blackouts and maintenance, announcements, "
                      "cancelling or transferring anyone's booking, the system deployment with systemd, and "
                      "the catalog of several hosts. Administrators are root, the server's owner and the "
                      "members of \\fBadmin_group\\fR; every action is audited and the owners of affected "
                      "bookings are told."),
          ConfigPage(date), ProtocolPage(date)};
}

}  // namespace bk::cli
