#!/usr/bin/env bash
# dst - `leaderrun --schedule SPEC --schedule-tz ZONE --next N --from TIME`
# around the 2027 daylight saving changes, checked by hand against cronie's
# rule (cron.c, cases 2 and 3 of its main loop): a job whose minute or
# hour field begins with '*' runs by the clock (a skipped time does not
# run, a repeated one runs twice); any other job runs the times a spring
# change skips once, at the change, and a repeated time once, the first
# time. croniter is no reference here (it runs twice on a Berlin spring
# day). Europe/Berlin: 28 March 01:00 UTC (02:00 CET -> 03:00 CEST),
# 31 October 01:00 UTC (03:00 CEST -> 02:00 CET). America/New_York:
# 14 March 07:00 UTC (02:00 EST -> 03:00 EDT), 7 November 06:00 UTC
# (02:00 EDT -> 01:00 EST).
#
# Usage: tests/unit/dst.sh LEADERRUN
set -euo pipefail

bin=$1
[[ -f /usr/share/zoneinfo/Europe/Berlin && -f /usr/share/zoneinfo/America/New_York ]] ||
    { echo "SKIP: no zoneinfo (apt-get install tzdata)"; exit 77; }
failed=0 passed=0

# expect WHAT ZONE SPEC FROM SLOT...: the next slots after FROM are SLOT...
expect() {
    local what=$1 zone=$2 spec=$3 from=$4 got want
    shift 4
    want=$(printf '%s\n' "$@")
    got=$("$bin" --schedule "$spec" --schedule-tz "$zone" --next $# --from "$from" 2>&1) || true
    if [[ $got == "$want" ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $what: '$spec' in $zone after $from:"
        diff <(echo "$want") <(echo "$got") | sed 's/^/    /' || true
    fi
}

# Berlin, spring.
expect "a skipped fixed time runs at the change" Europe/Berlin '30 2 * * *' 2027-03-27T00:00:00Z \
    2027-03-27T01:30:00Z 2027-03-28T01:00:00Z 2027-03-29T00:30:00Z
expect "two skipped fixed times make one run" Europe/Berlin '0,30 2 * * *' 2027-03-28T00:00:00Z \
    2027-03-28T01:00:00Z 2027-03-29T00:00:00Z 2027-03-29T00:30:00Z
expect "an hourly job skips the hour that never comes" Europe/Berlin '0 * * * *' 2027-03-27T23:30:00Z \
    2027-03-28T00:00:00Z 2027-03-28T01:00:00Z 2027-03-28T02:00:00Z
expect "a quarter-hourly job goes on by the clock" Europe/Berlin '*/15 * * * *' 2027-03-28T00:40:00Z \
    2027-03-28T00:45:00Z 2027-03-28T01:00:00Z 2027-03-28T01:15:00Z
# Berlin, autumn.
expect "a repeated fixed time runs once, the first time" Europe/Berlin '30 2 * * *' 2027-10-30T00:00:00Z \
    2027-10-30T00:30:00Z 2027-10-31T00:30:00Z 2027-11-01T01:30:00Z
expect "an hourly job runs the repeated hour twice" Europe/Berlin '0 * * * *' 2027-10-30T23:30:00Z \
    2027-10-31T00:00:00Z 2027-10-31T01:00:00Z 2027-10-31T02:00:00Z
expect "a quarter-hourly job runs through both passes" Europe/Berlin '*/15 * * * *' 2027-10-31T00:40:00Z \
    2027-10-31T00:45:00Z 2027-10-31T01:00:00Z 2027-10-31T01:15:00Z 2027-10-31T01:30:00Z \
    2027-10-31T01:45:00Z 2027-10-31T02:00:00Z
# New York, spring.
expect "a skipped fixed time runs at the change" America/New_York '30 2 * * *' 2027-03-13T12:00:00Z \
    2027-03-14T07:00:00Z 2027-03-15T06:30:00Z 2027-03-16T06:30:00Z
expect "an hourly job skips 02:00" America/New_York '0 * * * *' 2027-03-14T05:30:00Z \
    2027-03-14T06:00:00Z 2027-03-14T07:00:00Z 2027-03-14T08:00:00Z
expect "a quarter-hourly job goes on by the clock" America/New_York '*/15 * * * *' 2027-03-14T06:40:00Z \
    2027-03-14T06:45:00Z 2027-03-14T07:00:00Z 2027-03-14T07:15:00Z
# New York, autumn: 01:00-01:59 comes twice.
expect "a repeated 01:30 runs once, the first time" America/New_York '30 1 * * *' 2027-11-06T12:00:00Z \
    2027-11-07T05:30:00Z 2027-11-08T06:30:00Z
expect "02:30 is not repeated there" America/New_York '30 2 * * *' 2027-11-06T12:00:00Z \
    2027-11-07T07:30:00Z 2027-11-08T07:30:00Z
expect "an hourly job runs 01:00 twice" America/New_York '0 * * * *' 2027-11-07T04:30:00Z \
    2027-11-07T05:00:00Z 2027-11-07T06:00:00Z 2027-11-07T07:00:00Z
expect "a quarter-hourly job runs through both passes" America/New_York '*/15 * * * *' 2027-11-07T05:40:00Z \
    2027-11-07T05:45:00Z 2027-11-07T06:00:00Z 2027-11-07T06:15:00Z
# @every ignores the zone.
expect "@every counts in UTC" Europe/Berlin '@every 1h' 2027-03-28T00:30:00Z \
    2027-03-28T01:00:00Z 2027-03-28T02:00:00Z

# The process's own TZ changes nothing: SPEC is read in --schedule-tz.
got=$(TZ=Asia/Tokyo "$bin" --schedule '30 2 * * *' --next 1 --from 2027-03-27T00:00:00Z)
if [[ $got == 2027-03-27T02:30:00Z ]]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: with TZ=Asia/Tokyo, '30 2 * * *' in UTC gave $got"; fi

# --next needs no database and makes no connection, whatever DSN is set.
# LeakSanitizer cannot run under ptrace: the memory gate's build runs here
# too, with its leak check off for this one traced run.
if command -v strace >/dev/null; then
    rc=0
    trace=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" LEADERRUN_DSN=mysql://u:pw@127.0.0.1:1/db \
        strace -f -e trace=connect,socket -o /dev/stdout \
        "$bin" --schedule '@daily' --schedule-tz Europe/Berlin --next 2 --from 2027-03-27T00:00:00Z 2>&1 >/dev/null) ||
        rc=$?
    if ((rc == 0)) && ! grep -qE 'connect\(|socket\(' <<<"$trace"; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: --next under strace (exit $rc): $trace"; fi
fi

echo "dst: $passed passed, $failed failed"
((failed == 0))
