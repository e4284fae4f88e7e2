#pragma once
// Installing the bundled Skill where an agent discovers personal skills, and
// reporting what is installed. Only a directory that is recognisably ours is
// ever replaced, through a staged copy with rollback; symlinks on the way are
// refused; nothing outside the skill directory is written (no AGENTS.md,
// CLAUDE.md, shell rc or MCP configuration).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/file_system.h"

namespace bk::agent {

enum class SkillAgent { kCodex, kClaude };
Result<SkillAgent> ParseSkillAgent(std::string_view name);  // codex | claude (claude-code)
const char* SkillAgentName(SkillAgent agent);

// The environment the destinations derive from.
struct SkillEnv {
  std::string home;                       // absolute; "" when unknown
  std::optional<std::string> codex_home;  // $CODEX_HOME when set and absolute
};
SkillEnv ProcessSkillEnv();

// Where each client discovers personal skills today:
// Codex $HOME/.agents/skills/gpubk, Claude Code $HOME/.claude/skills/gpubk.
Result<std::string> SkillDir(SkillAgent agent, const SkillEnv& env);
// Codex's older, deprecated location, still read for compatibility:
// $CODEX_HOME/skills/gpubk, default $HOME/.codex/skills/gpubk. Reported by
// status, never written by install.
Result<std::string> LegacyCodexSkillDir(const SkillEnv& env);

struct InstallOptions {
  std::string dest;               // the skill directory itself (basename gpubk)
  std::string anchor;             // symlink and ownership checks start below this (the home directory)
  bool force = false;             // replace an existing GPUBK skill
  sys::FileSystem* fs = nullptr;  // where to write; the real file system when null
};

// Installs the bundled files (0644 in 0755 directories) and returns `dest`.
Result<std::string> InstallSkill(const InstallOptions& options);

enum class SkillState {
  kAbsent,   // nothing there
  kCurrent,  // a GPUBK skill identical to this binary's bundle
  kDiffers,  // a GPUBK skill from another version, or edited
  kForeign,  // something that is not a GPUBK skill
  kSymlink,  // a symlink (never followed, never replaced)
};
const char* SkillStateName(SkillState state);  // absent | current | differs | foreign | symlink

struct SkillStatus {
  std::string path;
  SkillState state = SkillState::kAbsent;
  std::vector<std::string> differing;  // bundled files missing or different (kDiffers)
};
SkillStatus InspectSkill(const std::string& dest);

// True when `skill_md` (the start of a SKILL.md) has YAML front matter naming the GPUBK skill.
bool IsGpubkSkillMd(std::string_view skill_md);

}  // namespace bk::agent
