#!/usr/bin/env bash
# `lower --index` on candidates whose program is refused (here: a split over 2 cores of a row
# loop of 3 tiles, which does not divide) prints "no program" and the reason for each, and goes on
# to the others; it used to end in "unexpected failure" at the first one.
set -euo pipefail
bin=$1 root=$2
kernel=$root/jobs/kernels/examples/row_sum.py
count=$("$bin" lower "$kernel" -t trn2 -s M=128,N=1536 --cores 2 |
  sed -n 's/^  candidates: \([0-9]*\) feasible.*/\1/p')
[[ $count -gt 0 ]] || { echo "FAIL: no candidates"; exit 1; }
out=$("$bin" lower "$kernel" -t trn2 -s M=128,N=1536 --cores 2 --index $(seq 0 $((count - 1)))) ||
  { echo "FAIL: lower --index exited $?"; exit 1; }
refused=$(grep -c '^candidate [0-9]*: no program: ' <<<"$out" || true)
programs=$(grep -c '^candidate [0-9]*:$' <<<"$out" || true)
[[ $refused -gt 0 ]] || { echo "FAIL: no candidate refused among $count"; exit 1; }
[[ $programs -gt 0 ]] || { echo "FAIL: no candidate printed a program"; exit 1; }
[[ $((refused + programs)) -eq $count ]] || { echo "FAIL: $refused + $programs of $count"; exit 1; }
grep -q 'do not divide' <<<"$out" || { echo "FAIL: the reason is not given"; exit 1; }
echo "ok: $refused refused, $programs programs"
