# bench.d/4-failover.sh - section 4 of scripts/bench: failover after the
# holder's SIGKILL at several ttls, and the takeover after its freeze.
# Sourced by scripts/bench.

# failover_trial KIND TTL TTL_MS RENEW_MS [SIG]: one SIGKILL (or SIG: STOP
# freezes the holder, its session and hint stay open) of the holder; sets
# fo_ms to the milliseconds from the signal to the standby's command start.
failover_trial() {
    local kind=$1 ttl=$2 ttl_ms=$3 renew_ms=$4 sig=${5:-KILL} tag=$work/fo.$RANDOM$RANDOM holder standby t0 t1 cmdpid
    local -a run
    case $kind in
        leaderrun) run=("$LR" -d "$SOCK_DSN" -t "$ttl" -l "fo-$ttl") ;;
        etcd) run=("${ETCDCTL[@]}" lock --ttl "${ttl%s}" "fo-$ttl") ;;
    esac
    spawn "${run[@]}" -- sh -c "echo \$\$ > $tag.cmdpid; exec sleep 600" 2>>"$work/failover.err"
    holder=$last_pid
    wait_file 30 "$tag.cmdpid" || die "failover: the $kind holder did not start"
    spawn "${run[@]}" -- sh -c "date +%s%N > $tag.started" 2>>"$work/failover.err"
    standby=$last_pid
    # At least one look by the standby, then a random phase of the renew cycle.
    nap "$(ms_to_s $((500 + $(rand_ms "$renew_ms"))))"
    t0=$(now_ns)
    kill "-$sig" "$holder"
    wait_file $((ttl_ms * 3 / 1000 + 20)) "$tag.started" || die "failover: the $kind standby did not take over"
    t1=$(<"$tag.started")
    # A frozen leaderrun's watcher has stopped the command at the deadline;
    # thawed, it finds the lease gone and exits.
    [[ $sig == STOP ]] && kill -CONT "$holder"
    reap "$holder" "$standby"
    cmdpid=$(<"$tag.cmdpid")
    # leaderrun's watcher kills the command; etcdctl leaves it running.
    [[ $kind == etcd ]] && kill -KILL "$cmdpid" 2>/dev/null
    wait_gone 10 "$cmdpid" || die "failover: the killed $kind holder's command survived"
    fo_ms=$(((t1 - t0) / 1000000))
}

# failover KEY KIND TTL TTL_MS RENEW_MS TRIALS [SIG]: stats into FO[KEY]
failover() {
    local key=$1 kind=$2 ttl=$3 ttl_ms=$4 renew_ms=$5 trials=$6 sig=${7:-KILL} i vals=() n med p95 min max
    log "4. failover after SIG$sig: $kind, ttl $ttl, $trials trials"
    for ((i = 1; i <= trials; i++)); do
        failover_trial "$kind" "$ttl" "$ttl_ms" "$renew_ms" "$sig"
        vals+=("$fo_ms")
    done
    read -r n med p95 min max < <(printf '%s\n' "${vals[@]}" | stats)
    fo_max=$max
    FO[$key]=$(awk -v n="$n" -v med="$med" -v min="$min" -v max="$max" -v ttl="$ttl_ms" 'BEGIN {
        printf "median %d ms, max %d ms (min %d; max/ttl %.2f; n=%d)", med, max, min, max / ttl, n }')
}
declare -A FO


bench_failover() {
    failover lr3 leaderrun 3s 3000 1000 "$fo_trials"
    if ((fo_long_trials)); then
        failover lr15 leaderrun 15s 15000 5000 "$fo_long_trials"
    else
        FO[lr15]="skipped (--quick)"
    fi
    failover lr1 leaderrun 1s 1000 333 "$fo_sub_trials"
    failover lr05 leaderrun 500ms 500 166 "$fo_sub_trials"
    ((etcd)) && failover etcd3 etcd 3s 3000 1000 "$fo_trials"
    # Issue 15: a frozen holder keeps its session and so its hint; only the
    # row's expiry, not a wake-up, lets the standby in.
    failover freeze3 leaderrun 3s 3000 1000 "$fo_trials" STOP
    FO[freeze3_max]=$fo_max
}

rows_failover() { # the report's rows of 4.
    local verdict="not met"
    ((FO[freeze3_max] <= 4000)) && verdict=met
    cat <<ROWS
| failover after SIGKILL, --ttl 3s | ${FO[lr3]} | ttl 3000 ms: the row expires 2000-3000 ms after the kill (renew 1 s) | $(e "--ttl 3: ${FO[etcd3]:-}") | expiry + the standby's wake-up |
| failover after SIGKILL, --ttl 15s | ${FO[lr15]} | ttl 15000 ms: expires 10000-15000 ms after (renew 5 s) | - | |
| failover after SIGKILL, --ttl 1s | ${FO[lr1]} | ttl 1000 ms: expires 667-1000 ms after (renew 333 ms) | - | |
| failover after SIGKILL, --ttl 500ms | ${FO[lr05]} | ttl 500 ms: expires 333-500 ms after (renew 167 ms) | - | |
| takeover after the holder's freeze (SIGSTOP: session and hint stay open), --ttl 3s | ${FO[freeze3]} | as SIGKILL at --ttl 3s: expires 2000-3000 ms after | - | within ttl + 1 s = 4000 ms: $verdict |
ROWS
}
