# SPDX-License-Identifier: GPL-3.0-or-later
# The libdw symbolizer (stackdump.cpp) as a library of its own, with no libtorch: the worker
# (through rankdeck_crash) and rankdeck-supervisor, which is built even where libtorch is not,
# link the same code. Included from worker/supervisor/CMakeLists.txt, which the top level
# processes before worker/.
if(NOT TARGET rankdeck_stackdump)
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(RANKDECK_LIBDW REQUIRED IMPORTED_TARGET GLOBAL libdw)
    add_library(rankdeck_stackdump STATIC
        ${CMAKE_CURRENT_LIST_DIR}/stackdump.cpp ${CMAKE_CURRENT_LIST_DIR}/stackdump.h)
    # Includes name the folder below worker/ ("crash/stackdump.h").
    target_include_directories(rankdeck_stackdump PUBLIC ${PROJECT_SOURCE_DIR}/worker)
    target_link_libraries(rankdeck_stackdump PUBLIC PkgConfig::RANKDECK_LIBDW)
    set_target_properties(rankdeck_stackdump PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()
