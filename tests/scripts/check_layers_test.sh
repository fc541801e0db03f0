#!/usr/bin/env bash
# scripts/check_layers.py finds the includes that point up the stack in a small tree made to
# have two (lower -> sweep; store, a leaf, -> ir) and passes the repository itself.
set -uo pipefail
root=$1
data=$root/tests/scripts/data/layers
out=$(python3 "$root/scripts/check_layers.py" "$data")
rc=$?
fail() { echo "FAIL: $1"; echo "$out"; exit 1; }
[[ $rc == 1 ]] || fail "exit $rc on the bad tree, expected 1"
[[ $(echo "$out" | wc -l) == 2 ]] || fail "expected 2 problems"
grep -q "src/lower/up.cpp:3: 'lower' includes 'tilesweep/sweep/plan.h' of 'sweep', above it" <<< "$out" || fail "lower -> sweep not found"
grep -q "include/tilesweep/store/leaf.h:2: 'store' includes 'tilesweep/ir/graph.h'" <<< "$out" || fail "store -> ir not found"
python3 "$root/scripts/check_layers.py" "$root" || fail "the repository has includes pointing up the stack"
echo ok
