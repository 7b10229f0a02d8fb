#!/usr/bin/env bash
# old-leaderrun.sh SOURCE_ROOT COMMIT CACHE_DIR: the leaderrun binary of an
# older COMMIT of this repository, for the mixed-version fleet tests (issue
# 14: a fleet is upgraded host by host, so an old and a new build contend on
# one lease).
#
# Built once from `git archive COMMIT` with meson and ninja (nice -n 10, the
# test machines have two cores), then cached as CACHE_DIR/leaderrun-SHA:
# reruns take no time. Prints the binary's path as its last line.
#
# Exit status: 0 built or cached; 77 it cannot be built here (not a git
# checkout, or COMMIT missing: a shallow clone); 1 the build failed (the
# last lines of its log follow).
set -euo pipefail

src=$1 commit=$2 cache=$3

skip() { echo "old-leaderrun: $*" >&2; exit 77; }

command -v git >/dev/null || skip "git is not installed: no build of $commit to test against"
# The checkout's own top (a source tarball unpacked inside another git
# work tree is no checkout of this repository).
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) || top=
if [[ -z $top || $(readlink -f -- "$top") != "$(readlink -f -- "$src")" ]]; then
    skip "$src is not a git checkout: no build of $commit to test against"
fi
sha=$(git -C "$src" rev-parse --verify --quiet "$commit^{commit}") ||
    skip "commit $commit is not in $src (a shallow clone? 'git fetch --unshallow' brings it)"

mkdir -p "$cache"
bin=$cache/leaderrun-$sha
# Two suites (or two meson test runs) may ask at once: one builds.
exec 9>"$cache/.lock"
flock 9
if [[ -x $bin ]] && "$bin" --version >/dev/null 2>&1; then
    echo "$bin"
    exit 0
fi

work=$cache/$sha
log=$cache/build-$sha.log
rm -rf -- "$work"
mkdir -p "$work/src"
start=$SECONDS
fail() {
    echo "old-leaderrun: building $commit failed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
}
{
    git -C "$src" archive "$sha" | tar -x -C "$work/src" &&
        # Not -Werror: a newer compiler may warn about the old code, and
        # its warnings are not what this build is for.
        nice -n 10 meson setup "$work/build" "$work/src" -Dwerror=false &&
        nice -n 10 ninja -C "$work/build" leaderrun
} >"$log" 2>&1 || fail
cp -- "$work/build/leaderrun" "$bin.tmp"
mv -- "$bin.tmp" "$bin"
rm -rf -- "$work"
echo "old-leaderrun: built $commit in $((SECONDS - start)) s" >&2
echo "$bin"
