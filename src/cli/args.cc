#include "cli/args.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>

#include "base/strings.h"

namespace bk::cli {

struct ArgSpec::Impl {
  CLI::App app;
  std::string prog;
  // CLI11 binds plain strings; presence is read back after parsing.
  std::vector<std::pair<CLI::Option*, std::pair<std::string*, std::optional<std::string>*>>> values;
  std::vector<std::unique_ptr<std::string>> storage;
  std::map<std::string, CLI::Option*> by_name;
};

ArgSpec::ArgSpec(std::string prog, std::string description) : impl_(std::make_unique<Impl>()) {
  impl_->app.description(std::move(description));
  impl_->app.name(prog);
  impl_->prog = std::move(prog);
  impl_->app.set_help_flag("-h,--help", "show this help");
  impl_->app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

ArgSpec::~ArgSpec() = default;

void ArgSpec::Flag(const std::string& names, bool* out, const std::string& help) {
  auto* o = impl_->app.add_flag(names, *out, help);
  o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  impl_->by_name[names] = o;
}

void ArgSpec::Option(const std::string& names, std::optional<std::string>* out, const std::string& help,
                     const std::string& metavar) {
  impl_->storage.push_back(std::make_unique<std::string>());
  std::string* s = impl_->storage.back().get();
  auto* o = impl_->app.add_option(names, *s, help)->type_name(metavar)->allow_extra_args(false);
  o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  impl_->values.push_back({o, {s, out}});
  impl_->by_name[names] = o;
}

void ArgSpec::Positional(const std::string& name, std::optional<std::string>* out, const std::string& help) {
  Option(name, out, help, "");
}

void ArgSpec::Excludes(const std::string& a, const std::string& b) {
  auto ia = impl_->by_name.find(a);
  auto ib = impl_->by_name.find(b);
  if (ia != impl_->by_name.end() && ib != impl_->by_name.end()) ia->second->excludes(ib->second);
}

void ArgSpec::Footer(const std::string& text) { impl_->app.footer(text); }

Status ArgSpec::Parse(const std::vector<std::string>& args) {
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    impl_->app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    help_ = true;
    return Ok();
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (!msg.empty()) msg[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(msg[0])));
    return Invalid(msg + "; see `" + impl_->prog + " --help`");
  }
  for (auto& [opt, binding] : impl_->values)
    if (opt->count() > 0) *binding.second = *binding.first;
  return Ok();
}

std::string ArgSpec::Help() const { return impl_->app.help(); }

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
