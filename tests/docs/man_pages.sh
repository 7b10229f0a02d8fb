#!/usr/bin/env bash
# man_pages - every page in man/ is one that man(1) and lintian accept and
# that users can find: groff renders it without a warning (-ww, as lintian's
# manpage-has-errors-from-man), its NAME line is a whatis entry (lexgrog, as
# mandb reads it for man -k), its .TH names meson.build's version, meson
# installs it, and the pages it refers to exist. leaderrun(1) keeps its
# SAFETY, EXIT STATUS, ENVIRONMENT and EXAMPLES (the options are held to it by
# tests/unit/test_options.c); the README names every page.
# (Issue 26 split one 3,900-line page into three.)
set -euo pipefail

top=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
command -v groff >/dev/null || { echo "SKIP: groff missing (apt-get install groff-base)"; exit 77; }
command -v lexgrog >/dev/null || { echo "SKIP: lexgrog missing (apt-get install man-db)"; exit 77; }

failed=0
bad() { echo "FAIL: $*"; failed=1; }
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$top/meson.build" | head -n 1)
installed=$(grep '^install_man(' "$top/meson.build" || true)

pages=("$top"/man/*.[1-8])
((${#pages[@]} >= 3)) || bad "expected leaderrun.1 and the section-7 pages in man/, found ${#pages[@]}"
for page in "${pages[@]}"; do
    file=${page##*/}
    name=${file%.*}
    section=${file##*.}
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    [[ -z $warnings ]] || bad "$file: groff warns: $(head -n 3 <<<"$warnings")"
    whatis=$(lexgrog "$page" 2>&1) || bad "$file: lexgrog finds no NAME line: $whatis"
    [[ $whatis == *"\"$name - "* ]] || bad "$file: NAME line is not '$name \\- ...': $whatis"
    th=$(grep -m 1 '^\.TH ' "$page")
    [[ $th == *" $section "*"\"leaderrun $version\""* ]] ||
        bad "$file: .TH says '$th', want section $section and \"leaderrun $version\""
    [[ $installed == *"'man/$file'"* ]] || bad "$file: not in meson.build's install_man"
    # Every leaderrun page named with .BR NAME (SECTION) exists.
    while read -r ref sect; do
        [[ -f $top/man/$ref.$sect ]] || bad "$file refers to $ref($sect), which is not in man/"
    done < <(sed -n 's/^\.BR \(leaderrun[a-z\\-]*\) (\([0-9]\)).*/\1 \2/p' "$page" | sed 's/\\-/-/g' | sort -u)
    grep -qF "$file" "$top/README.md" || bad "README.md does not name man/$file"
done

one=$top/man/leaderrun.1
for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT SAFETY EXAMPLES "SEE ALSO"; do
    grep -qx "\.SH $section" "$one" || bad "leaderrun.1 has no $section section"
done

if ((failed)); then
    exit 1
fi
echo "man_pages: ${#pages[@]} pages ok (version $version)"
