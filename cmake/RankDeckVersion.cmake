# SPDX-License-Identifier: GPL-3.0-or-later
# The git commit of the build, for --version and the run record (core/util/buildversion.cpp).
# Asked of git on every build, not only at configure time: a checkout of another commit then
# rebuilds one file, and a binary never names a commit it was not built from.
set(RANKDECK_GIT_COMMIT "" CACHE STRING
    "Commit to report when the sources are not a git checkout (source tarballs); empty: unknown")
set(RANKDECK_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${RANKDECK_GENERATED_DIR})
add_custom_target(rankdeck_buildcommit
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
        -DOUT=${RANKDECK_GENERATED_DIR}/rankdeckcommit.h -DFALLBACK=${RANKDECK_GIT_COMMIT}
        -P ${PROJECT_SOURCE_DIR}/cmake/RankDeckGitCommit.cmake
    BYPRODUCTS ${RANKDECK_GENERATED_DIR}/rankdeckcommit.h
    COMMENT "" VERBATIM)
