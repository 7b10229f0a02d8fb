# bench.d/8-galera.sh - section 8 of scripts/bench (--galera): a 3-node
# Galera cluster beside the standalone server: renew round trip, acquire
# races, the holder's node killed, one node's clock ahead.
# Sourced by scripts/bench.

# spawn_rc TAG CMD...: like spawn, through a sh that writes CMD's exit status
# to TAG.rc once it ends; CMD's own pid in $last_pid (and in TAG.pid).
spawn_rc() {
    local tag=$1
    shift
    rm -f "$tag.pid" "$tag.rc"
    # shellcheck disable=SC2016 # the inner sh expands them
    spawn sh -c 'p=$1 r=$2; shift 2; "$@" & echo $! >"$p"; wait $!; echo $? >"$r.tmp"; mv "$r.tmp" "$r"' \
        sh "$tag.pid" "$tag.rc" "$@"
    wait_file 10 "$tag.pid" || die "could not start $1"
    last_pid=$(<"$tag.pid")
    pids+=("$last_pid")
    own "$last_pid"
}

g_read_env() { # the cluster's settings, from the env file sandbox-galera writes
    local v
    mapfile -t v < <(
        # shellcheck disable=SC1091 # written at run time
        . "$gdir/env"
        printf '%s\n' "$LR_GALERA_PORTS" "$LR_GALERA_PIDS" "$LR_DB_USER" "$LR_DB_PASSWORD" "$LR_DB_NAME"
    )
    read -ra G_PORTS <<<"${v[0]}"
    read -ra G_PIDS <<<"${v[1]}"
    G_USER=${v[2]} G_PASSWORD=${v[3]} G_DB=${v[4]}
}

g_dsn() { # g_dsn N...: a DSN naming those nodes, in that order
    local n hosts=() IFS=,
    for n; do hosts+=("127.0.0.1:${G_PORTS[n - 1]}"); done
    echo "mysql://$G_USER:$G_PASSWORD@${hosts[*]}/$G_DB"
}

g_sql() { # g_sql N ARGS...: root on node N's socket, the test database
    local n=$1
    shift
    mariadb --no-defaults -S "$gdir/n$n/mysqld.sock" -uroot -N -B "$G_DB" "$@"
}

g_node_of_port() { # n1, n2 or n3 for a SQL port
    local i
    for i in 0 1 2; do
        [[ ${G_PORTS[i]} == "$1" ]] && { echo "n$((i + 1))"; return; }
    done
    echo "port $1"
}

galera_start() {
    local t0
    log "8. starting a throwaway 3-node Galera cluster in $gdir"
    galera_started=1
    t0=$(now_ns)
    scripts/sandbox-galera start "$gdir" >/dev/null || die "the Galera cluster did not start"
    GA[start]=$(awk -v ns=$(($(now_ns) - t0)) 'BEGIN { printf "%.1f", ns / 1e9 }')
    g_read_env
    GA[version]=$(g_sql 1 -e "SHOW GLOBAL STATUS LIKE 'wsrep_provider_version'" | cut -f2)
    GA[version]=${GA[version]%%(*} # 4.23 for Debian's galera-4 26.4.23
}

# rtt_probe KEY DSN: a holder renewing every 50 ms; the round trips of its
# renews over g_rtt_seconds, timed by strace, into GA[rtt_KEY].
rtt_probe() {
    local key=$1 dsn=$2 tag=$work/rtt.$1 holder n p50 p99 max
    log "8a. renew round trip ($key): renew every 50 ms, $g_rtt_seconds s"
    spawn "$LR" -d "$dsn" --renew-interval 50ms -l "rtt-$key" -- \
        sh -c "echo \$\$ > $tag.cmdpid; exec sleep 600" 2>>"$work/galera.err"
    holder=$last_pid
    wait_file 30 "$tag.cmdpid" || die "renew round trip: the $key holder did not start"
    nap 0.5
    trace_renews "$tag.strace" "$holder"
    nap "$g_rtt_seconds"
    stop_trace
    alive "$holder" || die "renew round trip: the $key holder ended early (see $work/galera.err)"
    stop_pids TERM "$holder"
    read -r n p50 p99 _ max < <(bench_logs rtts "$tag.strace" | stats 99)
    if ((n > 0)); then
        GA[rtt_$key]="$(fmt "$p50" 2) / $(fmt "$p99" 2) ms (max $(fmt "$max" 2); n=$n)"
    else
        GA[rtt_$key]="not observed"
    fi
}

# flock_waiting PID: PID has become flock(1) and sleeps (on the lock)
flock_waiting() {
    local comm
    comm=$(<"/proc/$1/comm") 2>/dev/null || return 1
    [[ $comm == flock && $(proc_state "$1") == S ]]
}

# race KEY ROUNDS DSN_A DSN_B: ROUNDS x two `-n -- sleep 1` on a fresh lease,
# let go at the same instant (both wait for a shared flock on a file held
# exclusively here); the outcomes into GA[race_KEY].
race() {
    local key=$1 rounds=$2 dsn_a=$3 dsn_b=$4 k i tag lk a b ok=0 first_won=0 other=() pa pb errs first
    log "8b. acquire race ($key): $rounds rounds of two \`-n -- sleep 1\`"
    for ((k = 1; k <= rounds; k++)); do
        tag=$work/race.$key.$k
        : >"$tag.lock"
        exec {lk}<"$tag.lock"
        flock -x "$lk"
        # Alternate which one starts first (and so is let go first).
        if ((k % 2)); then
            first=a
            spawn_rc "$tag.a" "$FLOCK" -s "$tag.lock" "$LR" -d "$dsn_a" -n -l "race-$key-$k" -- sleep 1 2>"$tag.a.err"
            pa=$last_pid
            spawn_rc "$tag.b" "$FLOCK" -s "$tag.lock" "$LR" -d "$dsn_b" -n -l "race-$key-$k" -- sleep 1 2>"$tag.b.err"
            pb=$last_pid
        else
            first=b
            spawn_rc "$tag.b" "$FLOCK" -s "$tag.lock" "$LR" -d "$dsn_b" -n -l "race-$key-$k" -- sleep 1 2>"$tag.b.err"
            pb=$last_pid
            spawn_rc "$tag.a" "$FLOCK" -s "$tag.lock" "$LR" -d "$dsn_a" -n -l "race-$key-$k" -- sleep 1 2>"$tag.a.err"
            pa=$last_pid
        fi
        for ((i = 0; i < 500; i++)); do
            flock_waiting "$pa" && flock_waiting "$pb" && break
            nap 0.01
        done
        nap 0.05 # in flock(2), not just asleep on the way there
        flock -u "$lk"
        exec {lk}<&-
        { wait_file 30 "$tag.a.rc" && wait_file 30 "$tag.b.rc"; } || die "race: round $k did not end in 30 s"
        a=$(<"$tag.a.rc") b=$(<"$tag.b.rc")
        if [[ $a == 0 && $b == 75 ]]; then
            ok=$((ok + 1))
            [[ $first == a ]] && first_won=$((first_won + 1))
        elif [[ $a == 75 && $b == 0 ]]; then
            ok=$((ok + 1))
            [[ $first == b ]] && first_won=$((first_won + 1))
        else
            other+=("$a/$b")
        fi
        reap "$pa" "$pb"
    done
    errs=$(cat "$work/race.$key".*.err | grep -c -E 'warning:|error:' || true)
    GA[race_$key]="one winner (0) and one loser (75) in $ok of $rounds; other outcomes: ${#other[@]}"
    ((${#other[@]})) && GA[race_$key]+=" (exit statuses ${other[*]})"
    GA[race_$key]+="; won by the one started first: $first_won; warnings+errors $errs"
}

# gfo_trial K: kill -9 node 1 under a holder (default ttl 15s) that renews
# through it; sets gfo_out (kept|exited|none), gfo_ms, gfo_node, gfo_rc.
gfo_trial() {
    local k=$1 tag=$work/gfo.$1 holder standby pid1 t0 deadline res cmdpid
    gfo_out=none gfo_ms='' gfo_node='' gfo_rc=''
    spawn_rc "$tag.h" "$LR" -d "$(g_dsn 1 2 3)" --log-format json -vv -l "gfo-$k" -- \
        sh -c "echo \$\$ > $tag.cmdpid; exec sleep 600" 2>"$tag.h.err"
    holder=$last_pid
    wait_file 30 "$tag.cmdpid" || die "galera failover: the holder did not start"
    cmdpid=$(<"$tag.cmdpid")
    spawn_rc "$tag.s" "$LR" -d "$(g_dsn 2 3 1)" --log-format json -l "gfo-$k" -- \
        sh -c "date +%s%N > $tag.started" 2>"$tag.s.err"
    standby=$last_pid
    # The standby has looked; then a random phase of the 5 s renew cycle.
    nap "$(ms_to_s $((1000 + $(rand_ms 5000))))"
    pid1=${G_PIDS[0]}
    if [[ $pid1 == - ]] || ! alive "$pid1"; then die "galera failover: node 1 is not running"; fi
    [[ $(tr '\0' '\n' <"/proc/$pid1/cmdline") == *"--datadir=$gdir/n1/data"* ]] ||
        die "galera failover: pid $pid1 is not node 1's mariadbd"
    t0=$(now_ns)
    kill -KILL "$pid1"
    scripts/sandbox-galera kill "$gdir" 1 >&2 || die "galera failover: node 1 did not go away"
    deadline=$((SECONDS + 60))
    res=
    while ((SECONDS < deadline)); do
        # Cheap test first; the JSON is parsed once the lines are there.
        if grep -q '"msg":"now using database server' "$tag.h.err" &&
            grep -q '"msg":"renewed' "$tag.h.err"; then
            res=$(bench_logs renewed "$tag.h.err" $((t0 / 1000000)))
            [[ -n $res ]] && break
        fi
        [[ -s $tag.h.rc ]] && break
        nap 0.1
    done
    if [[ -n $res ]] && alive "$holder" && alive "$cmdpid"; then
        gfo_out=kept
        read -r gfo_ms gfo_node <<<"$res"
        gfo_node=$(g_node_of_port "$gfo_node")
    elif wait_file 1 "$tag.h.rc"; then
        gfo_rc=$(<"$tag.h.rc")
        gfo_out=exited
        if [[ $gfo_rc == 76 ]] && wait_file 40 "$tag.started"; then
            gfo_ms=$((($(<"$tag.started") - t0) / 1000000))
        fi
    fi
    [[ $gfo_out != none ]] || log "warning: galera failover trial $k: no renew through another node and no exit in 60 s"
    stop_pids TERM "$standby"
    stop_pids TERM "$holder"
    wait_gone 10 "$cmdpid" || die "galera failover: the holder's command survived"
    log "8c. restarting node 1"
    scripts/sandbox-galera restart "$gdir" 1 >/dev/null || die "node 1 did not rejoin the cluster"
    g_read_env
}

galera_failover() {
    local k kept=0 exited=() ms_kept=() ms_exit=() nodes=() n med max
    log "8c. kill -9 of the holder's node (ttl 15s): $g_fo_trials trial(s)"
    for ((k = 1; k <= g_fo_trials; k++)); do
        gfo_trial "$k"
        case $gfo_out in
            kept) kept=$((kept + 1)) ms_kept+=("$gfo_ms") nodes+=("$gfo_node") ;;
            exited)
                exited+=("$gfo_rc")
                if [[ -n $gfo_ms ]]; then ms_exit+=("$gfo_ms"); fi
                ;;
        esac
    done
    GA[gfo]="kept the lease in $kept of $g_fo_trials"
    if ((kept)); then
        read -r n med _ _ max < <(printf '%s\n' "${ms_kept[@]}" | stats)
        GA[gfo]+=" (now using ${nodes[*]}); kill to the first renew through another node: median $med ms, max $max ms (n=$n)"
    fi
    if ((${#exited[@]})); then
        GA[gfo]+="; the holder exited in ${#exited[@]} (status ${exited[*]})"
        if ((${#ms_exit[@]})); then
            read -r n med _ _ max < <(printf '%s\n' "${ms_exit[@]}" | stats)
            GA[gfo]+=", kill to the standby's command: median $med ms, max $max ms (n=$n)"
        fi
    fi
    ((kept + ${#exited[@]} == g_fo_trials)) || GA[gfo]+="; no outcome within 60 s in $((g_fo_trials - kept - ${#exited[@]}))"
}

g_clock_offset() { # g_clock_offset N: node N's UTC clock minus ours, in ms
    local a b v
    a=$(now_ns)
    v=$(g_sql "$1" -e "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))")
    b=$(now_ns)
    awk -v v="$v" -v a="$a" -v b="$b" 'BEGIN { printf "%+.0f", (v * 1000 - (a + b) / 2) / 1e6 }'
}

# clock_trial KIND K: two holders (--ttl 10s) SIGKILLed at the same instant,
# contender A waiting for the first lease, B for the second (--retry-
# interval 50ms). KIND g: holders through node 1, A through node 3 (its
# clock ahead), B through node 2; KIND sa: all on the standalone server.
# Sets ck_a ck_b (ms from the kill to each acquire) and ck_ea ck_eb (ms from
# the row's expires_at, as written, to the acquire).
clock_trial() {
    local kind=$1 k=$2 tag=$work/clk.$1.$2 l1=clk1-$1-$2 l2=clk2-$1-$2 h1 h2 ca cb c1 c2 t0 name us
    local hold_dsn dsn_a dsn_b
    local -A exp=()
    if [[ $kind == g ]]; then
        hold_dsn=$(g_dsn 1) dsn_a=$(g_dsn 3) dsn_b=$(g_dsn 2)
    else
        hold_dsn=$TCP_DSN dsn_a=$TCP_DSN dsn_b=$TCP_DSN
    fi
    # Started together, so that both renew (every 3.3 s) in step.
    spawn "$LR" -d "$hold_dsn" --ttl 10s -l "$l1" -- sh -c "echo \$\$ > $tag.h1.cmdpid; exec sleep 600" 2>>"$tag.err"
    h1=$last_pid
    spawn "$LR" -d "$hold_dsn" --ttl 10s -l "$l2" -- sh -c "echo \$\$ > $tag.h2.cmdpid; exec sleep 600" 2>>"$tag.err"
    h2=$last_pid
    { wait_file 30 "$tag.h1.cmdpid" && wait_file 30 "$tag.h2.cmdpid"; } || die "clock: the holders did not start"
    c1=$(<"$tag.h1.cmdpid") c2=$(<"$tag.h2.cmdpid")
    spawn "$LR" -d "$dsn_a" --ttl 10s --retry-interval 50ms -l "$l1" -- sh -c "date +%s%N > $tag.a" 2>>"$tag.err"
    ca=$last_pid
    spawn "$LR" -d "$dsn_b" --ttl 10s --retry-interval 50ms -l "$l2" -- sh -c "date +%s%N > $tag.b" 2>>"$tag.err"
    cb=$last_pid
    # The contenders wait; then a random phase of the renew cycle.
    nap "$(ms_to_s $((1000 + $(rand_ms 3333))))"
    [[ ! -s $tag.a && ! -s $tag.b ]] || die "clock: a contender took a lease that was held"
    t0=$(now_ns)
    kill -KILL "$h1" "$h2"
    # leaderrun's watcher SIGKILLs the command's group when leaderrun dies.
    wait_gone 10 "$c1" "$c2" || die "clock: a SIGKILLed holder's command (sleep) survived"
    nap 0.2 # a renew the server had received lands
    while read -r name us; do
        exp[$name]=$us
    done < <(if [[ $kind == g ]]; then g_sql 1 -e "$(clock_expiry_sql "$l1" "$l2")"; else root_sql -e "$(clock_expiry_sql "$l1" "$l2")"; fi)
    [[ -n ${exp[$l1]-} && -n ${exp[$l2]-} ]] || die "clock: could not read the rows' expires_at"
    { wait_file 30 "$tag.a" && wait_file 30 "$tag.b"; } || die "clock: a contender did not acquire in 30 s"
    reap "$h1" "$h2" "$ca" "$cb"
    ck_a=$((($(<"$tag.a") - t0) / 1000000)) ck_b=$((($(<"$tag.b") - t0) / 1000000))
    ck_ea=$((($(<"$tag.a") / 1000 - exp[$l1]) / 1000)) ck_eb=$((($(<"$tag.b") / 1000 - exp[$l2]) / 1000))
}

clock_expiry_sql() { # the rows' expires_at in microseconds since the epoch
    echo "SELECT name, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at)
          FROM leaderrun_lease WHERE name IN ('$1', '$2')"
}

# clock KIND TRIALS: clock_trial TRIALS times; the summary into GA[clk_KIND]
clock() {
    local kind=$1 trials=$2 k da=() dk=() ka=() kb=() n med min max kmed rmed amed bmed
    log "8d. clock offset ($kind): $trials trial(s), ttl 10s"
    for ((k = 1; k <= trials; k++)); do
        clock_trial "$kind" "$k"
        da+=("$((ck_eb - ck_ea))") dk+=("$((ck_b - ck_a))") ka+=("$ck_a") kb+=("$ck_b")
    done
    read -r n med _ min max < <(printf '%s\n' "${da[@]}" | stats)
    read -r _ rmed _ < <(printf '%s\n' "${dk[@]}" | stats)
    read -r _ amed _ < <(printf '%s\n' "${ka[@]}" | stats)
    read -r _ bmed _ < <(printf '%s\n' "${kb[@]}" | stats)
    kmed=$(fmt "$(awk -v m="$med" 'BEGIN { print m / 1000 }')" 2)
    if [[ $kind == g ]]; then
        GA[clk_g]="through node 3 the lease was taken over $kmed s earlier than through node 2 (median; min $min, max $max ms; n=$n), against each row's expires_at; from the kill: node 3 $amed ms, node 2 $bmed ms (medians), difference $rmed ms"
    else
        GA[clk_sa]="difference $med ms (median; min $min, max $max ms; n=$n), against each row's expires_at; from the kill: A $amed ms, B $bmed ms (medians), difference $rmed ms"
    fi
}

bench_galera() {
    galera_start
    rtt_probe sa "$TCP_DSN"
    rtt_probe g "$(g_dsn 1 2 3)"
    race sa "$g_race_rounds" "$TCP_DSN" "$TCP_DSN"
    race g "$g_race_rounds" "$(g_dsn 1 2 3)" "$(g_dsn 2 3 1)"
    galera_failover
    log "8d. restarting node 3 with its wall clock 2 s ahead (SANDBOX_GALERA_FAKETIME=+2s)"
    SANDBOX_GALERA_FAKETIME=+2s SANDBOX_GALERA_FAKETIME_NODE=3 scripts/sandbox-galera restart "$gdir" 3 >/dev/null ||
        die "node 3 did not rejoin on a faked clock"
    g_read_env
    faked_pid=${G_PIDS[2]}
    GA[offset3]=$(g_clock_offset 3)
    GA[offset2]=$(g_clock_offset 2)
    clock sa "$g_clock_trials"
    clock g "$g_clock_trials"
    log "8. stopping the Galera cluster"
    scripts/sandbox-galera stop "$gdir" >/dev/null 2>&1 || log "warning: sandbox-galera stop $gdir failed"
    galera_started=0
    drop_faketime_shm
}
declare -A GA


report_galera() { # the table of 8.: each row beside the standalone server, same run
    local gna='skipped (no --galera)' fo15=${FO[lr15]}
    g() { if ((galera)); then printf '%s' "$1"; else printf '%s' "$gna"; fi; }
    gs() { if ((galera)); then printf '%s' "$1"; else printf '%s' '- (measured with --galera)'; fi; }
    [[ $fo15 == skipped* ]] && fo15="not measured (--quick): expect 10000-15000 ms (row expiry, renew 5 s)"
    cat <<ROWS

Galera: a throwaway 3-node cluster$( ((galera)) && printf ' (Galera %s, MariaDB %s, on loopback in %s; started in %s s)' "${GA[version]}" "$db_version" "$base" "${GA[start]}"), each row beside the standalone server of the same run.

| measure | standalone (same run) | Galera, 3 nodes | note |
|---|---|---|---|
| renew round trip, p50 / p99 (strace; TCP; --renew-interval 50ms for $g_rtt_seconds s) | $(gs "${GA[rtt_sa]:-}") | $(g "${GA[rtt_g]:-} through node 1") | sendto of the renew UPDATE to the receipt of its answer; on Galera the commit waits for the group's certification |
| acquire race: two \`-n -l race-K -- sleep 1\` at the same instant, fresh lease each round | $(gs "${GA[race_sa]:-}") | $(g "${GA[race_g]:-}") | Galera: one DSN node 1 first (n1,n2,n3), the other node 2 first (n2,n3,n1), each started first (a fork apart, then let go together) in every other round; expected: one winner every round |
| kill -9 of the holder's node (default ttl 15s, renew 5 s; holder n1,n2,n3, standby n2,n3,n1) | failover after SIGKILL of the holder, ttl 15s: $fo15 | $(g "${GA[gfo]:-}") | standalone has no other node: with its server down the command is stopped 10.5 s (ttl - margin - kill-grace) after the last renew |
| wall clock of one node 2 s ahead (ttl 10s; two holders killed at once; contenders --retry-interval 50ms) | $(gs "${GA[clk_sa]:-}") | $(g "${GA[clk_g]:-}") | $( ((galera)) && printf "node 3 restarted with SANDBOX_GALERA_FAKETIME=+2s: measured %s ms (node 2 %s ms)" "${GA[offset3]}" "${GA[offset2]}") |
ROWS
}
