#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine with the Swift toolchain lacks to build and test DownloadCache.
# Idempotent: does nothing when everything is already there. Needs root (or sudo) only when it installs.
set -euo pipefail
need=()
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need+=(libsqlite3-dev)
dpkg -s zlib1g-dev     >/dev/null 2>&1 || need+=(zlib1g-dev)
dpkg -s libdeflate0    >/dev/null 2>&1 || need+=(libdeflate0)   # crc32 at ≈6x zlib's speed (loaded at run time; zlib otherwise)
dpkg -s libcurl4-openssl-dev >/dev/null 2>&1 || need+=(libcurl4-openssl-dev)
dpkg -s libssl-dev     >/dev/null 2>&1 || need+=(libssl-dev)
dpkg -s pkg-config     >/dev/null 2>&1 || need+=(pkg-config)
dpkg -s nginx          >/dev/null 2>&1 || need+=(nginx)
dpkg -s libhiredis-dev >/dev/null 2>&1 || need+=(libhiredis-dev)
dpkg -s redis-server   >/dev/null 2>&1 || need+=(redis-server)
dpkg -s curl           >/dev/null 2>&1 || need+=(curl)
dpkg -s openssl        >/dev/null 2>&1 || need+=(openssl)   # the TLS tests make a CA at test time
dpkg -s time           >/dev/null 2>&1 || need+=(time)      # /usr/bin/time: a child's own peak memory in the tests
command -v python3 >/dev/null 2>&1 || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "bootstrap: installing ${need[*]}" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
