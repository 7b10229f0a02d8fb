# bench.d/5-handover.sh - section 5 of scripts/bench: graceful handover
# beside flock (and polling, and etcdctl), and 5b. chains of handovers.
# Sourced by scripts/bench.

# One hand-over of KIND (trial I): a holder whose command sleeps 1-2 s (a
# random hold, so that a polling follower's phase is not tied to the
# hand-over), and a follower that waits for it; microseconds from the
# holder's command's last action to the follower's command's start.
handover_one() {
    local k=$1 i=$2 tag=$work/ho.$1.$2 hold a b
    local -a run=()
    hold=$(ms_to_s $((1000 + $(rand_ms 1000))))
    case $k in
        leaderrun) run=("$LR" -d "$SOCK_DSN" -l handover --) ;;
        disk) run=("$LR" -d "$DISK_DSN" -l handover --) ;;
        poll) run=("$LR" -d "$SOCK_DSN" --no-wake-hint -l handover-poll --) ;;
        flock) run=("$FLOCK" "$work/handover.lock") ;;
        etcd) run=("${ETCDCTL[@]}" lock handover --) ;;
    esac
    spawn "${run[@]}" sh -c "echo \$\$ > $tag.cmdpid; sleep $hold; date +%s%N > $tag.stop" 2>>"$work/handover.err"
    a=$last_pid
    wait_file 10 "$tag.cmdpid" || die "handover: the $k holder did not start"
    spawn "${run[@]}" sh -c "date +%s%N > $tag.start" 2>>"$work/handover.err"
    b=$last_pid
    wait_file 20 "$tag.start" || die "handover: the $k follower never started"
    reap "$a" "$b"
    hv[$k]+="$((($(<"$tag.start") - $(<"$tag.stop")) / 1000))"$'\n'
}

# The kinds one after another, in an order that turns each trial, so
# that a hand-over has the machine to itself (they once ran at once, and
# leaderrun's, which runs more processes, paid for the others' on two
# CPUs) and drift hits every kind alike. leaderrun's on the tmpfs server
# and on one with its data on disk, where each hand-over waits for the
# disk's flushes.
bench_handover() {
    local i j k kinds=(leaderrun disk flock) n med p95 min max
    local -A hv=() # per kind: microseconds, one per line
    ((wake_hint)) && kinds+=(poll)
    ((etcd)) && kinds+=(etcd)
    disk_db_start
    log "5. graceful handover: ${kinds[*]}, $handover_trials trials, one at a time"
    for ((i = 1; i <= handover_trials; i++)); do
        for ((j = 0; j < ${#kinds[@]}; j++)); do
            handover_one "${kinds[(i + j) % ${#kinds[@]}]}" "$i"
        done
    done
    disk_db_stop
    for k in "${kinds[@]}"; do
        read -r n med p95 min max < <(printf '%s' "${hv[$k]}" | stats)
        HO[${k}_med]=$med # us
        HO[$k]=$(awk -v n="$n" -v med="$med" -v p95="$p95" -v max="$max" 'BEGIN {
            d = (med < 10000) ? 2 : 0
            printf "median %.*f ms, p95 %.*f ms (max %.*f; n=%d)", d, med / 1000, d, p95 / 1000, d, max / 1000, n }')
    done
}
declare -A HO


# The handover's ratio to flock's, median over median, as scripts/bench
# reported it before issue 15 changed how followers wait (README,
# 2026-11-22, 5f3450e: 3.34 ms / 1.86 ms). Issue 15 must leave the handover
# as it was: within 1.2x of that ratio.
HO_RATIO_BEFORE=1.80

# chain KIND N: a holder and N followers; the holder lets go, and each
# follower in turn runs `true` and hands on. The wall time of the chain and,
# for leaderrun, every statement the server answered meanwhile.
chain() {
    local kind=$1 n=$2 tag=$work/chain.$1.$2 i q0 q1 t0 t1 all=()
    local -a run
    case $kind in
        leaderrun) run=("$LR" -d "$SOCK_DSN" -l "chain-$n" --) ;;
        flock) run=("$FLOCK" "$tag.lock") ;;
    esac
    log "5b. a chain of $n handovers: $kind"
    spawn "${run[@]}" sh -c "echo \$\$ > $tag.cmdpid; while [ ! -e $tag.go ]; do sleep 0.05; done" 2>>"$work/chain.err"
    all+=("$last_pid")
    wait_file 10 "$tag.cmdpid" || die "chain: the $kind holder did not start"
    for ((i = 0; i < n; i++)); do
        spawn "${run[@]}" "$TRUE" 2>>"$work/chain.err"
        all+=("$last_pid")
    done
    [[ $kind != leaderrun ]] || wait_connected "$n" followers
    nap 3 # every follower waiting: blocked on the hint, or in flock(2)
    status; q0=${st[Questions]}
    t0=$(now_ns)
    : >"$tag.go"
    wait_gone 300 "${all[@]}" || die "chain: $kind did not finish"
    t1=$(now_ns)
    status; q1=${st[Questions]}
    CH[$kind,$n,ms]=$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f", ns / 1e6 }')
    CH[$kind,$n,per]=$(awk -v ns=$((t1 - t0)) -v n="$n" 'BEGIN { printf "%.2f", ns / 1e6 / n }')
    CH[$kind,$n,q]=$(awk -v q=$((q1 - q0 - q_cost)) -v n="$n" 'BEGIN { printf "%.1f", q / n }')
}
declare -A CH
chains=(50 100)

bench_chains() {
    local n
    for n in "${chains[@]}"; do
        chain leaderrun "$n"
        chain flock "$n"
    done
}

# handover_verdict KIND: KIND's ratio to flock, against the target.
handover_verdict() {
    awk -v a="${HO[${1}_med]}" -v b="${HO[flock_med]}" -v before="$HO_RATIO_BEFORE" 'BEGIN { r = a / b
        printf "%.2fx flock (<= 2.00x: %s; before issue 15: %.2fx)", r, (r <= 2) ? "met" : "NOT met", before }'
}

rows_handover() { # the report's rows of 5.
    local handover_base="flock: ${HO[flock]}" handover_note="follower polls every 0.75-1 s"
    if ((wake_hint)); then
        handover_base+="; leaderrun --no-wake-hint (polling): ${HO[poll]}"
        handover_note="woken by the GET_LOCK hint; polling: every 0.75-1 s"
    fi
    echo "| graceful handover (holder's command exits, follower waits) | ${HO[leaderrun]}; $(handover_verdict leaderrun) | $handover_base | $(e "${HO[etcd]:-}") | $handover_note |"
    echo "| the same, data on disk (two flushed commits on the way) | ${HO[disk]}; $(handover_verdict disk) | flock, the same trials | | the release's flush overlaps the follower's wake-up |"
}

report_chains() { # the table of 5b.
    local n
    echo
    echo "Handover chains: a holder lets go and N followers, each running \`true\`, take the lease one after another; statements are all the server answered meanwhile (waiting included), divided by N."
    echo
    echo "Target: at most 8 statements per handover with the hint, 12 polling."
    echo
    echo "| chain of N handovers | leaderrun: statements per handover | leaderrun: chain wall time (per handover) | flock: chain wall time (per handover) | ratio to flock |"
    echo "|---|---|---|---|---|"
    for n in "${chains[@]}"; do
        printf '| %s | %s | %s ms (%s ms) | %s ms (%s ms) | %s |\n' "$n" "${CH[leaderrun,$n,q]}" \
            "${CH[leaderrun,$n,ms]}" "${CH[leaderrun,$n,per]}" "${CH[flock,$n,ms]}" "${CH[flock,$n,per]}" \
            "$(awk -v a="${CH[leaderrun,$n,ms]}" -v b="${CH[flock,$n,ms]}" 'BEGIN { printf "%.1fx", a / (b > 0 ? b : 1) }')"
    done
}
