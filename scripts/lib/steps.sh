# shellcheck shell=bash
# lib/steps.sh - one line per set-up step, for scripts/demo, scripts/test and
# scripts/install-deps: "installing 9 packages… done in 41 s". What the
# step's command prints (apt, meson, ninja) goes to a log instead of the
# terminal; a step that fails prints the log's path and its last lines.
# (Issue 26: a fresh `scripts/demo` printed 553 lines of apt before its own.)
#
# Sourced, not run; the caller has `set -euo pipefail`.
#
#   steps_log LOG       use LOG (created or emptied) for the steps' output
#   steps_begin         else: $LEADERRUN_SETUP_LOG if set (a parent script's
#                       log: appended to), or a temporary file that
#                       steps_end removes (step calls it when needed)
#   step LABEL CMD...   run CMD; returns CMD's exit status
#   steps_end           remove the temporary log (only after success: a
#                       failed step's log stays for the user to read)
#   build_tree DIR [MESON SETUP ARGS...]
#                       `meson setup` DIR (--reconfigure when it has been
#                       set up before) and `ninja -C DIR`: a step's command
#
# LEADERRUN_VERBOSE=1 (scripts/demo -v, scripts/test -v) lets every step's
# output through to the terminal as it comes, and nothing is logged.
# The log path is exported as LEADERRUN_SETUP_LOG so that a child script's
# steps (scripts/install-deps under scripts/demo) add to the same log.
# Progress goes to stderr: stdout belongs to the demo and the test results.

STEP_LOG=
STEP_LOG_TEMP=0
# "…" only where the terminal is told to expect UTF-8; "..." otherwise.
STEP_DOTS=...
if [[ ${LC_ALL:-${LC_CTYPE:-${LANG-}}} == *[Uu][Tt][Ff]?8* ]]; then STEP_DOTS=…; fi

steps_verbose() { [[ ${LEADERRUN_VERBOSE-} == 1 ]]; }

steps_log() {
    STEP_LOG=$1
    # Absolute: the path is printed for a user who may be elsewhere.
    [[ $STEP_LOG == /* ]] || STEP_LOG=$PWD/$STEP_LOG
    mkdir -p -- "$(dirname -- "$STEP_LOG")"
    : >"$STEP_LOG"
    export LEADERRUN_SETUP_LOG=$STEP_LOG
}

steps_begin() {
    if [[ -n ${LEADERRUN_SETUP_LOG-} ]]; then
        STEP_LOG=$LEADERRUN_SETUP_LOG
    else
        STEP_LOG=$(mktemp "${TMPDIR:-/tmp}/leaderrun-setup.XXXXXX.log")
        STEP_LOG_TEMP=1
    fi
    export LEADERRUN_SETUP_LOG=$STEP_LOG
}

steps_end() {
    if ((STEP_LOG_TEMP)); then rm -f -- "$STEP_LOG"; fi
}

# Whole seconds from the microsecond clock ($EPOCHREALTIME; its decimal
# mark follows the locale), rounded.
steps_now_us() { echo "${EPOCHREALTIME/[.,]/}"; }
steps_secs() { echo $((($(steps_now_us) - $1 + 500000) / 1000000)); }

step() {
    local label=$1 t0 start rc=0
    shift
    t0=$(steps_now_us)
    if steps_verbose; then
        echo "$label$STEP_DOTS" >&2
        "$@" || rc=$?
        if ((rc == 0)); then
            echo "$label: done in $(steps_secs "$t0") s" >&2
        else
            echo "$label: failed after $(steps_secs "$t0") s (exit $rc)" >&2
        fi
        return "$rc"
    fi
    [[ -n $STEP_LOG ]] || steps_begin
    printf '%s%s ' "$label" "$STEP_DOTS" >&2
    start=$(stat -c %s -- "$STEP_LOG" 2>/dev/null || echo 0) # this step's part starts here
    printf '\n== %s (%s)\n$ %s\n' "$label" "$(date '+%F %T')" "$*" >>"$STEP_LOG"
    # A sudo password prompt still reaches the terminal: sudo asks on /dev/tty.
    "$@" </dev/null >>"$STEP_LOG" 2>&1 || rc=$?
    if ((rc == 0)); then
        echo "done in $(steps_secs "$t0") s" >&2
        return 0
    fi
    echo "== exit status $rc" >>"$STEP_LOG"
    {
        echo "failed after $(steps_secs "$t0") s (exit $rc); see $STEP_LOG"
        echo "---- its last lines:"
        tail -c +$((start + 1)) -- "$STEP_LOG" | tail -n 20
        echo "----"
    } >&2
    return "$rc"
}

# A function run by step: set -e does not apply inside it (step runs it
# in an `||` list), hence the explicit `|| return`.
build_tree() {
    local dir=$1
    shift
    if [[ -f $dir/build.ninja ]]; then
        meson setup --reconfigure "$dir" "$@" || return
    else
        meson setup "$dir" "$@" || return
    fi
    ninja -C "$dir"
}
