#!/usr/bin/env bash
# Checks that every C++ file of the tree is formatted by .clang-format (exit 1 naming the files
# that are not); with --fix, formats them in place. The formatting depends on clang-format's
# version: the tree is kept with the one Debian 12 ships (14); with another version the check is
# skipped (exit 77) rather than failing on differences that are not ours.
#   scripts/check_format.sh          check (what ctest's style.clang_format runs)
#   scripts/check_format.sh --fix    format in place
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
want=14
tool=$(command -v clang-format-$want || command -v clang-format || true)
if [[ -z "$tool" ]]; then
  echo "clang-format not found: install the Debian package clang-format (scripts/setup.sh does)" >&2
  exit 77
fi
version=$("$tool" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [[ "$version" != "$want" ]]; then
  echo "skipped: $tool is version $version; the tree is formatted with clang-format $want" >&2
  exit 77
fi
cd "$root"
mapfile -t files < <(find src include tests bench -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
if [[ "${1:-}" == "--fix" ]]; then
  "$tool" -i "${files[@]}"
  exit 0
fi
mapfile -t bad < <("$tool" --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: .*clang-format.*/\1/p' | sort -u)
if (( ${#bad[@]} )); then
  printf '%s: not formatted\n' "${bad[@]}"
  echo "${#bad[@]} of ${#files[@]} files differ from .clang-format; run scripts/check_format.sh --fix"
  exit 1
fi
echo "${#files[@]} files formatted"
