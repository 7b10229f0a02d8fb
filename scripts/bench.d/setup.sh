# bench.d/setup.sh - what every section of scripts/bench stands on:
# packages, the release build, the work dir and its cleanup, process,
# timing and statistics helpers.
# Sourced by scripts/bench.

# `install-deps bench` has what every section needs (the Galera section's
# too); etcd only with --etcd.
started_at=$(date +%s)
scripts/install-deps bench
((etcd || fleet_only)) && scripts/install-deps etcd

# ------------------------------------------------------------------ build

builddir=build-bench
log "building $builddir (release)"
if [[ -f $builddir/build.ninja ]]; then
    meson setup --reconfigure "$builddir" --buildtype=release >/dev/null
else
    meson setup "$builddir" --buildtype=release >/dev/null
fi
ninja -C "$builddir" leaderrun >/dev/null || die "build failed in $builddir"
LR=$PWD/$builddir/leaderrun
lr_version=$("$LR" --version)
# Followers woken by a GET_LOCK hint, if this build has them: then the
# polling follower (--no-wake-hint) is measured beside it as a baseline.
wake_hint=0
[[ $("$LR" --help 2>&1) == *--no-wake-hint* ]] && wake_hint=1
git_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain -- src meson.build 2>/dev/null) ]]; then
    git_rev+=" + uncommitted changes in src/"
fi

# ------------------------------------------------------------------ work dir and cleanup

# The databases live on tmpfs when there is one: fsync is then free, and the
# figures are leaderrun's own cost plus loopback round trips, not this
# machine's disk. (On disk each durable commit adds the disk's fsync time.)
base=/tmp
[[ -d /dev/shm && -w /dev/shm ]] && base=/dev/shm
work=$(mktemp -d "$base/lrbench.XXXXXX")
export BENCH_WORK=$work

pids=()       # every background process started here, killed by id at exit
etcd_pid=
db_started=0
galera_started=0
gdir=$work/g # the Galera cluster: short, the sockets must fit in 107 bytes
faked_pid=   # the Galera node run under libfaketime

# libfaketime in a server leaves /dev/shm/faketime_shm_PID and
# sem.faketime_sem_PID behind (mariadbd exits without running its
# destructors): remove those of our faked node once it is gone.
drop_faketime_shm() {
    [[ -n $faked_pid ]] || return 0
    alive "$faked_pid" && return 0
    rm -f "/dev/shm/faketime_shm_$faked_pid" "/dev/shm/sem.faketime_sem_$faked_pid"
    faked_pid=
}

proc_state() { # one letter from /proc/PID/stat, X when there is no such process
    local s
    { s=$(<"/proc/$1/stat"); } 2>/dev/null || { echo X; return; }
    s=${s##*) }
    echo "${s%% *}"
}
alive() { [[ $(proc_state "$1") != [ZX] ]]; }

# ours PID: PID is still the process that was started as it (its start
# time, field 22 of /proc/PID/stat, is the one recorded in pid_start): the
# hundreds of waiters' ids are free again by the end, and another user's
# process may have one of them now.
declare -A pid_start=()
start_of() { # start_of PID: its start time into REPLY (empty when gone)
    local s a
    REPLY=
    { s=$(<"/proc/$1/stat"); } 2>/dev/null || return 0
    s=${s##*) }
    read -ra a <<<"$s"
    REPLY=${a[19]}
}
own() { start_of "$1"; pid_start[$1]=$REPLY; }
ours() { [[ -n ${pid_start[$1]-} ]] && start_of "$1" && [[ $REPLY == "${pid_start[$1]}" ]] && alive "$1"; }

cleanup() {
    # The run's own status is the bench's; nothing here may change it (under
    # set -e any failing command in a trap would end the shell with 1).
    local rc=$? pid f
    set +e
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do
        if ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    # Commands that record their own pid (*.cmdpid): an etcdctl killed by
    # SIGKILL leaves its command running. Only a sleep or sh by that id
    # that started after this bench did is taken for ours: an id that
    # another user's or test's process reuses, started before, is left be.
    start_of "$$"
    local since=$REPLY
    for f in "$work"/*.cmdpid; do
        [[ -s $f ]] || continue
        pid=$(<"$f")
        alive "$pid" && start_of "$pid" && [[ -n $REPLY && -n $since ]] && ((REPLY >= since)) || continue
        [[ $(<"/proc/$pid/comm") == @(sleep|sh) ]] 2>/dev/null && { kill -KILL "$pid" 2>/dev/null || true; }
    done
    if [[ -n $etcd_pid ]] && ours "$etcd_pid"; then kill -KILL "$etcd_pid" 2>/dev/null || true; fi
    ((galera_started)) && { scripts/sandbox-galera stop "$gdir" >/dev/null 2>&1 || true; }
    drop_faketime_shm
    ((db_started)) && scripts/sandbox-db stop "$work/db" >/dev/null 2>&1
    [[ $(type -t disk_db_stop) == function ]] && disk_db_stop
    rm -rf -- "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# spawn CMD...: start CMD in the background; its pid in $last_pid. Disowned,
# so that bash reports no "Killed" for the holders that are SIGKILLed on
# purpose; bash still reaps it, and `reap` waits by polling.
spawn() {
    "$@" &
    last_pid=$!
    pids+=("$last_pid")
    own "$last_pid"
    disown "$last_pid"
}

# nap SECONDS: sleep without a fork (a read that times out on a fifo that
# nobody writes), so that the script's polling loops stay off the CPU.
mkfifo "$work/nap.fifo"
exec {nap_fd}<>"$work/nap.fifo"
nap() { read -r -t "$1" -u "$nap_fd" _ || true; }

wait_gone() { # wait_gone SECONDS PID...: true when all are gone in time
    local deadline=$((SECONDS + $1)) pid
    shift
    for pid; do
        while alive "$pid"; do
            ((SECONDS < deadline)) || return 1
            nap 0.02
        done
    done
}

reap() { # reap PID...: wait (up to 30 s) until they are gone
    wait_gone 30 "$@" || log "warning: process(es) $* still running after 30 s"
}

stop_pids() { # stop_pids SIGNAL PID...: signal, wait 10 s, then SIGKILL; reap
    local sig=$1 pid
    shift
    for pid; do kill "-$sig" "$pid" 2>/dev/null || true; done
    if ! wait_gone 10 "$@"; then
        for pid; do kill -KILL "$pid" 2>/dev/null || true; done
        reap "$@"
    fi
}

wait_file() { # wait_file SECONDS FILE: until FILE is non-empty
    local deadline=$((SECONDS + $1))
    while [[ ! -s $2 ]]; do
        ((SECONDS < deadline)) || return 1
        nap 0.01
    done
}

now_ns() { local t=${EPOCHREALTIME//[!0-9]/}; echo "${t}000"; }

rand_ms() { echo $((SRANDOM % $1)); } # 0 .. $1-1

ms_to_s() { awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }'; }

# stats [P]: numbers on stdin, one per line -> "n median pP min max" (P:
# a percentile, 95 unless given; nearest rank)
stats() {
    sort -g | awk -v p="${1:-95}" '{ a[NR] = $1 } END {
        n = NR
        if (!n) { print "0 - - - -"; exit }
        med = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        r = int(p / 100 * n); if (r < p / 100 * n) r++
        printf "%d %s %s %s %s\n", n, med, a[r], a[1], a[n] }'
}

bench_logs() { python3 "$BENCH_D/logs.py" "$@"; } # figures from the logs: see there

# trace_renews FILE PID: strace the sendto and recvfrom calls of PID (a
# holder) into FILE, in the background until `stop_trace`; for
# `bench_logs rtts FILE`.
trace_renews() {
    spawn strace -f -qq -ttt -T -e trace=sendto,recvfrom -o "$1" -p "$2" 2>/dev/null
    trace_pid=$last_pid
}
stop_trace() {
    kill -INT "$trace_pid" 2>/dev/null || true
    reap "$trace_pid"
}

fmt() { awk -v v="$1" -v d="${2:-1}" 'BEGIN { printf "%.*f", d, v }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }


# Report cells.
ms() { fmt "$1" 2; }
over() { # over A B: "A ms (+D ms, R x)" of A over baseline B
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f ms (%+.2f ms, %.2fx)", a, a - b, a / b }'
}
e() { if ((etcd)); then printf '%s' "$1"; else printf '%s' "$na"; fi; } # an etcdctl cell
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }    # sub A B: A - B, ms
mega() { awk -v v="$1" -v d="${2:-2}" 'BEGIN { printf "%.*f M", d, v / 1e6 }'; }
