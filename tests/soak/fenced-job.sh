#!/bin/sh
# fenced-job.sh PORT DB PROBE ARGS...: the soak's job when it writes fenced
# rows (single server). It runs PROBE ARGS (tests/integration/probe.sh, the
# overlap checker, exec'd: its pid is the command's) and, in the same
# process group, a writer: one SQL session through PORT (the contender's
# proxy, so the soak's network faults hit it as they hit leaderrun), as the
# job's own account soakjob, running transaction after transaction:
#   CALL soak_write(lease, term)  START TRANSACTION, CALL leaderrun_fence
#                                 (lease, $LEADERRUN_TERM), INSERT a row of
#                                 the term; a 45000 refusal is recorded
#   (0 to 1.5 s with the transaction open: the faults land inside it)
#   CALL soak_commit()            stamps the row with the server's time and
#                                 commits in the same statement
# It logs when it began to began.log beside the probe's log. The procedures
# are the soak's (soak.c, fence_setup). The client stops at
# the first error (a refusal, a killed session) and the writer starts a new
# session; --skip-reconnect, or a reconnected client would run the rest of a
# transaction outside it.
port=$1 db=$2
shift 2
# When the command began, for the checker: by the real clock, which the
# probe's date is not under the clockrate fault (libfaketime, preloaded:
# contenders at 0.9x logged starts up to seconds early, and the checker took
# rows committed before them for stale commits). Logged after the exec, so
# never before the true start.
echo "began $LEADERRUN_TERM $(env -u LD_PRELOAD date +%s%N) $$" >>"$(dirname -- "$2")/began.log"

transactions() {
	seed=$$
	while :; do
		echo "CALL soak_write('$LEADERRUN_LEASE', $LEADERRUN_TERM);"
		seed=$(((seed * 1103515245 + 12345) % 2147483648))
		r=$((seed / 65536 % 16))
		sleep "$((r / 10)).$((r % 10))"
		echo "CALL soak_commit();"
		seed=$(((seed * 1103515245 + 12345) % 2147483648))
		sleep "0.$((seed / 65536 % 9 + 1))"
	done
}

writer() {
	# The probe's signals (the escape fault's) are not the writer's.
	trap '' USR1 USR2
	while :; do
		transactions | mariadb --no-defaults --skip-reconnect --protocol=TCP -h127.0.0.1 -P"$port" \
			-usoakjob -psoakjob "$db" >/dev/null 2>>"$(dirname -- "$2")/writer.err"
		sleep 0.2
	done
}

writer "$@" &
exec "$@"
