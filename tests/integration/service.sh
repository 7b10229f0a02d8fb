#!/bin/sh
# service.sh LOG LOCK DIR [STATUS]: a --service's stand-in, for the overlap
# checker. It runs on every instance; it leads only between SIGUSR1 (sent by
# its --on-promote, see PROMOTE below) and SIGUSR2 (its --on-demote), and
# logs to LOG in probe.sh's format:
#   start TERM NS PID      it began to lead (it took the exclusive flock on LOCK)
#   stop TERM NS PID       it stopped leading (and let go of the lock)
#   violation TERM NS PID  another instance still led: two at once
# The lock is on the service's own descriptor, which its sleeps do not
# inherit: a service killed while it leads lets go of it as it dies, as
# its leader's work ends with it. DIR/term.PID (written by the promote)
# holds the term it leads for; DIR/led.PID exists while it leads;
# DIR/service.PID holds "PID LEADERRUN_PID". SIGTERM: exit STATUS (0).
#
#   PROMOTE='service.sh worker LOG DIR $LEADERRUN_TERM &
#            echo $LEADERRUN_TERM > DIR/term.$LEADERRUN_SERVICE_PID;
#            kill -USR1 $LEADERRUN_SERVICE_PID;
#            while [ ! -e DIR/led.$LEADERRUN_SERVICE_PID ]; do sleep 0.01; done'
#   DEMOTE='kill -USR2 $LEADERRUN_SERVICE_PID;
#           while [ -e DIR/led.$LEADERRUN_SERVICE_PID ]; do sleep 0.01; done'
#
# service.sh worker LOG DIR TERM: the leader's work beside the service, as a
# real promote starts it (`start-leader-work && { worker & }`): PROMOTE runs
# it in the background, in the promote's process group, and it lives until
# it is killed, which must be by its term's end. It starts by logging
# "violation TERM NS PID" to LOG when another term's worker still lives
# (DIR/worker.PID holds each one's term; a zombie is dead), then logs
# "work TERM NS PID" to DIR/work.log every 20 ms: the soak checks that no
# line of a term is stamped after a newer term's start.
if [ "$1" = worker ]; then
	log=$2 dir=$3 term=$4
	for f in "$dir"/worker.*; do
		[ -e "$f" ] || continue
		p=${f##*.}
		if [ -r "/proc/$p/status" ] && ! grep -q '^State:.Z' "/proc/$p/status" &&
			grep -qa worker "/proc/$p/cmdline"; then
			echo "violation $term $(date +%s%N) $$ worker $p of term $(cat "$f") alive" >>"$log"
		else
			rm -f "$f"
		fi
	done
	echo "$term" >"$dir/worker.$$"
	while :; do
		echo "work $term $(date +%s%N) $$" >>"$dir/work.log"
		sleep 0.02
	done
fi
log=$1 lock=$2 dir=$3 rc=${4:-0}
exec 9>>"$lock"
echo "$$ $PPID" >"$dir/service.$$"
term=?
lead() {
	term=$(cat "$dir/term.$$")
	if flock -n 9; then
		echo "start $term $(date +%s%N) $$" >>"$log"
	else
		echo "violation $term $(date +%s%N) $$" >>"$log"
	fi
	: >"$dir/led.$$"
}
unlead() {
	echo "stop $term $(date +%s%N) $$" >>"$log"
	flock -u 9
	rm -f "$dir/led.$$"
}
trap lead USR1
trap unlead USR2
trap 'exit $rc' TERM
while :; do
	sleep 0.02 9>&-
done
