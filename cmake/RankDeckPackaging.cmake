# SPDX-License-Identifier: GPL-3.0-or-later
# `cpack -G DEB` in the build directory (README, "Install"; tests/cli/tst_package). Two packages:
#   rankdeck         the GUI, the CLI, the supervisor, the manual, completion, desktop files.
#                    Depends from dpkg-shlibdeps (Qt, libssh, libdw, ...).
#   rankdeck-worker  the built-in libtorch worker, recommended by rankdeck. Split off because
#                    libtorch comes from the torch wheel, which no Debian package provides:
#                    rankdeck is useful without it (a user's own program under --exec, SSH and
#                    Slurm nodes with their own worker), and its Depends stay what Debian can
#                    resolve.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rankdeck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "RankDeck maintainers <maintainers@rankdeck.example.org>" CACHE STRING
    "Maintainer field of the .deb packages (packagers set their own)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL rankdeck)
if(RANKDECK_BUILD_WORKER)
    list(APPEND CPACK_COMPONENTS_ALL worker)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
# Binaries are stripped in the package, as Debian policy wants (the debug info stays in the
# build tree; crash reports of an installed worker then show addresses, not file:line).
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_RANKDECK_PACKAGE_NAME rankdeck)
set(CPACK_DEBIAN_RANKDECK_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RANKDECK_PACKAGE_RECOMMENDS "rankdeck-worker (= ${PROJECT_VERSION}-1)")
# First line: the synopsis (so no CPACK_PACKAGE_DESCRIPTION_SUMMARY, which CPack would put in
# front of both packages' descriptions); CPack indents the rest and makes the empty line " .".
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
set(CPACK_DEBIAN_RANKDECK_DESCRIPTION "launch and watch distributed PyTorch training
RankDeck launches distributed PyTorch training (its own libtorch DDP worker,
or your own Python program) on this machine, over SSH or through Slurm. It
shows every rank's logs and loss curves live and explains crashed and hung
ranks: the root cause, the stacks and the collective where the ranks parted.

This package holds the desktop application (rankdeck), the command-line tool
(rankdeck-cli) and the supervisor that runs a user's program as one rank.")

set(CPACK_DEBIAN_WORKER_PACKAGE_NAME rankdeck-worker)
# dpkg-shlibdeps cannot name a package for the wheel's libtorch; the worker's other libraries
# are listed here by hand (tst_package checks them in Depends; libm is libc6's).
set(CPACK_DEBIAN_WORKER_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_WORKER_PACKAGE_DEPENDS "libc6, libstdc++6, libgcc-s1, libdw1")
set(CPACK_DEBIAN_WORKER_DESCRIPTION "built-in libtorch DDP worker for RankDeck
rankdeck-worker is RankDeck's own C++ libtorch training loop (NCCL on GPUs,
Gloo on CPUs). It needs libtorch 2.14 from a torch installation: the one it
was built against, the directory given to the build with
RANKDECK_WORKER_TORCH_RPATH, or LD_LIBRARY_PATH.")

# Debian wants a changelog in every package's doc directory, compressed with gzip -9n.
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/changelog.in
    ${CMAKE_BINARY_DIR}/packaging/changelog.Debian @ONLY)
find_program(RANKDECK_GZIP gzip)
if(RANKDECK_GZIP)
    execute_process(COMMAND ${RANKDECK_GZIP} -9nf ${CMAKE_BINARY_DIR}/packaging/changelog.Debian)
endif()
foreach(_component rankdeck worker)
    set(_doc ${CMAKE_INSTALL_DATAROOTDIR}/doc/rankdeck)
    if(_component STREQUAL "worker")
        set(_doc ${CMAKE_INSTALL_DATAROOTDIR}/doc/rankdeck-worker)
    endif()
    install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/copyright
        ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz
        DESTINATION ${_doc} COMPONENT ${_component} EXCLUDE_FROM_ALL)
endforeach()
# The lintian tags kept, each with its reason, in the file lintian reads them from.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/rankdeck.lintian-overrides
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides RENAME rankdeck
    COMPONENT rankdeck EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/rankdeck-worker.lintian-overrides
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides RENAME rankdeck-worker
    COMPONENT worker EXCLUDE_FROM_ALL)
include(CPack)
