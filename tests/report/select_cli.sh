#!/usr/bin/env bash
# `select`'s safe steps: the output folders are created before the work, an existing output file
# is refused without --force (exit 2, nothing written, no work done) and replaced with it, the
# library is never one of its inputs, and progress lines go to stderr (none with -q).
set -eu
bin=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$bin" run "$root/tests/report/data/a.toml" --archive a.h5 -q >/dev/null
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect "message" cmd...: exit 2 and the message on stderr
  local want=$1; shift
  set +e
  "$@" >out.txt 2>err.txt
  local rc=$?
  set -e
  [ $rc -eq 2 ] && grep -qF -- "$want" err.txt || fail "$* -> exit $rc, stderr: $(cat err.txt) (wanted: $want)"
}

# folders created; progress on stderr: one line per archive read, one per entry re-built
"$bin" select a.h5 -o new/sub/lib.h5 --json j/lib.json --python p/lib_nki.py >out.txt 2>err.txt ||
  fail "select into new folders: $(cat err.txt)"
[ -s new/sub/lib.h5 ] && [ -s j/lib.json ] && [ -s p/lib_nki.py ] || fail "outputs missing: $(ls -R)"
grep -qE '^select +[0-9.]+ s: reading archive a.h5 \(1/1\)$' err.txt || fail "no archive progress line: $(cat err.txt)"
[ "$(grep -cE '^select +[0-9.]+ s: NKI source [0-9]/5: ' err.txt)" -eq 5 ] || fail "want 5 entry lines: $(cat err.txt)"
grep -q "new/sub/lib.h5: 5 entries" out.txt || fail "summary: $(cat out.txt)"

# an existing output is refused before any work, for each output option
sum=$(md5sum new/sub/lib.h5)
expect "error: -o: 'new/sub/lib.h5' already exists; use --force to overwrite it" "$bin" select a.h5 -o new/sub/lib.h5
expect "error: --json: 'j/lib.json' already exists; use --force" "$bin" select a.h5 -o l2.h5 --json j/lib.json
expect "error: --python: 'p/lib_nki.py' already exists; use --force" "$bin" select a.h5 -o l2.h5 --python p/lib_nki.py
[ ! -e l2.h5 ] || fail "a refused select wrote its library"
[ ! -s err.txt ] || ! grep -q "NKI source" err.txt || fail "a refused select did the work first"
[ "$(md5sum new/sub/lib.h5)" = "$sum" ] || fail "a refused select changed the library"
# the library is never an input, --force or not
expect "error: -o: 'a.h5' is also an input; name a new file" "$bin" select a.h5 -o a.h5
expect "error: -o: './j/../a.h5' is also an input" "$bin" select a.h5 -o ./j/../a.h5 --force
# a folder that cannot be created
expect "error: -o: cannot create folder '/proc/tilesweep-no'" "$bin" select a.h5 -o /proc/tilesweep-no/lib.h5

# --force replaces it; -q prints no progress
"$bin" select a.h5 -o new/sub/lib.h5 --force -q --no-nki >out.txt 2>err.txt || fail "--force: $(cat err.txt)"
[ ! -s err.txt ] || fail "-q printed: $(cat err.txt)"
grep -q "NKI source for 0 (5 without" out.txt || fail "--force did not rewrite: $(cat out.txt)"
echo ok
