# SPDX-License-Identifier: GPL-3.0-or-later
#
# Compiler warnings and Qt's string-safety switches, in one place.
#
# rankdeck_apply_warnings() is called once, at the end of the top-level CMakeLists.txt. It walks
# every directory of the build and gives each first-party target that compiles C++ (libraries,
# the executables, tests, benchmarks) the same warning flags, so a new target cannot forget them.
# Third-party headers never warn: imported targets (Qt, libtorch, QCustomPlot, toml++, libssh,
# libdw) are SYSTEM includes by default, and the extra libtorch directories that are added by
# hand (nccl, cuSPARSE, gloo) are marked SYSTEM in RankDeckDependencies.cmake.
#
#   RANKDECK_WERROR=ON             warnings are errors (scripts/test.sh turns it on in CI)
#   RANKDECK_NO_CAST_FROM_ASCII=ON every first-party target is built with QT_NO_CAST_FROM_ASCII,
#                                  but for the sources in RANKDECK_CAST_FROM_ASCII_EXEMPT

option(RANKDECK_WERROR "Treat compiler warnings as errors (CI turns this on)" OFF)
option(RANKDECK_NO_CAST_FROM_ASCII
    "Build with QT_NO_CAST_FROM_ASCII (no implicit const char* -> QString)" ON)

# The set follows what KDE's KDECompilerSettings and KDAB's guidelines turn on for GCC and Clang.
# Left out on purpose:
#   -Wconversion / -Wsign-conversion: thousands of int/qsizetype/size_t hits across Qt APIs,
#                                       mostly noise; -Wextra's -Wsign-compare stays on.
#   -Wold-style-cast: Qt's own macros (Q_UNUSED, qobject_cast helpers, moc output) trip it.
#   -Wuseless-cast, -Weffc++: noisy with Qt and libtorch idioms, little signal.
#   -Wzero-as-null-pointer-constant: moc-generated code still trips it on some Qt versions.
#   -Wnull-dereference: at -O2 GCC reports "potential" null dereferences inside Qt's inlined
#                       QArrayDataPointer copy constructor; false positives we cannot silence.
set(RANKDECK_WARNING_FLAGS
    -Wall
    -Wextra
    -Wpedantic                 # no compiler extensions: the worker and core share a wire header
    -Wshadow                   # locals hiding members/parameters: real bugs in lambdas and slots
    -Wnon-virtual-dtor         # a class with virtuals deleted through a base pointer
    -Woverloaded-virtual       # an overload that hides a base class's virtual
    -Wcast-align
    -Wcast-qual                # casting const away
    -Wformat=2                 # printf-style format strings (the worker's logging)
    -Wundef                    # #if on an undefined macro is a typo, not 0
    -Wvla                      # variable-length arrays are an extension
    -Wpointer-arith
    -Wmissing-declarations     # a non-static free function with no prototype: should be static
    -Wdouble-promotion         # float silently promoted to double in the hot paths
    -Wimplicit-fallthrough
)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND RANKDECK_WARNING_FLAGS
        -Wsuggest-override     # Clang has -Winconsistent-missing-override in -Wall instead
        -Wlogical-op
        -Wduplicated-cond
        -Wduplicated-branches)
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    list(APPEND RANKDECK_WARNING_FLAGS
        -Wsuggest-override
        -Wshadow-uncaptured-local
        -Wunreachable-code)
endif()

# Sources that still build QStrings from string literals implicitly. Each is compiled with
# -UQT_NO_CAST_FROM_ASCII; drop a file from the list once it compiles without the cast (paths
# relative to the source root). The list is empty: every first-party source builds without the
# cast. The mechanism stays so that code brought in later (a vendored file, a test ported from
# elsewhere) can be exempted for a while instead of turning the whole option off.
# -DRANKDECK_CAST_FROM_ASCII_EXEMPT=… overrides the list (empty: no exemptions).
if(NOT DEFINED RANKDECK_CAST_FROM_ASCII_EXEMPT)
    # One path a line, e.g.  set(RANKDECK_CAST_FROM_ASCII_EXEMPT tests/foo/tst_foo.cpp)
    set(RANKDECK_CAST_FROM_ASCII_EXEMPT "")
endif()

function(_rankdeck_collect_targets dir out)
    get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(_sub IN LISTS _subdirs)
        _rankdeck_collect_targets(${_sub} _sub_targets)
        list(APPEND _targets ${_sub_targets})
    endforeach()
    set(${out} ${_targets} PARENT_SCOPE)
endfunction()

function(rankdeck_apply_warnings)
    _rankdeck_collect_targets(${PROJECT_SOURCE_DIR} _targets)
    set(_flags ${RANKDECK_WARNING_FLAGS})
    if(RANKDECK_WERROR)
        list(APPEND _flags -Werror)
    endif()
    set(_compiled "")
    foreach(_target IN LISTS _targets)
        get_target_property(_type ${_target} TYPE)
        if(_type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
            list(APPEND _compiled ${_target})
        endif()
    endforeach()
    foreach(_target IN LISTS _compiled)
        target_compile_options(${_target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${_flags}>")
    endforeach()

    if(RANKDECK_NO_CAST_FROM_ASCII)
        # Every first-party target: core, the GUI, the CLI, the tests and the benchmarks (the
        # worker has no Qt, so the macro is inert there).
        foreach(_target IN LISTS _compiled)
            target_compile_definitions(${_target} PRIVATE QT_NO_CAST_FROM_ASCII)
        endforeach()
        # Source properties belong to the directory that made the target: set them in all of them.
        if(_compiled AND RANKDECK_CAST_FROM_ASCII_EXEMPT)
            list(TRANSFORM RANKDECK_CAST_FROM_ASCII_EXEMPT PREPEND ${PROJECT_SOURCE_DIR}/
                OUTPUT_VARIABLE _exempt)
            set_source_files_properties(${_exempt} TARGET_DIRECTORY ${_compiled}
                PROPERTIES COMPILE_OPTIONS -UQT_NO_CAST_FROM_ASCII)
        endif()
    endif()
endfunction()
