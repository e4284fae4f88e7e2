#include "admin/unit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "shell/rc_block.h"
#include "worker/unit.h"

namespace bk::admin {
namespace {

bool PlainPath(const std::string& path) {
  return !path.empty() && path[0] == '/' && std::none_of(path.begin(), path.end(), [](unsigned char c) {
    return c <= ' ' || c == 0x7f || c == '"' || c == '\\' || c == '%' || c == '$';
  });
}

bool PlainName(const std::string& name) {
  return !name.empty() && name[0] != '-' && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

}  // namespace

Status CheckUnitSpec(const SystemUnitSpec& s) {
  // ExecStart's words are quoted; the other lines take the value as it is.
  for (const auto* path : {&s.config_path, &s.data_dir})
    if (!PlainPath(*path))
      return Invalid(fmt::format(
          "{} cannot be written into a systemd unit as it is; use a path without spaces, quotes, % or $",
          *path));
  if (s.bk_path.empty() || s.bk_path[0] != '/' ||
      std::any_of(s.bk_path.begin(), s.bk_path.end(), [](unsigned char c) { return c < ' ' || c == 0x7f; }))
    return Invalid(
        fmt::format("the bk executable {} must be an absolute path without control characters", s.bk_path));
  for (const auto* name : {&s.user, &s.group})
    if (!PlainName(*name))
      return Invalid(fmt::format("account or group name {} cannot go into a systemd unit", *name));
  return Ok();
}

std::string QuoteExecArgument(const std::string& word) {
  std::string dollars;
  for (char c : word) dollars += c == '$' ? std::string("$$") : std::string(1, c);
  return worker::QuoteUnitValue(dollars);
}

std::string RenderSystemUnit(const SystemUnitSpec& s) {
  return fmt::format(
      "{0}\n"
      "# One unit: `bk server serve` runs the broker and the GPU monitor in one process.\n"
      "[Unit]\n"
      "Description=GPUBK: this host's GPU booking ledger (broker and monitor)\n"
      "After=local-fs.target\n"
      "StartLimitIntervalSec=60\n"
      "StartLimitBurst=3\n"
      "\n"
      "[Service]\n"
      "Type=notify\n"
      "User={1}\n"
      "Group={2}\n"
      "Environment={3}\n"
      "ExecStart={4} server serve --config {5}\n"
      "# `systemctl reload gpubk`: the daemon applies the config file's policy (never forcing it).\n"
      "ExecReload=/bin/kill -HUP $MAINPID\n"
      "Restart=on-failure\n"
      "RestartSec=5\n"
      "# 2: a configuration to fix; 75: another daemon serves this ledger; 77: not the configured owner;\n"
      "# 78: the configuration no longer matches the ledger.\n"
      "RestartPreventExitStatus=2 75 77 78\n"
      "RuntimeDirectory=gpubk\n"
      "RuntimeDirectoryMode={6}\n"
      "RuntimeDirectoryPreserve=yes\n"
      "ReadWritePaths={7}\n"
      "UMask=0077\n"
      "NoNewPrivileges=yes\n"
      "ProtectSystem=strict\n"
      "ProtectHome=read-only\n"
      "PrivateTmp=yes\n"
      "RestrictAddressFamilies=AF_UNIX\n"
      "ProtectKernelTunables=yes\n"
      "ProtectKernelModules=yes\n"
      "ProtectKernelLogs=yes\n"
      "ProtectControlGroups=yes\n"
      "RestrictSUIDSGID=yes\n"
      "LockPersonality=yes\n"
      "# Not PrivateDevices= or ProtectClock=: NVML opens /dev/nvidia*. Not ProtectProc=invisible:\n"
      "# the monitor attributes GPU processes to their users through /proc.\n"
      "\n"
      "[Install]\n"
      "WantedBy=multi-user.target\n",
      kUnitMarker, s.user, s.group, worker::QuoteUnitValue("BK_CONFIG_FILE=" + s.config_path),
      QuoteExecArgument(s.bk_path), QuoteExecArgument(s.config_path), s.group_access ? "0710" : "0711",
      s.data_dir);
}

std::string RenderLoginHook(const std::string& bk_path) {
  return fmt::format(
      "{}\n"
      "# Sourced by login shells: interactive ones show this host's announcements and your bookings.\n"
      "{}",
      kHookMarker, shell::LoginHookLines(bk_path));
}

}  // namespace bk::admin
