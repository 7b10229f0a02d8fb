#!/usr/bin/env bash
# deb - the Debian package builds from the committed tree, lintian reports no
# error, and the package holds what users install it for: the binary (its
# --version the tree's), the man pages (leaderrun.1, leaderrun-safety.7 and
# leaderrun-monitoring.7), the bash completion, every file of sql/, the
# README, NEWS, changelog and copyright, and a Depends on the client library
# it loads with dlopen. (0.3.0's changelog made lintian fail
# the build, and nothing in the test run built the package.)
#
# Usage: tests/package/deb.sh   (scripts/package installs what it needs)
# Ends with "deb: N passed, N failed"; exit 1 on any failure.
set -euo pipefail

top=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$top"
passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
    echo "deb: $passed passed, $failed failed"
    ((failed == 0))
}

tmp=$(mktemp -d /tmp/lrdebtest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -n 1)

if ! deb=$(scripts/package deb -o "$tmp/out" 2>"$tmp/err"); then
    tail -n 20 "$tmp/err"
    bad "scripts/package deb failed (lintian errors fail it too)"
    finish
    exit 1
fi
ok "scripts/package deb built $(basename "$deb"), lintian reports no error"
[[ $(basename "$deb") == leaderrun_${version}_amd64.deb ]] || bad "named $(basename "$deb"), not leaderrun_${version}_amd64.deb"

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/contents"
want=(/usr/bin/leaderrun /usr/share/man/man1/leaderrun.1.gz /usr/share/man/man7/leaderrun-safety.7.gz
    /usr/share/man/man7/leaderrun-monitoring.7.gz /usr/share/bash-completion/completions/leaderrun
    /usr/share/doc/leaderrun/README.md.gz /usr/share/doc/leaderrun/NEWS.gz /usr/share/doc/leaderrun/changelog.gz
    /usr/share/doc/leaderrun/copyright)
for f in sql/*.sql; do want+=("/usr/share/leaderrun/sql/$(basename "$f")"); done
missing=()
for f in "${want[@]}"; do grep -qxF "$f" "$tmp/contents" || missing+=("$f"); done
if ((${#missing[@]} == 0)); then
    ok "holds the binary, man pages, completion, docs and all ${#want[@]} files"
else
    bad "missing from the package: ${missing[*]}"
fi

got=$(dpkg-deb -f "$deb" Version)
if [[ $got == "$version" ]]; then ok "Version: $version"; else bad "Version: $got, meson.build says $version"; fi
depends=$(dpkg-deb -f "$deb" Depends)
if [[ $depends == *libmariadb3* && $depends == *libc6* ]]; then
    ok "Depends: $depends"
else
    bad "Depends lacks the C library or libmariadb3 (loaded with dlopen): $depends"
fi

dpkg-deb -x "$deb" "$tmp/root"
got=$("$tmp/root/usr/bin/leaderrun" --version 2>&1) || true
if [[ $got == "leaderrun $version ("* ]]; then
    ok "the packaged binary says: $got"
else
    bad "the packaged binary's --version: $got"
fi
finish
