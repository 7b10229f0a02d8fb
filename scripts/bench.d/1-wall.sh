# bench.d/1-wall.sh - section 1 of scripts/bench: the wall time of an
# uncontended run beside true, flock and --version (hyperfine), its
# statements, and 1b. its instruction count (callgrind or perf).
# Sourced by scripts/bench.

# hf_rounds_run TAG CMD...: hf_rounds hyperfine runs of all CMDs, every
# other round in reverse order, so that drift and the order of the commands
# hit each of them alike.
hf_rounds_run() {
    local tag=$1 r i rev=()
    shift
    for ((i = $#; i >= 1; i--)); do rev+=("${!i}"); done
    for ((r = 1; r <= hf_rounds; r++)); do
        local -a these=("$@")
        ((r % 2)) || these=("${rev[@]}")
        hyperfine -N --style none --warmup "$hf_warmup" --runs "$hf_runs" \
            --export-json "$work/$tag.$r.json" "${these[@]}" >/dev/null 2>"$work/$tag.$r.err" ||
            { cat "$work/$tag.$r.err" >&2; die "hyperfine failed"; }
    done
}

hf_spread() { # hf_spread TAG CMD: "LOW-HIGH", the range of CMD's per-round medians (ms)
    local f med lo hi
    # shellcheck disable=SC2016 # jq's $c
    read -r _ _ _ lo hi < <(for f in "$work/$1".*.json; do
        read -r _ med _ < <(jq -r --arg c "$2" '.results[] | select(.command == $c) | .times[] * 1000' "$f" | stats)
        echo "$med"
    done | stats)
    awk -v lo="$lo" -v hi="$hi" 'BEGIN { printf "%.2f-%.2f", lo, hi }'
}

hf_median() { # hf_median TAG CMD: median in ms of CMD's runs over every round
    local med
    # shellcheck disable=SC2016 # jq's $c
    read -r _ med _ < <(jq -r --arg c "$2" '.results[] | select(.command == $c) | .times[] * 1000' \
        "$work/$1".*.json | stats)
    echo "$med"
}

bench_wrapper() {
    local cmds=("$TRUE" "$FLOCK $work/flock.lock $TRUE" "$LR --version"
        "$LR -d $SOCK_DSN -n -l b -- $TRUE" "$LR -d $TCP_DSN -n -l b -- $TRUE")
    local names=(true flock version sock tcp) i n q0 q1 runs
    if ((etcd)); then
        cmds+=("${ETCDCTL[0]} version" "${ETCDCTL[*]} lock b -- $TRUE")
        names+=(etcd_version etcd_lock)
    fi
    runs=$((hf_rounds * hf_runs))
    log "1. wall time: ${#cmds[@]} commands, $hf_rounds rounds x $hf_runs runs each"
    "$LR" -d "$SOCK_DSN" -n -l b -- "$TRUE" # the row exists before any timing
    status; q0=${st[Questions]}
    hf_rounds_run hf "${cmds[@]}"
    status; q1=${st[Questions]}
    for ((i = 0; i < ${#names[@]}; i++)); do
        n=${names[i]}
        WT[$n]=$(hf_median hf "${cmds[i]}")
        WT[${n}_spread]=$(hf_spread hf "${cmds[i]}")
    done
    R[runs]=$runs
    # Both leaderrun commands ran (warmup + runs) times per round.
    R[stmts]=$(awk -v d=$((q1 - q0 - q_cost)) -v n=$((2 * hf_rounds * (hf_runs + hf_warmup))) \
        'BEGIN { printf "%.1f", d / n }')
}
declare -A WT

# ------------------------------------------------------------------ 1b. instructions

insn_tool=
count_insn() { # count_insn CMD...: instructions of that process (not its children)
    local out
    if [[ $insn_tool == perf ]]; then
        # perf counts the process and what it forks (inherit): children included.
        out=$(perf stat -x, -e instructions:u -- "$@" 2>&1 >/dev/null | awk -F, '/instructions/ { print $1 }')
        echo "$out"
    else
        local vg
        rm -f "$work"/cg.*
        # valgrind runs the program in its own process: cg.PID is the
        # command's (a forked child that does not exec would add cg.OTHER).
        valgrind --tool=callgrind --trace-children=no --callgrind-out-file="$work/cg.%p" \
            "$@" >/dev/null 2>"$work/cg.err" &
        vg=$!
        wait "$vg" || true
        awk '/^totals:/ { print $2; exit }' "$work/cg.$vg"
    fi
}

bench_insn() {
    local i vals=()
    # perf only where the CPU's counters are there: it says "<not supported>"
    # in most virtual machines.
    if [[ $(perf stat -x, -e instructions:u true 2>&1 >/dev/null) =~ ^[0-9]+, ]]; then
        insn_tool=perf
    else
        insn_tool=callgrind
    fi
    log "1b. instruction counts ($insn_tool)"
    for i in 1 2 3; do
        vals+=("$(count_insn "$LR" -d "$SOCK_DSN" -n -l b -- "$TRUE")")
    done
    read -r _ 'INSN[lease]' _ 'INSN[lease_min]' 'INSN[lease_max]' < <(printf '%s\n' "${vals[@]}" | stats)
    INSN[version]=$(count_insn "$LR" --version)
    INSN[true]=$(count_insn "$TRUE")
    INSN[flock]=$(count_insn "$FLOCK" "$work/flock.lock" "$TRUE")
}
declare -A INSN


rows_wall() { # the report's rows of 1. and 1b.
    local insn_what="$insn_tool, leaderrun process only" insn_cell insn_base
    [[ $insn_tool == perf ]] && insn_what="perf, with its children"
    insn_cell="$(mega "${INSN[lease]}") (min $(mega "${INSN[lease_min]}" 3), max $(mega "${INSN[lease_max]}" 3), 3 runs)"
    insn_base="leaderrun --version $(mega "${INSN[version]}"); true $(mega "${INSN[true]}"); flock $(mega "${INSN[flock]}")"
    cat <<ROWS
| wall time, \`-n -l b -- true\`, unix socket (median of ${R[runs]}) | $(over "${WT[sock]}" "${WT[true]}"); rounds ${WT[sock_spread]} | true $(ms "${WT[true]}") ms; flock FILE true $(ms "${WT[flock]}") ms; leaderrun --version $(ms "${WT[version]}") ms (rounds ${WT[version_spread]}) | $(e "lock -- true $(over "${WT[etcd_lock]:-0}" "${WT[true]}")") | overhead vs true |
| wall time, same over TCP loopback | $(over "${WT[tcp]}" "${WT[true]}"); rounds ${WT[tcp_spread]} | as above | $(e "etcdctl version $(ms "${WT[etcd_version]:-0}") ms (process start)") | |
| of which lease work (run - --version) | socket $(sub "${WT[sock]}" "${WT[version]}") ms, TCP $(sub "${WT[tcp]}" "${WT[version]}") ms | process start + client libraries: $(sub "${WT[version]}" "${WT[true]}") ms over true | $(e "$(sub "${WT[etcd_lock]:-0}" "${WT[etcd_version]:-0}") ms over etcdctl version") | |
| statements per uncontended run (Questions) | ${R[stmts]} | - | - | prepares count too |
| instructions, uncontended run ($insn_what) | $insn_cell | $insn_base | - | repeatable to ~0.1% |
ROWS
}
