#!/usr/bin/env bash
# startup - what was cut from every run stays cut:
#   1. --version maps no client library (libmariadb, libssl, libcrypto,
#      libcurl are loaded only by runs that need them);
#   2. a run over a socket reads no NSS configuration (getservbyname) and no
#      openssl.cnf, and loads no NSS module;
#   3. an uncontended `-n -- true` is the connect and 2 statements (the
#      server's general log): the acquisition, which carries the server
#      check and the fence's move, and the release, which
#      carries the run history's row; two durable commits; a run that
#      outlasts the history's start delay closes
#      its row in the release too;
#   4. --version names the release, the git revision and the client library.
#
# Usage: tests/startup/startup.sh BINARY   (meson test --suite startup)
# Exit 77 when strace or the MariaDB server is missing.
set -euo pipefail

bin=${1:?usage: startup.sh BINARY}
top=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
command -v strace >/dev/null || { echo "SKIP: strace missing"; exit 77; }
command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]] || { echo "SKIP: no MariaDB server"; exit 77; }

passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

work=$(mktemp -d /tmp/lrstart.XXXXXX)
cleanup() {
    "$top/scripts/sandbox-db" stop "$work/db" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# 1.
libs=$(LD_DEBUG=libs "$bin" --version 2>&1 >/dev/null | grep -o 'lib[a-z0-9_]*\.so[.0-9]*' | sort -u | tr '\n' ' ' || true)
if [[ $libs == *libmariadb* || $libs == *libssl* || $libs == *libcrypto* || $libs == *libcurl* ]]; then
    bad "--version loads $libs"
else
    ok "--version loads only: ${libs:-nothing (static)}"
fi

# 4.
v=$("$bin" --version)
if [[ $v =~ ^leaderrun\ [0-9]+\.[0-9]+\.[0-9]+\ \(git\ [0-9a-z-]+,\ (MariaDB\ Connector/C|MySQL\ client)\ [0-9.]+\)$ ]]; then
    ok "--version: $v"
else
    bad "--version: '$v'"
fi

eval "$("$top/scripts/sandbox-db" start "$work/db")"
dsn="mysql://$LR_DB_USER:$LR_DB_PASSWORD@localhost/$LR_DB_NAME?socket=$LR_DB_SOCKET"
"$bin" -d "$dsn" -n -l startup -- true || bad "a first run failed"

# 2.
strace -f -e trace=open,openat -o "$work/strace" "$bin" -d "$dsn" -n -l startup -- true
opened=$(grep -oE '"(/etc/nsswitch.conf|/etc/services|[^"]*openssl.cnf|[^"]*libnss_[^"]*)"' "$work/strace" |
    sort -u | tr '\n' ' ' || true)
if [[ -z $opened ]]; then
    ok "a socket run opens no nsswitch.conf, /etc/services, openssl.cnf or NSS module"
else
    bad "a socket run opens $opened"
fi

# 3. Each connection's statements, from the general log: "ID:N:LIST" per
# connection of the test user, in the order they connected: N the
# statements, LIST their kinds, where a compound statement that writes the
# run history is "History", one that gives the hint back "Hint+History" or
# "Hint", "Prepared:" before either when it ran as a block prepared
# before, "Prepare" the statement that prepared it. The server's fsyncs (Innodb_data_fsyncs) meanwhile: a durable
# commit is one (the sandbox flushes the log at every commit).
fsyncs() { "$top/scripts/sandbox-db" sql "$work/db" -N -e "SHOW GLOBAL STATUS LIKE 'Innodb_data_fsyncs'" | awk '{print $2}'; }
statements() { # statements ARGS...: run leaderrun with ARGS, print the counts, then the fsyncs
    local log=$work/general.log f0 f1
    : >"$log"
    "$top/scripts/sandbox-db" sql "$work/db" -e "SET GLOBAL general_log_file='$log'; SET GLOBAL general_log=1"
    f0=$(fsyncs)
    "$bin" -d "$dsn" -l startup "$@" -- ${run_cmd:-true}
    f1=$(fsyncs)
    "$top/scripts/sandbox-db" sql "$work/db" -e "SET GLOBAL general_log=0"
    awk -v user="$LR_DB_USER" '
        {
            for (i = 1; i <= NF; i++) if ($i ~ /^(Query|Prepare|Execute|Quit|Connect|Close)$/) break
            if (i > NF || i < 2) next
            id = $(i - 1)
            if ($i == "Connect") { if ($0 ~ "Connect\t" user "@") { mine[id] = 1; order[++k] = id } ; next }
            if (!(id in mine)) next
            if ($i != "Query" && $i != "Execute") next
            # A block prepared on the server: its EXECUTE is logged twice,
            # as sent and as run; the second, with its text, counts.
            if ($i == "Query" && $(i + 1) == "EXECUTE") next
            kind = $i
            if ($i == "Query" && $(i + 4) == "PREPARE") kind = "Prepare"
            if ($0 ~ /RELEASE_ALL_LOCKS/) kind = "Hint"
            if ($0 ~ /leaderrun_history/) kind = (kind == "Hint" ? "Hint+" : "") "History"
            if ($i == "Execute" && $0 ~ /BEGIN NOT ATOMIC/) kind = "Prepared:" kind
            n[id]++
            l[id] = l[id] (l[id] ? "," : "") kind
        }
        END { for (j = 1; j <= k; j++) printf "%s:%d:%s ", order[j], n[order[j]], l[order[j]]; print "" }' "$log"
    echo "$((f1 - f0))"
}
# The run's own fsyncs: two commits. The server flushes in the background
# too (an idle InnoDB, about once a second): the least of three runs.
least_fsyncs() { # least_fsyncs ARGS...
    local best=99 out
    for _ in 1 2 3; do
        out=$(statements "$@" | tail -n 1)
        ((out < best)) && best=$out
    done
    echo "$best"
}
# Issue 34: an uncontended -n run is the connect and two statements, one
# round trip each: the acquisition (the server check, the compare-and-set
# and the fence's move, one commit) and the release (the run history's
# row with it, one commit).
{ read -r -a conns; read -r fs; } < <(statements -n --history-keep 0)
IFS=: read -r _ stmts list <<<"${conns[0]-::}"
if ((${#conns[@]} == 1 && stmts == 2)) && [[ $list == Query,Query ]]; then
    ok "an uncontended -n run without history: the connect and $stmts statements ($list)"
else
    bad "an uncontended -n run without history: ${conns[*]} (connection:statements:kinds); see $work/general.log"
fi
{ read -r -a conns; read -r fs; } < <(statements -n)
IFS=: read -r _ stmts list <<<"${conns[0]-::}"
row=$("$top/scripts/sandbox-db" sql "$work/db" -N -e "SELECT CONCAT(outcome, ' ', exit_status, ' ', ended_at IS NOT NULL)
    FROM leaderrun_history WHERE lease='startup' ORDER BY term DESC LIMIT 1")
if ((${#conns[@]} == 1 && stmts == 2)) && [[ $list == Query,History && $row == "exited 0 1" ]]; then
    ok "an uncontended -n run with history: one connection, $stmts statements, the row in the release's ($list); its row: $row"
else
    bad "an uncontended -n run with history: ${conns[*]} (connection:statements:kinds), row '$row'; see $work/general.log"
fi
fs=$(least_fsyncs -n)
if ((fs <= 2)); then
    ok "an uncontended -n run with history: $fs fsyncs on the server (two durable commits)"
else
    bad "an uncontended -n run with history: $fs fsyncs on the server, more than its two commits"
fi

# A run that may wait (the default) holds the wake-up hint: taken in the
# acquisition's statement, given back in the release's, after its commit.
{ read -r -a conns; read -r fs; } < <(statements)
IFS=: read -r _ stmts list <<<"${conns[0]-::}"
if ((${#conns[@]} == 1 && stmts == 2)) && [[ $list == Query,Hint+History ]] &&
    grep -q 'GET_LOCK' "$work/general.log"; then
    ok "a run with the wake-up hint: one connection, the hint taken and given back in the two statements ($list)"
else
    bad "a run with the wake-up hint: ${conns[*]} (connection:statements:kinds); see $work/general.log"
fi

# A run that outlasts the history's start delay (100 ms): the start row on
# the history's own connection while the command runs (its server check,
# then the row); its close rides in
# the release, so that no second connection writes at the moment of a
# handover and the run makes no third commit. At 250 ms the release is
# prepared on the server (one statement, no commit), and the release is
# then its EXECUTE.
{ read -r -a conns; read -r fs; } < <(run_cmd="sleep 0.4" statements)
IFS=: read -r _ stmts list <<<"${conns[0]-::}"
IFS=: read -r _ hstmts hlist <<<"${conns[1]-::}"
row=$("$top/scripts/sandbox-db" sql "$work/db" -N -e "SELECT CONCAT(outcome, ' ', exit_status, ' ', ended_at IS NOT NULL)
    FROM leaderrun_history WHERE lease='startup' ORDER BY term DESC LIMIT 1")
if ((${#conns[@]} == 2 && stmts == 3 && hstmts == 2)) && [[ $list == Query,Prepare,Prepared:Hint+History && $hlist == Query,History &&
    $row == "exited 0 1" ]]; then
    ok "a run of 400 ms: its history's start on a connection of its own ($hlist), its release prepared, the close in it ($list); its row: $row"
else
    bad "a run of 400 ms: ${conns[*]} (connection:statements:kinds), row '$row'; see $work/general.log"
fi
echo "startup: $passed passed, $failed failed"
((failed == 0))
