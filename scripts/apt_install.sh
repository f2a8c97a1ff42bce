#!/usr/bin/env bash
# Sourced by the setup scripts: `apt_install PKG...` installs Debian packages for tests and tools
# without ever upgrading a package the system already has (python3.11, libpq5, apt...).
# Each package is simulated first; one whose install would move an installed package to another
# version is not installed and is named on stderr (the caller decides whether that is fatal).
# Sets APT_SKIPPED to the packages left out.
apt_install() {
    local sudo="" pkg moved
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    local installable=()
    APT_SKIPPED=()
    for pkg in "$@"; do
        moved=$(apt-get install -s -y --no-install-recommends --reinstall "$pkg" 2>/dev/null \
            | awk -v pkg="$pkg" '/^Inst / && $3 ~ /^\[/ {
                  old = $3; gsub(/[][]/, "", old); new = $4; gsub(/[()]/, "", new)
                  if (old != new && $2 != pkg) printf "%s %s -> %s; ", $2, old, new }')
        if [ -n "$moved" ]; then
            echo "not installing $pkg: it would upgrade system packages (${moved%; })" >&2
            APT_SKIPPED+=("$pkg")
        else
            installable+=("$pkg")
        fi
    done
    if [ "${#installable[@]}" -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
            --reinstall "${installable[@]}"
    fi
}
