#!/bin/sh
# probe.sh LOG LOCK SECONDS [EXIT]: the overlap checker's job.
# Holds an exclusive flock on LOCK for SECONDS (inherited by its sleep, so the
# lock lasts as long as any process of the job), and logs to LOG:
#   start TERM NS PID  when it got the lock
#   stop TERM NS PID   when it finished normally
#   violation TERM NS PID  when another job still held the lock: two ran at once
log=$1 lock=$2 secs=$3 rc=${4:-0}
exec 9>>"$lock"
if ! flock -n 9; then
	echo "violation ${LEADERRUN_TERM:-?} $(date +%s%N) $$" >>"$log"
	exit 99
fi
echo "start ${LEADERRUN_TERM:-?} $(date +%s%N) $$" >>"$log"
sleep "$secs"
echo "stop ${LEADERRUN_TERM:-?} $(date +%s%N) $$" >>"$log"
exit "$rc"
