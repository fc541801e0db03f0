#!/usr/bin/env bash
# Installs the Debian packages tilesweep needs to build, test and run.
# Idempotent: when everything is present it only checks (well under a second).
# Runs as root, or through sudo when not root.
set -euo pipefail

packages=(
  g++ cmake make pkg-config ccache clang-format
  libopenmpi-dev openmpi-bin
  libz3-dev
  libhdf5-dev hdf5-tools
  libfmt-dev libtbb-dev libtomlplusplus-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy python3-h5py python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "error: missing packages (${missing[*]}) and not root; rerun as root or install sudo" >&2
  exit 2
fi

echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
