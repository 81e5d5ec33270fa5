# SPDX-License-Identifier: GPL-3.0-or-later
#
# Every dependency is looked up here, so that a missing one ends the configure step with one
# line naming the Debian package and the command that installs it, not a CMake stack.

function(rankdeck_missing what package)
    message(FATAL_ERROR
        "RankDeck: ${what} not found. Install it with: sudo apt-get install ${package}"
        "  (or run scripts/bootstrap.sh, which installs everything)")
endfunction()

macro(rankdeck_find_frontend_deps)
    find_package(Qt6 QUIET COMPONENTS Core Network Widgets PrintSupport Test Concurrent)
    if(NOT Qt6_FOUND OR NOT Qt6Widgets_FOUND OR NOT Qt6Test_FOUND)
        rankdeck_missing("Qt 6 (Core, Network, Widgets, PrintSupport, Test)" "qt6-base-dev")
    endif()
    find_package(libssh QUIET CONFIG)
    if(NOT libssh_FOUND)
        rankdeck_missing("libssh" "libssh-dev")
    endif()
    # libssh's crypto library: core frees a connection thread's OpenSSL state itself
    # (transport/ssh/sshthread.h).
    find_package(OpenSSL QUIET COMPONENTS Crypto)
    if(NOT OpenSSL_FOUND)
        rankdeck_missing("OpenSSL (libcrypto, which libssh uses)" "libssl-dev")
    endif()
    find_package(QCustomPlotQt6 QUIET)
    if(NOT QCustomPlotQt6_FOUND)
        rankdeck_missing("QCustomPlot for Qt 6" "libqcustomplot-dev")
    endif()
    find_package(tomlplusplus QUIET)
    if(NOT tomlplusplus_FOUND)
        rankdeck_missing("toml++ (profile files)" "libtomlplusplus-dev")
    endif()
    find_package(PkgConfig QUIET)
    if(NOT PkgConfig_FOUND)
        rankdeck_missing("pkg-config" "pkg-config")
    endif()
    pkg_check_modules(LIBDW QUIET IMPORTED_TARGET libdw)
    if(NOT LIBDW_FOUND)
        rankdeck_missing("libdw (stack symbolization)" "libdw-dev")
    endif()
    # The log store's compressed segments of a long run.
    pkg_check_modules(LIBZSTD QUIET IMPORTED_TARGET libzstd)
    if(NOT LIBZSTD_FOUND)
        rankdeck_missing("zstd (compressed log segments)" "libzstd-dev")
    endif()
    # TensorBoard's event files (export and follow): the format's own library and compiler.
    find_package(Protobuf QUIET)
    if(NOT Protobuf_FOUND OR NOT Protobuf_PROTOC_EXECUTABLE)
        rankdeck_missing("protobuf and protoc (TensorBoard event files)"
            "libprotobuf-dev protobuf-compiler")
    endif()
    set(CMAKE_AUTOMOC ON)
endmacro()

macro(rankdeck_find_torch)
    # Torch_DIR / CMAKE_PREFIX_PATH from the user win; otherwise ask the cached torch venv that
    # scripts/bootstrap.sh made (RANKDECK_TORCH_PYTHON).
    if(NOT Torch_DIR AND RANKDECK_TORCH_PYTHON)
        execute_process(
            COMMAND ${RANKDECK_TORCH_PYTHON} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
            OUTPUT_VARIABLE _rankdeck_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
            RESULT_VARIABLE _rankdeck_torch_rc ERROR_QUIET)
        if(_rankdeck_torch_rc EQUAL 0)
            list(APPEND CMAKE_PREFIX_PATH ${_rankdeck_torch_prefix})
        endif()
    endif()
    # A CUDA build of libtorch runs FindCUDA: point it at the toolkit that ships nvcc, and at the
    # wheel's own nvrtc, which the toolkit on the build machine may lack. Nothing here compiles
    # CUDA code, so one architecture avoids probing a GPU that is not there.
    if(NOT CUDA_TOOLKIT_ROOT_DIR AND EXISTS /usr/local/cuda/bin/nvcc)
        set(CUDA_TOOLKIT_ROOT_DIR /usr/local/cuda)
    endif()
    if(NOT CMAKE_CUDA_COMPILER AND CUDA_TOOLKIT_ROOT_DIR)
        set(CMAKE_CUDA_COMPILER ${CUDA_TOOLKIT_ROOT_DIR}/bin/nvcc)
    endif()
    if(NOT TORCH_CUDA_ARCH_LIST)
        set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
    endif()
    foreach(_prefix IN LISTS CMAKE_PREFIX_PATH)
        file(GLOB _rankdeck_nvrtc "${_prefix}/../../../nvidia/cu*/lib/libnvrtc.so.*")
        list(FILTER _rankdeck_nvrtc EXCLUDE REGEX "builtins|alt")
        if(_rankdeck_nvrtc AND NOT CUDA_nvrtc_LIBRARY)
            list(GET _rankdeck_nvrtc 0 _nvrtc)
            set(CUDA_nvrtc_LIBRARY ${_nvrtc} CACHE FILEPATH "nvrtc from the torch wheel")
        endif()
    endforeach()
    find_package(Torch QUIET)
    if(NOT Torch_FOUND)
        message(FATAL_ERROR
            "RankDeck: libtorch not found. Run scripts/bootstrap.sh (it creates a torch==2.14.1 venv "
            "under ~/.cache/rankdeck), or pass -DTorch_DIR=/path/to/libtorch/share/cmake/Torch "
            "for an official libtorch download, or -DRANKDECK_BUILD_WORKER=OFF to skip the worker.")
    endif()
    # The wheel keeps nccl.h in its nvidia-nccl package, next to torch, not in torch/include.
    get_filename_component(_rankdeck_torch_root "${TORCH_INSTALL_PREFIX}" ABSOLUTE)
    if(NOT RANKDECK_NCCL_INCLUDE_DIR)
        find_path(RANKDECK_NCCL_INCLUDE_DIR nccl.h
            HINTS "${_rankdeck_torch_root}/../nvidia/nccl/include" "${_rankdeck_torch_root}/include"
                  /usr/include /usr/local/cuda/include)
    endif()
    if(NOT RANKDECK_NCCL_INCLUDE_DIR)
        message(FATAL_ERROR "RankDeck: nccl.h not found next to libtorch; pass -DRANKDECK_NCCL_INCLUDE_DIR=…")
    endif()
    # ProcessGroupNCCL.hpp pulls in ATen/cuda headers that need cuSPARSE/cuBLAS headers; the
    # wheel ships them in its nvidia/cu* package, a plain toolkit may not.
    file(GLOB _rankdeck_cuda_wheel_inc "${_rankdeck_torch_root}/../nvidia/cu*/include")
    find_path(RANKDECK_CUSPARSE_INCLUDE_DIR cusparse.h
        HINTS ${_rankdeck_cuda_wheel_inc} ${CUDA_TOOLKIT_ROOT_DIR}/include)
    if(NOT RANKDECK_CUSPARSE_INCLUDE_DIR)
        message(FATAL_ERROR "RankDeck: cusparse.h not found (CUDA toolkit headers); pass -DRANKDECK_CUSPARSE_INCLUDE_DIR=…")
    endif()
    # gloo's headers are not in the wheel; Debian's libgloo-dev provides them.
    find_path(RANKDECK_GLOO_INCLUDE_DIR gloo/algorithm.h HINTS "${_rankdeck_torch_root}/include")
    if(NOT RANKDECK_GLOO_INCLUDE_DIR)
        rankdeck_missing("gloo headers (ProcessGroupGloo.hpp needs them)" "libgloo-dev")
    endif()
    set(RANKDECK_TORCH_EXTRA_INCLUDE_DIRS ${RANKDECK_NCCL_INCLUDE_DIR} ${RANKDECK_CUSPARSE_INCLUDE_DIR}
        ${RANKDECK_GLOO_INCLUDE_DIR})
    # Third-party headers: whoever links libtorch sees these directories as SYSTEM, so that they
    # never warn, even where a target adds them with a plain target_include_directories().
    if(TARGET torch)
        set_property(TARGET torch APPEND PROPERTY
            INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${RANKDECK_TORCH_EXTRA_INCLUDE_DIRS})
    endif()
endmacro()
