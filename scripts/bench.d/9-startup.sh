# bench.d/9-startup.sh - section 9 of scripts/bench (alone: --startup):
# startup at the floor, dynamic and static builds beside true and flock.
# Sourced by scripts/bench.

# Issue 13: the cost of wrapping one cron line. Both builds in the same
# hyperfine rounds as `true` and flock; the round trips of one uncontended
# run from the general log (a prepared statement executed directly is a
# Prepare and an Execute line sent together: one round trip).
[[ -z $static_bin && -x build-package/leaderrun-static ]] && static_bin=$PWD/build-package/leaderrun-static
startup_round_trips() { # startup_round_trips LR: "STATEMENTS ROUNDTRIPS LIST HISTORY HCONNS" of one -n run
    local log=$work/general.log
    rm -f "$log"
    root_sql -e "SET GLOBAL general_log_file='$log'; SET GLOBAL general_log=1"
    "$1" -d "$SOCK_DSN" -n -l b -- "$TRUE"
    root_sql -e "SET GLOBAL general_log=0"
    bench_logs statements "$log" "$LR_DB_USER"
}
startup_dlopen_floor() { # startup_dlopen_floor: a program that only dlopens LR's client library, or nothing
    # The dynamic build's floor: what loading Connector/C (and with it
    # libssl, libcrypto, libz) costs a process that does nothing else.
    local lib
    lib=$(LD_DEBUG=libs "$LR" -d "$SOCK_DSN" -n -l b -- "$TRUE" 2>&1 >/dev/null |
        sed -n 's/.*find library=\(lib\(mariadb\|mysqlclient\)\.so[.0-9]*\) .*/\1/p' | head -n 1) || true
    [[ -n $lib ]] || return 0
    printf '#include <dlfcn.h>\nint main(void) { return dlopen("%s", RTLD_LAZY | RTLD_LOCAL) ? 0 : 1; }\n' "$lib" >"$work/dlopen.c"
    cc -O2 -o "$work/dlopen" "$work/dlopen.c" -ldl 2>/dev/null && "$work/dlopen" && echo "$work/dlopen $lib"
}
bench_startup() {
    local cmds=("$TRUE" "$FLOCK $work/flock.lock $TRUE" "$LR --version" "$LR -d $SOCK_DSN -n -l b -- $TRUE")
    local names=(true flock version sock) i t dl dl_lib
    if [[ -n $static_bin ]]; then
        cmds+=("$static_bin --version" "$static_bin -d $SOCK_DSN -n -l b -- $TRUE")
        names+=(s_version s_sock)
    fi
    read -r dl dl_lib < <(startup_dlopen_floor) || true
    if [[ -n ${dl-} ]]; then
        cmds+=("$dl")
        names+=(dlopen)
    fi
    log "9. startup: ${#cmds[@]} commands, $hf_rounds rounds x $hf_runs runs each"
    "$LR" -d "$SOCK_DSN" -n -l b -- "$TRUE" # the row exists before any timing
    hf_rounds_run su "${cmds[@]}"
    for ((i = 0; i < ${#names[@]}; i++)); do
        SU[${names[i]}]=$(fmt "$(hf_median su "${cmds[i]}")" 2)
    done
    log "9. startup: instruction counts (callgrind, the leaderrun process alone)"
    SU[i_true]=$(count_insn "$TRUE")
    SU[i_version]=$(count_insn "$LR" --version)
    SU[i_sock]=$(count_insn "$LR" -d "$SOCK_DSN" -n -l b -- "$TRUE")
    if [[ -n $static_bin ]]; then
        SU[i_s_version]=$(count_insn "$static_bin" --version)
        SU[i_s_sock]=$(count_insn "$static_bin" -d "$SOCK_DSN" -n -l b -- "$TRUE")
    fi
    read -r 'SU[stmts]' 'SU[rt]' 'SU[list]' 'SU[hstmts]' 'SU[hconns]' < <(startup_round_trips "$LR")
    [[ -n $static_bin ]] && read -r 'SU[s_stmts]' 'SU[s_rt]' _ < <(startup_round_trips "$static_bin")
    t=${SU[true]}
    ratio() { awk -v a="$1" -v b="$t" 'BEGIN { printf "%.2f", a / b }'; }
    echo
    echo "## 9. Startup at the floor (issue 13)"
    echo
    echo "Medians of $((hf_rounds * hf_runs)) runs each, one set of rounds; ratios to \`true\` (${SU[true]} ms)."
    echo "Targets: --version <= 1.3x, \`-n -- true\` <= 3.5x."
    echo
    mi() { [[ -n $1 ]] && awk -v i="$1" 'BEGIN { printf "%.2f M", i / 1e6 }' || echo -; }
    echo "| command | dynamic (ms) | ratio | static (ms) | ratio | instructions, dynamic / static |"
    echo "|---|---|---|---|---|---|"
    echo "| \`true\` | ${SU[true]} | 1 | | | $(mi "${SU[i_true]}") |"
    echo "| \`leaderrun --version\` | ${SU[version]} | $(ratio "${SU[version]}") | ${SU[s_version]:--} | $([[ -n $static_bin ]] && ratio "${SU[s_version]}" || echo -) | $(mi "${SU[i_version]}") / $(mi "${SU[i_s_version]-}") |"
    echo "| \`leaderrun -n -- true\` (socket) | ${SU[sock]} | $(ratio "${SU[sock]}") | ${SU[s_sock]:--} | $([[ -n $static_bin ]] && ratio "${SU[s_sock]}" || echo -) | $(mi "${SU[i_sock]}") / $(mi "${SU[i_s_sock]-}") |"
    echo "| \`flock FILE true\` | ${SU[flock]} | $(ratio "${SU[flock]}") | | | |"
    [[ -n ${SU[dlopen]-} ]] && echo "| a program that only dlopens $dl_lib (the dynamic build's floor beside the static one) | ${SU[dlopen]} | $(ratio "${SU[dlopen]}") | | | |"
    echo
    echo "Load average: $(cut -d' ' -f1-3 /proc/loadavg) (wall times are this machine's; instructions are repeatable)."
    echo "Uncontended \`-n -- true\`: connect + ${SU[stmts]} statements in ${SU[rt]} round trips on the lease's connection (${SU[list]//,/, }); the run history: ${SU[hstmts]} statement(s) after the release, ${SU[hconns]} connection(s) of its own$([[ -n $static_bin ]] && echo "; static build: ${SU[s_stmts]} statements, ${SU[s_rt]} round trips")."
}
declare -A SU
