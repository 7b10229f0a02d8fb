# bench.d/servers.sh - the servers scripts/bench measures against: the
# sandbox MariaDB (and the helpers that sample it), and with --etcd a
# throwaway etcd.
# Sourced by scripts/bench.

# 300 contenders, each with one connection, plus the server's own files.
if (($(ulimit -n) < 4096)); then
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    (($(ulimit -n) >= 1024)) || log "warning: ulimit -n is $(ulimit -n); 300 contenders may not fit"
fi

log "starting the sandbox database in $work/db"
db_started=1
db_env=$(scripts/sandbox-db start "$work/db") || die "the sandbox database did not start"
eval "$db_env"
SOCK_DSN="mysql://$LR_DB_USER:$LR_DB_PASSWORD@localhost/$LR_DB_NAME?socket=$LR_DB_SOCKET"
TCP_DSN="mysql://$LR_DB_USER:$LR_DB_PASSWORD@127.0.0.1:$LR_DB_PORT/$LR_DB_NAME"
TRUE=$(command -v true)
FLOCK=$(command -v flock)
export LR_DB_SOCKET

root_sql() { mariadb --no-defaults -S "$LR_DB_SOCKET" -uroot -N -B "$LR_DB_NAME" "$@"; }
db_version=$(root_sql -e 'SELECT VERSION()')

declare -A st
status() { # status: global status variables into the array st
    local k v
    st=()
    while read -r k v; do st[$k]=$v; done < <(root_sql -e "SHOW GLOBAL STATUS WHERE Variable_name IN
        ('Questions', 'Threads_connected', 'Innodb_deadlocks', 'Max_used_connections',
         'Aborted_connects', 'Aborted_clients')")
}

# wait_connected N WHO: until N clients more than a leader and our own
# sampler are connected (up to 60 s); a warning if they are not.
wait_connected() {
    local i
    for ((i = 0; i < 600; i++)); do
        status
        ((st[Threads_connected] >= $1 + 2)) && return 0
        nap 0.1
    done
    log "warning: only $((st[Threads_connected] - 2)) of $1 $2 connected"
}

# A sample of Questions costs statements itself: measure how many.
status; q_a=${st[Questions]}
status; q_b=${st[Questions]}
q_cost=$((q_b - q_a))

server_ticks() { awk '{ print $14 + $15 }' "/proc/$LR_DB_PID/stat"; }
HZ=$(getconf CLK_TCK)

# Helpers run as COMMANDs (by leaderrun, flock or etcdctl).
cat >"$work/questions.sh" <<'EOF'
#!/bin/sh
# questions.sh FILE: the server's Questions counter into FILE
mariadb --no-defaults -S "$LR_DB_SOCKET" -uroot -N -B -e "SHOW GLOBAL STATUS LIKE 'Questions'" |
    cut -f2 >"$1.tmp" && mv "$1.tmp" "$1"
EOF
cat >"$work/hold.sh" <<'EOF'
#!/bin/sh
# A contention holder's command (the leader's and every contender's): record
# when it took the lease and the Questions counter, hold until a line
# arrives on the fifo, record again, and exit (which hands the lease over).
d=$BENCH_WORK/$LEADERRUN_LEASE.$LEADERRUN_TERM
date +%s%N >"$d.t0"
sh "$BENCH_WORK/questions.sh" "$d.q0"
date +%s%N >"$d.q0t"
echo "$LEADERRUN_TERM" >"$BENCH_WORK/$LEADERRUN_LEASE.term.tmp"
mv "$BENCH_WORK/$LEADERRUN_LEASE.term.tmp" "$BENCH_WORK/$LEADERRUN_LEASE.term"
read -r _ <"$BENCH_WORK/$LEADERRUN_LEASE.fifo"
sh "$BENCH_WORK/questions.sh" "$d.q1"
date +%s%N >"$d.t1"
EOF
# What one sample costs in statements, for the command-side sampler too.
sh "$work/questions.sh" "$work/qa"
sh "$work/questions.sh" "$work/qb"
q_cost_cmd=$(($(<"$work/qb") - $(<"$work/qa")))

# ------------------------------------------------------------------ on disk

# A second sandbox with the same settings and account, its data on disk
# (durable: an fsync per commit), for the figures that are to count the
# disk (5. and 9.). Stopped by cleanup if a section dies before it does.
DISK_DIR= DISK_DSN= DISK_SOCK=
disk_db_start() {
    local env
    DISK_DIR=$(mktemp -d /var/tmp/lrbench-disk.XXXXXX)
    env=$(scripts/sandbox-db start "$DISK_DIR/db") || die "the disk-backed server did not start"
    DISK_DSN=$(eval "$env"; echo "mysql://$LR_DB_USER:$LR_DB_PASSWORD@localhost/$LR_DB_NAME?socket=$LR_DB_SOCKET")
    DISK_SOCK=$(eval "$env"; echo "$LR_DB_SOCKET")
    [[ $(eval "$env"; echo "$LR_DB_USER $LR_DB_PASSWORD $LR_DB_NAME") == "$LR_DB_USER $LR_DB_PASSWORD $LR_DB_NAME" ]] ||
        die "the disk-backed server's account differs from the tmpfs one's"
}
disk_db_stop() {
    [[ -n $DISK_DIR ]] || return 0
    scripts/sandbox-db stop "$DISK_DIR/db" >/dev/null 2>&1 || true
    rm -rf -- "$DISK_DIR"
    DISK_DIR=
}

# ------------------------------------------------------------------ etcd

ETCD_EP=
# shellcheck source=scripts/lib/ports.sh
. "${BASH_SOURCE[0]%/*}/../lib/ports.sh"
free_port() { # a port in 20000-29999 nothing uses now
    local -A used=()
    local p
    while read -r p; do used[$p]=1; done < <(used_ports)
    while :; do
        p=$((20000 + SRANDOM % 10000))
        [[ -z ${used[$p]-} ]] && { echo "$p"; return; }
    done
}

start_etcd() {
    local cport pport attempt i
    export ETCDCTL_API=3
    for ((attempt = 1; attempt <= 5; attempt++)); do
        cport=$(free_port)
        pport=$(free_port)
        ((cport != pport)) || continue
        rm -rf "$work/etcd"
        mkdir -p "$work/etcd"
        etcd --name bench --data-dir "$work/etcd/data" \
            --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
            --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
            --initial-cluster "bench=http://127.0.0.1:$pport" >"$work/etcd/log" 2>&1 </dev/null &
        etcd_pid=$!
        own "$etcd_pid"
        disown "$etcd_pid"
        ETCD_EP=http://127.0.0.1:$cport
        for ((i = 0; i < 200; i++)); do
            alive "$etcd_pid" || break
            if etcdctl --endpoints="$ETCD_EP" endpoint health >/dev/null 2>&1; then
                return 0
            fi
            sleep 0.05
        done
        kill -KILL "$etcd_pid" 2>/dev/null || true
        reap "$etcd_pid"
    done
    tail -n 20 "$work/etcd/log" >&2
    die "etcd did not start"
}
ETCDCTL=()
if ((etcd)); then
    log "starting a throwaway etcd on loopback"
    start_etcd
    ETCDCTL=("$(command -v etcdctl)" "--endpoints=$ETCD_EP")
    etcd_version=$(etcd --version | awk '/etcd Version/ { print $3 }')
fi

declare -A R # the report's cells
na=skipped
((etcd)) || na='skipped (no --etcd)'

