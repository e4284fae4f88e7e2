#include "admin/unit.h"

#include <gtest/gtest.h>

namespace bk::admin {
namespace {

SystemUnitSpec Spec() {
  return {.bk_path = "/usr/local/bin/bk",
          .config_path = "/etc/gpubk/config.json",
          .data_dir = "/var/lib/gpubk",
          .user = "gpubk",
          .group = "gpubk"};
}

bool Has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST(SystemUnitTest, OneNotifyUnitRunningServeAsTheServiceAccount) {
  std::string u = RenderSystemUnit(Spec());
  EXPECT_EQ(u.substr(0, u.find('\n')), kUnitMarker);
  EXPECT_TRUE(Has(u, "\nType=notify\n"));
  EXPECT_TRUE(Has(u, "\nUser=gpubk\nGroup=gpubk\n"));
  EXPECT_TRUE(Has(u, "\nEnvironment=\"BK_CONFIG_FILE=/etc/gpubk/config.json\"\n"));
  EXPECT_TRUE(Has(u, "\nExecStart=\"/usr/local/bin/bk\" server serve --config \"/etc/gpubk/config.json\"\n"));
  EXPECT_TRUE(Has(u, "\nExecReload=/bin/kill -HUP $MAINPID\n"));
  EXPECT_TRUE(Has(u, "\nRestart=on-failure\n"));
  EXPECT_TRUE(Has(u, "\nRuntimeDirectory=gpubk\nRuntimeDirectoryMode=0711\nRuntimeDirectoryPreserve=yes\n"));
  EXPECT_TRUE(Has(u, "\nReadWritePaths=/var/lib/gpubk\n"));
  EXPECT_TRUE(Has(u, "\nWantedBy=multi-user.target\n"));
}

TEST(SystemUnitTest, HardenedWithoutHidingDevicesOrOtherUsersProcesses) {
  std::string u = RenderSystemUnit(Spec());
  for (const char* line : {"NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=read-only",
                           "PrivateTmp=yes", "RestrictAddressFamilies=AF_UNIX", "ProtectKernelTunables=yes",
                           "ProtectKernelModules=yes", "ProtectKernelLogs=yes", "ProtectControlGroups=yes",
                           "RestrictSUIDSGID=yes", "LockPersonality=yes", "UMask=0077"})
    EXPECT_TRUE(Has(u, std::string("\n") + line + "\n")) << line;
  // NVML needs /dev/nvidia*; attribution reads every user's /proc entries.
  for (const char* absent : {"\nPrivateDevices=", "\nProtectClock=", "\nProtectProc=", "\nDevicePolicy="})
    EXPECT_FALSE(Has(u, absent)) << absent;
}

TEST(SystemUnitTest, GroupAccessKeepsOthersOutOfTheRuntimeDirectory) {
  SystemUnitSpec s = Spec();
  s.group = "gpu-users";
  s.group_access = true;
  std::string u = RenderSystemUnit(s);
  EXPECT_TRUE(Has(u, "\nGroup=gpu-users\n"));
  EXPECT_TRUE(Has(u, "\nRuntimeDirectoryMode=0710\n"));
}

TEST(SystemUnitTest, ExecStartQuotesAndEscapesTheExecutable) {
  SystemUnitSpec s = Spec();
  s.bk_path = "/opt/gpu bk/100%/$HOME/\"b\"/bk";
  std::string u = RenderSystemUnit(s);
  EXPECT_TRUE(Has(u, "\nExecStart=\"/opt/gpu bk/100%%/$$HOME/\\\"b\\\"/bk\" server serve --config"));
  EXPECT_EQ(QuoteExecArgument("a$b%c\\d"), "\"a$$b%%c\\\\d\"");
  EXPECT_TRUE(CheckUnitSpec(s).has_value());
}

TEST(SystemUnitTest, RefusesWhatAUnitLineCannotHold) {
  SystemUnitSpec s = Spec();
  s.data_dir = "/var/lib/gpu bk";
  EXPECT_FALSE(CheckUnitSpec(s).has_value());
  s = Spec();
  s.config_path = "/etc/gpubk/100%.json";
  EXPECT_FALSE(CheckUnitSpec(s).has_value());
  s = Spec();
  s.bk_path = "/usr/bin/bk\nExecStartPre=/bin/sh";
  EXPECT_FALSE(CheckUnitSpec(s).has_value());
  s = Spec();
  s.bk_path = "bk";
  EXPECT_FALSE(CheckUnitSpec(s).has_value());
  s = Spec();
  s.user = "gpubk\nUser=root";
  EXPECT_FALSE(CheckUnitSpec(s).has_value());
  s = Spec();
  s.group = "-x";
  EXPECT_FALSE(CheckUnitSpec(s).has_value());
  EXPECT_TRUE(CheckUnitSpec(Spec()).has_value());
}

TEST(LoginHookTest, RunsBkLoginBoundedOnlyInInteractiveShells) {
  std::string h = RenderLoginHook("/opt/it's/bk");
  EXPECT_EQ(h.substr(0, h.find('\n')), kHookMarker);
  EXPECT_TRUE(Has(
      h,
      "case $- in\n  *i*) timeout -k 0.2s 1s '/opt/it'\\''s/bk' login --hook 2>/dev/null || : ;;\nesac\n"));
  // Sourced by the login shell: it must never end that shell.
  EXPECT_FALSE(Has(h, "exit"));
}

}  // namespace
}  // namespace bk::admin
