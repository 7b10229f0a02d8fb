#!/bin/sh
# sched-job.sh DIR SECONDS: the scheduled soak's job (tests/soak/schedule.c).
# It takes two exclusive flocks, held for as long as any process of the job
# lives (its sleep inherits them):
#   DIR/all.lock       found held: two runs at once, of any slots
#   DIR/slot-S.lock    S = $LEADERRUN_SCHEDULED: two attempts of one slot
#                      at once
# and logs to DIR/jobs.log (NS: the wall clock, ns; PID: the command's,
# the leader of its process group):
#   start S ATTEMPT TERM NS PID   when it got both locks
#   end S ATTEMPT TERM NS PID     when it reached its own end, SECONDS later
#   violation WHAT S ATTEMPT TERM NS PID   WHAT: all or slot; then exits 99
dir=$1 secs=$2
log=$dir/jobs.log
s=${LEADERRUN_SCHEDULED:-?} a=${LEADERRUN_ATTEMPT:-?} t=${LEADERRUN_TERM:-?}
bad=0
exec 8>>"$dir/all.lock"
if ! flock -n 8; then
	echo "violation all $s $a $t $(date +%s%N) $$" >>"$log"
	bad=1
fi
exec 9>>"$dir/slot-$s.lock"
if ! flock -n 9; then
	echo "violation slot $s $a $t $(date +%s%N) $$" >>"$log"
	bad=1
fi
[ "$bad" = 0 ] || exit 99
echo "start $s $a $t $(date +%s%N) $$" >>"$log"
sleep "$secs"
echo "end $s $a $t $(date +%s%N) $$" >>"$log"
