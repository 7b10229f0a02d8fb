#!/usr/bin/env python3
"""logs.py - read the logs scripts/bench collects; print one figure a line.

  logs.py rtts STRACE
      The round trips of a leader's renews, in ms ("%.3f"), one a line, from
      `strace -f -ttt -T -e trace=sendto,recvfrom` of the leader: each from
      a sendto to the end of the next recvfrom that got bytes.
  logs.py statements GENERAL_LOG USER
      "STATEMENTS ROUNDTRIPS LIST HISTORY HCONNS" of one uncontended run, from
      the server's general log: the statements and round trips on the
      lease's connection (the run's first), LIST their commands (Query,
      Prepare, Execute) joined by commas; HISTORY the run history's
      statements, HCONNS the connections the history opened of its own.
  logs.py renewed JSON_LOG T0_MS
      "MS PORT": from a holder's `--log-format json -vv` stderr, the
      milliseconds from T0_MS (since the epoch) to its first renew after it
      moved to another server at or after T0_MS, and that server's port;
      nothing when it has not.

Called by scripts/bench.d/*.sh: strace's and the general log's lines are
picked apart here rather than in awk, so that each rule reads as one.
"""

import calendar
import json
import re
import sys
import time

# strace -ttt -T: "PID SECONDS.MICROS recvfrom(FD, ..., ...) = BYTES <SECONDS>"
RECV_DONE = re.compile(r"= ([0-9]+) <([0-9.]+)>$")


def renew_rtts(path):
    """A sendto opens a round trip; the first recvfrom that returns bytes
    closes it. Unfinished and resumed calls (other threads interleaving
    under -f) are neither: their third field is not the call."""
    sent = None
    with open(path, errors="replace") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 3:
                continue
            if fields[2].startswith("sendto("):
                sent = float(fields[1])
            elif fields[2].startswith("recvfrom(") and sent is not None:
                done = RECV_DONE.search(line.rstrip("\n"))
                if done and int(done.group(1)) > 0:
                    end = float(fields[1]) + float(done.group(2))
                    print("%.3f" % ((end - sent) * 1000))
                    sent = None


COMMANDS = ("Query", "Prepare", "Execute", "Quit", "Connect", "Close")


def general_log_entries(path):
    """(thread id, command, line) of each general-log line that names one."""
    with open(path, errors="replace") as f:
        for line in f:
            fields = line.split()
            for i, word in enumerate(fields):
                if word in COMMANDS:
                    if i > 0:
                        yield fields[i - 1], word, line
                    break


def statements(path, user):
    """A prepared statement executed at once is a Prepare and an Execute
    sent together: one round trip. The history's row rides on the lease's
    connection after the release (a short run), or on its own."""
    lease = hist = None
    stmts = rt = hstmts = hconns = 0
    cmds = []
    prev = ""
    for tid, cmd, line in general_log_entries(path):
        if cmd == "Connect":
            if "Connect\t%s@" % user in line:
                if lease is None:
                    lease = tid
                else:
                    hist = tid
                    hconns += 1
            continue
        if tid == hist and cmd in ("Query", "Execute"):
            hstmts += 1
        if tid != lease or cmd == "Quit":
            continue
        # A compound statement carries the history's row in
        # the release: one statement, one round trip, the history's too.
        if "BEGIN NOT ATOMIC" in line:
            stmts += 1
            rt += 1
            hstmts += "leaderrun_history" in line
            cmds.append("Block")
            prev = cmd
            continue
        if "leaderrun_history" in line:
            hstmts += cmd == "Execute"
            prev = cmd
            continue
        stmts += cmd in ("Query", "Execute")
        rt += cmd in ("Query", "Prepare") or (cmd == "Execute" and prev != "Prepare")
        if cmd != "Close":
            cmds.append(cmd)
        prev = cmd
    print("%d %d %s %d %d" % (stmts, rt, ",".join(cmds), hstmts, hconns))


def log_ms(ts):
    """ "2026-11-26T00:35:12.345Z" (UTC) in ms since the epoch."""
    secs = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
    return secs * 1000 + int(ts[20:23])


def renewed(path, t0):
    moved_to = None
    with open(path, errors="replace") as f:
        for line in f:
            try:
                entry = json.loads(line)
                ms = log_ms(entry["ts"])
                msg = entry["msg"]
            except (ValueError, KeyError, TypeError):
                continue  # not one of leaderrun's JSON lines
            if moved_to is None:
                if ms >= t0 and msg.startswith("now using database server "):
                    moved_to = msg.split(" ")[4].rsplit(":", 1)[-1]
            elif msg.startswith("renewed"):
                print("%d %s" % (ms - t0, moved_to))
                return


def main(argv):
    if len(argv) == 3 and argv[1] == "rtts":
        renew_rtts(argv[2])
    elif len(argv) == 4 and argv[1] == "statements":
        statements(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "renewed":
        renewed(argv[2], int(argv[3]))
    else:
        sys.stderr.write(__doc__)
        return 64
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
