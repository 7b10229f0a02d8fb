# bench.d/9-startup.sh - section 9 of scripts/bench (alone: --startup):
# a run's cost beside its floor (issues 13 and 34): the dynamic and static
# builds, `true`, flock and a minimal client that connects and makes the
# two durable commits a run needs, in the same rounds, against a server
# with its data on tmpfs and one with its data on disk; then the same with
# 5,000 idle processes on the machine.
# Sourced by scripts/bench.

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
    # What loading Connector/C (and with it libssl, libcrypto, libz) costs
    # a process that does nothing else: the dynamic build's part.
    local lib
    lib=$(LD_DEBUG=libs "$LR" -d "$SOCK_DSN" -n -l b -- "$TRUE" 2>&1 >/dev/null |
        sed -n 's/.*find library=\(lib\(mariadb\|mysqlclient\)\.so[.0-9]*\) .*/\1/p' | head -n 1) || true
    [[ -n $lib ]] || return 0
    printf '#include <dlfcn.h>\nint main(void) { return dlopen("%s", RTLD_LAZY | RTLD_LOCAL) ? 0 : 1; }\n' "$lib" >"$work/dlopen.c"
    cc -O2 -o "$work/dlopen" "$work/dlopen.c" -ldl 2>/dev/null && "$work/dlopen" && echo "$work/dlopen $lib"
}

# The floor: what any client of this server pays for one run's worth of
# work, and nothing more. It connects over the socket as leaderrun's user,
# makes two durable commits (two autocommit UPDATEs of one row) and quits:
# a connect and two round trips, each with its commit, as an uncontended
# leaderrun run. Built against Connector/C as leaderrun is: dynamically
# (the Debian build's floor) and statically (the static build's), with
# the static build's musl and libraries where scripts/package static left
# them, else with Debian's static archives. The socket comes as its
# argument: run behind `env VAR=... floor`, the floor was charged an exec
# of `env` (1.1 ms of 3.6 here).
# shellcheck disable=SC2046 # mariadb_config's words
startup_floor_build() {
    cat >"$work/floor.c" <<'EOF'
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MYSQL *m = mysql_init(NULL);

	if (argc != 2) {
		fprintf(stderr, "usage: floor SOCKET\n");
		return 2;
	}
	if (!m || !mysql_real_connect(m, NULL, getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"), getenv("LR_DB_NAME"), 0,
				      argv[1], 0)) {
		fprintf(stderr, "floor: %s\n", m ? mysql_error(m) : "out of memory");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		if (mysql_query(m, "UPDATE bench_floor SET n = n + 1 WHERE id = 1") != 0) {
			fprintf(stderr, "floor: %s\n", mysql_error(m));
			return 1;
		}
	mysql_close(m);
	return 0;
}
EOF
    startup_floor_table "$LR_DB_SOCKET"
    # shellcheck disable=SC2046 # mariadb_config's words
    cc -O2 -o "$work/floor" "$work/floor.c" $(mariadb_config --cflags --libs) || die "the floor client did not build"
    # glibc's static start alone costs 0.6 ms more than musl's on this VM
    # (its CPUID probes trap), which would flatter the ratio to it.
    local sp=build-static/prefix
    if command -v musl-gcc >/dev/null && [[ -f $sp/lib/libmariadbclient.a ]] &&
        musl-gcc -O2 -static -idirafter build-static/kinc -I"$sp/include/mariadb" -o "$work/floor-static" \
            "$work/floor.c" "$sp/lib/libmariadbclient.a" "$sp/lib/libssl.a" "$sp/lib/libcrypto.a" -lpthread 2>/dev/null; then
        SU[floor_static_kind]=musl
    elif cc -O2 -static -o "$work/floor-static" "$work/floor.c" $(mariadb_config --cflags) \
        -L/usr/lib/x86_64-linux-gnu -l:libmariadb.a -l:libssl.a -l:libcrypto.a -l:libz.a -lpthread -ldl -lm \
        2>/dev/null; then
        SU[floor_static_kind]=glibc
    else
        rm -f "$work/floor-static"
    fi
    export LR_DB_USER LR_DB_PASSWORD LR_DB_NAME
}

# The floor's row, on the server of SOCKET.
startup_floor_table() { # startup_floor_table SOCKET
    mariadb --no-defaults -S "$1" -uroot "$LR_DB_NAME" -e "
        CREATE TABLE IF NOT EXISTS bench_floor (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB;
        INSERT IGNORE INTO bench_floor VALUES (1, 0);
        GRANT SELECT, UPDATE ON bench_floor TO '$LR_DB_USER'@'localhost'"
}

# One set of rounds against the server of DSN (socket SOCKET), into
# SU[KEY_NAME] (ms): true, flock, the floors, both builds and the dlopen
# floor.
startup_rounds() { # startup_rounds KEY DSN SOCKET
    local key=$1 dsn=$2 sock=$3 i
    local cmds=("$TRUE" "$FLOCK $work/flock.lock $TRUE" "$work/floor $sock"
        "$LR -d $dsn -n -l b -- $TRUE" "$LR --version")
    local names=(true flock floor dyn version)
    if [[ -x $work/floor-static ]]; then
        cmds+=("$work/floor-static $sock")
        names+=(floor_static)
    fi
    if [[ -n $static_bin ]]; then
        cmds+=("$static_bin -d $dsn -n -l b -- $TRUE" "$static_bin --version")
        names+=(static s_version)
    fi
    [[ -n ${dl-} ]] && cmds+=("$dl") && names+=(dlopen)
    "$LR" -d "$dsn" -n -l b -- "$TRUE" # the row exists before any timing
    hf_rounds_run "su_$key" "${cmds[@]}"
    for ((i = 0; i < ${#names[@]}; i++)); do
        SU[${key}_${names[i]}]=$(fmt "$(hf_median "su_$key" "${cmds[i]}")" 3)
    done
}

# N idle processes (sleeping, as a busy host's daemons mostly are), in a
# group of their own; startup_idle_stop kills them.
startup_idle_start() {
    local n=$1
    setsid sh -c "i=0; while [ \$i -lt $n ]; do sleep 100000 & i=\$((i + 1)); done; wait" &
    idle_leader=$!
    pids+=("$idle_leader")
    for ((i = 0; i < 300; i++)); do
        (($(pgrep -c -s "$idle_leader" sleep 2>/dev/null) >= n)) && break
        nap 0.1
    done
    ((i < 300)) || log "warning: only $(pgrep -c -s "$idle_leader" sleep) of $n idle processes started"
    startup_settle
}
# Until the session's processes are gone, then settled: thousands of exits
# after the kill, and the storm of their start before, are minutes of load
# average that would be counted as the runs' own.
startup_idle_stop() {
    local i left
    kill -- -"$idle_leader" 2>/dev/null || true
    wait "$idle_leader" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do
        left=$(pgrep -c -s "$idle_leader" 2>/dev/null || true) # 0, and fails, when none is left
        ((${left:-0} == 0)) && break
        nap 0.1
    done
    startup_settle
}
startup_settle() { nap 3; }

# The idle processes' cost, with and without them in turn, three times:
# the machine drifts more over the minutes of the rounds than that cost,
# and idle rounds run only after the others read the drift as theirs
# (1.10x and 1.12x so, 0.98x to 1.00x alternated by hand). Into
# SU[pair_quiet_NAME] and SU[pair_idle_NAME] (ms, pooled medians).
startup_idle_pairs() { # startup_idle_pairs DSN
    local dsn=$1 k i cmds=("$LR -d $1 -n -l b -- $TRUE") names=(dyn)
    if [[ -n $static_bin ]]; then
        cmds+=("$static_bin -d $dsn -n -l b -- $TRUE")
        names+=(static)
    fi
    for ((k = 1; k <= 3; k++)); do
        startup_hf "su_pq.$k" "${cmds[@]}"
        startup_idle_start 5000
        startup_hf "su_pi.$k" "${cmds[@]}"
        startup_idle_stop
    done
    for ((i = 0; i < ${#names[@]}; i++)); do
        SU[pair_quiet_${names[i]}]=$(fmt "$(hf_median su_pq "${cmds[i]}")" 3)
        SU[pair_idle_${names[i]}]=$(fmt "$(hf_median su_pi "${cmds[i]}")" 3)
    done
}
startup_hf() { # startup_hf TAG CMD...: one hyperfine round, five rounds' runs
    hyperfine -N --style none --warmup "$hf_warmup" --runs $((hf_runs * 5)) --export-json "$work/$1.json" \
        "${@:2}" >/dev/null 2>"$work/$1.err" || { cat "$work/$1.err" >&2; die "hyperfine failed"; }
}

bench_startup() {
    local t
    read -r dl dl_lib < <(startup_dlopen_floor) || true
    startup_floor_build
    disk_db_start
    startup_floor_table "$DISK_SOCK"
    log "9. startup: data on tmpfs ($work), $hf_rounds rounds x $hf_runs runs each"
    startup_rounds tmpfs "$SOCK_DSN" "$LR_DB_SOCKET"
    log "9. startup: data on disk ($DISK_DIR)"
    startup_rounds disk "$DISK_DSN" "$DISK_SOCK"
    log "9. startup: with 5,000 idle processes on the machine"
    startup_idle_start 5000
    startup_rounds idle "$DISK_DSN" "$DISK_SOCK"
    startup_idle_stop
    log "9. startup: with and without them, three times in turn"
    startup_idle_pairs "$DISK_DSN"
    disk_db_stop
    read -r 'SU[stmts]' 'SU[rt]' 'SU[list]' 'SU[hstmts]' 'SU[hconns]' < <(startup_round_trips "$LR")
    report_startup
}
declare -A SU

# ratio A B: A / B to two places.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# target R LIMIT: "R (<= LIMIT: met)".
target() { awk -v r="$1" -v l="$2" 'BEGIN { printf "%.2fx (target <= %.2fx: %s)", r, l, r <= l ? "met" : "NOT met" }'; }

report_startup() {
    local k c
    echo
    echo "## 9. A run beside its floor (issues 13 and 34)"
    echo
    echo "Medians (ms) of $((hf_rounds * hf_runs)) runs each, all commands in the same rounds; the floor connects and makes two durable commits, as a run does."
    echo
    echo "| command | data on tmpfs | data on disk | disk, 5,000 idle processes |"
    echo "|---|---|---|---|"
    for c in true:'`true`' flock:'`flock FILE true`' floor:'floor client, dynamic' floor_static:"floor client, static (${SU[floor_static_kind]-})" \
        dyn:'`leaderrun -n -- true`, Debian (dynamic) build' static:'`leaderrun -n -- true`, static build' \
        version:'`leaderrun --version`, dynamic' s_version:'`leaderrun --version`, static' dlopen:"a program that only dlopens ${dl_lib:-the client library}"; do
        k=${c%%:*}
        [[ -n ${SU[tmpfs_$k]-} ]] || continue
        echo "| ${c#*:} | ${SU[tmpfs_$k]} | ${SU[disk_$k]} | ${SU[idle_$k]} |"
    done
    echo
    local st_bin=static floor=floor_static
    [[ -n ${SU[disk_static]-} ]] || st_bin=dyn
    [[ -n ${SU[disk_floor_static]-} ]] || floor=floor
    echo "Targets, as ratios within the same rounds (data on disk):"
    echo
    echo "- \`-n -- true\` ($st_bin build) over the two-commit floor ($floor): $(target "$(ratio "${SU[disk_$st_bin]}" "${SU[disk_$floor]}")" 1.3); on tmpfs $(ratio "${SU[tmpfs_$st_bin]}" "${SU[tmpfs_$floor]}")x"
    echo "- \`-n -- true\` ($st_bin build) over \`true\`: $(target "$(ratio "${SU[disk_$st_bin]}" "${SU[disk_true]}")" 4); flock over \`true\`: $(ratio "${SU[disk_flock]}" "${SU[disk_true]}")x"
    # What no wrapper can go under: the floor's connect and commits plus
    # the command's own fork and exec.
    local bare
    bare=$(awk -v f="${SU[disk_$floor]}" -v t="${SU[disk_true]}" 'BEGIN { printf "%.3f", f + t }')
    echo "- a wrapper that added nothing but the command to the floor ($floor + \`true\`, ${bare} ms) would be $(ratio "$bare" "${SU[disk_$floor]}")x the floor and $(ratio "$bare" "${SU[disk_true]}")x \`true\`; leaderrun adds $(awk -v a="${SU[disk_$st_bin]}" -v b="$bare" 'BEGIN { printf "%.3f", a - b }') ms to that"
    if [[ -n ${SU[disk_static]-} && -n ${SU[disk_dlopen]-} ]]; then
        local libs
        libs=$(awk -v d="${SU[disk_dlopen]}" -v t="${SU[disk_true]}" 'BEGIN { printf "%.3f", d - t }')
        echo "- Debian build over (static build + loading its shared libraries, ${libs} ms: the dlopen program less \`true\`): $(target "$(awk -v a="${SU[disk_dyn]}" -v s="${SU[disk_static]}" -v l="$libs" 'BEGIN { print a / (s + l) }')" 1.3)"
    fi
    local b pairs=
    for b in static dyn; do
        [[ -n ${SU[pair_idle_$b]-} ]] || continue
        pairs+="${pairs:+; }$b build $(target "$(ratio "${SU[pair_idle_$b]}" "${SU[pair_quiet_$b]}")" 1.1) (${SU[pair_idle_$b]} against ${SU[pair_quiet_$b]} ms)"
    done
    echo "- with 5,000 idle processes over without, in turn three times ($((hf_runs * 15)) runs each way): $pairs; the table's column, measured once after the rest: $(ratio "${SU[idle_$st_bin]}" "${SU[disk_$st_bin]}")x ($st_bin build)"
    echo
    echo "Load average: $(cut -d' ' -f1-3 /proc/loadavg). Uncontended \`-n -- true\`: connect + ${SU[stmts]} statements in ${SU[rt]} round trips (${SU[list]//,/, }); the run history: ${SU[hstmts]} statement(s) of its own, ${SU[hconns]} connection(s) of its own."
}
