#!/bin/sh
# probe.sh LOG LOCK SECONDS [EXIT]: the overlap checker's job.
# Holds an exclusive flock on LOCK for SECONDS (inherited by its sleep, so the
# lock lasts as long as any process of the job), and logs to LOG:
#   start TERM NS PID  when it got the lock
#   stop TERM NS PID   when it finished normally
#   violation TERM NS PID  when another job still held the lock: two ran at once
#   escaped TERM NS PID    when it left an escaper behind (below)
# SIGUSR1 (forwarded by leaderrun) makes it leave an escaper: a process that
# leaves the job's process group (setsid), ignores SIGTERM, and keeps the
# lock, with a child of its own that keeps it too, so that any of them alive
# when the next job starts is a violation. SIGUSR2 does the same, then the
# job exits 0: the escaper outlives the command (the soak's escape fault).
log=$1 lock=$2 secs=$3 rc=${4:-0}
exec 9>>"$lock"
if ! flock -n 9; then
	echo "violation ${LEADERRUN_TERM:-?} $(date +%s%N) $$" >>"$log"
	exit 99
fi
echo "start ${LEADERRUN_TERM:-?} $(date +%s%N) $$" >>"$log"
escape() {
	setsid sh -c 'trap "" TERM; sleep 3600 & wait' &
	echo "escaped ${LEADERRUN_TERM:-?} $(date +%s%N) $!" >>"$log"
}
# The sleep ignores them (ignored dispositions survive fork and exec): the
# signal is the job's, not a way to end it.
trap '' USR1 USR2
sleep "$secs" &
job=$!
trap 'escape' USR1
trap 'escape; exit 0' USR2
# wait returns early for a trapped signal: wait again while the sleep runs.
while kill -0 "$job" 2>/dev/null; do
	wait "$job"
done
echo "stop ${LEADERRUN_TERM:-?} $(date +%s%N) $$" >>"$log"
exit "$rc"
