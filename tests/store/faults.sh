#!/usr/bin/env bash
# Issue 23, the storage half, end to end: faults.sh CASE TILESWEEP JOB
#   corrupt     one flipped byte in an archive (a /meta text, a /candidates chunk) or a shape
#               library: report, select, merge, diff and lookup refuse it with exit 2 naming the
#               file and the damaged part, never a crash or a silent answer; `check /dev/zero`
#               stops at the input size limit
#   journal     a flipped byte in a journal's header or middle: --resume keeps every intact unit,
#               says how many frames it dropped, recomputes only those and gives the same /best;
#               both header copies damaged: refused with exit 2
#   full_disk   a full file system (a 256 KiB tmpfs in a private mount namespace; skipped with
#               exit 77 where mounting is impossible): run --archive, run --resume, merge -o,
#               select -o / --json / --nki-dir all exit 2 with "No space left on device", never
#               139, and leave no partial file
set -uo pipefail
case_name=$1 ts=$2 job=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=/usr/bin/python3

expect() {  # expect RC MESSAGE_PART COMMAND...: the exit status and a part of the output
  local want_rc=$1 want=$2; shift 2
  timeout 120 "$@" > "$tmp/out" 2>&1; local rc=$?
  [[ $rc -eq $want_rc ]] || fail "exit $rc (want $want_rc) from $*: $(head -c 3000 "$tmp/out")"
  grep -qF -- "$want" "$tmp/out" || fail "message lacks '$want' from $*: $(head -c 3000 "$tmp/out")"
}

flip() {  # flip FILE OFFSET: one byte xor 0x10
  $py -c 'import sys
p, o = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[o] ^= 0x10; open(p, "wb").write(b)' "$1" "$2"
}

chunk_offset() {  # chunk_offset FILE TABLE: where the table's first chunk starts in the file
  $py -c 'import sys, h5py
print(h5py.File(sys.argv[1], "r")[sys.argv[2]].id.get_chunk_info(0).byte_offset)' "$1" "$2"
}

reference() {
  "$ts" run "$job" --quiet --archive "$tmp/a.h5" > "$tmp/ref.out" 2>&1 || fail "reference run: $(cat "$tmp/ref.out")"
}

case $case_name in
corrupt)
  expect 2 "byte limit for input files" "$ts" check /dev/zero
  reference
  "$ts" select "$tmp/a.h5" -o "$tmp/lib.h5" > /dev/null 2>&1 || fail "select"
  # A byte of the job text (a /meta attribute), then one of the /candidates chunk.
  cp "$tmp/a.h5" "$tmp/meta.h5"
  flip "$tmp/meta.h5" "$(grep -boa 'search' "$tmp/meta.h5" | head -1 | cut -d: -f1)"
  cp "$tmp/a.h5" "$tmp/rows.h5"
  flip "$tmp/rows.h5" $(( $(chunk_offset "$tmp/a.h5" candidates) + 100 ))
  for bad in meta rows; do
    b=$tmp/$bad.h5
    part=$([[ $bad == meta ]] && echo "'$b': /meta: " || echo "'$b': read /candidates: ")
    expect 2 "error: damaged archive '$b': " "$ts" report "$b"
    grep -qF "$part" "$tmp/out" || fail "report does not name $part: $(cat "$tmp/out")"
    expect 2 "error: damaged archive '$b': " "$ts" select "$b" -o "$tmp/lib2.h5" --no-nki
    expect 2 "error: damaged archive '$b': " "$ts" merge "$tmp/a.h5" "$b" -o "$tmp/m.h5"
    expect 2 "error: damaged archive '$b': " "$ts" diff "$tmp/a.h5" "$b"
  done
  [[ ! -e $tmp/lib2.h5 && ! -e $tmp/m.h5 ]] || fail "a refused input still produced an output"
  # A byte of the library's /entries chunk (the NKI source is in it).
  lookup=(lookup -k rmsnorm -t trn1 -s M=1024,N=2048 --nki)
  expect 0 "@nki.jit" "$ts" "${lookup[@]}" "$tmp/lib.h5"
  flip "$tmp/lib.h5" $(( $(chunk_offset "$tmp/lib.h5" entries) + 200 ))
  expect 2 "error: damaged library '$tmp/lib.h5': read /entries" "$ts" "${lookup[@]}" "$tmp/lib.h5"
  ;;
journal)
  reference
  frame_end() {  # the end of the first frame whose head starts at byte $2 of journal $1
    $py -c 'import struct, sys
b = open(sys.argv[1], "rb").read(); o = int(sys.argv[2])
print(o + 24 + struct.unpack_from("<Q", b, o + 8)[0])' "$1" "$2"
  }
  h1=$(frame_end "$tmp/a.h5.journal" 0)
  size=$(stat -c %s "$tmp/a.h5.journal")
  middle=$($py -c 'import sys
b = open(sys.argv[1], "rb").read(); print(b.index(b"TSJ1", int(sys.argv[2]) // 2) + 40)' "$tmp/a.h5.journal" "$size")
  for where in header middle; do
    j=$tmp/$where.h5
    cp "$tmp/a.h5.journal" "$j.journal"
    cp "$tmp/a.h5.proofs" "$j.proofs"
    flip "$j.journal" $([[ $where == header ]] && echo 30 || echo "$middle")
    # The job's units (the reference run's "N of N units"), less the damaged one in the middle.
    total=$(sed -n 's/.*: \([0-9]*\) of \1 units.*/\1/p' "$tmp/ref.out" | head -1)
    [[ -n $total ]] || fail "no unit count in the reference run's output: $(cat "$tmp/ref.out")"
    units=$([[ $where == header ]] && echo "$total" || echo $((total - 1)))
    expect 0 "kept $units unit(s); dropped 1 damaged frame(s)" "$ts" run "$job" --quiet --resume --archive "$j"
    grep -qF "the damaged file is kept as '$j.journal.damaged'" "$tmp/out" || fail "no copy named: $(cat "$tmp/out")"
    expect 0 "no differences" "$ts" diff "$tmp/a.h5" "$j"
    expect 0 "" "$ts" run "$job" --quiet --resume --archive "$j"  # the rewritten journal is whole
    grep -q "dropped" "$tmp/out" && fail "a second resume still reports damage: $(cat "$tmp/out")"
  done
  j=$tmp/lost.h5
  cp "$tmp/a.h5.journal" "$j.journal"
  flip "$j.journal" 30
  flip "$j.journal" $((h1 + 30))
  expect 2 "its header (which names the job) is lost" "$ts" run "$job" --quiet --resume --archive "$j"
  ;;
full_disk)
  reference
  cp "$tmp/a.h5" "$tmp/b.h5"
  # A private mount namespace: the tmpfs vanishes with this shell, whatever happens.
  if ! unshare -m true 2> /dev/null; then echo "SKIP: cannot make a mount namespace (not root?)"; exit 77; fi
  unshare -m bash -s "$ts" "$job" "$tmp" <<'SH'
set -uo pipefail
ts=$1 job=$2 tmp=$3 full=$3/full
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$full"
mount -t tmpfs -o size=256k tmpfs "$full" 2> /dev/null || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
dd if=/dev/zero of="$full/fill" bs=4k count=64 2> /dev/null  # fills it (dd stops at ENOSPC)
expect() {
  local want=$1; shift
  timeout 120 "$@" > "$tmp/out" 2>&1; local rc=$?
  [[ $rc -eq 2 ]] || fail "exit $rc (want 2) from $*: $(head -c 3000 "$tmp/out")"
  grep -qF -- "$want" "$tmp/out" || fail "message lacks '$want' from $*: $(head -c 3000 "$tmp/out")"
}
nospace="No space left on device"
expect "error: cannot write archive '$full/m.h5': $nospace" "$ts" merge "$tmp/a.h5" "$tmp/b.h5" -o "$full/m.h5"
expect "error: cannot write library '$full/lib.h5': $nospace" "$ts" select "$tmp/a.h5" -o "$full/lib.h5" --no-nki
expect "error: cannot write --json file '$full/lib.json': $nospace" \
  "$ts" select "$tmp/a.h5" -o "$tmp/lib.h5" --no-nki --json "$full/lib.json"
expect "error: cannot write --nki-dir file '$full/nki/" "$ts" select "$tmp/a.h5" -o "$tmp/lib.h5" --nki-dir "$full/nki"
expect "error: --archive: cannot write in folder '$full': $nospace" "$ts" run "$job" --quiet --archive "$full/r.h5"
[[ $(ls "$full") == fill ]] || fail "partial files left: $(ls -la "$full")"
# run --resume: the journal and the old archive fit, the new archive does not.
umount "$full"
need=$(( $(stat -c %s "$tmp/a.h5.journal") + $(stat -c %s "$tmp/a.h5") + $(stat -c %s "$tmp/a.h5.proofs") ))
mount -t tmpfs -o size=$(( (need / 4096 + 3) * 4096 )) tmpfs "$full"
cp "$tmp/a.h5" "$tmp/a.h5.journal" "$tmp/a.h5.proofs" "$full/"
expect "error: cannot write archive '$full/a.h5': $nospace" "$ts" run "$job" --quiet --resume --archive "$full/a.h5"
cmp -s "$tmp/a.h5" "$full/a.h5" || fail "the old archive changed"
[[ $(ls "$full" | wc -l) -eq 3 ]] || fail "partial files left: $(ls -la "$full")"
SH
  ;;
*) fail "unknown case $case_name" ;;
esac
echo "faults $case_name: ok"
