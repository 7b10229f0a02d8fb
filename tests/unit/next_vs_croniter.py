#!/usr/bin/python3
# next_vs_croniter - `leaderrun --schedule SPEC --next 5 --from T` against
# Debian's python3-croniter, an implementation written apart from
# leaderrun's, on random SPECs (every field kind: '*', values, names in any
# case, lists, ranges, steps, N/S, Sunday as 7; the @ names) and random
# times from 1971 to 2099, in UTC and in Europe/Berlin and America/New_York
# away from their daylight saving changes: a case whose zone changes its
# offset between a day before T and a day after its last slot is skipped
# (croniter does not follow cronie at a change, and is an hour off across
# one; tests/unit/dst.sh checks the changes by hand).
#
# Where cron and croniter read a day field differently, leaderrun(1)'s
# SCHEDULES lists it, and the case asserts the documented difference
# instead of croniter's own answer: a day field led by '*' that is not
# every day is unrestricted in cron, so both day fields must match
# (croniter's day_or=False); one that is
# every day without '*' (1-31, 0-6) is restricted in cron, so either
# matches: every day. Two disagreements are kept, croniter's bugs (also
# listed there): after February, a day field naming 29-31 makes it skip
# 1 March; and with both day fields restricted, a day of the month that
# no month named has (31 in September) makes it find no date at all.
#
# Usage: tests/unit/next_vs_croniter.py LEADERRUN [CASES]  (seed: $CRONITER_SEED,
# default 49). Exits 77 (skipped) without croniter.
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

try:
    from croniter import croniter, CroniterBadDateError
    from zoneinfo import ZoneInfo
except ImportError:
    print("SKIP: python3-croniter missing (apt-get install python3-croniter)")
    sys.exit(77)

MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
# field: (low, high, names)
FIELDS = [(0, 59, None), (0, 23, None), (1, 31, None), (1, 12, MONTHS), (0, 7, DAYS)]


def value(rng, f, v):
    low, high, names = FIELDS[f]
    if names and v - low < len(names) and rng.random() < 0.4:
        name = names[v - low]
        return rng.choice([name, name.upper(), name.capitalize()])
    return str(v)


def item(rng, f):
    low, high, _ = FIELDS[f]
    kind = rng.choice(["value", "value", "range", "range_step", "from_step", "star_step"])
    a = rng.randint(low, high)
    b = rng.randint(a, high)
    step = rng.randint(1, max(2, (high - low) // 2))
    if kind == "value":
        return value(rng, f, a)
    if kind == "range":
        return value(rng, f, a) + "-" + value(rng, f, b)
    if kind == "range_step":
        return value(rng, f, a) + "-" + value(rng, f, b) + "/" + str(step)
    if kind == "from_step":
        return value(rng, f, a) + "/" + str(step)
    return "*/" + str(step)


def field(rng, f):
    r = rng.random()
    if r < 0.35:
        return "*"
    items = [item(rng, f) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    return ",".join(items)


def values(text, f):
    """The set a field names, as cron reads it (Sunday 7 folded into 0)."""
    low, high, names = FIELDS[f]
    out = set()
    for it in text.split(","):
        rng_part, _, step = it.partition("/")
        step = int(step) if step else 1
        if rng_part == "*":
            a, b = low, high
        else:
            a_s, dash, b_s = rng_part.partition("-")
            conv = lambda s: names.index(s.lower()) + low if names and not s.isdigit() else int(s)
            a = conv(a_s)
            b = conv(b_s) if dash else (high if step > 1 or "/" in it else a)
        out.update(range(a, b + 1, step))
    if f == 4:
        out = {0 if v == 7 else v for v in out}
    return out


def croniter_slots(spec, start, n, day_or):
    it = croniter(spec, start, day_or=day_or)
    return [it.get_next(datetime).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") for _ in range(n)]


def expected(spec, start, n):
    """croniter's slots, read with cron's day rule; and which rule applied."""
    if spec.startswith("@"):
        return croniter_slots(spec, start, n, True), "same"
    f = spec.split()
    dom_star, dow_star = f[2].startswith("*"), f[4].startswith("*")
    dom_full, dow_full = len(values(f[2], 2)) == 31, len(values(f[4], 4)) == 7
    cron_or, croniter_or = not dom_star and not dow_star, not dom_full and not dow_full
    if cron_or == croniter_or:
        return croniter_slots(spec, start, n, True), "same"
    if not cron_or:
        return croniter_slots(spec, start, n, False), "star"
    f[2] = f[4] = "*"
    return croniter_slots(" ".join(f), start, n, True), "full"


def near_change(zone, start, iso_slots):
    """Whether the zone's offset changes between a day before START and a
    day after the last slot: croniter is only right within one offset
    (from a winter time to a summer slot it is an hour off)."""
    if zone is None:
        return False
    times = [datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc) for s in iso_slots]
    t, end = start - timedelta(days=1), max(times + [start]) + timedelta(days=1)
    if end - t > timedelta(days=400):
        return t.astimezone(zone).utcoffset() != end.astimezone(zone).utcoffset() or len(
            {(t + timedelta(days=d)).astimezone(zone).utcoffset() for d in range(0, 400, 7)}) > 1
    first = t.astimezone(zone).utcoffset()
    while t < end:
        t = min(t + timedelta(days=7), end)
        if t.astimezone(zone).utcoffset() != first:
            return True
    return False


def matches(spec, zone, iso):
    """Whether slot ISO matches SPEC in local time, by cron's rules."""
    f = spec.split()
    t = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    t = t.astimezone(zone) if zone else t
    dom, dow = t.day in values(f[2], 2), t.isoweekday() % 7 in values(f[4], 4)
    day = dom or dow if not f[2].startswith("*") and not f[4].startswith("*") else dom and dow
    return t.minute in values(f[0], 0) and t.hour in values(f[1], 1) and t.month in values(f[3], 3) and day


def local_date(zone, iso):
    t = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    return t.astimezone(zone or timezone.utc)


def croniter_skips_march_1(spec, zone, ours, want):
    """croniter 1.3.5's bug, kept as a disagreement (leaderrun(1) lists
    it): after February, a day field that names a day February lacks
    (29-31) makes it skip 1 March. True when that is the whole difference:
    leaderrun's slots all match, those croniter lacks are on 1 March, and
    croniter's others are leaderrun's or come after them."""
    if spec.startswith("@") or not ours or not all(matches(spec, zone, s) for s in ours):
        return False
    extra = [s for s in ours if s not in want]
    later = all(s in ours or s > ours[-1] for s in want)
    return bool(extra) and later and all((local_date(zone, s).month, local_date(zone, s).day) == (3, 1) for s in extra)


def croniter_finds_no_date(spec, zone, ours):
    """croniter 1.3.5's other bug, kept too: with both day fields
    restricted, a day of the month that none of the months named has (31
    in September) makes it raise, where cron runs on the days of the week.
    True when leaderrun's slots all match on their day of the week."""
    f = spec.split()
    if len(f) != 5 or f[2].startswith("*") or f[4].startswith("*") or not ours:
        return False
    return all(matches(spec, zone, s) and local_date(zone, s).isoweekday() % 7 in values(f[4], 4) for s in ours)


def main():
    binary = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rng = random.Random(int(os.environ.get("CRONITER_SEED", "49")))
    zones = [None, None, None, "Europe/Berlin", "America/New_York"]
    lo = datetime(1971, 1, 1, tzinfo=timezone.utc).timestamp()
    hi = datetime(2099, 12, 31, tzinfo=timezone.utc).timestamp()
    counts = {"same": 0, "star": 0, "full": 0, "never": 0, "near_change": 0, "march_1": 0, "no_date": 0}
    failed = 0
    todo = []
    for _ in range(cases):
        spec = " ".join(field(rng, i) for i in range(5))
        if rng.random() < 0.03:
            spec = rng.choice(["@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"])
        zname = rng.choice(zones)
        t = rng.uniform(lo, hi)
        t = int(t // 60 * 60) if rng.random() < 0.3 else int(t) + rng.choice([0, 0.5])
        frm = datetime.fromtimestamp(t, timezone.utc)
        frm_text = frm.strftime("%Y-%m-%dT%H:%M:%S") + (".5" if t != int(t) else "") + "Z"
        cmd = [binary, "--schedule", spec, "--next", "5", "--from", frm_text]
        if zname:
            cmd += ["--schedule-tz", zname]
        todo.append((spec, zname, frm, frm_text, cmd))
    # Four at a time: each is a process of a few milliseconds.
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(lambda c: subprocess.run(c[4], capture_output=True, text=True), todo))
    for (spec, zname, frm, frm_text, cmd), run in zip(todo, runs):
        ours = run.stdout.split()
        zone = ZoneInfo(zname) if zname else None
        try:
            want, rule = expected(spec, frm.astimezone(zone) if zone else frm, 5)
        except CroniterBadDateError:
            want, rule = None, "never"
        if want is None and run.returncode == 0 and croniter_finds_no_date(spec, zone, ours):
            ok = True
            counts["no_date"] += 1
        elif want is None or run.returncode == 64:
            ok = want is None and run.returncode == 64 and "never matches" in run.stderr
            counts["never"] += 1
        elif near_change(zone, frm, ours + want):
            counts["near_change"] += 1
            continue
        else:
            ok = run.returncode == 0 and ours == want
            counts[rule] += 1
            if not ok and croniter_skips_march_1(spec, zone, ours, want):
                counts["march_1"] += 1
                ok = True
        if not ok:
            failed += 1
            if failed <= 10:
                print(f"DIFFER: '{spec}' --schedule-tz {zname or 'UTC'} --from {frm_text}: leaderrun "
                      f"(exit {run.returncode}) {ours} {run.stderr.strip()}; croniter ({rule}) {want}")
    compared = cases - counts["near_change"]
    print(f"croniter: {cases} cases, {compared} compared ({counts['same']} as croniter reads them, "
          f"{counts['star']} with a '*'-led day field, {counts['full']} with a full day field without '*', "
          f"{counts['never']} never matching), {counts['near_change']} skipped near a DST change; "
          f"kept: {counts['march_1']} where croniter skips 1 March, {counts['no_date']} where it finds no date; "
          f"{failed} differ")
    sys.exit(1 if failed else 0)


main()
