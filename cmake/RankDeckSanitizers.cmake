# SPDX-License-Identifier: GPL-3.0-or-later
#
# RANKDECK_SANITIZE and RANKDECK_FUZZ (top-level CMakeLists.txt): compile and link flags for every
# target of the build, first-party or not, so that nothing in it is uninstrumented but what comes
# from outside (Qt, libssh, libtorch, the C++ library). The worker stays out of sanitized builds:
# libtorch is not instrumented and the crash handler's signal handlers fight the sanitizers'.

if(RANKDECK_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
        message(FATAL_ERROR "RankDeck: RANKDECK_FUZZ needs clang (libFuzzer), e.g. "
                            "-DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14")
    endif()
    if(RANKDECK_SANITIZE STREQUAL "")
        set(RANKDECK_SANITIZE address CACHE STRING "" FORCE)
    elseif(NOT RANKDECK_SANITIZE STREQUAL "address")
        message(FATAL_ERROR "RankDeck: RANKDECK_FUZZ goes with RANKDECK_SANITIZE=address, "
                            "not ${RANKDECK_SANITIZE}")
    endif()
    # fuzzer-no-link: libFuzzer's coverage in every object; only the fuzz_* binaries link
    # libFuzzer's main (tests/fuzz/CMakeLists.txt). Elsewhere the sanitizer runtime's empty
    # coverage hooks take the calls, so the test binaries of the same build run as usual.
    add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(RANKDECK_SANITIZE STREQUAL "address")
    # Recovering from a UBSan finding would let the suite pass with it: every one is fatal, but
    # nonnull-attribute is reported through the recoverable handler so that its one suppression
    # (Qt 6.4's own header, tests/sanitizers/ubsan.supp) can apply; UBSAN_OPTIONS=halt_on_error=1
    # (scripts/sanitize.sh, the asan test preset) still stops at any other.
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=undefined -fsanitize-recover=nonnull-attribute)
    add_link_options(-fsanitize=address,undefined)
elseif(RANKDECK_SANITIZE STREQUAL "thread")
    add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
    add_link_options(-fsanitize=thread)
    # Every program's QProcess start goes through Qt's vfork-style clone(), which TSan's runtime
    # gets wrong (tests/sanitizers/tsanclone.c says how): this clone() replaces the runtime's in
    # every target created from here on (the users' stand-in programs take it out again).
    add_library(rankdeck_tsanclone OBJECT ${CMAKE_CURRENT_LIST_DIR}/../tests/sanitizers/tsanclone.c)
    link_libraries(rankdeck_tsanclone)
elseif(NOT RANKDECK_SANITIZE STREQUAL "")
    message(FATAL_ERROR "RankDeck: RANKDECK_SANITIZE must be address, thread or empty, "
                        "not ${RANKDECK_SANITIZE}")
endif()
if(NOT RANKDECK_SANITIZE STREQUAL "" AND RANKDECK_BUILD_WORKER)
    message(WARNING "RankDeck: a sanitized build with the worker: libtorch is not instrumented "
                    "and the crash handler's signal handlers fight the sanitizer's; expect noise")
endif()
