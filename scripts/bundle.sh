#!/usr/bin/env bash
# Packs a tilesweep binary with everything it runs on -- its loader, glibc and every shared library,
# OpenMPI's launcher, plugins and help files -- into one tarball, to run sweeps on a Linux x86-64
# node that lacks the Debian packages (another distribution, no network). On the node:
#   tar -C / -xJf tilesweep-bundle.tar.xz      (writes /opt/ts and OpenMPI's own folders)
#   /opt/ts/bin/ts --version
#   /opt/ts/bin/mpirun -n 16 /opt/ts/lib/ld-linux-x86-64.so.2 --library-path /opt/ts/lib \
#       /opt/ts/bin/tilesweep run job.toml
# The ranks are the bundled loader itself (a shell-script wrapper would run the node's /bin/sh
# against the bundled glibc, which OpenMPI puts on its ranks' library path).
# Usage: scripts/bundle.sh [BINARY] [OUT.tar.xz]   (defaults: build/tilesweep, tilesweep-bundle.tar.xz)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tilesweep}
out=$(realpath -m "${2:-tilesweep-bundle.tar.xz}")
[ -x "$bin" ] || { echo "error: $bin is not an executable (build it: scripts/build.sh)" >&2; exit 2; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
ts=$stage/opt/ts
mkdir -p "$ts/bin" "$ts/lib"
cp "$bin" "$ts/bin/tilesweep" && strip "$ts/bin/tilesweep"
cp /usr/bin/orterun "$ts/bin/orterun"
multi=/usr/lib/x86_64-linux-gnu
for d in $multi/openmpi $multi/pmix2 $multi/hwloc /usr/share/openmpi /etc/openmpi; do
  [ -d "$d" ] || continue
  mkdir -p "$stage$(dirname "$d")" && cp -a "$d" "$stage$d"
done
# The libraries the binaries and every OpenMPI / PMIx plugin load, and the loader.
{ ldd "$bin"; ldd /usr/bin/orterun
  find $multi/openmpi $multi/pmix2 -name '*.so*' -type f -exec ldd {} \; 2>/dev/null || true
} | awk '/=> \//{print $3} /^[ \t]*\/lib64\//{print $1}' | sort -u |
  while read -r lib; do cp -L "$lib" "$ts/lib/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$ts/lib/"
loader="/opt/ts/lib/ld-linux-x86-64.so.2 --library-path /opt/ts/lib"
printf '#!/bin/sh\nexec %s /opt/ts/bin/tilesweep "$@"\n' "$loader" > "$ts/bin/ts"
printf '#!/bin/sh\nexec %s /opt/ts/bin/orterun --allow-run-as-root "$@"\n' "$loader" > "$ts/bin/mpirun"
chmod +x "$ts/bin/ts" "$ts/bin/mpirun"
tar -C "$stage" -cJf "$out" .
echo "wrote $out ($(du -h "$out" | cut -f1))"
