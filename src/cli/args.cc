#include "cli/args.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <set>

#include "base/strings.h"
#include "surface/text.h"

namespace bk::cli {

// CLI11's help, reworded: "Excludes: --at" would run into the option's
// description, so the description says "(not with --at)" instead; a
// positional the command needs shows without brackets.
class Formatter : public CLI::Formatter {
 public:
  explicit Formatter(const std::set<const CLI::Option*>* needed) : needed_(needed) {}

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";
    return " " + opt->get_type_name();
  }

  // Wrapped to the terminal (COLUMNS, else 100) beside the names' column;
  // the description's own line breaks stay.
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    std::string others;
    for (const CLI::Option* o : opt->get_excludes()) others += (others.empty() ? "" : ", ") + o->get_name();
    if (!others.empty()) desc += " (not with " + others + ")";
    int width =
        std::max(30, surface::TerminalWidth(STDOUT_FILENO, 100) - static_cast<int>(get_column_width()) - 1);
    std::string out;
    for (const auto& paragraph : Split(desc, '\n'))
      for (const auto& line : surface::WrapWords(paragraph, width)) out += (out.empty() ? "" : "\n") + line;
    return out;
  }

  std::string make_option_usage(const CLI::Option* opt) const override {
    std::string usage = CLI::Formatter::make_option_usage(opt);
    if (needed_->contains(opt) && usage.starts_with("[") && usage.ends_with("]"))
      return usage.substr(1, usage.size() - 2);
    return usage;
  }

 private:
  const std::set<const CLI::Option*>* needed_;
};

struct ArgSpec::Impl {
  CLI::App app;
  // Positionals shown as needed in the usage line.
  std::set<const CLI::Option*> needed;
  std::shared_ptr<Formatter> formatter = std::make_shared<Formatter>(&needed);
  std::string prog;
  // CLI11 binds plain strings; presence is read back after parsing.
  std::vector<std::pair<CLI::Option*, std::pair<std::string*, std::optional<std::string>*>>> values;
  std::vector<std::unique_ptr<std::string>> storage;
  std::map<std::string, CLI::Option*> by_name;
  // Long names ("--gpu") and their options in declaration order, for
  // argparse's prefixes.
  std::vector<std::pair<std::string, const CLI::Option*>> longs{{"--help", nullptr}};
  SpecInfo info;

  void Declare(const std::string& names, CLI::Option* o, const std::string& help, const std::string& metavar,
               bool positional) {
    by_name[names] = o;
    info.options.push_back({Split(names, ','), metavar, help, positional});
    for (size_t at = 0; at < names.size();) {
      size_t comma = std::min(names.find(',', at), names.size());
      std::string name = names.substr(at, comma - at);
      if (name.starts_with("--")) longs.emplace_back(name, o);
      at = comma + 1;
    }
  }

  Result<std::vector<std::string>> ExpandPrefixes(const std::vector<std::string>& args) const;
};

// argparse accepts a unique prefix of a long option (`--sh 2` for
// `--share 2`), and scripts written for the original use them. An exact name
// always wins; a prefix of names of different options is refused with its
// candidates (argparse refuses one of two names of the same option too; that
// is no ambiguity, so it is accepted here). Nothing after `--` is touched: it
// belongs to the job's command.
Result<std::vector<std::string>> ArgSpec::Impl::ExpandPrefixes(const std::vector<std::string>& args) const {
  std::vector<std::string> out;
  out.reserve(args.size());
  bool before_separator = true;
  for (const auto& a : args) {
    if (a == "--") before_separator = false;
    if (!before_separator || !a.starts_with("--")) {
      out.push_back(a);
      continue;
    }
    size_t eq = a.find('=');
    std::string name = a.substr(0, eq);
    std::vector<std::string> matches;
    std::set<const CLI::Option*> owners;
    for (const auto& [l, option] : longs) {
      if (l == name) {
        matches = {l};
        owners = {option};
        break;
      }
      if (!l.starts_with(name)) continue;
      matches.push_back(l);
      owners.insert(option);
    }
    if (owners.size() > 1) {
      std::string list;
      for (const auto& m : matches) list += (list.empty() ? "" : ", ") + m;
      return UsageError("ambiguous option: " + name + " could match " + list + "; see `" + prog + " --help`");
    }
    out.push_back(matches.empty() ? a : matches[0] + (eq == std::string::npos ? "" : a.substr(eq)));
  }
  return out;
}

namespace {
thread_local ArgSpec::Observer* observer = nullptr;
}  // namespace

ArgSpec::Observer::Observer() : previous_(observer) { observer = this; }
ArgSpec::Observer::~Observer() { observer = previous_; }

ArgSpec::ArgSpec(std::string prog, std::string description) : impl_(std::make_unique<Impl>()) {
  impl_->info.prog = prog;
  impl_->info.description = description;
  impl_->app.description(std::move(description));
  impl_->app.name(prog);
  impl_->prog = std::move(prog);
  impl_->app.set_help_flag("-h,--help", "show this help");
  impl_->app.formatter(impl_->formatter);
  impl_->app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

ArgSpec::~ArgSpec() = default;

void ArgSpec::Flag(const std::string& names, bool* out, const std::string& help) {
  auto* o = impl_->app.add_flag(names, *out, help);
  o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  impl_->Declare(names, o, help, "", false);
}

void ArgSpec::Option(const std::string& names, std::optional<std::string>* out, const std::string& help,
                     const std::string& metavar) {
  impl_->storage.push_back(std::make_unique<std::string>());
  std::string* s = impl_->storage.back().get();
  auto* o = impl_->app.add_option(names, *s, help)->type_name(metavar)->allow_extra_args(false);
  o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  impl_->values.push_back({o, {s, out}});
  impl_->Declare(names, o, help, metavar, !names.starts_with("-"));
}

void ArgSpec::Positional(const std::string& name, std::optional<std::string>* out, const std::string& help) {
  Option(name, out, help, "");
}

void ArgSpec::NeededPositional(const std::string& name, std::optional<std::string>* out,
                               const std::string& help) {
  Positional(name, out, help);
  impl_->needed.insert(impl_->values.back().first);
  impl_->info.options.back().needed = true;
}

void ArgSpec::Excludes(const std::string& a, const std::string& b) {
  auto ia = impl_->by_name.find(a);
  auto ib = impl_->by_name.find(b);
  if (ia != impl_->by_name.end() && ib != impl_->by_name.end()) ia->second->excludes(ib->second);
}

void ArgSpec::Footer(const std::string& text) {
  impl_->app.footer(text);
  impl_->info.footer = text;
}

SpecInfo ArgSpec::Describe() const { return impl_->info; }

void ArgSpec::Report() const {
  if (observer && (observer->seen_.empty() || observer->seen_.back().prog != impl_->info.prog))
    observer->seen_.push_back(impl_->info);
}

Status ArgSpec::Parse(const std::vector<std::string>& args) {
  Report();
  BK_ASSIGN_OR_RETURN(auto expanded, impl_->ExpandPrefixes(args));
  std::vector<std::string> rev(expanded.rbegin(), expanded.rend());
  try {
    impl_->app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    help_ = true;
    return Ok();
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (!msg.empty()) msg[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(msg[0])));
    return UsageError(msg + "; see `" + impl_->prog + " --help`");
  }
  for (auto& [opt, binding] : impl_->values)
    if (opt->count() > 0) *binding.second = *binding.first;
  return Ok();
}

std::string ArgSpec::Help() const {
  Report();
  return impl_->app.help();
}

std::string ArgSpec::OptionsHelp() const {
  Report();
  std::string groups = impl_->formatter->make_groups(&impl_->app, CLI::AppFormatMode::Normal);
  // The caller heads the list in its own words.
  size_t heading = groups.find("Options:\n");
  return heading == std::string::npos ? groups : groups.substr(heading + 9);
}

Result<int64_t> WholeNumberOption(const std::optional<std::string>& text, int64_t lo, int64_t hi, int64_t def,
                                  const std::string& error) {
  if (!text) return def;
  auto n = ParseUint(Trim(*text));
  if (!n || *n < lo || *n > hi) return Invalid(error);
  return *n;
}

Result<int> LimitOption(const std::optional<std::string>& text, int def) {
  BK_ASSIGN_OR_RETURN(int64_t n, WholeNumberOption(text, 1, 1000, def, "--limit must be between 1 and 1000"));
  return static_cast<int>(n);
}

}  // namespace bk::cli
