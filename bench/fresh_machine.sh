#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make run` on a fresh Debian 12 machine, twice (docs/benchmarks.md "Fresh machine").
#
# A fresh root is built with debootstrap (minbase plus git, make and ca-certificates: what
# a user needs to clone and type `make run`), from the Debian mirror this machine's apt
# already names, with this machine's apt settings, resolver, local certificate authorities
# and pip settings (its network's). The repository is cloned into it at HEAD (or COMMIT),
# and `make run` is timed there from nothing: Debian packages, the Python environment, the
# library source fetch and its cross build, the firmware, the run and its report. Then a
# second `make run`. Each output line is prefixed with the seconds since that make
# started, so the log says where the time went.
#
#   sudo bench/fresh_machine.sh              # needs root (debootstrap, chroot, mounts)
#   ROOT=/var/tmp/fresh KEEP=1 COMMIT=abc123 bench/fresh_machine.sh
#
# ROOT is removed first and at the end (unless KEEP=1). The base system is kept in
# ROOT.base and copied for every run, so a rerun does not download it again (BASE=new
# builds it again). Prints the two wall times; the log is in $LOG.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="${ROOT:-/var/tmp/tlsbench-fresh}"
BASE_ROOT="$ROOT.base"
COMMIT="${COMMIT:-$(git -C "$here" rev-parse HEAD)}"
LOG="${LOG:-$ROOT.log}"
SUITE=bookworm

[ "$(id -u)" -eq 0 ] || { echo "error: needs root (debootstrap, chroot, mounts): sudo $0" >&2; exit 1; }

# The mirror the machine's apt installs Debian 12 from (its first `deb` entry ending in /debian).
mirror() {
    { cat /etc/apt/sources.list 2>/dev/null; cat /etc/apt/sources.list.d/*.list 2>/dev/null; } |
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\/.*\/debian\/?$/) { print $i; exit } }'
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && awk '/^Types:/ { deb = ((" " $0 " ") ~ / deb /) } /^$/ { deb = 0 }
            deb && /^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }' "$f"
    done
}
MIRROR="$(mirror | head -n 1)"
[ -n "$MIRROR" ] || { echo "error: apt's sources name no Debian mirror (a deb entry ending in /debian)" >&2; exit 1; }

mounted=()
cleanup() {
    # what it mounted, and what ran inside mounted there (ip netns binds /run/netns)
    [ ${#mounted[@]} -eq 0 ] || umount -R -l "$ROOT" 2>/dev/null || true
    rm -f "$ROOT.rc"
    [ "${KEEP:-0}" = 1 ] || rm -rf --one-file-system "$ROOT"
}
trap cleanup EXIT

if [ "${BASE:-}" = new ] || [ ! -x "$BASE_ROOT/usr/bin/git" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    rm -rf --one-file-system "$BASE_ROOT"
    echo "debootstrap $SUITE (minbase + git make ca-certificates) into $BASE_ROOT"
    debootstrap --variant=minbase --include=git,make,ca-certificates "$SUITE" "$BASE_ROOT" "$MIRROR" >/dev/null
fi

# Never remove through a mount: a killed run leaves /proc, /sys and /dev bound inside ROOT.
if awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    echo "error: $ROOT still has mounts (a killed run?): umount -R $ROOT, then run this again" >&2
    trap - EXIT
    exit 1
fi
rm -rf --one-file-system "$ROOT"
cp -a "$BASE_ROOT" "$ROOT"
# This machine's apt settings (sources, proxy, options) and resolver: the fresh machine sits on
# the same network. Not tlsbench's own deb-src file: the fresh machine has not run tlsbench yet.
rm -f "$ROOT"/etc/apt/sources.list
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources /etc/apt/apt.conf.d/*; do
    [ -f "$f" ] || continue
    case "$f" in *tlsbench*) continue ;; esac
    mkdir -p "$ROOT$(dirname "$f")"
    cp "$f" "$ROOT$f"
done
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The network's own certificate authorities (a proxy that inspects TLS) and pip's settings,
# as the machine has them: the fresh machine would be set up for its network the same way.
if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
    cp -r /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/"
    chroot "$ROOT" update-ca-certificates >/dev/null 2>&1
fi
[ ! -f /etc/pip.conf ] || cp /etc/pip.conf "$ROOT/etc/pip.conf"
# The root bound onto itself: / inside is a mount point, as on a machine (`ip netns`, which
# the tests' link emulator runs, makes it a slave mount and fails on a plain folder).
mount --bind "$ROOT" "$ROOT"
mounted+=("$ROOT")
for m in proc sys dev dev/pts; do
    mkdir -p "$ROOT/$m"
    mount --bind "/$m" "$ROOT/$m"
    mounted+=("$ROOT/$m")
done

git clone -q --no-checkout "$here" "$ROOT/root/tlsbench"
git -C "$ROOT/root/tlsbench" checkout -q "$COMMIT"

: > "$LOG"
timed_make_run() {  # $1: label; prints the wall time in seconds
    local start=$SECONDS
    echo "== $1 make run ($(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg))" >> "$LOG"
    { chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/sh -c 'cd /root/tlsbench && make run' 2>&1; echo "$?" > "$ROOT.rc"; } |
        while IFS= read -r line; do printf '%4ds %s\n' $((SECONDS - start)) "$line"; done >> "$LOG"
    echo "== $1 make run: exit $(cat "$ROOT.rc"), $((SECONDS - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))" >> "$LOG"
    echo "$((SECONDS - start))"
}
first=$(timed_make_run first)
second=$(timed_make_run second)
tail -n 3 "$LOG"
echo "fresh Debian 12 root, commit ${COMMIT:0:12}: first make run ${first} s, second ${second} s (log: $LOG)"
