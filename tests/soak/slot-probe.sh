#!/bin/sh
# slot-probe.sh DIR SLOTS SECONDS: the overlap checker's job under --slots
# (the soak's -S). Like tests/integration/probe.sh it holds exclusive flocks
# for as long as any process of the job lives (its sleep inherits them), two
# of them:
#   DIR/slot-K.lock  K = $LEADERRUN_SLOT: found held, two jobs ran in one
#                    slot at once
#   DIR/seat-J.lock  the first free of SLOTS seats, tried from 0 up: none
#                    free, more than SLOTS jobs ran at once. The seats do not
#                    trust LEADERRUN_SLOT: a wrong slot number cannot hide an
#                    extra job from them.
# and logs to DIR/probe.log:
#   start TERM NS PID SLOT SEAT      when it got both locks
#   stop TERM NS PID SLOT SEAT       when it finished normally
#   violation TERM NS PID WHAT SLOT  WHAT: slot (its slot's lock was held),
#                                    seats (every seat was held) or range
#                                    (LEADERRUN_SLOT not in 0..SLOTS-1)
# and exits 99 after a violation.
dir=$1 slots=$2 secs=$3
log=$dir/probe.log
slot=${LEADERRUN_SLOT:-?} term=${LEADERRUN_TERM:-?}
bad=0
violation() {
	echo "violation $term $(date +%s%N) $$ $1 $slot" >>"$log"
	bad=1
}
case $slot in
'' | *[!0-9]*) violation range ;;
*) [ "$slot" -lt "$slots" ] || violation range ;;
esac
exec 9>>"$dir/slot-$slot.lock"
flock -n 9 || violation slot
seat=0
while :; do
	if [ "$seat" -ge "$slots" ]; then
		exec 8>&-
		violation seats
		break
	fi
	exec 8>>"$dir/seat-$seat.lock"
	flock -n 8 && break
	seat=$((seat + 1))
done
[ "$bad" = 0 ] || exit 99
echo "start $term $(date +%s%N) $$ $slot $seat" >>"$log"
sleep "$secs"
echo "stop $term $(date +%s%N) $$ $slot $seat" >>"$log"
