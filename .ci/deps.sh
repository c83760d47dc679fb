#!/usr/bin/env bash
# deps.sh -- install what lotus needs to build, test and run its demo on Debian 12.
#
# 1. Debian packages: checks each with dpkg-query and installs only what is missing, with
#    apt-get when running as root. Without root it prints the exact command to run and fails.
#    libclang-rt-dev brings clang's sanitizer and libFuzzer runtimes (libclang-rt-14-dev), which
#    apt only recommends with clang; the fuzz smokes of `make test` link against them.
# 2. Go >= 1.26 for the end-to-end suite (tests/e2e builds the real kube-apiserver and
#    kube-scheduler from Go modules). A Go already on the machine is used as it is
#    (tests/e2e/find-go says which). Otherwise Debian's golang-go (1.19) is installed only to
#    download the Go toolchain module golang.org/toolchain@v0.0.1-go$LOTUS_GO_VERSION.linux-ARCH
#    from the Go module proxy, the way `go` itself fetches a toolchain, into
#    /usr/local/lib/lotus-go.
#
# Idempotent: a second run installs nothing.
# SPDX-License-Identifier: MIT
set -eu
here=$(cd "$(dirname "$0")" && pwd)

pkgs="build-essential cmake pkg-config libjansson-dev libglpk-dev libcurl4-openssl-dev
libmicrohttpd-dev zlib1g-dev libisal-dev isal libcmocka-dev gnuplot-nox clang clang-format libclang-rt-dev
ca-certificates"

apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "deps: apt-get not found; lotus targets Debian 12. Install by hand:$*" >&2
        exit 1
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "deps: not root; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends$*" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends "$@"
    echo "deps: installed: $*"
}

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "deps: all Debian packages present"
else
    echo "deps: missing Debian packages:$missing"
    # shellcheck disable=SC2086
    apt_install $missing
fi

# Go for tests/e2e.
LOTUS_GO_VERSION=${LOTUS_GO_VERSION:-1.26.8}
if go=$(bash "$here/../tests/e2e/find-go" 2>/dev/null); then
    echo "deps: Go present: $go ($("$go" version | cut -d' ' -f3))"
    exit 0
fi
dest=/usr/local/lib/lotus-go
arch=$(dpkg --print-architecture)
echo "deps: no Go >= 1.26 found; fetching the go$LOTUS_GO_VERSION toolchain module into $dest"
if [ ! -x /usr/lib/go-1.19/bin/go ] && ! command -v go >/dev/null 2>&1; then
    apt_install golang-go
fi
boot=$(command -v go || echo /usr/lib/go-1.19/bin/go)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
mod="golang.org/toolchain@v0.0.1-go$LOTUS_GO_VERSION.linux-$arch"
json=$(cd "$tmp" && GOPATH="$tmp/gopath" GOFLAGS=-mod=mod GO111MODULE=on GOTOOLCHAIN=local \
    "$boot" mod download -json "$mod" 2>&1) || true
dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -f "$dir/bin/go" ]; then
    # Not fatal: the build, the demo and the C tests need no Go; `make e2e` (and so `make test`)
    # will stop at tests/e2e/find-go, pointing back here.
    echo "deps: WARNING: could not download $mod with $boot:" >&2
    printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/deps:   \1/p' >&2
    echo "deps: the end-to-end suite (make e2e, part of make test) needs Go >= 1.26 and the Go" >&2
    echo "deps: module proxy; a TLS error here means this machine does not trust the certificate" >&2
    echo "deps: its network presents for the proxy (install that CA with update-ca-certificates)." >&2
    exit 0
fi
rm -rf "$dest.new"
cp -r "$dir" "$dest.new"
chmod -R u+w "$dest.new"
# A module zip keeps no file modes: make the commands executable, as `go` does for a toolchain.
find "$dest.new/bin" "$dest.new/pkg/tool" -type f -exec chmod 0755 {} +
rm -rf "$dest"
mv "$dest.new" "$dest"
"$dest/bin/go" version
echo "deps: installed Go in $dest"
