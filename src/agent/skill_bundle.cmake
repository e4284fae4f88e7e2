# The bundled Agent Skill (skills/gpubk/**) is compiled into bk: every file
# becomes a raw string literal in a generated source, so `bk skill install`
# needs no data files at run time and nothing is fetched at build time.
set(BK_SKILL_DIR ${PROJECT_SOURCE_DIR}/skills/gpubk)
set(BK_SKILL_FILES SKILL.md references/protocol.md agents/openai.yaml)
set(BK_SKILL_ENTRIES "")
foreach(rel ${BK_SKILL_FILES})
  set(path ${BK_SKILL_DIR}/${rel})
  file(READ ${path} content)
  string(FIND "${content}" ")bk_skill\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw-string delimiter )bk_skill\"")
  endif()
  string(APPEND BK_SKILL_ENTRIES "    {\"${rel}\", R\"bk_skill(${content})bk_skill\"},\n")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/skill_bundle.cc.in ${PROJECT_BINARY_DIR}/generated/agent/skill_bundle.cc @ONLY)
target_sources(bk_agent PRIVATE ${PROJECT_BINARY_DIR}/generated/agent/skill_bundle.cc)
