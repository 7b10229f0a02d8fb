#!/usr/bin/env bash
# scripts_duplicates - scripts/ says each thing once: `duplicates` (a tool on
# the developer's PATH, not part of this repository) finds no two places in
# scripts/ sharing six or more lines of the same shape. It picks the files it
# reads by their extension, and the executables in scripts/ have none, so
# they are copied into a scratch tree first with one added (.sh, or .py for
# a python3 shebang). Issue 26: "duplicates on scripts/ shows no repeats".
# Skipped (exit 77) where `duplicates` is not installed.
set -euo pipefail

top=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
command -v duplicates >/dev/null || { echo "SKIP: no duplicates on PATH"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$top"
if ! files=$(git ls-files -- scripts 2>/dev/null) || [[ -z $files ]]; then
    files=$(find scripts -type f) # not a git checkout (a release tarball)
fi
while IFS= read -r f; do
    [[ -f $f ]] || continue
    out=$tmp/$f
    if [[ ${f##*/} != *.* && $(head -c 2 -- "$f") == '#!' ]]; then
        if [[ $(head -n 1 -- "$f") == *python* ]]; then out+=.py; else out+=.sh; fi
    fi
    mkdir -p -- "${out%/*}"
    cp -- "$f" "$out"
done <<<"$files"

report=$(cd "$tmp" && duplicates --most 40)
if [[ $report == "no duplicates"* && $report != *incomplete:* ]]; then
    echo "$report"
    exit 0
fi
echo "FAIL: scripts/ repeats itself (files named as in $top/scripts, with .sh added):"
echo "$report"
exit 1
