#!/usr/bin/env bash
# kubernetes_example - the Kubernetes Deployment in EXAMPLES of leaderrun(1)
# (between the .\" kubernetes-example markers of man/leaderrun.1; the README
# links to it) parses as YAML under yamllint's default rules, and uses only
# real Kubernetes fields (tests/docs/k8s_fields.py, on Debian's
# python3-kubernetes models). Exit 77 when a tool is missing.
set -euo pipefail

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
page=$here/../../man/leaderrun.1
command -v yamllint >/dev/null || { echo "SKIP: yamllint missing (apt-get install yamllint)"; exit 77; }
/usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null ||
    { echo "SKIP: python3-kubernetes missing (apt-get install python3-kubernetes)"; exit 77; }

tmp=$(mktemp --suffix=.yaml)
trap 'rm -f "$tmp"' EXIT
# The roff between the markers, less .EX/.EE, with the escapes the page
# uses in it undone: \- (a minus), \(aq (a quote), \e (a backslash).
awk '/^\.\\" kubernetes-example/ { on = 1; next } /^\.\\" \/kubernetes-example/ { on = 0 } on' "$page" |
    sed '/^\.E[XE]$/d' |
    sed 's/\\-/-/g; s/\\(aq/'"'"'/g; s/\\e/\\/g' >"$tmp"
[[ -s $tmp ]] || { echo "no example between the markers in man/leaderrun.1"; exit 1; }
grep -q '^kind: Deployment' "$tmp" || { echo "the example holds no Deployment"; exit 1; }
if grep -n '\\' "$tmp"; then
    echo "a roff escape is left in the example (above): undo it here"
    exit 1
fi

yamllint --strict "$tmp"
echo "yamllint: ok"
/usr/bin/python3 "$here/k8s_fields.py" "$tmp"
