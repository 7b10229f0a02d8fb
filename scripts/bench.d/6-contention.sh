# bench.d/6-contention.sh - section 6 of scripts/bench: N waiting
# contenders on one lease (rates, connections, server CPU, the leader's
# renew round trip, handovers), and 6b. an acquire among 10,000 rows.
# Sourced by scripts/bench.

# scale KEY N [OPTION...]: a leader (ttl 3s, renew 1s) and N waiting
# contenders on one lease, all with OPTIONs; results in SC[KEY,...]
scale() {
    local key=$1 n=$2
    shift 2
    local opts=("$@") lease=scale-$key leader i k all=() tr0 tr1 q0 q1 t0 t1 conns=0 dl0 dl1 ab0 ab1
    local traced=0 trn trmed trmax rate prev term hands=() qs=() bg=()
    log "6. contention: $n waiting contenders${opts[*]:+ (${opts[*]})}, ${window} s window, $handovers handovers"
    mkfifo "$work/$lease.fifo"
    spawn "$LR" -d "$SOCK_DSN" -t 3s -vv "${opts[@]}" -l "$lease" -- sh "$work/hold.sh" 2>"$work/$lease.leader.err"
    leader=$last_pid
    all+=("$leader")
    wait_file 10 "$work/$lease.term" || die "contention: the leader did not start"
    for ((i = 0; i < n; i++)); do
        spawn "$LR" -d "$SOCK_DSN" -t 3s "${opts[@]}" -l "$lease" -- sh "$work/hold.sh" 2>>"$work/$lease.err"
        all+=("$last_pid")
    done
    wait_connected "$n" contenders # one connection each
    nap 1.5 # first looks done: waiting in its steady state
    if command -v strace >/dev/null; then
        trace_renews "$work/$lease.strace" "$leader"
        traced=1
        nap 0.3 # attached
    fi
    status
    q0=${st[Questions]} dl0=${st[Innodb_deadlocks]:-} ab0=$((st[Aborted_connects] + st[Aborted_clients]))
    tr0=$(server_ticks) t0=$(now_ns)
    for ((i = 0; i < window; i++)); do
        nap 1
        status
        ((st[Threads_connected] - 1 > conns)) && conns=$((st[Threads_connected] - 1))
    done
    q1=${st[Questions]} dl1=${st[Innodb_deadlocks]:-} ab1=$((st[Aborted_connects] + st[Aborted_clients]))
    tr1=$(server_ticks) t1=$(now_ns)
    if ((traced)); then stop_trace; fi
    # Statements per second, our own samples (window of them) taken out.
    rate=$(awk -v d=$((q1 - q0 - window * q_cost)) -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", d / (ns / 1e9) }')
    SC[$key,n]=$n${opts[*]:+ (${opts[*]})}
    SC[$key,rate]=$rate
    SC[$key,per]=$(awk -v r="$rate" -v n="$n" 'BEGIN { printf "%.2f", r / (n + 1) }')
    SC[$key,conns]=$conns
    SC[$key,cpu]=$(awk -v t=$((tr1 - tr0)) -v hz="$HZ" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f%%", t / hz * 100 / (ns / 1e9) }')
    if [[ -n $dl0 && -n $dl1 ]]; then SC[$key,dead]=$((dl1 - dl0)); else SC[$key,dead]=n/a; fi
    SC[$key,aborted]=$((ab1 - ab0))
    SC[$key,rtt]="not observable (no strace)"
    if [[ -s $work/$lease.strace ]]; then
        read -r trn trmed _ _ trmax < <(bench_logs rtts "$work/$lease.strace" | stats)
        SC[$key,rtt]="not observed"
        ((trn > 0)) && SC[$key,rtt]="$(fmt "$trmed" 2) / $(fmt "$trmax" 2) ms (n=$trn)"
    fi
    # Handovers: the holder's command ends, a contender's command starts. A
    # new contender replaces the one that took over, so N stay waiting; each
    # handover falls at a random moment of the contenders' cycle.
    for ((k = 1; k <= handovers; k++)); do
        nap "$(ms_to_s $((1000 + $(rand_ms 1000))))"
        prev=$(<"$work/$lease.term")
        timeout 10 sh -c "echo go > '$work/$lease.fifo'" || die "contention: the holder's command did not listen"
        for ((i = 0; i < 2000; i++)); do
            term=$(<"$work/$lease.term")
            [[ $term != "$prev" ]] && break
            nap 0.01
        done
        [[ $term != "$prev" ]] || die "contention: no contender took over"
        wait_file 10 "$work/$lease.$prev.t1" || die "contention: the old holder did not record its end"
        hands+=($((($(<"$work/$lease.$term.t0") - $(<"$work/$lease.$prev.t1")) / 1000)))
        qs+=($(($(<"$work/$lease.$term.q0") - $(<"$work/$lease.$prev.q1") - q_cost_cmd)))
        # The samples bracket a little more than the handover: from the
        # old holder's sample to the end of the new holder's.
        wait_file 10 "$work/$lease.$term.q0t" || die "contention: the new holder did not sample"
        bg+=("$(awk -v r="$rate" -v ns=$(($(<"$work/$lease.$term.q0t") - $(<"$work/$lease.$prev.t1"))) \
            'BEGIN { printf "%.1f", r * ns / 1e9 }')")
        spawn "$LR" -d "$SOCK_DSN" -t 3s "${opts[@]}" -l "$lease" -- sh "$work/hold.sh" 2>>"$work/$lease.err"
        all+=("$last_pid")
    done
    local hn hmed hmax qmed qmin qmax bmed
    read -r hn hmed _ _ hmax < <(printf '%s\n' "${hands[@]}" | stats)
    read -r _ qmed _ qmin qmax < <(printf '%s\n' "${qs[@]}" | stats)
    read -r _ bmed _ < <(printf '%s\n' "${bg[@]}" | stats)
    SC[$key,hand]="$(fmt "$(awk -v u="$hmed" 'BEGIN { print u / 1000 }')" 1) / $(fmt "$(awk -v u="$hmax" 'BEGIN { print u / 1000 }')" 1) (n=$hn)"
    SC[$key,hq]="$qmed ($qmin-$qmax; polling alone $(fmt "$bmed" 1))"
    # Warnings and errors in the contenders' and the leader's logs.
    SC[$key,warns]=$(cat "$work/$lease.err" "$work/$lease.leader.err" 2>/dev/null | grep -c -E 'warning:|error:' || true)
    # Everyone goes: waiters exit on SIGTERM, the holder forwards it.
    stop_pids TERM "${all[@]}"
}
declare -A SC

# 10,000 lease rows in a second table, the same DDL: acquire + release there
# against the small table, in the same hyperfine runs.
bench_bulk() {
    local host
    log "6b. an acquire on a table of $bulk_rows lease rows"
    root_sql -e "CREATE TABLE leaderrun_bulk LIKE leaderrun_lease;
        SET SESSION max_recursive_iterations = $((bulk_rows + 1));
        INSERT INTO leaderrun_bulk (name)
            WITH RECURSIVE s (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $bulk_rows)
            SELECT CONCAT('bulk-', i) FROM s;"
    for host in localhost 127.0.0.1; do
        root_sql -e "GRANT SELECT, INSERT, UPDATE ON $LR_DB_NAME.leaderrun_bulk TO '$LR_DB_USER'@'$host'"
    done
    BULK[rows]=$(root_sql -e 'SELECT COUNT(*) FROM leaderrun_bulk')
    BULK[small_rows]=$(root_sql -e 'SELECT COUNT(*) FROM leaderrun_lease')
    local small="$LR -d $SOCK_DSN --table leaderrun_lease -n -l b -- $TRUE"
    local big="$LR -d $SOCK_DSN --table leaderrun_bulk -n -l bulk-$((bulk_rows / 2)) -- $TRUE"
    hf_rounds_run bulk "$small" "$big"
    BULK[small]=$(hf_median bulk "$small")
    BULK[big]=$(hf_median bulk "$big")
    BULK[small_spread]=$(hf_spread bulk "$small")
    BULK[big_spread]=$(hf_spread bulk "$big")
    # A lease name that is new in the big table: the first-use path (insert).
    local t0
    t0=$(now_ns)
    "$LR" -d "$SOCK_DSN" --table leaderrun_bulk -n -l bulk-new -- "$TRUE"
    BULK[new]=$(awk -v ns=$(($(now_ns) - t0)) 'BEGIN { printf "%.1f", ns / 1e6 }') # ms
}
declare -A BULK


bench_contention() {
    local n
    scale_keys=()
    for n in "${contenders[@]}"; do
        scale "$n" "$n"
        scale_keys+=("$n")
    done
    if ((wake_hint)); then # the polling followers, as a baseline
        scale "${contenders[-1]}p" "${contenders[-1]}" --no-wake-hint
        scale_keys+=("${contenders[-1]}p")
    fi
}

rows_bulk() { # the report's row of 6b.
    echo "| acquire on a table of ${BULK[rows]} lease rows (\`-n -- true\`, median of ${R[runs]}) | $(over "${BULK[big]}" "${BULK[small]}"); rounds ${BULK[big_spread]} | same on the ${BULK[small_rows]}-row table $(ms "${BULK[small]}") ms (rounds ${BULK[small_spread]}) | - | first use of a new name there: ${BULK[new]} ms (one run) |"
}

report_contention() { # the table of 6.
    local n
    echo
    echo "Contention: one leader (--ttl 3s, renews every 1 s) and N waiting contenders (retry 1s) on one lease; rates over a ${window} s window, then $handovers handovers with N kept waiting; the N=1 row is the baseline$( ((wake_hint)) && echo ", and the --no-wake-hint row the polling followers'")."
    echo
    echo "| contenders | statements/s | per process/s | connections (Threads_connected) | server CPU | leader's renew round trip, median / max (strace) | deadlocks | aborted conn. | warnings+errors | handover ms, median / max | statements per handover, median (range; polling alone) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for n in "${scale_keys[@]}"; do
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${SC[$n,n]}" "${SC[$n,rate]}" "${SC[$n,per]}" \
            "${SC[$n,conns]}" "${SC[$n,cpu]}" "${SC[$n,rtt]}" "${SC[$n,dead]}" "${SC[$n,aborted]}" "${SC[$n,warns]}" \
            "${SC[$n,hand]}" "${SC[$n,hq]}"
    done
}
