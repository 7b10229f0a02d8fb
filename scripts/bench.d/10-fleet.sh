# bench.d/10-fleet.sh - section 10 of scripts/bench (alone: --fleet [N]):
# N leases held at once: N leaderrun holders (ttl 15 s, each its
# own lease and connection) against one MariaDB, then N `etcdctl lock`
# holders (ttl 15 s) against one etcd, one after the other, both servers
# with their data on disk. Over a window: server CPU, clients' CPU,
# memory, leaderrun's renew latency (its own -vv lines: send to answer)
# and missed renews. RESULTS.md works 10,000 and 100,000 leases out from
# these figures.
# Sourced by scripts/bench.

fleet_n=${fleet_n:-1000}
fleet_window=${fleet_window:-60}
declare -A FL

pss_kib() { # pss_kib PID...: the processes' proportional set size, summed (KiB)
    local p sum=0 k
    for p in "$@"; do
        k=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null) || k=0
        sum=$((sum + ${k:-0}))
    done
    echo "$sum"
}
tree_pids() { # tree_pids PID...: the processes and all below them
    local p
    for p in "$@"; do
        echo "$p"
        # shellcheck disable=SC2046
        [[ -r /proc/$p/task/$p/children ]] && tree_pids $(cat "/proc/$p/task/$p/children" 2>/dev/null)
    done
}
cpu_pct() { # cpu_pct NS WALL_NS: share of one CPU over the window
    awk -v t="$1" -v w="$2" 'BEGIN { printf "%.1f %%", 100 * t / w }'
}

fleet_leaderrun() {
    local dir env dsn i pids=() srv t0 c0 s0 t1 c1 s1 held
    dir=$(mktemp -d /var/tmp/lrbench-fleet.XXXXXX)
    log "10. fleet: $fleet_n leaderrun holders against one MariaDB (data on disk, $dir)"
    # Two connections a holder: the lease's, and the run history's for a run
    # longer than 100 ms (history.c). InnoDB sized as a server for a fleet
    # would be: with the test sandbox's 8 MB redo log, the start's storm of
    # commits stalled the server on checkpoints for seconds, and a third to
    # a half of the holders lost their lease before the window (the runs
    # at 0.10.0 and 0.10.1, 886 and 863 connections left).
    env=$(SANDBOX_DB_EXTRA_ARGS="--max-connections=$((2 * fleet_n + 100)) --max-user-connections=0 --innodb-buffer-pool-size=256M --innodb-log-file-size=256M" \
        scripts/sandbox-db start "$dir/db") || die "the fleet's server did not start"
    dsn=$(eval "$env"; echo "mysql://$LR_DB_USER:$LR_DB_PASSWORD@localhost/$LR_DB_NAME?socket=$LR_DB_SOCKET")
    srv=$(eval "$env"; echo "$LR_DB_PID")
    mkdir -p "$dir/log"
    for ((i = 1; i <= fleet_n; i++)); do
        "$LR" -d "$dsn" --ttl 15s -vv --log-format json -l "fleet-$i" -- sleep 100000 2>"$dir/log/$i" &
        pids+=("$!")
    done
    for ((i = 0; i < 1200; i++)); do
        held=$(grep -l '"msg":"acquired' "$dir"/log/* 2>/dev/null | wc -l) || true
        ((held >= fleet_n)) && break
        nap 0.1
    done
    log "10. fleet: $held of $fleet_n hold their lease; a ${fleet_window} s window"
    nap 6 # every holder past its first renew
    mapfile -t all < <(tree_pids "${pids[@]}")
    local ts0 ts1
    # One window for the CPU and the renews: from before the first
    # samples to after the last. CPU from schedstat (sched_ns, section
    # 3): stat's utime+stime are whole ticks per process, and a holder's
    # minute of renews is less than one (the run at 0.10.0 summed 1,000
    # zeros).
    ts0=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) t0=$(now_ns)
    c0=$(sched_ns "${all[@]}") s0=$(sched_ns "$srv")
    nap "$fleet_window"
    c1=$(sched_ns "${all[@]}") s1=$(sched_ns "$srv")
    ts1=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) t1=$(now_ns)
    # The window's lines of every holder (ISO times compare as text).
    cat "$dir"/log/* | awk -v a="$ts0" -v b="$ts1" '{ t = substr($0, 8, 24) } t >= a && t < b' >"$dir/window"
    FL[lr_held]=$held
    FL[lr_srv_cpu]=$(cpu_pct $((s1 - s0)) $((t1 - t0)))
    FL[lr_cli_cpu]=$(cpu_pct $((c1 - c0)) $((t1 - t0)))
    FL[lr_cli_mem]=$(mib "$(pss_kib "${all[@]}")")
    FL[lr_srv_mem]=$(mib "$(pss_kib "$srv")")
    FL[lr_conns]=$(eval "$env"; mariadb --no-defaults -S "$LR_DB_SOCKET" -uroot -N -B -e "SHOW GLOBAL STATUS LIKE 'Threads_connected'" | cut -f2)
    # Renews in the window: every holder's -vv line "renewed term T in X ms".
    read -r 'FL[lr_renews]' 'FL[lr_p50]' 'FL[lr_p99]' 'FL[lr_max]' < <(grep -h '"msg":"renewed term' "$dir/window" | sed 's/.* in \([0-9.]*\) ms.*/\1/' | sort -n |
        awk 'function at(q, i) { i = int(NR * q); return v[i > 0 ? i : 1] }
            { v[NR] = $1 } END { if (!NR) { print 0, "-", "-", "-"; exit }
            printf "%d %.2f %.2f %.2f\n", NR, at(0.5), at(0.99), v[NR] }')
    FL[lr_expected]=$(((t1 - t0) * fleet_n / 5000000000))
    FL[lr_failed]=$(grep -c '"msg":"renew\( attempt [0-9]*\)\? failed\|"level":"error"' "$dir/window" || true)
    # Over the whole run, not the window alone: a lease lost before it
    # left no line in it.
    FL[lr_lost]=$(cat "$dir"/log/* | grep -c '"msg":"command stopped: lease lost' || true)
    FL[lr_left]=$(for p in "${pids[@]}"; do alive "$p" && echo; done | wc -l)
    FL[lr_wall]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) / 1e9 }')
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    (eval "$env"; scripts/sandbox-db stop "$dir/db" >/dev/null 2>&1) || true
    rm -rf "$dir"
}

fleet_etcd() {
    local dir cport pport i pids=() srv t0 c0 s0 t1 c1 s1 held ep exp0 exp1
    command -v etcd >/dev/null || { log "10. fleet: no etcd; its column is skipped"; return 0; }
    dir=$(mktemp -d /var/tmp/lrbench-fleet-etcd.XXXXXX)
    cport=$(free_port) pport=$(free_port)
    etcd --name fleet --data-dir "$dir/data" \
        --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
        --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
        --initial-cluster "fleet=http://127.0.0.1:$pport" >"$dir/log" 2>&1 </dev/null &
    srv=$!
    pids+=("$srv")
    ep=http://127.0.0.1:$cport
    for ((i = 0; i < 200; i++)); do
        ETCDCTL_API=3 etcdctl --endpoints="$ep" endpoint health >/dev/null 2>&1 && break
        nap 0.05
    done
    log "10. fleet: $fleet_n etcdctl lock holders against one etcd (data on disk, $dir)"
    local holders=()
    for ((i = 1; i <= fleet_n; i++)); do
        ETCDCTL_API=3 etcdctl --endpoints="$ep" lock --ttl 15 "fleet-$i" -- sh -c "touch $dir/held.$i; exec sleep 100000" \
            >/dev/null 2>"$dir/cli.$i" &
        holders+=("$!")
    done
    for ((i = 0; i < 1200; i++)); do
        held=$(find "$dir" -maxdepth 1 -name 'held.*' | wc -l)
        ((held >= fleet_n)) && break
        nap 0.1
    done
    log "10. fleet: $held of $fleet_n etcdctl hold their lock; a ${fleet_window} s window"
    nap 6
    mapfile -t all < <(tree_pids "${holders[@]}")
    exp0=$(curl -s "$ep/metrics" | awk '/^etcd_debugging_server_lease_expired_total/ { print $2 }')
    t0=$(now_ns) c0=$(sched_ns "${all[@]}") s0=$(sched_ns "$srv")
    nap "$fleet_window"
    c1=$(sched_ns "${all[@]}") s1=$(sched_ns "$srv") t1=$(now_ns)
    exp1=$(curl -s "$ep/metrics" | awk '/^etcd_debugging_server_lease_expired_total/ { print $2 }')
    FL[e_held]=$held
    FL[e_srv_cpu]=$(cpu_pct $((s1 - s0)) $((t1 - t0)))
    FL[e_cli_cpu]=$(cpu_pct $((c1 - c0)) $((t1 - t0)))
    FL[e_cli_mem]=$(mib "$(pss_kib "${all[@]}")")
    FL[e_srv_mem]=$(mib "$(pss_kib "$srv")")
    FL[e_expired]=$(awk -v a="${exp0:-0}" -v b="${exp1:-0}" 'BEGIN { printf "%d", b - a }')
    # etcdctl waits for its command: the whole tree goes, and what
    # ignores TERM for 10 s is killed (the run at 0.10.0 hung here on 532
    # etcdctl that were still alive).
    kill -TERM "${all[@]}" 2>/dev/null || true
    wait_gone 10 "${all[@]}" || kill -KILL "${all[@]}" 2>/dev/null || true
    wait "${holders[@]}" 2>/dev/null || true
    kill -TERM "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    rm -rf "$dir"
}

bench_fleet() {
    # Each holder keeps a socket and a few pipes: room for N of them.
    (($(ulimit -n) >= 8 * fleet_n)) || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    fleet_leaderrun
    fleet_etcd
    report_fleet
}

report_fleet() {
    echo
    echo "## 10. A fleet of $fleet_n leases"
    echo
    echo "$fleet_n holders at once, each its own lease (ttl 15 s, a renew every 5 s), over a ${fleet_window} s window; both servers with their data on disk, one after the other. CPU as a share of one CPU; memory as proportional set size (shared pages divided among their users)."
    echo
    echo "| | leaderrun + MariaDB $db_version | etcdctl lock + etcd |"
    echo "|---|---|---|"
    echo "| holders holding | ${FL[lr_held]} | ${FL[e_held]:--} |"
    echo "| server CPU | ${FL[lr_srv_cpu]} | ${FL[e_srv_cpu]:--} |"
    echo "| clients' CPU, all of them | ${FL[lr_cli_cpu]} | ${FL[e_cli_cpu]:--} |"
    echo "| clients' memory, all of them | ${FL[lr_cli_mem]} | ${FL[e_cli_mem]:--} |"
    echo "| server memory | ${FL[lr_srv_mem]} | ${FL[e_srv_mem]:--} |"
    echo "| server connections | ${FL[lr_conns]} | one gRPC stream each |"
    echo "| renews in the window (expected about ${FL[lr_expected]}) | ${FL[lr_renews]} | not observable from etcdctl |"
    echo "| renew latency p50 / p99 / max (ms, send to answer) | ${FL[lr_p50]} / ${FL[lr_p99]} / ${FL[lr_max]} | not observable from etcdctl |"
    echo "| failed renews in the window (leaderrun) / leases expired (etcd) | ${FL[lr_failed]} | ${FL[e_expired]:--} |"
    echo "| leases lost over the whole run; holders still running at the window's end | ${FL[lr_lost]}; ${FL[lr_left]} | - |"
}
