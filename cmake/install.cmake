# What `make install` and `make deb` put on a machine, and how the Debian
# package is made (CPack's DEB generator).
#
# The manual pages, completion scripts and systemd unit templates are written
# by the bk just built (`bk __generate`), from the same tables it runs on, so
# they cannot drift from the code. Their date is the build's, or
# SOURCE_DATE_EPOCH's where set, as reproducible builds expect.
include(GNUInstallDirs)

set(bk_generated ${PROJECT_BINARY_DIR}/share)
set(bk_man_pages bk.1 bk-server.1 bk-admin.8 gpubk-config.5 gpubk-protocol.7)
string(TIMESTAMP bk_doc_date "%Y-%m-%d" UTC)

set(bk_generated_files
  ${bk_generated}/completion/bk ${bk_generated}/completion/_bk ${bk_generated}/completion/bk.fish
  ${bk_generated}/systemd/gpubk.service ${bk_generated}/systemd/bk-worker.service
  ${bk_generated}/systemd/bk-monitor.service)
set(bk_gzip_steps)
foreach(page ${bk_man_pages})
  list(APPEND bk_generated_files ${bk_generated}/man/${page} ${bk_generated}/man/${page}.gz)
  list(APPEND bk_gzip_steps COMMAND gzip -9nkf ${bk_generated}/man/${page})
endforeach()

# env -i: the pages must not depend on who builds (a broken config.json of
# the builder, BK_* variables); only the default configuration is described.
add_custom_command(
  OUTPUT ${bk_generated_files}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${bk_generated}
  COMMAND env -i HOME=${bk_generated} PATH=/usr/bin:/bin $<TARGET_FILE:bk> __generate ${bk_generated}
          --date ${bk_doc_date} --bk-path @BK_PATH@
  ${bk_gzip_steps}
  DEPENDS bk
  COMMENT "Writing bk's manual pages, completion scripts and unit templates"
  VERBATIM)
add_custom_target(generated_docs ALL DEPENDS ${bk_generated_files})

install(TARGETS bk RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(page ${bk_man_pages})
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
  install(FILES ${bk_generated}/man/${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
install(FILES ${bk_generated}/completion/bk DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${bk_generated}/completion/bk.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
# zsh looks in vendor-completions for what the system's packages bring (/usr)
# and in site-functions for what an administrator installs (/usr/local).
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(bk_zsh_dir vendor-completions)
  else()
    set(bk_zsh_dir site-functions)
  endif()
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/\${bk_zsh_dir}\"
       TYPE FILE FILES \"${bk_generated}/completion/_bk\")
")
# Templates of what `bk admin install` and `bk service install` write, for
# reading and diffing, never enabled by the package. Their ExecStart names the
# bk of this installation, known only when it is installed (the package's
# prefix is /usr whatever the build was configured with).
install(CODE "
  foreach(unit gpubk.service bk-worker.service bk-monitor.service)
    file(READ \"${bk_generated}/systemd/\${unit}\" text)
    string(REPLACE \"@BK_PATH@\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/bk\" text \"\${text}\")
    file(WRITE \"${bk_generated}/systemd-installed/\${unit}\" \"\${text}\")
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/gpubk/systemd\" TYPE FILE
         FILES \"${bk_generated}/systemd-installed/\${unit}\")
  endforeach()
")
install(DIRECTORY skills/gpubk DESTINATION ${CMAKE_INSTALL_DATADIR}/gpubk/skills)
install(FILES examples/sim-4gpu.json DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The Debian package: make deb (cpack -G DEB in the build directory).
set(bk_changelog ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz)
add_custom_command(
  OUTPUT ${bk_changelog}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
  COMMAND sh -c "gzip -9nc '${PROJECT_SOURCE_DIR}/packaging/changelog' > '${bk_changelog}'"
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog
  VERBATIM)
add_custom_target(package_changelog ALL DEPENDS ${bk_changelog})
install(FILES ${bk_changelog} packaging/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpubk)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "GPUBK developers")
set(CPACK_PACKAGE_CONTACT "GPUBK developers <gpubk@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU booking for shared Linux GPU servers")
# The summary above is the first line; this is the long description below it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "bk keeps a calendar of who uses which GPU of a host, and when: bk 1 2h\nbooks the earliest legal slot on the best GPU. A daemon keeps an audited,\ncrash-safe ledger that identifies callers by the kernel; a monitor reclaims\nbookings nobody used; a shell hook shows each shell only its booked GPUs;\ncoding agents book through JSON, MCP and a bundled Skill.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends computed by dpkg-shlibdeps
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "openssh-client, bash-completion")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_SOURCE_IGNORE_FILES "/build.*/;/\\\\.git/")
include(CPack)
