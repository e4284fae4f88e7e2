#include "sys/node.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/temp_dir_testing.h"
#include "sys/sha256.h"

namespace bk::sys {
namespace {

TEST(SanitizeHostname, Table) {
  EXPECT_EQ(SanitizeHostname("gpu-01"), "gpu-01");
  EXPECT_EQ(SanitizeHostname("  gpu-01 \n"), "gpu-01 ?");  // sanitized first, then trimmed
  EXPECT_EQ(SanitizeHostname("  gpu-01  "), "gpu-01");
  EXPECT_EQ(SanitizeHostname(""), "unknown");
  EXPECT_EQ(SanitizeHostname("    "), "unknown");
  EXPECT_EQ(SanitizeHostname("a\x01"
                             "b"),
            "a?b");
  EXPECT_EQ(SanitizeHostname("h\xc3\xa9llo"), "h?llo");           // one '?' per UTF-8 character
  EXPECT_EQ(SanitizeHostname("\xe6\x9c\x8d\xe5\x8a\xa1"), "??");  // two CJK characters
  EXPECT_EQ(SanitizeHostname("a\x7f"), "a?");
  EXPECT_EQ(SanitizeHostname(std::string(300, 'h')), std::string(255, 'h'));
  EXPECT_EQ(SanitizeHostname(std::string(254, 'h') + "  x"), std::string(254, 'h'));
}

TEST(ComputeNodeIdentity, MachineIdSeed) {
  NodeIdentity node = ComputeNodeIdentity("abc", "gpu-01");
  EXPECT_EQ(node.id, "8ba594b2460ddc7c0f48");
  EXPECT_EQ(node.id, Sha256Hex("machine:abc").substr(0, 20));
  EXPECT_EQ(node.hostname, "gpu-01");
}

TEST(ComputeNodeIdentity, HostnameSeedWithoutMachineId) {
  NodeIdentity node = ComputeNodeIdentity("", " gpu-01 ");
  EXPECT_EQ(node.id, "485a83d109e9e7254745");
  EXPECT_EQ(node.hostname, "gpu-01");
  EXPECT_EQ(ComputeNodeIdentity("", "").id, Sha256Hex("hostname:unknown").substr(0, 20));
}

class NodeFiles : public TempDirTest {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = Path(name);
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(NodeFiles, FirstReadableNonEmptyFileWins) {
  std::string second = Write("dbus", "  0123abcd\n");
  EXPECT_EQ(ReadNodeIdentity({Path("missing"), second}, "h").id, Sha256Hex("machine:0123abcd").substr(0, 20));
  std::string blank = Write("blank", " \n");
  EXPECT_EQ(ReadNodeIdentity({blank, second}, "h").id, Sha256Hex("machine:0123abcd").substr(0, 20));
  std::string first = Write("etc", "feedface\n");
  EXPECT_EQ(ReadNodeIdentity({first, second}, "h").id, Sha256Hex("machine:feedface").substr(0, 20));
}

TEST_F(NodeFiles, OnlyFirst256Characters) {
  std::string id(256, 'a');
  std::string path = Write("long", id + "bbbb\n");
  EXPECT_EQ(ReadNodeIdentity({path}, "h").id, Sha256Hex("machine:" + id).substr(0, 20));
}

TEST_F(NodeFiles, NoMachineIdUsesHostname) {
  EXPECT_EQ(ReadNodeIdentity({Path("a"), Path("b")}, "gpu-01").id, "485a83d109e9e7254745");
}

TEST(LocalNode, StableAndWellFormed) {
  const NodeIdentity& a = LocalNode();
  const NodeIdentity& b = LocalNode();
  EXPECT_EQ(&a, &b);
  ASSERT_EQ(a.id.size(), 20u);
  for (char c : a.id) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << a.id;
  EXPECT_FALSE(a.hostname.empty());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(a.hostname, SanitizeHostname(host));
  EXPECT_EQ(a.id, ReadNodeIdentity({"/etc/machine-id", "/var/lib/dbus/machine-id"}, host).id);
}

}  // namespace
}  // namespace bk::sys
