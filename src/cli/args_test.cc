#include "cli/args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bk::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A small command with every kind of argument the facade offers.
struct Demo {
  ArgSpec spec{"bk demo", "A demonstration command."};
  std::optional<std::string> first, second, gpu, exclude, start, at, name;
  bool json = false, verbose = false;
  Demo() {
    spec.Positional("first", &first, "the first positional");
    spec.Positional("second", &second, "the second positional");
    spec.Option("-g,--gpu", &gpu, "GPU list", "LIST");
    spec.Option("-e,--exclude", &exclude, "excluded GPUs", "LIST");
    spec.Excludes("-g,--gpu", "-e,--exclude");
    spec.Option("--start", &start, "exact start", "TIME");
    spec.Option("-t,--at", &at, "friendly start", "TIME");
    spec.Excludes("--start", "-t,--at");
    spec.Option("--name", &name, "a name");
    spec.Flag("--json", &json, "JSON output");
    spec.Flag("-v,--verbose", &verbose, "more output");
    spec.Footer("Examples:\n  bk demo 1 2");
  }
};

// A fresh Demo that has accepted `args` (a Demo stays where it is built: its
// spec points into it).
std::unique_ptr<Demo> Accepting(const std::vector<std::string>& args) {
  auto d = std::make_unique<Demo>();
  auto s = d->spec.Parse(args);
  EXPECT_TRUE(s.has_value()) << s.error().message;
  return d;
}

// Why a fresh Demo refuses `args` ("<accepted>" when it does not); every
// refusal is a usage error.
std::string DemoRefusal(const std::vector<std::string>& args) {
  Demo d;
  auto s = d.spec.Parse(args);
  if (s) return "<accepted>";
  EXPECT_EQ(s.error().kind, ErrorKind::kUsage);
  return s.error().message;
}

TEST(ArgSpecTest, PositionalsFillInOrder) {
  Demo d;
  ASSERT_TRUE(d.spec.Parse({"1", "30m"}).has_value());
  EXPECT_EQ(d.first, "1");
  EXPECT_EQ(d.second, "30m");
  EXPECT_FALSE(d.gpu.has_value());
  EXPECT_FALSE(d.json);
  EXPECT_FALSE(d.spec.help_requested());
}

TEST(ArgSpecTest, AbsentValuesStayUnset) {
  Demo d;
  ASSERT_TRUE(d.spec.Parse({}).has_value());
  EXPECT_FALSE(d.first.has_value());
  EXPECT_FALSE(d.second.has_value());
  EXPECT_FALSE(d.name.has_value());
  Demo one;
  ASSERT_TRUE(one.spec.Parse({"4"}).has_value());
  EXPECT_EQ(one.first, "4");
  EXPECT_FALSE(one.second.has_value());
}

TEST(ArgSpecTest, ValuesAreTakenAsText) {
  Demo d;
  ASSERT_TRUE(d.spec.Parse({"007", "1h30m", "--name", "  spaced  "}).has_value());
  EXPECT_EQ(d.first, "007");
  EXPECT_EQ(d.second, "1h30m");
  EXPECT_EQ(d.name, "  spaced  ");
}

TEST(ArgSpecTest, EmptyValueIsPresent) {
  Demo d;
  ASSERT_TRUE(d.spec.Parse({"--name", ""}).has_value());
  ASSERT_TRUE(d.name.has_value());
  EXPECT_EQ(*d.name, "");
}

TEST(ArgSpecTest, EqualsAndAttachedShortForms) {
  auto eq = Accepting({"--gpu=0,3", "--name=x=y"});
  EXPECT_EQ(eq->gpu, "0,3");
  EXPECT_EQ(eq->name, "x=y");

  auto attached = Accepting({"-g2"});
  EXPECT_EQ(attached->gpu, "2");

  auto attached_list = Accepting({"1", "-g0,1", "30m"});
  EXPECT_EQ(attached_list->gpu, "0,1");
  EXPECT_EQ(attached_list->first, "1");
  EXPECT_EQ(attached_list->second, "30m");

  auto separate = Accepting({"-g", "3", "-t", "+30m"});
  EXPECT_EQ(separate->gpu, "3");
  EXPECT_EQ(separate->at, "+30m");

  auto long_alias = Accepting({"--at", "tomorrow 09:00"});
  EXPECT_EQ(long_alias->at, "tomorrow 09:00");
}

TEST(ArgSpecTest, OptionsAndPositionalsInAnyOrder) {
  auto d = Accepting({"--json", "2", "--gpu", "1", "45m", "-v"});
  EXPECT_EQ(d->first, "2");
  EXPECT_EQ(d->second, "45m");
  EXPECT_EQ(d->gpu, "1");
  EXPECT_TRUE(d->json);
  EXPECT_TRUE(d->verbose);
}

TEST(ArgSpecTest, RepeatedOptionLastWins) {
  auto d = Accepting({"--gpu", "1", "--gpu", "2", "-g3"});
  EXPECT_EQ(d->gpu, "3");

  auto mixed = Accepting({"-g", "0", "--gpu=5"});
  EXPECT_EQ(mixed->gpu, "5");

  auto names = Accepting({"--name", "a", "--name", "b"});
  EXPECT_EQ(names->name, "b");
}

TEST(ArgSpecTest, RepeatedFlagIsAccepted) {
  auto d = Accepting({"--json", "--json", "-v", "--verbose"});
  EXPECT_TRUE(d->json);
  EXPECT_TRUE(d->verbose);
}

TEST(ArgSpecTest, ExcludedPairRefused) {
  Demo d;
  auto s = d.spec.Parse({"--gpu", "1", "--exclude", "2"});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::kUsage);
  EXPECT_THAT(s.error().message, HasSubstr("--gpu excludes --exclude"));
  EXPECT_THAT(s.error().message, HasSubstr("see `bk demo --help`"));
  // Nothing is bound from a refused command line.
  EXPECT_FALSE(d.gpu.has_value());
  EXPECT_FALSE(d.exclude.has_value());

  Demo starts;
  auto t = starts.spec.Parse({"--start", "now", "-t", "+1h"});
  ASSERT_FALSE(t.has_value());
  EXPECT_THAT(t.error().message, HasSubstr("--start"));

  // Either alone is fine.
  Demo alone;
  EXPECT_TRUE(alone.spec.Parse({"-e", "2"}).has_value());
  EXPECT_EQ(alone.exclude, "2");
}

TEST(ArgSpecTest, UnknownFlagNamesTheProgramsHelp) {
  Demo d;
  auto s = d.spec.Parse({"1", "--bogus"});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::kUsage);
  EXPECT_THAT(s.error().message, HasSubstr("--bogus"));
  EXPECT_THAT(s.error().message, HasSubstr("not expected"));
  EXPECT_THAT(s.error().message, HasSubstr("; see `bk demo --help`"));
  // The message starts in lower case (it follows "bk: ").
  ASSERT_FALSE(s.error().message.empty());
  EXPECT_FALSE(std::isupper(static_cast<unsigned char>(s.error().message[0]))) << s.error().message;

  ArgSpec other("bk x", "exclusive");
  auto o = other.Parse({"-Z"});
  ASSERT_FALSE(o.has_value());
  EXPECT_THAT(o.error().message, HasSubstr("see `bk x --help`"));
}

TEST(ArgSpecTest, UniquePrefixOfALongOptionIsThatOption) {
  Demo d;
  auto s = d.spec.Parse({"--gp", "1", "--na=x", "--verb", "--js", "--st", "now"});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(d.gpu, "1");
  EXPECT_EQ(d.name, "x");
  EXPECT_EQ(d.start, "now");
  EXPECT_TRUE(d.verbose);
  EXPECT_TRUE(d.json);
}

TEST(ArgSpecTest, ExactNameWinsOverLongerNames) {
  ArgSpec spec("bk demo", "");
  std::optional<std::string> ex, exg;
  spec.Option("--exclude-gpu", &exg, "");
  spec.Option("--exclude", &ex, "");
  ASSERT_TRUE(spec.Parse({"--exclude", "2"}).has_value());
  EXPECT_EQ(ex, "2");
  EXPECT_FALSE(exg.has_value());
}

TEST(ArgSpecTest, AmbiguousPrefixNamesTheCandidates) {
  ArgSpec spec("bk demo", "");
  std::optional<std::string> ex, exg;
  spec.Option("-e,--exclude-gpu,--exclude", &exg, "");
  spec.Option("--exact", &ex, "");
  auto s = spec.Parse({"--ex", "2"});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::kUsage);
  EXPECT_EQ(s.error().message,
            "ambiguous option: --ex could match --exclude-gpu, --exclude, --exact; see `bk demo --help`");
  // A prefix of several names of one option is that option.
  ASSERT_TRUE(spec.Parse({"--excl=3"}).has_value());
  EXPECT_EQ(exg, "3");
}

TEST(ArgSpecTest, ArgumentsAfterTheSeparatorAreNotExpanded) {
  Demo d;
  ASSERT_TRUE(d.spec.Parse({"--", "--gp"}).has_value());
  EXPECT_EQ(d.first, "--gp");
  EXPECT_FALSE(d.gpu.has_value());
}

TEST(ArgSpecTest, TooManyPositionalsRefused) {
  EXPECT_THAT(DemoRefusal({"1", "2", "3"}), AllOf(HasSubstr("not expected: 3"), HasSubstr("--help")));
}

TEST(ArgSpecTest, MissingOptionValueRefused) {
  EXPECT_THAT(DemoRefusal({"--gpu"}), AllOf(HasSubstr("gpu"), HasSubstr("see `bk demo --help`")));
}

TEST(ArgSpecTest, FlagsTakeNoValue) {
  Demo d;
  auto s = d.spec.Parse({"--json=maybe"});
  EXPECT_FALSE(s.has_value());
}

TEST(ArgSpecTest, HelpSetsHelpRequestedInsteadOfFailing) {
  for (const char* h : {"-h", "--help"}) {
    Demo d;
    auto s = d.spec.Parse({"1", h});
    ASSERT_TRUE(s.has_value()) << h << ": " << s.error().message;
    EXPECT_TRUE(d.spec.help_requested()) << h;
  }
  // Help wins over otherwise bad arguments, before or after it.
  for (std::vector<std::string> argv :
       {std::vector<std::string>{"-h", "--bogus"}, std::vector<std::string>{"--bogus", "--help"}}) {
    Demo d;
    auto s = d.spec.Parse(argv);
    ASSERT_TRUE(s.has_value()) << s.error().message;
    EXPECT_TRUE(d.spec.help_requested());
  }
  Demo plain;
  ASSERT_TRUE(plain.spec.Parse({"1"}).has_value());
  EXPECT_FALSE(plain.spec.help_requested());
}

TEST(ArgSpecTest, HelpTextNamesProgramOptionsAndFooter) {
  Demo d;
  std::string help = d.spec.Help();
  EXPECT_THAT(help, HasSubstr("bk demo"));
  EXPECT_THAT(help, HasSubstr("A demonstration command."));
  EXPECT_THAT(help, HasSubstr("--gpu"));
  EXPECT_THAT(help, HasSubstr("LIST"));
  EXPECT_THAT(help, HasSubstr("--json"));
  EXPECT_THAT(help, HasSubstr("show this help"));
  EXPECT_THAT(help, HasSubstr("Examples:"));
}

TEST(ArgSpecTest, DoubleDashEndsOptions) {
  auto d = Accepting({"--", "-1"});
  EXPECT_EQ(d->first, "-1");
}

TEST(ArgSpecTest, ExcludesWithUnknownNamesIsHarmless) {
  ArgSpec spec("bk y", "y");
  std::optional<std::string> a;
  spec.Option("--a", &a, "a");
  spec.Excludes("--a", "--nope");
  auto s = spec.Parse({"--a", "1"});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(a, "1");
}

TEST(WholeNumberOptionTest, AbsentGivesTheDefault) {
  auto n = WholeNumberOption(std::nullopt, 1, 20, 5, "bad");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 5);
}

TEST(WholeNumberOptionTest, AcceptsTheBoundsAndTrims) {
  EXPECT_EQ(WholeNumberOption(" 1 ", 1, 20, 5, "bad").value_or(-1), 1);
  EXPECT_EQ(WholeNumberOption("20", 1, 20, 5, "bad").value_or(-1), 20);
  EXPECT_EQ(WholeNumberOption("0", 0, 3, 1, "bad").value_or(-1), 0);
}

TEST(WholeNumberOptionTest, OutOfRangeOrNotANumberFailsWithTheCommandsWords) {
  for (const char* text : {"0", "21", "-1", "", "1.5", "x", "2x"}) {
    auto n = WholeNumberOption(text, 1, 20, 5, "--limit must be between 1 and 20");
    ASSERT_FALSE(n.has_value()) << text;
    EXPECT_EQ(n.error().kind, ErrorKind::kInvalid) << text;
    EXPECT_EQ(n.error().message, "--limit must be between 1 and 20") << text;
  }
}

TEST(LimitOptionTest, OneToAThousand) {
  EXPECT_EQ(LimitOption(std::nullopt, 100).value_or(-1), 100);
  EXPECT_EQ(LimitOption("1000", 100).value_or(-1), 1000);
  auto over = LimitOption("1001", 100);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().message, "--limit must be between 1 and 1000");
}

TEST(ArgSpecTest, HelpSaysWhichOptionsExcludeEachOtherInWords) {
  std::string help = Demo().spec.Help();
  EXPECT_THAT(help, Not(HasSubstr("Excludes")));
  EXPECT_THAT(help, HasSubstr("  -g,--gpu LIST               GPU list (not with --exclude)\n"));
  EXPECT_THAT(help, HasSubstr("  --start TIME                exact start (not with --at)\n"));
}

TEST(ArgSpecTest, NeededPositionalsShowWithoutBrackets) {
  std::optional<std::string> count, memory;
  ArgSpec spec("bk demo", "A demonstration command.");
  spec.NeededPositional("count", &count, "how many");
  spec.Positional("memory", &memory, "how much");
  EXPECT_THAT(spec.Help(), HasSubstr("Usage: bk demo [OPTIONS] count [memory]\n"));
  // Parsing is the command's business: absent, it stays unset.
  ASSERT_TRUE(spec.Parse({}).has_value());
  EXPECT_FALSE(count.has_value());
}

TEST(ArgSpecTest, OptionsHelpIsTheOptionsList) {
  std::string options = Demo().spec.OptionsHelp();
  EXPECT_THAT(options, StartsWith("  -h,--help"));
  EXPECT_THAT(options, AllOf(HasSubstr("--verbose"), Not(HasSubstr("Options:")), Not(HasSubstr("Usage"))));
}

}  // namespace
}  // namespace bk::cli
