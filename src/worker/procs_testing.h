#pragma once
// For src/worker tests: a real `sh -c SCRIPT` process carrying a booking's
// BK_RESERVATION_ID, started the way the worker starts jobs.

#include <gtest/gtest.h>
#include <sys/types.h>

#include <string>

#include "worker/spawn.h"

namespace bk::worker {

inline pid_t StartMarked(const std::string& id, const std::string& script) {
  SpawnOptions o;
  o.argv = {"sh", "-c", script};
  o.cwd = "/";
  o.path = "/usr/bin:/bin";
  o.env = MergeEnvironment({{"BK_RESERVATION_ID", id}});
  auto pid = Spawn(o);
  EXPECT_TRUE(pid.has_value()) << (pid ? "" : pid.error().message);
  return pid.value_or(-1);
}

}  // namespace bk::worker
