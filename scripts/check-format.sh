#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Checks that first-party C++ follows the repository's .clang-format, and names the files that
# do not.
#
#   scripts/check-format.sh                 check every tracked *.h/*.cpp in core gui cli worker tests bench
#   scripts/check-format.sh FILE…           check only these files
#   scripts/check-format.sh --fix [FILE…]   reformat in place instead of checking
#   scripts/check-format.sh --count         print only how many files differ (exit 0)
#   CLANG_FORMAT=clang-format-19 …          use another clang-format binary
#
# Exit status: 0 when every file is formatted (or with --fix / --count), 1 when some differ,
# 2 on a usage error or when clang-format is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
clang_format=${CLANG_FORMAT:-clang-format}

mode=check
files=()
for arg in "$@"; do
    case $arg in
        --fix) mode=fix ;;
        --count) mode=count ;;
        -h|--help) sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) printf 'check-format: unknown option %s\n' "$arg" >&2; exit 2 ;;
        # Named files that are not C++ (a CMakeLists.txt, a script) are left alone: clang-format
        # would take them for C++ and rewrite them beyond repair.
        *.h|*.cpp|*.hpp|*.cc) files+=("$arg"); named=1 ;;
        *) printf 'check-format: %s is not C++; left alone\n' "$arg" >&2; named=1 ;;
    esac
done

if ! command -v "$clang_format" >/dev/null; then
    printf 'check-format: %s not found; install it with: sudo apt-get install clang-format\n' \
        "$clang_format" >&2
    exit 2
fi

if ((${#files[@]} == 0)) && [[ -n ${named:-} ]]; then
    exit 0 # only files that are not C++ were named
fi
if ((${#files[@]} == 0)); then
    # Tracked files only: build trees and generated sources never count.
    mapfile -t files < <(git ls-files -- 'core/*.h' 'core/*.cpp' 'gui/*.h' 'gui/*.cpp' \
        'cli/*.h' 'cli/*.cpp' 'worker/*.h' 'worker/*.cpp' 'tests/*.h' 'tests/*.cpp' \
        'bench/*.h' 'bench/*.cpp')
fi

if [[ $mode == fix ]]; then
    printf '%s\0' "${files[@]}" | xargs -0 -r "$clang_format" -i --style=file
    printf 'check-format: formatted %d file(s)\n' "${#files[@]}"
    exit 0
fi

differ=()
for f in "${files[@]}"; do
    if ! "$clang_format" --dry-run --Werror --style=file "$f" >/dev/null 2>&1; then
        differ+=("$f")
    fi
done

if [[ $mode == count ]]; then
    echo "${#differ[@]}"
    exit 0
fi
if ((${#differ[@]})); then
    printf 'check-format: %d of %d files are not formatted (.clang-format):\n' \
        "${#differ[@]}" "${#files[@]}" >&2
    printf '  %s\n' "${differ[@]}" >&2
    printf 'check-format: fix them with: scripts/check-format.sh --fix FILE… (no FILE: all)\n' >&2
    exit 1
fi
printf 'check-format: %d file(s) formatted\n' "${#files[@]}"
