#include "server/unix_socket.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/temp_dir_testing.h"
#include "server/passed_file.h"

namespace bk::server {
namespace {

using ::testing::HasSubstr;

class UnixSocketTest : public TempDirTest {
 protected:
  UnixSocketTest() : TempDirTest("bk-sock") {}
  void SetUp() override { old_umask_ = umask(022); }
  void TearDown() override {
    umask(old_umask_);
    for (int fd : fds_) close(fd);
  }
  int Keep(int fd) {
    fds_.push_back(fd);
    return fd;
  }
  mode_t ModeOf(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
    return st.st_mode;
  }
  int Listen(mode_t mode) {
    auto fd = ListenUnix(path_, mode, std::nullopt, getuid());
    EXPECT_TRUE(fd.has_value()) << (fd ? "" : fd.error().message);
    return fd ? Keep(*fd) : -1;
  }
  // A client connected to path_ with `timeout_ms`, closed at the end; -1 when it cannot connect.
  int Connect(int timeout_ms) {
    auto fd = ConnectUnix(path_, timeout_ms);
    EXPECT_TRUE(fd.has_value()) << (fd ? "" : fd.error().message);
    return fd ? Keep(*fd) : -1;
  }
  // The peer of `fd` is this very process.
  static void ExpectOwnCredentials(int fd) {
    auto cred = PeerCredentials(fd);
    ASSERT_TRUE(cred.has_value()) << cred.error().message;
    EXPECT_EQ(cred->uid, getuid());
    EXPECT_EQ(cred->gid, getgid());
    EXPECT_EQ(cred->pid, getpid());
  }
  int AcceptOne(int listener) {
    pollfd p{listener, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 5000), 1);
    int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    EXPECT_GE(c, 0) << std::strerror(errno);
    return c >= 0 ? Keep(c) : -1;
  }

  std::string path_ = Path("bk.sock");
  mode_t old_umask_ = 0;
  std::vector<int> fds_;
};

TEST_F(UnixSocketTest, ModeIsExactUnderUmask022) {
  int fd = Listen(0666);
  ASSERT_GE(fd, 0);
  mode_t m = ModeOf(path_);
  EXPECT_TRUE(S_ISSOCK(m));
  EXPECT_EQ(m & 07777, 0666u);
  EXPECT_EQ(umask(022), 022u) << "the process umask is restored";
}

TEST_F(UnixSocketTest, GroupModeIsExact) {
  int fd = Listen(0660);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ModeOf(path_) & 07777, 0660u);
}

TEST_F(UnixSocketTest, OwnerOnlyModeIsExact) {
  umask(0);
  int fd = Listen(0600);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ModeOf(path_) & 07777, 0600u);
}

TEST_F(UnixSocketTest, ListenerIsNonBlockingAndCloseOnExec) {
  int fd = Listen(0600);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
  EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  // Nothing waiting: accept does not block.
  EXPECT_LT(accept(fd, nullptr, nullptr), 0);
  EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
}

TEST_F(UnixSocketTest, GroupIsSetWhenGiven) {
  gid_t g = getgid();
  auto fd = ListenUnix(path_, 0660, g, getuid());
  ASSERT_TRUE(fd.has_value()) << fd.error().message;
  Keep(*fd);
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, g);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
}

TEST_F(UnixSocketTest, StaleSocketIsReplaced) {
  auto first = ListenUnix(path_, 0600, std::nullopt, getuid());
  ASSERT_TRUE(first.has_value()) << first.error().message;
  struct stat before {};
  ASSERT_EQ(lstat(path_.c_str(), &before), 0);
  close(*first);  // the daemon died: its socket file stays behind
  ASSERT_TRUE(std::filesystem::exists(path_));
  auto c = ConnectUnix(path_, 1000);
  EXPECT_FALSE(c.has_value()) << "nobody listens on a stale socket";

  int fd = Listen(0666);
  ASSERT_GE(fd, 0);
  struct stat after {};
  ASSERT_EQ(lstat(path_.c_str(), &after), 0);
  EXPECT_TRUE(S_ISSOCK(after.st_mode));
  EXPECT_EQ(after.st_mode & 07777, 0666u);
  EXPECT_EQ(before.st_mode & 07777, 0600u);  // the stale one had another mode: this is a new bind
  // And it works.
  ASSERT_GE(Connect(1000), 0);
  EXPECT_GE(AcceptOne(fd), 0);
}

TEST_F(UnixSocketTest, StaleSocketOfAnotherOwnerIsRefused) {
  auto first = ListenUnix(path_, 0600, std::nullopt, getuid());
  ASSERT_TRUE(first.has_value());
  close(*first);
  auto again = ListenUnix(path_, 0600, std::nullopt, getuid() + 1);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(again.error().message, HasSubstr("not this server's socket"));
  EXPECT_TRUE(S_ISSOCK(ModeOf(path_))) << "left in place";
}

TEST_F(UnixSocketTest, RegularFileAtThePathIsRefusedAndLeftIntact) {
  {
    std::ofstream f(path_);
    f << "precious data";
  }
  chmod(path_.c_str(), 0640);
  auto fd = ListenUnix(path_, 0666, std::nullopt, getuid());
  ASSERT_FALSE(fd.has_value());
  EXPECT_EQ(fd.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(fd.error().message, HasSubstr(path_));
  EXPECT_THAT(fd.error().message, HasSubstr("move it away"));
  mode_t m = ModeOf(path_);
  EXPECT_TRUE(S_ISREG(m));
  EXPECT_EQ(m & 07777, 0640u);
  std::ifstream in(path_);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious data");
}

TEST_F(UnixSocketTest, DirectoryAndSymlinkAtThePathAreRefused) {
  ASSERT_EQ(mkdir(path_.c_str(), 0700), 0);
  auto d = ListenUnix(path_, 0666, std::nullopt, getuid());
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(std::filesystem::is_directory(path_));
  rmdir(path_.c_str());

  // A symlink to a real socket is not this server's socket either (lstat).
  std::string real = Path("real.sock");
  auto r = ListenUnix(real, 0600, std::nullopt, getuid());
  ASSERT_TRUE(r.has_value());
  Keep(*r);
  ASSERT_EQ(symlink(real.c_str(), path_.c_str()), 0);
  auto s = ListenUnix(path_, 0666, std::nullopt, getuid());
  ASSERT_FALSE(s.has_value());
  EXPECT_TRUE(std::filesystem::is_symlink(path_));
  EXPECT_TRUE(S_ISSOCK(ModeOf(real))) << "the link's target is untouched";
}

TEST_F(UnixSocketTest, TooLongPathIsInvalid) {
  std::string longp = Path(std::string(200, 's'));
  auto fd = ListenUnix(longp, 0600, std::nullopt, getuid());
  ASSERT_FALSE(fd.has_value());
  EXPECT_EQ(fd.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(fd.error().message, HasSubstr("too long"));
  auto c = ConnectUnix(longp, 100);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().kind, ErrorKind::kInvalid);
}

TEST_F(UnixSocketTest, MissingDirectoryIsAnIoError) {
  auto fd = ListenUnix(Path("no/such/dir/bk.sock"), 0600, std::nullopt, getuid());
  ASSERT_FALSE(fd.has_value());
  EXPECT_EQ(fd.error().kind, ErrorKind::kIo);
}

TEST_F(UnixSocketTest, PeerCredentialsOverASocketpair) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Keep(sv[0]);
  Keep(sv[1]);
  for (int fd : sv) {
    ExpectOwnCredentials(fd);
  }
}

TEST_F(UnixSocketTest, PeerCredentialsOverARealConnection) {
  int listener = Listen(0600);
  ASSERT_GE(listener, 0);
  int client = Connect(1000);
  ASSERT_GE(client, 0);
  int server_side = AcceptOne(listener);
  ASSERT_GE(server_side, 0);
  ExpectOwnCredentials(server_side);
  // The client sees the listener's process too.
  auto back = PeerCredentials(client);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->pid, getpid());

  // Bytes flow both ways.
  ASSERT_EQ(write(client, "ping\n", 5), 5);
  char buf[16] = {};
  pollfd p{server_side, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  ASSERT_EQ(read(server_side, buf, sizeof(buf)), 5);
  EXPECT_EQ(std::string(buf, 5), "ping\n");
}

TEST_F(UnixSocketTest, PeerCredentialsOfAChildProcess) {
  int listener = Listen(0600);
  ASSERT_GE(listener, 0);
  pid_t child = fork();
  if (child == 0) {
    auto c = ConnectUnix(path_, 2000);
    if (!c) _exit(1);
    char b;
    (void)!read(*c, &b, 1);  // wait for the parent
    _exit(0);
  }
  int server_side = AcceptOne(listener);
  ASSERT_GE(server_side, 0);
  auto cred = PeerCredentials(server_side);
  ASSERT_TRUE(cred.has_value()) << cred.error().message;
  EXPECT_EQ(cred->pid, child);
  EXPECT_EQ(cred->uid, getuid());
  ASSERT_EQ(write(server_side, "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(UnixSocketTest, PeerCredentialsOfANonSocketIsRefused) {
  int fd = Keep(open("/dev/null", O_RDONLY | O_CLOEXEC));
  auto cred = PeerCredentials(fd);
  ASSERT_FALSE(cred.has_value());
  EXPECT_EQ(cred.error().kind, ErrorKind::kPermission);
  // An unconnected socket has no peer either.
  int s = Keep(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  auto none = PeerCredentials(s);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().kind, ErrorKind::kPermission);
  EXPECT_FALSE(PeerCredentials(-1).has_value());
}

TEST_F(UnixSocketTest, ConnectToMissingPathIsUnavailable) {
  auto c = ConnectUnix(Path("nobody-here.sock"), 500);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().kind, ErrorKind::kUnavailable);
}

TEST_F(UnixSocketTest, ConnectToARegularFileIsNotAPanic) {
  {
    std::ofstream f(path_);
    f << "x";
  }
  auto c = ConnectUnix(path_, 500);
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().kind, ErrorKind::kInternal);
}

TEST_F(UnixSocketTest, ConnectAppliesTheTimeout) {
  int listener = Listen(0600);
  ASSERT_GE(listener, 0);
  int client = Connect(1500);
  ASSERT_GE(client, 0);
  for (int option : {SO_RCVTIMEO, SO_SNDTIMEO}) {
    timeval tv{};
    socklen_t len = sizeof(tv);
    ASSERT_EQ(getsockopt(client, SOL_SOCKET, option, &tv, &len), 0) << option;
    EXPECT_EQ(tv.tv_sec, 1) << option;
    EXPECT_EQ(tv.tv_usec, 500000) << option;
  }
  EXPECT_TRUE(fcntl(client, F_GETFD) & FD_CLOEXEC);
  // A read with nothing sent gives up after the timeout rather than hanging.
  char b;
  EXPECT_LT(read(client, &b, 1), 0);
  EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
}

// Descriptors open in this process now.
size_t OpenDescriptors() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                           std::filesystem::directory_iterator()));
}

TEST_F(UnixSocketTest, ADescriptorTravelsWithTheFirstByteOfItsLine) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  Keep(pair[0]);
  Keep(pair[1]);
  std::string file = Path("ledger.json");
  std::ofstream(file) << "{\"version\": 1}";
  const size_t before = OpenDescriptors();
  {
    sys::UniqueFd f(open(file.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(SendWithDescriptor(pair[0], "request line\n", f.get()).has_value());
  }
  char buf[64];
  Received got = ReceiveWithDescriptors(pair[1], buf, sizeof(buf));
  ASSERT_EQ(got.n, 13);
  EXPECT_EQ(std::string(buf, 13), "request line\n");
  ASSERT_EQ(got.fds.size(), 1u);
  EXPECT_TRUE(fcntl(got.fds[0].get(), F_GETFD) & FD_CLOEXEC);
  char text[32] = {};
  EXPECT_EQ(pread(got.fds[0].get(), text, sizeof(text), 0), 14);
  EXPECT_STREQ(text, "{\"version\": 1}");
  EXPECT_EQ(OpenDescriptors(), before + 1);
  got.fds.clear();
  EXPECT_EQ(OpenDescriptors(), before);
}

TEST_F(UnixSocketTest, DescriptorsBeyondTheLimitAreClosedByTheKernel) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  Keep(pair[0]);
  Keep(pair[1]);
  const size_t before = OpenDescriptors();
  {
    std::vector<int> many(kMaxReceived + 3, open("/dev/null", O_RDONLY | O_CLOEXEC));
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * (kMaxReceived + 3))] = {};
    char byte = 'x';
    iovec iov{&byte, 1};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * many.size());
    std::memcpy(CMSG_DATA(cm), many.data(), sizeof(int) * many.size());
    ASSERT_EQ(sendmsg(pair[0], &msg, 0), 1);
    close(many[0]);
  }
  char buf[8];
  Received got = ReceiveWithDescriptors(pair[1], buf, sizeof(buf));
  EXPECT_EQ(got.n, 1);
  EXPECT_EQ(got.fds.size(), kMaxReceived);
  got.fds.clear();
  EXPECT_EQ(OpenDescriptors(), before);
}

TEST_F(UnixSocketTest, AHeldDescriptorBelongsToTheLineItCameWith) {
  auto fd = [] { return sys::UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC)); };
  const size_t before = OpenDescriptors();
  {
    PassedFile passed;
    // "ping\n" then "import\n": the descriptor came with the second line (offset 5).
    std::vector<sys::UniqueFd> one;
    one.push_back(fd());
    passed.Arrived(std::move(one), 5);
    EXPECT_FALSE(passed.TakeFor(5).ok()) << "the ping does not get it";
    EXPECT_TRUE(passed.held());
    // A second descriptor while one is held is closed at once.
    std::vector<sys::UniqueFd> another;
    another.push_back(fd());
    passed.Arrived(std::move(another), 0);
    EXPECT_EQ(OpenDescriptors(), before + 1);
    sys::UniqueFd taken = passed.TakeFor(7);
    EXPECT_TRUE(taken.ok());
    EXPECT_FALSE(passed.held());
    // Several at once: none is kept.
    std::vector<sys::UniqueFd> two;
    two.push_back(fd());
    two.push_back(fd());
    passed.Arrived(std::move(two), 0);
    EXPECT_FALSE(passed.held());
    EXPECT_EQ(OpenDescriptors(), before + 1);
    std::vector<sys::UniqueFd> last;
    last.push_back(fd());
    passed.Arrived(std::move(last), 0);
    passed.Reset();
    EXPECT_EQ(OpenDescriptors(), before + 1);
  }
  EXPECT_EQ(OpenDescriptors(), before);
}

}  // namespace
}  // namespace bk::server
