#include "cli/completion.h"

#include <algorithm>
#include <optional>
#include <regex>

#include "base/strings.h"
#include "cli/command_tree.h"

namespace bk::cli {
namespace {

bool IsCount(std::string_view w) { return !w.empty() && AllDigits(w); }

std::vector<std::string> Counts(CompletionSource& source) {
  std::vector<std::string> out;
  for (int i = 1; i <= std::max(1, source.GpuCount()); ++i) out.push_back(std::to_string(i));
  return out;
}

std::vector<std::string> GpuIndices(CompletionSource& source) {
  std::vector<std::string> out;
  for (int i = 0; i < std::max(1, source.GpuCount()); ++i) out.push_back(std::to_string(i));
  return out;
}

// Lengths people book; any multiple of the slot is accepted, these are offers.
std::vector<std::string> Durations() { return {"30m", "1h", "2h", "4h", "8h", "12h", "1d"}; }

// The words a help text offers as a choice: "install | show | uninstall" (a
// positional's help) or "auto|always|never" inside an option's.
std::vector<std::string> Choices(const std::string& help) {
  static const std::regex spaced(R"(^([a-z][a-z0-9-]*(?: \| [a-z][a-z0-9-]*)+))");
  static const std::regex tight(R"((?:^|[ (])([a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)+)(?:$|[ ,;:)]))");
  // "codex (default) or claude": the whole help is the choice.
  static const std::regex alternatives(
      R"(^[a-z][a-z0-9-]*( \(default\))?(, [a-z][a-z0-9-]*( \(default\))?)* or [a-z][a-z0-9-]*( \(default\))?$)");
  std::smatch m;
  std::string list;
  if (std::regex_match(help, alternatives)) {
    std::string words = std::regex_replace(help, std::regex(R"( \(default\)|,| or)"), "");
    return Split(words, ' ');
  }
  if (std::regex_search(help, m, spaced)) {
    list = m[1].str();
    std::erase(list, ' ');
  } else if (std::regex_search(help, m, tight)) {
    list = m[1].str();
  }
  return list.empty() ? std::vector<std::string>{} : Split(list, '|');
}

bool Has(const SpecOption& o, std::string_view name) {
  return std::ranges::find(o.names, name) != o.names.end();
}

const SpecOption* FindOption(const SpecInfo& spec, std::string_view name) {
  for (const auto& o : spec.options)
    if (!o.positional && Has(o, name)) return &o;
  return nullptr;
}

bool IsPath(const std::string& metavar) {
  return metavar == "FILE" || metavar == "DIR" || metavar == "PATH" || metavar == "CONFIG";
}

Completions ForValue(const SpecOption& o, CompletionSource& source) {
  if (IsPath(o.metavar)) return {{}, true};
  if (Has(o, "--gpu") || Has(o, "--gpus") || Has(o, "--exclude") || Has(o, "--disabled-gpus"))
    return {GpuIndices(source)};
  if (Has(o, "--count") || Has(o, "--gpu-count")) return {Counts(source)};
  if (o.metavar == "DUR" || o.metavar == "TIME|DUR") return {Durations()};
  return {Choices(o.help)};
}

Completions ForPositional(const SpecOption& p, const std::string& prog, CompletionSource& source) {
  if (auto choices = Choices(p.help); !choices.empty()) return {choices};
  const std::string& name = p.names.front();
  if (name == "count") return {Counts(source)};
  if (name == "duration") return {Durations()};
  // Your own bookings; an administrator's or another host's references are
  // not yours to list here.
  bool own = !prog.starts_with("bk admin") && !prog.starts_with("bk cluster") && !prog.starts_with("bk c ");
  if (name == "reservation" && own) return {source.OwnRefs()};
  if (name == "file" || name == "ledger" || name == "config") return {{}, true};
  return {};
}

// Long names first, then the short ones: a long name says what it does.
std::vector<std::string> OptionNames(const SpecInfo& spec) {
  std::vector<std::string> longs, shorts;
  for (const auto& o : spec.options)
    if (!o.positional)
      for (const auto& n : o.names) (n.starts_with("--") ? longs : shorts).push_back(n);
  longs.push_back("--help");
  longs.insert(longs.end(), shorts.begin(), shorts.end());
  return longs;
}

std::vector<std::string> Names(const std::vector<CommandNode>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    out.push_back(n.name);
    out.insert(out.end(), n.aliases.begin(), n.aliases.end());
  }
  return out;
}

Completions Filter(Completions c, const std::string& prefix) {
  std::erase_if(c.words, [&](const std::string& w) { return !w.starts_with(prefix); });
  return c;
}

// The command the words name and the words after it: a count first is the
// booking command, as is a count right after `bk c`.
struct Resolved {
  std::vector<std::string> path;
  std::vector<std::string> rest;
  const CommandNode* node = nullptr;
};

std::optional<Resolved> Resolve(const std::vector<std::string>& before) {
  Resolved r;
  if (IsCount(before[0])) {
    r.path = {"book"};
    r.rest = before;
    r.node = FindCommand(r.path);
    return r;
  }
  size_t consumed = 0;
  r.node = FindCommand(before, &consumed);
  if (!r.node) return std::nullopt;
  r.path.assign(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(consumed));
  r.rest.assign(before.begin() + static_cast<std::ptrdiff_t>(consumed), before.end());
  if (!r.rest.empty() && IsCount(r.rest[0]) && !r.node->subcommands.empty())
    if (auto book =
            std::ranges::find_if(r.node->subcommands, [](const CommandNode& c) { return c.name == "book"; });
        book != r.node->subcommands.end()) {
      r.path.push_back("book");
      r.node = &*book;
    }
  return r;
}

}  // namespace

Completions Complete(const std::vector<std::string>& words, CompletionSource& source) {
  if (words.empty()) return {};
  const std::string& cur = words.back();
  std::vector<std::string> before(words.begin(), words.end() - 1);
  if (before.empty()) {
    Completions c{Names(CommandTree())};
    if (cur.empty() || IsCount(cur)) {
      auto counts = Counts(source);
      c.words.insert(c.words.end(), counts.begin(), counts.end());
    }
    return Filter(std::move(c), cur);
  }
  // After `--` the words are a job's command: its own files.
  if (std::ranges::find(before, "--") != before.end()) return {{}, true};
  auto resolved = Resolve(before);
  if (!resolved) return {};
  if (resolved->rest.empty() && !resolved->node->subcommands.empty() && !cur.starts_with("-"))
    return Filter({Names(resolved->node->subcommands)}, cur);

  std::vector<SpecInfo> specs = Describe(resolved->path);
  if (specs.empty()) return {};
  const SpecInfo& spec = specs.back();
  if (cur.starts_with("-")) return Filter({OptionNames(spec)}, cur);

  // The previous word wants a value: offer values for it.
  if (!resolved->rest.empty())
    if (const SpecOption* o = FindOption(spec, resolved->rest.back()); o && !o->metavar.empty())
      return Filter(ForValue(*o, source), cur);

  // Otherwise the next positional: count the ones already given.
  size_t given = 0;
  for (size_t i = 0; i < resolved->rest.size(); ++i) {
    const std::string& w = resolved->rest[i];
    if (!w.starts_with("-") || w == "-") {
      ++given;
    } else if (const SpecOption* o = FindOption(spec, w); o && !o->metavar.empty()) {
      ++i;  // its value
    }
  }
  size_t index = 0;
  for (const auto& o : spec.options) {
    if (!o.positional) continue;
    if (index++ == given) return Filter(ForPositional(o, spec.prog, source), cur);
  }
  return {};
}

std::string CompletionScript(std::string_view shell) {
  if (shell == "bash")
    return R"sh(# bash completion for bk (GPUBK), printed by `bk completion bash`.
# Install: bk completion bash > ~/.local/share/bash-completion/completions/bk
# Every Tab asks `bk __complete` what fits, so it knows each command's options.
_bk() {
  local line=${COMP_LINE:0:COMP_POINT} out
  local -a words
  read -r -a words <<<"$line"
  [[ $line == *[[:space:]] ]] && words+=("")
  ((${#words[@]} > 1)) || return 0
  out=$(command bk __complete "${words[@]:1}" 2>/dev/null) || return 0
  local cur=${words[${#words[@]} - 1]}
  if [[ $out == :files ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return 0
  fi
  mapfile -t COMPREPLY <<<"$out"
  [[ -n ${COMPREPLY[0]} ]] || COMPREPLY=()
}
complete -o nosort -F _bk bk 2>/dev/null || complete -F _bk bk
)sh";
  if (shell == "zsh")
    return R"sh(#compdef bk
# zsh completion for bk (GPUBK), printed by `bk completion zsh`.
# Install: put it in a directory of $fpath as _bk, or eval "$(bk completion zsh)"
# after compinit. Every Tab asks `bk __complete` what fits.
_bk() {
  local -a out
  out=("${(@f)$(command bk __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if [[ ${out[1]} == :files ]]; then
    _files
    return
  fi
  [[ -n ${out[1]} ]] || return 1
  compadd -Q -V bk -- "${out[@]}"
}
if [[ ${funcstack[1]} == _bk ]]; then
  _bk "$@"
else
  compdef _bk bk
fi
)sh";
  if (shell == "fish")
    return R"sh(# fish completion for bk (GPUBK), printed by `bk completion fish`.
# Install: bk completion fish > ~/.config/fish/completions/bk.fish
# Every Tab asks `bk __complete` what fits.
function __bk_complete
    set -l words (commandline -opc) (commandline -ct)
    set -l out (command bk __complete $words[2..-1] 2>/dev/null)
    if test "$out" = ":files"
        __fish_complete_path (commandline -ct)
        return
    end
    printf '%s\n' $out
end
complete -c bk -f -a '(__bk_complete)'
)sh";
  return "";
}

}  // namespace bk::cli
