#include "cli/guided.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "engine/parse.h"
#include "shell/init_script.h"

namespace bk::cli {
namespace {

struct Question {
  std::string GuidedBooking::*answer;
  std::string ask;       // shown before the default in brackets
  std::string accepted;  // said after a refused answer
};

// In the order they are asked.
std::vector<Question> Questions(const engine::Policy& p) {
  size_t enabled = p.EnabledGpus().size();
  std::string counts = enabled > 1 ? fmt::format("1-{}", enabled) : "1";
  std::string slot = engine::FormatDuration(p.slot);
  std::vector<Question> q = {
      {&GuidedBooking::count, fmt::format("how many GPUs ({})", counts),
       fmt::format("a number of GPUs, {}", counts)},
      {&GuidedBooking::duration, "how long (e.g. 30m, 1h30m, 2d)",
       fmt::format("a duration in steps of {}, e.g. 30m, 1h30m or 2d", slot)},
      {&GuidedBooking::mode, "shared or exclusive", "shared (s) or exclusive (x)"},
      {&GuidedBooking::gpus, "which GPUs (auto, or indexes such as 0,1)",
       "auto, or as many GPU indexes as GPUs, e.g. 0,1"},
      {&GuidedBooking::memory, "VRAM per GPU (auto, or e.g. 12g)", "auto, or a size such as 12g or 4096m"},
      {&GuidedBooking::start, "start (now, +30m, 14:00, tomorrow 9, 12-24 09:00)",
       "now, +30m, 14:00, \"tomorrow 9\" or 12-24 09:00"},
  };
  if (p.BudgetsOn()) {
    q.push_back({&GuidedBooking::cpus, "host CPUs", "a whole number of CPUs such as 4"});
    q.push_back({&GuidedBooking::ram, "host RAM (e.g. 32g)", "a size such as 32g or 4096m"});
  }
  return q;
}

bool Is(const std::string& answer, std::string_view word) { return ToLower(answer) == word; }

// A word a shell would split or interpret.
bool NeedsQuotes(const std::string& word) {
  return word.empty() || std::any_of(word.begin(), word.end(), [](char c) {
           return !(std::isalnum(static_cast<unsigned char>(c)) || std::string_view(",.:+-_/=").contains(c));
         });
}

}  // namespace

GuidedBooking GuidedDefaults(const engine::Policy& p) {
  GuidedBooking d{
      .count = "1",
      .duration = engine::FormatDuration(std::max<engine::Seconds>(30 * 60 / p.slot * p.slot, p.slot)),
      .mode = "shared",
      .gpus = "auto",
      .memory = "auto",
      .start = "now"};
  if (p.BudgetsOn()) {
    int64_t ram = p.default_booking_ram_mb;
    d.cpus = std::to_string(p.default_booking_cpus);
    d.ram = ram % 1024 == 0 ? fmt::format("{}g", ram / 1024) : fmt::format("{}m", ram);
  }
  return d;
}

Result<bool> AskBooking(LineReader& in, FILE* out, const engine::Policy& p, const GuidedCheck& check,
                        GuidedBooking* b) {
  const std::vector<Question> questions = Questions(p);
  for (size_t i = 0; i < questions.size(); ++i) {
    const Question& q = questions[i];
    while (true) {
      std::optional<std::string> line = in.Read(fmt::format("{} [{}]: ", q.ask, (*b).*q.answer));
      if (!line) return false;
      std::string answer(Trim(*line));
      if (answer.empty()) answer = (*b).*q.answer;
      GuidedBooking candidate = GuidedDefaults(p);
      for (size_t j = 0; j < i; ++j) candidate.*questions[j].answer = (*b).*questions[j].answer;
      candidate.*q.answer = answer;
      Status ok = check(candidate);
      if (ok) {
        (*b).*q.answer = answer;
        break;
      }
      if (ok.error().kind != ErrorKind::kInvalid) return std::unexpected(ok.error());
      std::fprintf(out, "  not accepted: %s; answer %s\n", ok.error().message.c_str(), q.accepted.c_str());
    }
  }
  return true;
}

BookingArgs ToBookingArgs(const GuidedBooking& b) {
  BookingArgs a;
  a.count = b.count;
  a.duration = b.duration;
  a.mode = b.mode;
  if (!Is(b.gpus, "auto")) a.gpu = b.gpus;
  if (!Is(b.memory, "auto")) a.mem = b.memory;
  if (!Is(b.start, "now")) a.at = b.start;
  if (!b.cpus.empty()) a.cpus = b.cpus;
  if (!b.ram.empty()) a.ram = b.ram;
  return a;
}

std::vector<std::string> BookingWords(const GuidedBooking& b) {
  BookingArgs a = ToBookingArgs(b);
  std::vector<std::string> words;
  if (engine::ParseMode(b.mode) == engine::Mode::kExclusive) words.push_back("x");
  words.push_back(*a.count);
  words.push_back(*a.duration);
  for (const auto& [option, value] :
       {std::pair{"--gpu", a.gpu}, {"--mem", a.mem}, {"--at", a.at}, {"--cpus", a.cpus}, {"--ram", a.ram}})
    if (value) words.insert(words.end(), {option, *value});
  return words;
}

std::string CommandLine(const std::vector<std::string>& words) {
  std::string line = "bk";
  for (const auto& w : words) line += " " + (NeedsQuotes(w) ? shell::ShellQuote(w) : w);
  return line;
}

}  // namespace bk::cli
