#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Installs what RankDeck needs, creates (or reuses) the torch environment, configures and
# builds. Idempotent: a second run installs nothing and rebuilds only what changed.
#
#   scripts/bootstrap.sh            set up and build into build/
#   RANKDECK_CACHE=DIR              where the torch venv lives (default ~/.cache/rankdeck)
#   RANKDECK_BUILD_DIR=DIR          build directory (default build/)
#   RANKDECK_SKIP_APT=1             never touch apt (only report what is missing)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${RANKDECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rankdeck}
torch_version=2.14.1
venv="$cache/torch-venv"
build=${RANKDECK_BUILD_DIR:-$here/build}
jobs=${RANKDECK_JOBS:-2}

say()  { printf 'bootstrap: %s\n' "$*"; }
# Each phase's time, so that a CI log says where a slow run went (docs/reliability.md, CI time).
phase_start=$SECONDS
phase_done() { say "$1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
fail() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 1; }

# --- Debian packages ------------------------------------------------------------------------
# openssh-client: ssh-keygen for the tests, and the ssh program that ProxyJump runs (libssh 0.10
# hands jump hosts to it); openssl: hashes the password of the tests' throw-away account;
# clang-format: scripts/check-format.sh (CI); clang-tidy: the checks in .clang-tidy.
# slurm-wlm + munge: the tests' own Slurm cluster (slurmctld + slurmd on this host);
# protobuf: TensorBoard's event format; faketime: a node with a skewed clock; valgrind:
# instruction counts in bench/; clang-14 + libclang-rt-14-dev: libFuzzer and the sanitizers;
# xdotool + imagemagick: clicking through the GUI under Xvfb and capturing what it shows;
# libssl-dev: libssh's OpenSSL, which core calls to free a connection thread's state.
# dpkg-dev + lintian: `cpack -G DEB` (dpkg-shlibdeps) and the packages' lint (tst_package);
# man-db: `man -l` on the generated rankdeck-cli(1) (tst_manual).
# clang-tidy + clazy: scripts/static-analysis.py, which CI runs (docs/reliability.md).
# python3-pyatspi + at-spi2-core + dbus-x11: the GUI acceptance tests (tests/acceptance) read
# the app's accessibility tree as a screen reader does, on a private D-Bus and AT-SPI bus.
# libzstd-dev: a long run's log compressed in segments; zstd: tst_compactedfile reads them as a
# user would (zstdcat).
packages=(build-essential cmake pkg-config ccache qt6-base-dev libssh-dev libssl-dev libqcustomplot-dev
          libtomlplusplus-dev libdw-dev libzstd-dev zstd libgloo-dev openssh-server openssh-client
          openssl xvfb
          python3-venv procps clang-format clang-tidy slurm-wlm munge libprotobuf-dev
          protobuf-compiler faketime valgrind iproute2 clang-14 libclang-rt-14-dev
          xdotool imagemagick dpkg-dev lintian man-db clazy
          python3-pyatspi at-spi2-core dbus-x11)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# cmake and ninja may come from pip/pyenv instead of Debian; accept any cmake >= 3.21.
if command -v cmake >/dev/null; then
    missing=("${missing[@]/cmake}")
fi
missing=($(printf '%s\n' "${missing[@]}" | sed '/^$/d'))
if ((${#missing[@]})); then
    if [[ ${RANKDECK_SKIP_APT:-0} == 1 ]]; then
        fail "missing packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}"
    fi
    if [[ $(id -u) -eq 0 ]]; then apt=(apt-get); elif command -v sudo >/dev/null; then apt=(sudo apt-get); else
        fail "missing packages: ${missing[*]}; as root run: apt-get install ${missing[*]}"
    fi
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${apt[@]}" update -qq || fail "apt-get update failed (no network to the Debian mirror?)"
    "${apt[@]}" install -y -qq "${missing[@]}" >/dev/null ||
        fail "apt-get install ${missing[*]} failed; run it by hand to see why"
fi

phase_done "Debian packages"

# --- torch environment (outside the clone, reused across clones and CI runs) ------------------
if ! "$venv/bin/python" -c "import torch,sys; sys.exit(0 if torch.__version__.startswith('$torch_version') else 1)" 2>/dev/null; then
    say "creating torch $torch_version environment in $venv (takes a few minutes once)"
    mkdir -p "$cache"
    python3 -m venv "$venv" || fail "python3 -m venv failed; install python3-venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "torch==$torch_version" numpy ||
        fail "pip install torch==$torch_version failed; see the pip output above"
fi
"$venv/bin/python" -c "import numpy" 2>/dev/null || "$venv/bin/pip" install -q numpy || true
# tensorboard: the tests read our event files back with TensorBoard's own reader, and a user
# program logs through torch.utils.tensorboard.SummaryWriter, which needs it.
"$venv/bin/python" -c "import tensorboard" 2>/dev/null ||
    "$venv/bin/pip" install -q --disable-pip-version-check tensorboard ||
    fail "pip install tensorboard failed; see the pip output above"
# The frameworks people train with, at pinned versions: the tests run unmodified Lightning,
# Accelerate and Transformers programs under RankDeck, and tabulate is what torch's own flight
# recorder analyzer (torchfrtrace, the tests' oracle) prints with. torch==$torch_version is
# named so that pip can never move torch while resolving them.
frameworks=(lightning==2.6.6 accelerate==1.15.0 transformers==5.24.0 tabulate==0.10.0)
if ! "$venv/bin/python" - "${frameworks[@]}" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(0 if all(version(n) == v for n, v in (p.split("==") for p in sys.argv[1:])) else 1)
PY
then
    say "installing ${frameworks[*]} into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "torch==$torch_version" "${frameworks[@]}" ||
        fail "pip install ${frameworks[*]} failed; see the pip output above"
fi
say "torch: $("$venv/bin/python" -c 'import torch;print(torch.__version__)' 2>/dev/null)"
phase_done "the Python environment"

# --- configure and build ----------------------------------------------------------------------
cuda_args=()
if [[ -z ${CUDACXX:-} ]] && ! command -v nvcc >/dev/null; then
    for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-13*/bin/nvcc; do
        [[ -x $c ]] && { cuda_args=(-DCMAKE_CUDA_COMPILER="$c"); break; }
    done
fi
# Paths inside the clone are hashed relative to it, so a second clone (CI) reuses the cache.
# With -g ccache also hashes the build directory (debug info names it) unless told not to:
# then no clone, worktree or CI run ever hit another's entries. The cost is that an object
# from the cache names the build directory it was first compiled in as DW_AT_comp_dir; the
# crash stacks print source paths as compiled (relative to the clone), so nothing shown changes.
export CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=1
generator=()
command -v ninja >/dev/null && [[ ! -f $build/Makefile ]] && generator=(-G Ninja)
mkdir -p "$build"
say "configuring $build"
cmake -S "$here" -B "$build" "${generator[@]}" -DRANKDECK_TORCH_PYTHON="$venv/bin/python" \
    "${cuda_args[@]}" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 ${RANKDECK_CMAKE_ARGS:-} >"$build/configure.log" 2>&1 || {
    grep -E "RankDeck:|Error" "$build/configure.log" | head -20 >&2
    fail "cmake configure failed (full log: $build/configure.log)"
}
phase_done "configuring"
say "building with -j$jobs"
cmake --build "$build" -j "$jobs" || fail "build failed (see the compiler output above)"
phase_done "building"
say "ready: $build/bin"
echo "$venv" >"$build/torch-venv-path"
