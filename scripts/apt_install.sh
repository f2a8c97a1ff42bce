#!/usr/bin/env bash
# Sourced by the setup scripts: `apt_install PKG...` installs the named Debian packages for tests
# and tools without upgrading any other package the system already has (python3.11, libpq5, apt...).
# Each package is simulated first; one whose install would move another installed package to a
# new version is not installed and is named on stderr. Callers check for the files they need and
# say what to do when one is missing. A package may be pinned as `NAME=VERSION` (apt-get's own
# syntax): the named package may move to that version, nothing else may move.
apt_install() {
    local sudo="" pkg name moved
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    local installable=()
    for pkg in "$@"; do
        name="${pkg%%=*}"
        moved=$(apt-get install -s -y --no-install-recommends --reinstall "$pkg" 2>/dev/null \
            | awk -v pkg="$name" '/^Inst / && $3 ~ /^\[/ {
                  old = $3; gsub(/[][]/, "", old); new = $4; gsub(/[()]/, "", new)
                  if (old != new && $2 != pkg) printf "%s %s -> %s; ", $2, old, new }')
        if [ -n "$moved" ]; then
            echo "not installing $pkg: it would upgrade system packages (${moved%; })" >&2
        else
            installable+=("$pkg")
        fi
    done
    if [ "${#installable[@]}" -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
            --reinstall "${installable[@]}"
    fi
}
