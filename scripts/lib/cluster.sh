# shellcheck shell=bash
# lib/cluster.sh - what scripts/sandbox-galera and scripts/sandbox-gr, the
# sandboxes of three servers, share on top of lib/mariadb.sh (which it
# sources). To cut one server off from the others with iptables, and to
# heal it: a chain of the sandbox's own (PROG-HASH, HASH from DIR's path, named in
# DIR/iptables-chain before it exists), jumped to from the top of INPUT for
# loopback packets (or from where CUT_HOOKS say), holding the DROP rules the
# caller computes; other sandboxes are untouched. A server directory under DIR that is cut off holds
# a `partitioned` marker, made before its rules and removed after them, so
# that `heal` and `stop` find them however far a partition got.
#
# Also what both say of their servers: which run (scan_servers), one
# server's state line (server_state), and whether the test database has
# replicated to them all (wait_provisioned).
#
# Sourced, not run; the caller sets PROG and SCRIPT_DIR first, as for
# lib/mariadb.sh, and defines scan (a scan_servers of its own servers).

# shellcheck source=lib/mariadb.sh
. "${BASH_SOURCE[0]%/*}/mariadb.sh"

sandbox_id() { # 8 hex digits from DIR's path
    local sum
    read -r sum _ < <(printf '%s' "$1" | cksum)
    printf '%08x' "$sum"
}

# The built-in chains and matches of the jumps, one a word list: INPUT sees
# every loopback packet. A rule that matches a socket's cgroup sees the
# sender's in OUTPUT, and the receiver's in INPUT (for an established TCP
# connection, which early demux finds before the INPUT hook).
CUT_HOOKS=("INPUT -i lo")

chain_name() { echo "$PROG-$(sandbox_id "$1")"; }

ipt() { iptables -w 5 "$@"; }

need_iptables() { # need_iptables WHAT
    ((EUID == 0)) || die "$1 needs root (iptables); run it as root"
    command -v iptables >/dev/null 2>&1 || die "$1 needs iptables (apt-get install iptables)"
    local err
    err=$(ipt -S INPUT 2>&1 >/dev/null) ||
        die "$1: iptables is unusable here: ${err%%$'\n'*}"
}

# remove_chain CHAIN: the jump from INPUT, then the chain (one step: the
# rules live only there).
remove_chain() {
    local chain=$1 hook
    for hook in "${CUT_HOOKS[@]}"; do
        # shellcheck disable=SC2086 # a hook is a word list
        while ipt -D $hook -j "$chain" 2>/dev/null; do :; done
    done
    if ipt -S "$chain" >/dev/null 2>&1; then
        ipt -F "$chain" && ipt -X "$chain" || return 1
    fi
}

# cut_off DIR SDIR RULES_FN N: mark SDIR partitioned and append the rules
# that RULES_FN DIR N prints (one line of iptables arguments after the
# chain's name each) to DIR's chain, made first if need be.
cut_off() {
    local dir=$1 sdir=$2 rules_fn=$3 n=$4 chain rule hook
    need_iptables partition
    [[ ! -f $sdir/partitioned ]] || die "$sdir is partitioned already"
    chain=$(chain_name "$dir")
    echo "$chain" >"$dir/iptables-chain" # before the chain exists: stop removes it
    if ! ipt -S "$chain" >/dev/null 2>&1; then
        ipt -N "$chain" || die "cannot create iptables chain $chain"
    fi
    for hook in "${CUT_HOOKS[@]}"; do
        # shellcheck disable=SC2086 # a hook is a word list
        ipt -C $hook -j "$chain" 2>/dev/null || ipt -I ${hook%% *} 1 ${hook#* } -j "$chain" ||
            die "cannot add the jump to $chain in ${hook%% *}"
    done
    : >"$sdir/partitioned" # before the rules: heal and stop find them
    while read -r rule; do
        # shellcheck disable=SC2086 # the rule is split into words on purpose
        ipt -A "$chain" $rule || die "iptables refused: -A $chain $rule"
    done < <("$rules_fn" "$dir" "$n")
}

# cut_heal DIR SDIR RULES_FN N: delete those rules, unmark SDIR, and remove
# the chain once no server directory of DIR is partitioned.
cut_heal() {
    local dir=$1 sdir=$2 rules_fn=$3 n=$4 chain rule
    need_iptables heal
    chain=$(chain_name "$dir")
    if [[ -f $sdir/partitioned ]]; then
        while read -r rule; do
            # shellcheck disable=SC2086
            while ipt -D "$chain" $rule 2>/dev/null; do :; done
        done < <("$rules_fn" "$dir" "$n")
        rm -f "$sdir/partitioned"
    fi
    if ! compgen -G "$dir/*/partitioned" >/dev/null; then
        remove_chain "$chain" || die "cannot remove iptables chain $chain"
        rm -f "$dir/iptables-chain"
    fi
}

# cut_forget DIR: at stop, the chain of DIR/iptables-chain, if any.
cut_forget() {
    local dir=$1 chain
    [[ -f $dir/iptables-chain ]] || return 0
    chain=$(<"$dir/iptables-chain")
    ((EUID == 0)) || die "$dir has iptables rules (chain $chain) that only root can remove; run stop as root"
    remove_chain "$chain" || die "cannot remove iptables chain $chain; $dir kept"
    rm -f "$dir/iptables-chain"
}

# cut_leftover DIR: at start, a chain of the same name can only be a
# leftover of an earlier sandbox in the same DIR.
cut_leftover() {
    if ((EUID == 0)) && command -v iptables >/dev/null 2>&1; then
        remove_chain "$(chain_name "$1")" 2>/dev/null || true
    fi
}

# scan_servers DIR PREFIX N...: set UP (the N whose server DIR/PREFIXN
# runs), PIDS ("P1 P2 P3", "-" for one that is down) and SIZE (those
# expected in the cluster's view: running and not partitioned).
scan_servers() {
    local dir=$1 prefix=$2 n pid pids=()
    shift 2
    UP=() SIZE=0
    for n; do
        if pid=$(server_pid "$dir/$prefix$n"); then
            UP+=("$n")
            [[ -f $dir/$prefix$n/partitioned ]] || SIZE=$((SIZE + 1))
        else
            pid=-
        fi
        pids+=("$pid")
    done
    # shellcheck disable=SC2034 # for the caller
    PIDS=${pids[*]}
}

# server_state SDIR LINE_FN ARGS...: "down" (no server process),
# "unresponsive" (LINE_FN ARGS failed: no answer), or the line that
# LINE_FN ARGS printed.
server_state() {
    local sdir=$1
    shift
    if ! server_pid "$sdir" >/dev/null; then
        echo down
    elif ! "$@"; then
        echo unresponsive
    fi
}

# wait_provisioned DIR PREFIX WHAT: the lease table and the test user have
# replicated to every running server DIR/PREFIXN (the caller's scan says
# which run); WHAT names one in the error ("node").
wait_provisioned() {
    local dir=$1 prefix=$2 n i got
    scan "$dir"
    for n in "${UP[@]}"; do
        for ((i = 0; ; i++)); do
            got=$(root_sql "$dir/$prefix$n" --connect-timeout=2 -N -e "SELECT
                (SELECT COUNT(*) FROM information_schema.TABLES
                 WHERE TABLE_SCHEMA = '$DB_NAME' AND TABLE_NAME = 'leaderrun_lease')
                + (SELECT COUNT(*) FROM mysql.user WHERE User = '$DB_USER')" 2>/dev/null) || got=
            [[ $got != "$((1 + ${#DB_HOSTS[@]}))" ]] || break
            ((i < 200)) || die "the test table or user did not replicate to $3 $n"
            sleep 0.05
        done
    done
}
