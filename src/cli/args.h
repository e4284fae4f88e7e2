#pragma once
// Option parsing behind a small facade so that CLI/CLI.hpp (slow to compile)
// stays in args.cc. Every value is taken as text and parsed by the engine's
// parsers, which give the error messages users see.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace bk::cli {

// What a command accepts, as declared: the man pages and shell completion are
// made from it, so they cannot drift from the parser.
struct SpecOption {
  std::vector<std::string> names;  // "-g", "--gpu"; a positional: its one name
  std::string metavar;             // empty: a flag
  std::string help;
  bool positional = false;
  bool needed = false;  // a positional the command needs
};
struct SpecInfo {
  std::string prog;  // "bk admin data verify"
  std::string description;
  std::string footer;
  std::vector<SpecOption> options;  // in declaration order, without -h/--help
};

class ArgSpec {
 public:
  // `prog` is shown in usage ("bk book"); `description` heads the help.
  ArgSpec(std::string prog, std::string description);
  ~ArgSpec();

  void Flag(const std::string& names, bool* out, const std::string& help);
  // "-g,--gpu": a value option; repeated occurrences keep the last.
  void Option(const std::string& names, std::optional<std::string>* out, const std::string& help,
              const std::string& metavar = "VALUE");
  // An optional positional, filled in order.
  void Positional(const std::string& name, std::optional<std::string>* out, const std::string& help);
  // A positional the command needs: the usage shows it without brackets. It
  // parses as Positional does; the command says what is missing in its own words.
  void NeededPositional(const std::string& name, std::optional<std::string>* out, const std::string& help);
  void Excludes(const std::string& a, const std::string& b);
  void Footer(const std::string& text);

  // Parses; -h/--help sets help_requested() instead of failing.
  Status Parse(const std::vector<std::string>& args);
  bool help_requested() const { return help_; }
  std::string Help() const;
  // Only the options part of Help(), for a command that writes its own usage.
  std::string OptionsHelp() const;
  SpecInfo Describe() const;

  // While an observer is set (on this thread), every ArgSpec reports what it
  // declares when it parses or prints its help. Walking the commands with --help this way reads
  // each one's real options without running it.
  class Observer {
   public:
    Observer();
    ~Observer();
    Observer(const Observer&) = delete;
    Observer& operator=(const Observer&) = delete;
    const std::vector<SpecInfo>& seen() const { return seen_; }

   private:
    friend class ArgSpec;
    std::vector<SpecInfo> seen_;
    Observer* previous_;
  };

 private:
  void Report() const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool help_ = false;
};

// A whole-number option from `lo` to `hi`, `def` when it is absent; any other
// text fails with `error`, the command's own wording.
Result<int64_t> WholeNumberOption(const std::optional<std::string>& text, int64_t lo, int64_t hi, int64_t def,
                                  const std::string& error);
// --limit of `bk l`, `bk log` and `bk n`: 1 to 1000.
Result<int> LimitOption(const std::optional<std::string>& text, int def);

}  // namespace bk::cli
