#!/usr/bin/env bash
# Rewrites the `# expect:` first line of tests/errors/*.py (or of the files given) with the
# message tilesweep prints now. Review the diff: the messages are part of the interface.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TILESWEEP_BIN:-$root/build/tilesweep}
cd "$root/tests/errors"
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=(*.py)
for f in "${files[@]}"; do
  f=$(basename "$f")
  msg=$("$bin" check "$f" 2>&1 >/dev/null || true)
  msg=${msg#"$f"}
  /usr/bin/python3 - "$f" "$msg" <<'PY'
import sys
f, msg = sys.argv[1], sys.argv[2]
b = open(f, 'rb').read()
open(f, 'wb').write(b'# expect: ' + msg.encode() + b[b.index(b'\n'):])
PY
done
