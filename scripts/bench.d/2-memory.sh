# bench.d/2-memory.sh - section 2 of scripts/bench: peak RSS, of a holder
# and its watcher (VmHWM) and of a whole run (time -f %M).
# Sourced by scripts/bench.

time_rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }

vmhwm() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }

# watcher_of PID: the watcher, PID's child process that is a leaderrun too.
# Only builtins in the loop: a fork per process took over a second on a
# busy machine, and the holder's command had ended by then.
watcher_of() {
    local p stat ppid comm
    for p in /proc/[0-9]*; do
        read -r stat 2>/dev/null <"$p/stat" || continue
        read -r _ ppid _ <<<"${stat##*) }" # the name may hold ") "
        [[ $ppid == "$1" ]] || continue
        read -r comm 2>/dev/null <"$p/comm" || continue
        [[ $comm == leaderrun ]] && { echo "${p#/proc/}"; return; }
    done
    return 0
}

bench_rss() {
    local holder w
    log "2. peak memory"
    spawn "$LR" -d "$SOCK_DSN" -t 3s -l rss -- sh -c "echo \$\$ > $work/rss.cmdpid; sleep 2.5" 2>>"$work/misc.err"
    holder=$last_pid
    wait_file 10 "$work/rss.cmdpid" || die "the rss holder did not start"
    sleep 1.5 # past the first renews
    RSS[hold]=$(vmhwm "$holder")
    w=$(watcher_of "$holder")
    RSS[watcher]=$( [[ -n $w ]] && vmhwm "$w" || echo 0)
    RSS[sleep]=$(vmhwm "$(<"$work/rss.cmdpid")")
    reap "$holder"
    RSS[time]=$(time_rss "$LR" -d "$SOCK_DSN" -n -l rss -- "$TRUE")
    RSS[time_version]=$(time_rss "$LR" --version)
    RSS[time_true]=$(time_rss "$TRUE")
    RSS[time_flock]=$(time_rss "$FLOCK" "$work/flock.lock" "$TRUE")
    if ((etcd)); then
        rm -f "$work/ermss.cmdpid"
        spawn "${ETCDCTL[@]}" lock rss -- sh -c "echo \$\$ > $work/ermss.cmdpid; sleep 2.5" 2>>"$work/misc.err"
        holder=$last_pid
        wait_file 10 "$work/ermss.cmdpid" || die "the etcdctl rss holder did not start"
        sleep 1.5
        RSS[etcd_hold]=$(vmhwm "$holder")
        reap "$holder"
        RSS[etcd_time]=$(time_rss "${ETCDCTL[@]}" lock rss -- "$TRUE")
    fi
}
declare -A RSS


rows_memory() { # the report's rows of 2.
    cat <<ROWS
| peak RSS while holding (VmHWM) | $(mib "${RSS[hold]}") + watcher $(mib "${RSS[watcher]}") | its command (sleep) $(mib "${RSS[sleep]}") | $(e "$(mib "${RSS[etcd_hold]:-0}")") | |
| peak RSS, \`time -f %M\` of \`-n -- true\` | $(mib "${RSS[time]}") | true $(mib "${RSS[time_true]}"); flock $(mib "${RSS[time_flock]}"); leaderrun --version $(mib "${RSS[time_version]}") | $(e "lock -- true: $(mib "${RSS[etcd_time]:-0}")") | largest process of the run |
ROWS
}
