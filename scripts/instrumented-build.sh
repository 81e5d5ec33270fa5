# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: configures an instrumented build folder
# with clang-14 (Debug at -O1: Q_ASSERT on, stacks readable, runs fast enough), once.
#   rankdeck_configure_instrumented DIR address|thread|fuzz
rankdeck_configure_instrumented() {
    local dir=$1 mode=$2 here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    for tool in clang-14 clang++-14; do
        command -v $tool >/dev/null || {
            echo "$tool is missing (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
            return 2
        }
    done
    [[ -f $dir/build.ninja || -f $dir/Makefile ]] && return 0
    local args=(-DRANKDECK_SANITIZE="$mode")
    # The fuzzers live in the address build: one instrumented core for both.
    [[ $mode == fuzz || $mode == address ]] && args=(-DRANKDECK_SANITIZE=address -DRANKDECK_FUZZ=ON)
    local generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    local venv=${RANKDECK_TORCH_VENV:-$HOME/.cache/rankdeck/torch-venv}
    # With -g, ccache hashes the build folder's path unless a debug prefix map is given, so
    # without this a second clone (CI's clean one) misses the cache on every compile.
    local prefix_map="-fdebug-prefix-map=$here=."
    mkdir -p "$dir"
    printf 'configuring %s (%s)\n' "$dir" "$mode"
    CCACHE_BASEDIR="$here" cmake -S "$here" -B "$dir" "${generator[@]}" \
        -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_CXX_FLAGS_DEBUG="-g -O1 $prefix_map" -DCMAKE_C_FLAGS_DEBUG="-g -O1 $prefix_map" \
        -DRANKDECK_BUILD_WORKER=OFF "${args[@]}" -DRANKDECK_TORCH_PYTHON="$venv/bin/python" \
        -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >"$dir/configure.log" 2>&1 || {
        tail -20 "$dir/configure.log" >&2
        echo "configure failed (log: $dir/configure.log)" >&2
        return 1
    }
}
