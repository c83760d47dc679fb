#!/usr/bin/env bash
# deps.sh -- install the Debian 12 packages lotus needs to build, test and run its demo.
#
# Idempotent: checks each package with dpkg-query and installs only what is missing, with
# apt-get when running as root. Without root it prints the exact command to run and fails.
#
# SPDX-License-Identifier: MIT
set -eu

pkgs="build-essential cmake pkg-config libjansson-dev libglpk-dev libcurl4-openssl-dev
libmicrohttpd-dev zlib1g-dev libcmocka-dev gnuplot-nox clang clang-format"

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "deps: all Debian packages present"
    exit 0
fi
echo "deps: missing Debian packages:$missing"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: apt-get not found; lotus targets Debian 12. Install the packages above by hand." >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: not root; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
echo "deps: installed:$missing"
