#pragma once
// The Agent Skill compiled into this binary (generated from skills/gpubk/ by
// src/agent/skill_bundle.cmake).

#include <span>
#include <string_view>

namespace bk::agent {

struct SkillFile {
  std::string_view path;  // relative to the skill directory, e.g. "references/protocol.md"
  std::string_view content;
};

// SKILL.md first, then the other files in a fixed order.
std::span<const SkillFile> BundledSkill();

}  // namespace bk::agent
