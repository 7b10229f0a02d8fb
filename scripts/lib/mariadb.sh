# shellcheck shell=bash
# lib/mariadb.sh - what scripts/sandbox-db, scripts/sandbox-galera and
# scripts/sandbox-replica share: one throwaway mariadbd in a server directory,
# the port registry, the test database and user, the printed settings, and
# the sandbox directory that holds one or more server directories.
#
# Sourced, not run. The caller sets PROG (the prefix of its messages) and
# SCRIPT_DIR (the scripts/ directory) first, and `set -euo pipefail`.
#
# A server directory SDIR holds data/ (the datadir), mysqld.sock, mysqld.pid,
# error.log, stdout.log, install.log, tmp/, port (the TCP ports the server
# uses, one a line; the first is the SQL port), .started (after its first
# successful start) and .provisioned (the test database is there).

# mariadbd is in /usr/sbin, which is not on an ordinary Debian user's PATH.
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
SQL_DIR=${SCRIPT_DIR%/*}/sql

DB_NAME=leaderrun_test
DB_USER=leaderrun
DB_PASSWORD=leaderrun-test-pw
DB_HOSTS=(localhost 127.0.0.1) # the user exists for the socket and for TCP

# Ports come from here, minus the kernel's ephemeral range, so that a sandbox
# never competes with the kernel's choice for outgoing connections or for a
# test's own proxies that bind port 0.
PORT_MIN=20000
PORT_MAX=60000
# Ports held by sandboxes, one symlink PORT -> SDIR each. A killed server holds
# no socket, so without this another sandbox could take its port before
# `restart` and the restart would fail. Shared by every user (sticky bit).
PORT_REGISTRY=/tmp/sandbox-db-ports

READY_TICKS=600 # x 50 ms = 30 s for the server to accept clients
STOP_TICKS=200  # x 50 ms = 10 s for a clean shutdown before SIGKILL

die() { echo "$PROG: $*" >&2; exit 1; }
warn() { echo "$PROG: warning: $*" >&2; }
usage_error() { echo "$PROG: $* (see $PROG --help)" >&2; exit 64; }

# --------------------------------------------------------------- processes

# One letter from /proc/PID/stat (R, S, D, Z, ...), or X when there is no
# such process. A SIGKILLed server can stay a zombie for a while when its
# parent does not reap (PID 1 of some containers never does): it holds no
# files and no sockets, so a zombie counts as gone, which `kill -0` cannot say.
proc_state() {
    local s
    { s=$(<"/proc/$1/stat"); } 2>/dev/null || { echo X; return; }
    s=${s##*) } # the command name may itself contain ") "
    echo "${s%% *}"
}

alive() { [[ $(proc_state "$1") != [ZX] ]]; }

# Print the pid of the server serving SDIR, found by its --datadir argument,
# so that a stale pid file or a reused pid can never make us signal a
# stranger. Only builtins in the loop: no fork per process. A sandbox of
# another server sets SERVER_COMM (its process name) and SERVER_ROOT_DIR
# (where SDIR appears in the server's own file system, before SDIR).
SERVER_COMM=mariadbd
SERVER_ROOT_DIR=
server_pid() {
    local want="--datadir=$SERVER_ROOT_DIR$1/data" p comm arg args
    for p in /proc/[0-9]*; do
        read -r comm 2>/dev/null <"$p/comm" || continue
        [[ $comm == "$SERVER_COMM" ]] || continue
        mapfile -d '' args 2>/dev/null <"$p/cmdline" || continue
        for arg in "${args[@]}"; do
            if [[ $arg == "$want" ]] && alive "${p#/proc/}"; then
                echo "${p#/proc/}"
                return 0
            fi
        done
    done
    return 1
}

# wait_gone PID TICKS: wait up to TICKS x 50 ms for PID to exit (or turn zombie).
wait_gone() {
    local i
    for ((i = 0; i < $2; i++)); do
        alive "$1" || return 0
        sleep 0.05
    done
    ! alive "$1"
}

# ------------------------------------------------------------------ client

root_sql() { # root_sql SDIR [mariadb args...]: root over the socket, no password
    local dir=$1
    shift
    mariadb --no-defaults -S "$dir/mysqld.sock" -uroot "$@"
}

socket_answers() { root_sql "$1" --connect-timeout=2 -N -e 'SELECT 1' >/dev/null 2>&1; }

tcp_answers() { # tcp_answers PORT (root@127.0.0.1 exists after install-db)
    mariadb --no-defaults -h127.0.0.1 -P"$1" --protocol=tcp -uroot \
        --connect-timeout=2 -N -e 'SELECT 1' >/dev/null 2>&1
}

# server_vars SDIR SQL: the NAME, VALUE rows of SQL (SHOW STATUS or SHOW
# VARIABLES) into VARS, the names in lower case; fails when the server
# does not answer.
declare -A VARS=()
server_vars() {
    local out name value
    out=$(root_sql "$1" --connect-timeout=2 -N -e "$2" 2>/dev/null) || return 1
    VARS=()
    while IFS=$'\t' read -r name value; do
        [[ -z $name ]] || VARS[${name,,}]=$value
    done <<<"$out"
}

sql_shell() { # sql_shell SDIR [mariadb args...]: the `sql` command of every sandbox
    local sdir=$1
    shift
    [[ -S $sdir/mysqld.sock ]] || die "no server socket in $sdir (not started?)"
    exec mariadb --no-defaults -S "$sdir/mysqld.sock" -uroot "$DB_NAME" "$@"
}

# ------------------------------------------------------------------- ports

# used_ports: lib/ports.sh
# shellcheck source=ports.sh
. "${BASH_SOURCE[0]%/*}/ports.sh"

# owner_uses OWNER PORT: PORT is one of the lines of OWNER/port.
owner_uses() {
    local ports p
    [[ -f $1/port ]] || return 1
    mapfile -t ports 2>/dev/null <"$1/port" || return 1
    for p in "${ports[@]}"; do
        [[ $p == "$2" ]] && return 0
    done
    return 1
}

# Claim PORT for SDIR in the registry; fails if another sandbox holds it. A
# stale entry (its SDIR gone, or now using other ports) is taken over.
claim_port() {
    local port=$1 dir=$2 link=$PORT_REGISTRY/$1 owner
    if [[ ! -d $PORT_REGISTRY ]] && mkdir -p "$PORT_REGISTRY" 2>/dev/null; then
        chmod 1777 "$PORT_REGISTRY" 2>/dev/null || true
    fi
    [[ -d $PORT_REGISTRY && -w $PORT_REGISTRY ]] || return 0 # best effort only
    ln -s "$dir" "$link" 2>/dev/null && return 0
    owner=$(readlink "$link" 2>/dev/null) || return 1
    [[ $owner == "$dir" ]] && return 0
    # Held while the owner is starting (no port file yet) or uses the port.
    [[ -d $owner && ! -f $owner/port ]] && return 1
    owner_uses "$owner" "$port" && return 1
    rm -f "$link" 2>/dev/null || return 1 # someone else's stale entry (sticky dir)
    ln -s "$dir" "$link" 2>/dev/null
}

release_port() { # release_port PORT SDIR: drop the registry entry if it is SDIR's
    local link=$PORT_REGISTRY/$1
    [[ $(readlink "$link" 2>/dev/null) == "$2" ]] && rm -f "$link"
    return 0
}

release_ports() { # release_ports SDIR: release every port in SDIR/port
    local ports p
    [[ -f $1/port ]] || return 0
    mapfile -t ports <"$1/port" || return 0
    for p in "${ports[@]}"; do
        [[ -n $p ]] && release_port "$p" "$1"
    done
    return 0
}

# pick_ports SDIR N: N new ports for SDIR, one a line in SDIR/port, written
# last: until then the registry holds them for a server that is starting.
pick_ports() {
    local sdir=$1 i ports=()
    rm -f "$sdir/port"
    for ((i = 0; i < $2; i++)); do ports+=("$(pick_port "$sdir")"); done
    printf '%s\n' "${ports[@]}" >"$sdir/port.tmp"
    mv -f "$sdir/port.tmp" "$sdir/port"
}

sql_port() { local p; read -r p <"$1/port" && echo "$p"; } # sql_port SDIR: its first

# Print a port that nothing listens on or connects from, and claim it for SDIR.
# Another process can still bind it before mariadbd does: the caller retries
# with another port when the server reports "Address already in use".
pick_port() {
    local dir=$1 lo hi ranges=() used=() r a b port i
    read -r lo hi </proc/sys/net/ipv4/ip_local_port_range || { lo=32768 hi=60999; }
    ((lo > PORT_MIN)) && ranges+=("$PORT_MIN $((lo - 1 < PORT_MAX ? lo - 1 : PORT_MAX))")
    ((hi < PORT_MAX)) && ranges+=("$((hi + 1 > PORT_MIN ? hi + 1 : PORT_MIN)) $PORT_MAX")
    ((${#ranges[@]})) || ranges=("$PORT_MIN $PORT_MAX") # ephemeral range covers it all
    while read -r port; do used[port]=1; done < <(used_ports)
    for ((i = 0; i < 200; i++)); do
        r=${ranges[SRANDOM % ${#ranges[@]}]}
        read -r a b <<<"$r"
        port=$((a + SRANDOM % (b - a + 1)))
        [[ -z ${used[port]-} ]] || continue
        claim_port "$port" "$dir" || continue
        echo "$port"
        return 0
    done
    die "no free TCP port found in $PORT_MIN-$PORT_MAX"
}

# ------------------------------------------------------------ server start

abs_dir() { # absolute DIR without requiring it to exist
    [[ -n $1 ]] || usage_error "DIR is empty"
    # mariadb-install-db word-splits the options it passes on (--tmpdir)
    [[ $1 != *[[:space:]]* ]] || die "DIR must not contain white space: '$1'"
    realpath -m -- "$1"
}

check_socket_len() { # check_socket_len SDIR
    local LC_ALL=C sock=$1/mysqld.sock # byte length, not characters
    ((${#sock} <= 107)) ||
        die "socket path $sock is ${#sock} bytes, over the 107 a unix socket allows; use a shorter DIR (mktemp -d)"
}

# datadir_made_by SDIR WHAT COMMAND...: SDIR/data, made by COMMAND into
# SDIR/data.new (its output in SDIR/install.log) and renamed when
# complete, so that an interrupted start never leaves a datadir that looks
# initialised. WHAT names COMMAND in the error.
datadir_made_by() {
    local dir=$1 what=$2
    shift 2
    rm -rf "$dir/data.new"
    mkdir -p "$dir/tmp"
    if ! "$@" </dev/null >"$dir/install.log" 2>&1; then
        # The cause is near the top; the rest of the log is generic advice.
        grep -m 10 -E "ERROR|\[Warning\]|error" "$dir/install.log" >&2 ||
            tail -n 20 "$dir/install.log" >&2
        rm -rf "$dir/data.new"
        die "$what failed (log: $dir/install.log)"
    fi
    mv "$dir/data.new" "$dir/data"
}

init_datadir() { # init_datadir SDIR: SDIR/data by mariadb-install-db
    local dir=$1
    # A private tmpdir: with the shared /tmp, concurrent install-db runs failed
    # about one time in ten ("Could not remove temporary table:
    # '/tmp/#sql-temptable-...', error: 2", then "Unknown table
    # 'mysql.tmp_user_sys'"); 30 of 30 passed with their own tmpdir.
    # The InnoDB sizes are given here too: otherwise install-db creates a
    # 96 MiB redo log that the first start would then have to shrink.
    datadir_made_by "$dir" mariadb-install-db \
        mariadb-install-db --no-defaults --datadir="$dir/data.new" --tmpdir="$dir/tmp" \
        --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
        --innodb-buffer-pool-size=16M --innodb-log-file-size=8M
}

# base_args SDIR PORT: set BASE_ARGS to the options every sandbox server gets.
# Binary logging and --user are the caller's.
base_args() {
    local dir=$1 port=$2
    # shellcheck disable=SC2034 # for the caller
    BASE_ARGS=(--no-defaults
        --datadir="$dir/data" --socket="$dir/mysqld.sock"
        --port="$port" --bind-address=127.0.0.1
        --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log"
        --tmpdir="$dir/tmp" # private, as for install-db
        --innodb-buffer-pool-size=16M --innodb-log-file-size=8M
        --skip-name-resolve --max-connections=500
        --innodb-flush-log-at-trx-commit=1 --performance-schema=OFF)
}

# user_args: set USER_ARGS to what running as this user needs. As root
# mariadbd refuses to run without --user; as anyone else it must not get one
# (it would try to setuid and fail).
user_args() {
    USER_ARGS=()
    # shellcheck disable=SC2034 # for the caller
    ((EUID != 0)) || USER_ARGS=(--user=root)
}

# launch_server SDIR FAKETIME_VAR [mariadbd options...]: start mariadbd in
# the background, detached from the caller: its own session (no SIGHUP or
# terminal SIGINT reaches it), stdio on a log file and no other inherited
# descriptors, so a caller that reads our output through a pipe (a test
# harness, `$(sandbox-db start ...)`) is not kept waiting on the server.
# FAKETIME_VAR names a variable holding a libfaketime spec, or is empty. Sets
# SERVER_PID.
launch_server() {
    local dir=$1 faketime_var=$2
    shift 2
    mkdir -p "$dir/tmp"
    (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            ((fd > 2 && fd != 255)) || continue # 255: bash's script fd, close-on-exec
            eval "exec $fd>&-" 2>/dev/null || true
        done
        # A libfaketime spec (such as "+0 x1.15") runs the server on a faked
        # clock, for the clock-fault tests. Preloading the multi-threaded
        # library directly keeps the pid mariadbd's.
        if [[ -n $faketime_var && -n ${!faketime_var-} ]]; then
            local lib
            lib=$(find /usr/lib -name libfaketimeMT.so.1 -print -quit 2>/dev/null)
            [[ -n $lib ]] || { echo "$PROG: $faketime_var needs libfaketime (apt-get install faketime)" >&2; exit 1; }
            export LD_PRELOAD=$lib FAKETIME=${!faketime_var}
        fi
        # This subshell is not a process group leader, so setsid(1) calls
        # setsid() without forking: the pid the caller gets is mariadbd's.
        exec setsid mariadbd "$@"
    ) </dev/null >>"$dir/stdout.log" 2>&1 &
    # shellcheck disable=SC2034 # for the caller
    SERVER_PID=$!
}

# The logs are kept across restarts; only what this start wrote is of interest.
mark_logs() { # remember the current size of the server's logs
    LOG_MARK_ERR=$(stat -c %s "$1/error.log" 2>/dev/null || echo 0)
    LOG_MARK_OUT=$(stat -c %s "$1/stdout.log" 2>/dev/null || echo 0)
}

new_log() { # new_log SDIR: what the server logged since mark_logs
    tail -c +"$((LOG_MARK_ERR + 1))" "$1/error.log" 2>/dev/null || true
    # stdout.log: setsid's or the dynamic loader's complaints, if any
    tail -c +"$((LOG_MARK_OUT + 1))" "$1/stdout.log" 2>/dev/null || true
}

# wait_ready SDIR PORT PID: 0 = ready, 2 = port taken, 1 = died or timed out
# (the new part of the log has been printed). Judged by real client
# connections over the socket and TCP; the pid file appears too early.
wait_ready() {
    local dir=$1 port=$2 pid=$3 i log
    for ((i = 0; i < READY_TICKS; i++)); do
        if ! alive "$pid"; then
            log=$(new_log "$dir")
            [[ $log != *"Address already in use"* ]] || return 2
            echo "$PROG: mariadbd exited during start-up; its log says:" >&2
            tail -n 20 <<<"$log" >&2
            return 1
        fi
        if socket_answers "$dir" && tcp_answers "$port"; then
            return 0
        fi
        sleep 0.05
    done
    echo "$PROG: mariadbd not ready after $((READY_TICKS / 20)) s, killing it; its log says:" >&2
    new_log "$dir" | tail -n 20 >&2
    kill -KILL "$pid" 2>/dev/null || true
    return 1
}

# start_on_ports SDIR N LAUNCH...: start SDIR's server by LAUNCH (which sets
# SERVER_PID) and wait until it answers on its socket and first port. The
# first start takes N new ports (unless SDIR/port holds them already), and
# new ones again when one was taken meanwhile; once a start has succeeded
# (SDIR/.started) the ports stay: clients and test proxies point at them.
start_on_ports() {
    local sdir=$1 nports=$2 attempt rc p ports
    shift 2
    if [[ -f $sdir/.started ]]; then
        mapfile -t ports <"$sdir/port"
        for p in "${ports[@]}"; do
            claim_port "$p" "$sdir" || true # only a cross-check; the bind decides
        done
    elif [[ ! -f $sdir/port ]]; then
        pick_ports "$sdir" "$nports"
    fi
    for ((attempt = 1; ; attempt++)); do
        mark_logs "$sdir"
        "$@"
        rc=0
        wait_ready "$sdir" "$(sql_port "$sdir")" "$SERVER_PID" || rc=$?
        ((rc != 0)) || break
        if ((rc == 2)) && [[ ! -f $sdir/.started ]] && ((attempt < 20)); then
            release_ports "$sdir"
            pick_ports "$sdir" "$nports"
            continue
        fi
        ((rc != 2)) || echo "$PROG: a port of $sdir ($(tr '\n' ' ' <"$sdir/port")) is taken by another process" >&2
        die "could not start mariadbd in $sdir"
    done
    : >"$sdir/.started"
}

# Create the test database, table, user and grants. Runs once per SDIR (the
# .provisioned marker); every statement tolerates a half-done earlier attempt.
provision() {
    local dir=$1 host spec table_exists
    root_sql "$dir" -e "CREATE DATABASE IF NOT EXISTS $DB_NAME"
    if [[ -f $SQL_DIR/leaderrun.sql ]]; then
        root_sql "$dir" "$DB_NAME" <"$SQL_DIR/leaderrun.sql" ||
            die "applying $SQL_DIR/leaderrun.sql failed"
    else
        warn "$SQL_DIR/leaderrun.sql not found; database $DB_NAME has no tables"
    fi
    for host in "${DB_HOSTS[@]}"; do
        root_sql "$dir" -e "CREATE USER IF NOT EXISTS '$DB_USER'@'$host' IDENTIFIED BY '$DB_PASSWORD'"
    done
    if [[ -f $SQL_DIR/grants.sql ]]; then
        # grants.sql is written for the production schema `ops` and the user
        # 'leaderrun'@'%'; render it for this database and each user entry.
        for host in "${DB_HOSTS[@]}"; do
            spec="'$DB_USER'@'$host'"
            sed -e "s/\\bops\\./$DB_NAME./g" -e "s/\`ops\`\\./\`$DB_NAME\`./g" \
                -e "s/'leaderrun'@'%'/$spec/g" "$SQL_DIR/grants.sql" |
                root_sql "$dir" || die "applying $SQL_DIR/grants.sql for $spec failed"
        done
    else
        table_exists=$(root_sql "$dir" -N -e "SELECT COUNT(*) FROM information_schema.TABLES
            WHERE TABLE_SCHEMA = '$DB_NAME' AND TABLE_NAME = 'leaderrun_lease'")
        for host in "${DB_HOSTS[@]}"; do
            spec="'$DB_USER'@'$host'"
            if [[ $table_exists == 1 ]]; then
                root_sql "$dir" -e "GRANT SELECT, INSERT, UPDATE ON $DB_NAME.leaderrun_lease TO $spec"
            else # a table-level GRANT fails on a table that does not exist
                root_sql "$dir" -e "GRANT SELECT, INSERT, UPDATE ON $DB_NAME.* TO $spec"
            fi
        done
        if [[ $table_exists == 1 ]]; then
            warn "$SQL_DIR/grants.sql not found; granted SELECT, INSERT, UPDATE on $DB_NAME.leaderrun_lease"
        else
            warn "$SQL_DIR/grants.sql not found; granted SELECT, INSERT, UPDATE on $DB_NAME.*"
        fi
    fi
    : >"$dir/.provisioned"
}

# --------------------------------------------------------------- settings

shq() { # single-quote $1 for sh: ' becomes '\''
    printf "'%s'" "${1//\'/\'\\\'\'}"
}

# write_env_file FILE NAME VALUE [NAME VALUE...]: `export NAME='VALUE'` lines
# to FILE (replaced atomically) and to stdout.
write_env_file() {
    local file=$1 name value
    shift
    {
        while (($# >= 2)); do
            name=$1 value=$2
            shift 2
            echo "export $name=$(shq "$value")"
        done
    } >"$file.tmp"
    mv -f "$file.tmp" "$file"
    cat "$file"
}

# ------------------------------------------------------------ server stop

# forget_faketime PID: a server run under libfaketime leaves its shared
# memory in /dev/shm, named after its pid; once it is gone, so are they.
forget_faketime() { rm -f "/dev/shm/faketime_shm_$1" "/dev/shm/sem.faketime_sem_$1"; }

# stop_server PID: SIGTERM (a clean shutdown), SIGKILL after STOP_TICKS.
stop_server() {
    local pid=$1
    kill -TERM "$pid" 2>/dev/null || return 0
    if ! wait_gone "$pid" "$STOP_TICKS"; then
        warn "$SERVER_COMM $pid ignored SIGTERM for $((STOP_TICKS / 20)) s; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid" 100 || die "$SERVER_COMM $pid survived SIGKILL"
    fi
    forget_faketime "$pid"
}

# kill_server SDIR: SIGKILL the server of SDIR (if any) and wait until it is
# really gone and its socket no longer answers.
kill_server() {
    local dir=$1 pid i
    pid=$(server_pid "$dir") || return 0 # already down
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 200 || die "$SERVER_COMM $pid survived SIGKILL"
    forget_faketime "$pid"
    # The kernel closes a dying process's sockets before it turns zombie, so
    # this should pass at once; it is what the tests rely on, so check it.
    for ((i = 0; i < 100; i++)); do
        socket_answers "$dir" || return 0
        sleep 0.05
    done
    die "$dir/mysqld.sock still answers after killing $SERVER_COMM $pid"
}

# check_ours DIR MARKER: refuse to delete a directory that is not empty and
# has no DIR/MARKER (rm -rf on a mistyped argument would be a disaster).
check_ours() {
    if [[ ! -f $1/$2 && -n $(ls -A "$1" 2>/dev/null) ]]; then
        die "$1 does not look like a ${2#.} directory; not deleting it"
    fi
}

# ------------------------------------------------------------ sandbox dir

# new_sandbox DIR MARKER WHAT: DIR (absent or empty) becomes a sandbox; DIR/
# MARKER lets `stop` tell our directories from others.
new_sandbox() {
    if [[ -e $1 && -n $(ls -A "$1" 2>/dev/null) ]]; then
        die "$1 is not empty and holds no started $3; stop it first"
    fi
    mkdir -p "$1"
    : >"$1/$2"
}

check_started() { # check_started DIR MARKER SDIR: DIR is ours and SDIR provisioned
    [[ -f $1/$2 && -f $3/.provisioned ]] || die "$1 is not a started ${2#.} directory"
}

# stop_sandbox DIR MARKER SDIR...: SIGTERM the servers of the SDIRs at once,
# wait for each (SIGKILL after STOP_TICKS), release their ports, delete DIR.
# Nothing to do when DIR is gone.
stop_sandbox() {
    local dir=$1 marker=$2 sdir pid pids=()
    shift 2
    [[ -e $dir ]] || return 0
    check_ours "$dir" "$marker"
    for sdir; do
        pid=$(server_pid "$sdir") || continue
        kill -TERM "$pid" 2>/dev/null || true
        pids+=("$pid")
    done
    for pid in "${pids[@]}"; do stop_server "$pid"; done
    for sdir; do release_ports "$sdir"; done
    rm -rf -- "$dir"
}

dsn() { # dsn PORT...: the test user's DSN listing 127.0.0.1:PORT for each
    local p hosts=() IFS=,
    for p; do hosts+=("127.0.0.1:$p"); done
    echo "mysql://$DB_USER:$DB_PASSWORD@${hosts[*]}/$DB_NAME"
}

now_ms() { # milliseconds since the epoch, without a fork
    local t=${EPOCHREALTIME/[.,]/}
    echo $((t / 1000))
}

fmt_ms() { # fmt_ms MS: "1.234"
    printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}
