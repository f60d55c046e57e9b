#!/usr/bin/env bash
# make cross: weaver for the Raspberry Pi and other ARM Linux machines.
#   bin/weaver-linux-arm64  64-bit Raspberry Pi OS (Pi 3, 4, 5, Zero 2 W), arm64 servers
#   bin/weaver-linux-armv7  32-bit Raspberry Pi OS (Pi 2 and later; ARMv7, hard float)
# SQLite export needs cgo (mattn/go-sqlite3), so each target is built with
# Debian's cross compiler for it:
#   apt-get install gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf
# The binaries link glibc dynamically, like a native build: they run on
# Raspberry Pi OS / Debian 12 (glibc 2.36) and anything newer.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BIN=${BIN:-bin}
LDFLAGS=${LDFLAGS:--s -w}

targets=(
  "arm64 aarch64-linux-gnu-gcc weaver-linux-arm64"
  "arm arm-linux-gnueabihf-gcc weaver-linux-armv7"
)
missing=()
for t in "${targets[@]}"; do
  read -r _ cc _ <<<"$t"
  command -v "$cc" >/dev/null || missing+=("$cc")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "cross: missing ${missing[*]}; on Debian or Ubuntu:" >&2
  echo "  sudo apt-get install gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf" >&2
  exit 1
fi
mkdir -p "$BIN"
for t in "${targets[@]}"; do
  read -r arch cc out <<<"$t"
  echo "building $BIN/$out (GOARCH=$arch, CC=$cc)"
  env CGO_ENABLED=1 GOOS=linux GOARCH="$arch" GOARM=7 CC="$cc" \
    "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$BIN/$out" ./cmd/weaver
done
ls -l "$BIN"/weaver-linux-*
