#!/usr/bin/env bash
# kubernetes_example - the README's Kubernetes Deployment (between the
# <!-- kubernetes-example --> markers) parses as YAML under yamllint's default
# rules, and uses only real Kubernetes fields (tests/docs/k8s_fields.py, on
# Debian's python3-kubernetes models). Exit 77 when a tool is missing.
set -euo pipefail

here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
readme=$here/../../README.md
command -v yamllint >/dev/null || { echo "SKIP: yamllint missing (apt-get install yamllint)"; exit 77; }
/usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null ||
    { echo "SKIP: python3-kubernetes missing (apt-get install python3-kubernetes)"; exit 77; }

tmp=$(mktemp --suffix=.yaml)
trap 'rm -f "$tmp"' EXIT
awk '/^<!-- kubernetes-example/ { on = 1; next } /^<!-- \/kubernetes-example/ { on = 0 } on' "$readme" |
    sed '1{/^```/d}; ${/^```/d}' >"$tmp"
[[ -s $tmp ]] || { echo "no example between the markers in README.md"; exit 1; }
grep -q '^kind: Deployment' "$tmp" || { echo "the example holds no Deployment"; exit 1; }

yamllint --strict "$tmp"
echo "yamllint: ok"
/usr/bin/python3 "$here/k8s_fields.py" "$tmp"
