# bench.d/7-waiting.sh - section 7 of scripts/bench: what N followers
# waiting at default options cost the server, hint and polling (and etcd).
# Sourced by scripts/bench.

# Issue 15: what N waiting followers cost the database at default options
# (ttl 15s, renew every 5 s), the followers blocked on the leader's wake-up
# hint up to the expiry the row reported; then the same N polling
# (--no-wake-hint). With --etcd, beside each hint row and in the same
# window: N `etcdctl lock --ttl 15` waiters behind one holder on the
# throwaway etcd (each waiter keeps its session alive every 5 s), and
# etcd's CPU time beside mariadbd's. The followers and waiters are load
# generators: they run under nice -n 10.
wait_counts=(1 10 100 300)
wait_hint_window=$((cpu_seconds < 20 ? 20 : cpu_seconds)) # a hint cycle is ~10 s: two at least
wait_poll_window=$cpu_seconds
wait_max_connections=1000 # for N=300: bench-wait's setting, with room for the rest

proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # utime + stime

# wait_row KEY N WINDOW [OPTION...]: one row into WT_ROW[KEY]
wait_row() {
    local key=$1 n=$2 window_s=$3
    shift 3
    local lease=wait-$key i q0 q1 t0 t1 c0 c1 e0=0 e1=0 conns maxc all=() eall=() with_etcd=0 settle=3
    local maxc_before
    [[ ${1-} == --no-wake-hint ]] || settle=16 # past every follower's first blocked cycle
    ((etcd)) && [[ ${1-} != --no-wake-hint ]] && with_etcd=1
    maxc_before=$(root_sql -e 'SELECT @@GLOBAL.max_connections')
    maxc=$maxc_before
    if ((n + 50 > maxc)); then
        root_sql -e "SET GLOBAL max_connections=$wait_max_connections"
        maxc=$wait_max_connections
    fi
    log "7. waiting: N=$n ${*:-(hint)}$( ((with_etcd)) && echo ", etcdctl lock beside"), $window_s s window"
    spawn "$LR" -d "$SOCK_DSN" -l "$lease" -- sleep 100000 2>>"$work/$lease.leader.err"
    all+=("$last_pid")
    if ((with_etcd)); then
        spawn "${ETCDCTL[@]}" lock --ttl 15 "$lease" -- sh -c "echo \$\$ > $work/$lease.cmdpid; exec sleep 100000" 2>>"$work/$lease.etcd.err"
        eall+=("$last_pid")
        wait_file 10 "$work/$lease.cmdpid" || die "waiting: the etcdctl holder did not start"
    fi
    nap 1
    for ((i = 0; i < n; i++)); do
        spawn nice -n 10 "$LR" -d "$SOCK_DSN" "$@" -l "$lease" -- "$TRUE" 2>>"$work/$lease.err"
        all+=("$last_pid")
        if ((with_etcd)); then
            spawn nice -n 10 "${ETCDCTL[@]}" lock --ttl 15 "$lease" -- "$TRUE" 2>>"$work/$lease.etcd.err"
            eall+=("$last_pid")
        fi
    done
    wait_connected "$n" followers
    nap "$settle"
    status
    conns=$((st[Threads_connected] - 1)) q0=${st[Questions]} c0=$(proc_ticks "$LR_DB_PID") t0=$(now_ns)
    ((with_etcd)) && e0=$(proc_ticks "$etcd_pid")
    nap "$window_s"
    status
    q1=${st[Questions]} c1=$(proc_ticks "$LR_DB_PID") t1=$(now_ns)
    ((with_etcd)) && e1=$(proc_ticks "$etcd_pid")
    # The holder renews every 5 s (0.2 statements/s): not the waiters'.
    WT_ROW[$key]=$(awk -v q=$((q1 - q0 - q_cost)) -v n="$n" -v ns=$((t1 - t0)) -v c=$((c1 - c0)) -v hz="$HZ" \
        -v conns="$conns" -v maxc="$maxc" -v mode="${*:-hint}" -v ec=$((e1 - e0)) -v we="$with_etcd" \
        -v w="$(cat "$work/$lease.err" "$work/$lease.leader.err" 2>/dev/null | grep -c -E 'warning|error' || true)" 'BEGIN {
        s = ns / 1e9; per = (q / s - 0.2) / n
        etcd_cell = we ? sprintf("%.0f ms", ec / hz * 1000 * 60 / s) : "-"
        printf "| %d | %s | %.3f | %d | %d | %.0f ms | %s | %d |", n, mode, per, conns, maxc, c / hz * 1000 * 60 / s, etcd_cell, w }')
    stop_pids TERM "${all[@]}"
    if ((with_etcd)); then
        stop_pids TERM "${eall[@]}"
        [[ -s $work/$lease.cmdpid ]] && stop_pids KILL "$(<"$work/$lease.cmdpid")"
    fi
    ((maxc != maxc_before)) && root_sql -e "SET GLOBAL max_connections=$maxc_before"
    return 0
}
declare -A WT_ROW

bench_waiting() {
    local n
    for n in "${wait_counts[@]}"; do wait_row "h$n" "$n" "$wait_hint_window"; done
    for n in "${wait_counts[@]}"; do wait_row "p$n" "$n" "$wait_poll_window" --no-wake-hint; done
}

report_waiting() { # the table of 7.
    local n
    echo
    echo "Waiting at default options: one holder (ttl 15s, renews every 5 s) and N followers on one lease; mariadbd's CPU time (utime+stime, /proc/PID/stat) per minute over a ${wait_hint_window} s window with the hint, ${wait_poll_window} s polling; statements/s per waiter are the server's Questions with the holder's renews and our samples taken out. etcd: the same N \`etcdctl lock --ttl 15\` waiters behind one holder, in the same window, on the throwaway single-node etcd$( ((etcd)) || echo " (skipped: no --etcd)")."
    echo
    echo "| waiters | mode | statements/s per waiter | connections | max_connections | mariadbd CPU per minute | etcd CPU per minute (same N etcdctl lock waiters) | warnings |"
    echo "|---|---|---|---|---|---|---|---|"
    for n in "${wait_counts[@]}"; do echo "${WT_ROW[h$n]}"; done
    for n in "${wait_counts[@]}"; do echo "${WT_ROW[p$n]}"; done
}
