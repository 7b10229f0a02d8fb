# bench.d/3-cpu.sh - section 3 of scripts/bench: the CPU time of holding
# and of waiting at default options, beside flock's (and etcdctl's).
# Sourced by scripts/bench.

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sched_ns() { # sched_ns PID...: on-CPU time of every thread of each, in ns (finer than the ticks; gone ones count 0)
    local p t sum=0 ns
    for p in "$@"; do
        for t in /proc/"$p"/task/*/schedstat; do
            read -r ns _ <"$t" 2>/dev/null || continue
            sum=$((sum + ns))
        done
    done
    echo "$sum"
}

bench_cpu() {
    local lh lw fh fw eh=0 ew=0 w names=() p i
    local -A t0 t1 n0 n1 pid
    log "3. CPU over $cpu_seconds s of holding and of waiting (defaults: ttl 15s, renew 5s, retry 1s)"
    spawn "$LR" -d "$SOCK_DSN" -l cpu -- sh -c "echo \$\$ > $work/cpu.cmdpid; exec sleep $((cpu_seconds + 30))" 2>>"$work/misc.err"
    lh=$last_pid
    wait_file 10 "$work/cpu.cmdpid" || die "the cpu holder did not start"
    spawn "$LR" -d "$SOCK_DSN" -l cpu -- "$TRUE" 2>>"$work/misc.err"
    lw=$last_pid
    spawn "$FLOCK" "$work/cpu.lock" sleep $((cpu_seconds + 30)) 2>>"$work/misc.err"
    fh=$last_pid
    sleep 0.2
    spawn "$FLOCK" "$work/cpu.lock" "$TRUE" 2>>"$work/misc.err"
    fw=$last_pid
    pid=([lr_hold]=$lh [lr_wait]=$lw [flock_hold]=$fh [flock_wait]=$fw)
    if ((etcd)); then
        spawn "${ETCDCTL[@]}" lock --ttl 15 cpu -- sh -c "echo \$\$ > $work/ecpu.cmdpid; exec sleep $((cpu_seconds + 30))" 2>>"$work/misc.err"
        eh=$last_pid
        wait_file 10 "$work/ecpu.cmdpid" || die "the etcdctl cpu holder did not start"
        spawn "${ETCDCTL[@]}" lock --ttl 15 cpu -- "$TRUE" 2>>"$work/misc.err"
        ew=$last_pid
        pid+=([etcd_hold]=$eh [etcd_wait]=$ew)
    fi
    sleep 1 # past start-up
    w=$(watcher_of "$lh")
    [[ -n $w ]] && pid[lr_watcher]=$w
    names=("${!pid[@]}")
    for i in "${names[@]}"; do t0[$i]=$(ticks "${pid[$i]}") n0[$i]=$(sched_ns "${pid[$i]}"); done
    sleep "$cpu_seconds"
    for i in "${names[@]}"; do t1[$i]=$(ticks "${pid[$i]}") n1[$i]=$(sched_ns "${pid[$i]}"); done
    for i in "${names[@]}"; do
        CPU[$i]=$(((t1[$i] - t0[$i]) * 1000 / HZ))
        CPU[${i}_ns]=$(((n1[$i] - n0[$i]) / 1000)) # in us
    done
    # Waiters first (they exit without running), then the holders.
    p=("$lw" "$fw")
    ((etcd)) && p+=("$ew")
    stop_pids TERM "${p[@]}"
    p=("$lh" "$fh")
    ((etcd)) && p+=("$eh")
    stop_pids TERM "${p[@]}"
    [[ -s $work/ecpu.cmdpid ]] && stop_pids KILL "$(<"$work/ecpu.cmdpid")"
    return 0
}
declare -A CPU

cpu_cell() { # cpu_cell KEY: "N ms (M ms/min)" from the stat ticks, schedstat in brackets
    local k=$1
    [[ -n ${CPU[$k]-} ]] || { echo "-"; return; }
    awk -v t="${CPU[$k]}" -v u="${CPU[${k}_ns]}" -v s="$cpu_seconds" 'BEGIN {
        printf "%.2f ms/min (%.2f ms in %d s; stat %d ms)", u / 1000 * 60 / s, u / 1000, s, t }'
}


rows_cpu() { # the report's rows of 3.
    cat <<ROWS
| CPU while holding (ttl 15s) | $(cpu_cell lr_hold); watcher $(cpu_cell lr_watcher) | flock holder $(cpu_cell flock_hold) | $(e "--ttl 15: $(cpu_cell etcd_hold)") | <= 20 ms/min |
| CPU while waiting (retry 1s) | $(cpu_cell lr_wait) | flock waiter $(cpu_cell flock_wait) | $(e "$(cpu_cell etcd_wait)") | <= 20 ms/min |
ROWS
}
