#!/usr/bin/env bash
# changelog - the Debian package's changelog, generated from
# scripts/packaging/NEWS by `scripts/package changelog`, is one lintian
# accepts: versions and dates strictly decreasing from the top, the first
# entry meson.build's version. (0.3.0 was released on 0.2.0's day, both at
# midnight: lintian's latest-changelog-entry-without-new-date failed the
# package build, and nothing in the test run had looked.) A NEWS with two
# releases at one date is refused in one line before anything is built.
set -euo pipefail

top=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
command -v dpkg >/dev/null || { echo "SKIP: no dpkg for --compare-versions"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
bad() { echo "FAIL: $*"; failed=1; }

version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$top/meson.build" | head -n 1)
"$top/scripts/package" changelog >"$tmp/changelog" || bad "scripts/package changelog failed on the committed NEWS"

# Checked on the output itself, not on what the generator believes.
mapfile -t versions < <(sed -n 's/^leaderrun (\([^)]*\)) unstable; urgency=medium$/\1/p' "$tmp/changelog")
mapfile -t stamps < <(sed -n 's/^ -- .*>  \(.*\)$/\1/p' "$tmp/changelog")
((${#versions[@]} >= 1)) || bad "no entries"
((${#versions[@]} == ${#stamps[@]})) || bad "${#versions[@]} headings but ${#stamps[@]} trailer lines"
[[ ${versions[0]-} == "$version" ]] || bad "the first entry is ${versions[0]-none}, meson.build says $version"
for ((i = 1; i < ${#versions[@]}; i++)); do
    dpkg --compare-versions "${versions[i - 1]}" gt "${versions[i]}" ||
        bad "${versions[i - 1]} is listed above ${versions[i]} but is not newer"
    newer=$(date -u -d "${stamps[i - 1]}" +%s) older=$(date -u -d "${stamps[i]}" +%s)
    ((newer > older)) || bad "${versions[i - 1]} (${stamps[i - 1]}) is not dated after ${versions[i]} (${stamps[i]})"
done
((failed)) || echo "ok: ${#versions[@]} entries, newest $version, versions and dates strictly decreasing"

# Two releases at one date, as the bug had them: refused, one line, exit 1.
printf 'leaderrun %s (2026-11-25)\n\n  * b\n\nleaderrun 0.0.1 (2026-11-25)\n\n  * a\n' "$version" >"$tmp/NEWS"
rc=0
"$top/scripts/package" changelog "$tmp/NEWS" >/dev/null 2>"$tmp/err" || rc=$?
if ((rc != 1)) || (($(wc -l <"$tmp/err") != 1)) || ! grep -q 'not dated after 0.0.1' "$tmp/err"; then
    bad "same-day releases: exit $rc, stderr: $(cat "$tmp/err")"
else
    echo "ok: same-day releases refused: $(cat "$tmp/err")"
fi
# With their times they are fine.
sed -i 's/^leaderrun \([^ ]*\) (2026-11-25)$/leaderrun \1 (2026-11-25 TIME)/' "$tmp/NEWS"
sed -i "0,/TIME/s//12:00/; s/TIME/08:00/" "$tmp/NEWS"
"$top/scripts/package" changelog "$tmp/NEWS" >"$tmp/out" 2>"$tmp/err" ||
    bad "same-day releases with times refused: $(cat "$tmp/err")"
grep -q '25 Nov 2026 12:00:00' "$tmp/out" || bad "the time of day is not in the changelog: $(cat "$tmp/out")"
# A date that does not parse.
printf 'leaderrun %s (25/11/2026)\n\n  * b\n' "$version" >"$tmp/NEWS"
rc=0
"$top/scripts/package" changelog "$tmp/NEWS" >/dev/null 2>"$tmp/err" || rc=$?
if ((rc != 1)) || ! grep -q 'YYYY-MM-DD' "$tmp/err"; then
    bad "a bad date: exit $rc, stderr: $(cat "$tmp/err")"
fi
exit "$failed"
