#include "worker/spec.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "base/temp_dir_testing.h"
#include "sys/sha256.h"

namespace bk::worker {
namespace {

class SpecTest : public TempDirTest {
 protected:
  JobSpec Sample() {
    JobSpec s;
    s.spec_id = "79133ddf-0000-4000-8000-000000000001";
    s.uid = getuid();
    s.argv = {"python", "train.py", "--lr", "0.1"};
    s.cwd = "/tmp";
    s.path = "/usr/bin:/bin";
    s.created_at = 1795977000;
    s.digest = Digest(s);
    return s;
  }
};

TEST(SummaryTest, FollowsTheOriginal) {
  EXPECT_EQ(Summary({"sh", "-c", "echo hi"}), "sh (+2 args)");
  EXPECT_EQ(Summary({"echo", "hi"}), "echo (+1 args)");
  EXPECT_EQ(Summary({"/usr/bin/python3", "/home/a/train.py", "--lr", "1"}), "python3 train.py (+2 args)");
  EXPECT_EQ(Summary({"python", "-m", "torch.distributed.run", "x"}),
            "python -m torch.distributed.run (+1 args)");
  EXPECT_EQ(Summary({"python3", "-c", "print(1)"}), "python3 -c (+1 args)");
  EXPECT_EQ(Summary({"nvidia-smi"}), "nvidia-smi");
  EXPECT_LE(Summary({std::string(500, 'a')}).size(), 200u);
  EXPECT_EQ(Summary({"bad\nname"}).find('\n'), std::string::npos);
}

TEST(CanonicalTest, CompactSortedAscii) {
  JobSpec s;
  s.uid = 7;
  s.argv = {"echo", "caf\xc3\xa9"};
  s.cwd = "/w";
  s.path = "/bin";
  EXPECT_EQ(
      CanonicalJson(s),
      "{\"argv\":[\"echo\",\"caf\\u00e9\"],\"cwd\":\"/w\",\"environment\":{\"PATH\":\"/bin\"},\"uid\":7,"
      "\"version\":2}");
  EXPECT_EQ(Digest(s), sys::Sha256Hex(CanonicalJson(s)));
}

TEST(ValidateTest, RefusesBadCommands) {
  EXPECT_TRUE(ValidateCommand({"echo"}, "/", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand({}, "/", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand({""}, "/", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand({"--json"}, "/", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand({std::string("a\0b", 3)}, "/", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand(std::vector<std::string>(257, "x"), "/", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand({"echo"}, "relative", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand({"echo"}, "/no/such/dir/here", "/bin").has_value());
  EXPECT_FALSE(ValidateCommand({"echo"}, "/", "/bin\n").has_value());
}

TEST_F(SpecTest, WriteThenReadRoundTrips) {
  JobSpec s = Sample();
  ASSERT_TRUE(WriteSpec(root(), s).has_value());
  struct stat st {};
  ASSERT_EQ(stat((Path("") + s.spec_id + ".json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  auto back = ReadSpec(root(), s.spec_id, getuid(), s.digest);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->argv, s.argv);
  EXPECT_EQ(back->path, s.path);
  EXPECT_FALSE(WriteSpec(root(), s).has_value());  // O_EXCL: never overwritten
}

TEST_F(SpecTest, KeepBookingIsCoveredByTheDigestAndRoundTrips) {
  JobSpec s = Sample();
  std::string plain = CanonicalJson(s);
  EXPECT_EQ(plain.find("keep_booking"), std::string::npos);  // older specs keep their digests
  s.keep_booking = true;
  EXPECT_NE(CanonicalJson(s).find("\"keep_booking\":true"), std::string::npos);
  EXPECT_NE(Digest(s), Sample().digest);
  s.digest = Digest(s);
  ASSERT_TRUE(WriteSpec(root(), s).has_value());
  auto back = ReadSpec(root(), s.spec_id, getuid(), s.digest);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_TRUE(back->keep_booking);
}

TEST_F(SpecTest, CaptureRefusesAProgramThatCannotStart) {
  auto missing = CaptureSpec({"no-such-program-for-bk-tests", "x"}, getuid(), 0, "/");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(missing.error().message.rfind("no-such-program-for-bk-tests: command not found on PATH; ", 0), 0u)
      << missing.error().message;
  std::string plain = Path("plain.sh");
  std::ofstream(plain) << "#!/bin/sh\n";
  chmod(plain.c_str(), 0644);
  auto not_executable = CaptureSpec({plain}, getuid(), 0, "/");
  ASSERT_FALSE(not_executable.has_value());
  EXPECT_NE(not_executable.error().message.find("not an executable file"), std::string::npos);
  auto relative = CaptureSpec({"./plain.sh"}, getuid(), 0, root());
  ASSERT_FALSE(relative.has_value());  // resolved against the job's working directory
  EXPECT_NE(relative.error().message.find("not an executable file"), std::string::npos);
  chmod(plain.c_str(), 0755);
  EXPECT_TRUE(CaptureSpec({"./plain.sh"}, getuid(), 0, root()).has_value());
  auto kept = CaptureSpec({"sh", "-c", "true"}, getuid(), 0, "/", true);
  ASSERT_TRUE(kept.has_value()) << kept.error().message;
  EXPECT_TRUE(kept->keep_booking);
}

TEST_F(SpecTest, TamperingIsDetected) {
  JobSpec s = Sample();
  ASSERT_TRUE(WriteSpec(root(), s).has_value());
  EXPECT_FALSE(
      ReadSpec(root(), s.spec_id, getuid(), std::string(64, '0')).has_value());  // ledger digest differs
  std::string file = Path("") + s.spec_id + ".json";
  {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find("train.py");
    text.replace(at, 8, "evil.py!");
    std::ofstream out(file, std::ios::trunc);
    out << text;
  }
  auto r = ReadSpec(root(), s.spec_id, getuid(), s.digest);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "private job spec integrity check failed");
}

TEST_F(SpecTest, LooseModesAndLinksAreRefused) {
  JobSpec s = Sample();
  ASSERT_TRUE(WriteSpec(root(), s).has_value());
  std::string file = Path("") + s.spec_id + ".json";
  chmod(file.c_str(), 0644);
  EXPECT_FALSE(ReadSpec(root(), s.spec_id, getuid(), s.digest).has_value());
  chmod(file.c_str(), 0600);
  ASSERT_EQ(link(file.c_str(), Path("hard").c_str()), 0);
  EXPECT_FALSE(ReadSpec(root(), s.spec_id, getuid(), s.digest).has_value());
  EXPECT_FALSE(RemoveSpec(root(), s.spec_id, getuid()).has_value());  // a linked file is left alone
  unlink(Path("hard").c_str());
  EXPECT_TRUE(RemoveSpec(root(), s.spec_id, getuid()).has_value());
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_FALSE(ReadSpec(root(), "../../etc/passwd", getuid(), s.digest).has_value());
}

// Found by fuzzing: numbers of the wrong kind are refused as corrupt, not
// converted (1e300 into an int is undefined behaviour; 2^32 + UID wrapped).
TEST(ParseSpecTest, NumbersOfTheWrongKindAreCorrupt) {
  JobSpec s;
  s.spec_id = "79133ddf-0000-4000-8000-000000000001";
  s.uid = 1000;
  s.argv = {"python", "train.py"};
  s.cwd = "/tmp";
  s.path = "/usr/bin:/bin";
  s.digest = Digest(s);  // as if the file named UID 1000
  auto text = [&](const std::string& version, const std::string& uid) {
    return R"({"version":)" + version + R"(,"spec_id":")" + s.spec_id + R"(","uid":)" + uid +
           R"(,"argv":["python","train.py"],"cwd":"/tmp","environment":{"PATH":"/usr/bin:/bin"},"digest":")" +
           s.digest + R"("})";
  };
  ASSERT_TRUE(ParseSpec(text("2", "1000"), s.spec_id, 1000, s.digest).has_value());
  for (const auto& [version, uid] : std::vector<std::pair<std::string, std::string>>{{"1e300", "1000"},
                                                                                     {"2.0", "1000"},
                                                                                     {"2", "-1e300"},
                                                                                     {"2", "1000.0"},
                                                                                     {"2", "4294968296"},
                                                                                     {"2", "-1"}}) {
    auto r = ParseSpec(text(version, uid), s.spec_id, 1000, s.digest);
    ASSERT_FALSE(r.has_value()) << version << " " << uid;
    EXPECT_EQ(r.error().kind, ErrorKind::kCorrupt);
  }
}

}  // namespace
}  // namespace bk::worker
