#!/usr/bin/env python3
"""slowhttp.py PORT N [SECONDS]: N slow HTTP clients against 127.0.0.1:PORT.

Each connection sends its request's header one byte every 2 s and never
ends it (a slowloris). A connection the server closes is opened again at
once, so that N stay open for as long as the script runs. Prints "open N"
on stdout once the first N are connected, then one line a second with the
connections opened again so far ("reopened K").

Ends after SECONDS (default 60), or as soon as the test that started it
is gone, so that a failed test leaves nothing behind.
"""
import os
import selectors
import socket
import sys
import time

PORT = int(sys.argv[1])
N = int(sys.argv[2])
LIFE = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
PARENT = os.getppid()
EVERY = 2.0
HEADER = b"GET /leader HTTP/1.1\r\nHost: x\r\nX-Slow: "


def opened():
    try:
        s = socket.create_connection(("127.0.0.1", PORT))
    except OSError:
        return None
    s.setblocking(False)
    return s


def main():
    sel = selectors.DefaultSelector()
    conns, sent = [None] * N, [0] * N
    for i in range(N):
        conns[i] = opened()
        if conns[i] is None:
            sys.exit("slowhttp.py: cannot connect to port %d" % PORT)
        sel.register(conns[i], selectors.EVENT_READ, i)
    print("open", N, flush=True)
    reopened = 0
    end = time.monotonic() + LIFE
    # Connection i sends its next byte at i * EVERY / N into each EVERY.
    tick, i, said = time.monotonic(), 0, time.monotonic()
    while time.monotonic() < end and os.getppid() == PARENT:
        gone = set()
        for key, _ in sel.select(timeout=max(0.0, tick - time.monotonic())):
            try:
                if not key.fileobj.recv(4096):
                    gone.add(key.data)
            except OSError:
                gone.add(key.data)
        now = time.monotonic()
        while now >= tick:
            tick += EVERY / N
            s = conns[i]
            if s is None:
                gone.add(i)
            else:
                byte = HEADER[sent[i] : sent[i] + 1] or b"a"
                try:
                    s.send(byte)
                    sent[i] += 1
                except OSError:
                    gone.add(i)
            i = (i + 1) % N
        for k in gone:
            if conns[k] is not None:
                sel.unregister(conns[k])
                conns[k].close()
            conns[k], sent[k] = opened(), 0
            if conns[k] is not None:
                sel.register(conns[k], selectors.EVENT_READ, k)
                reopened += 1
        if now - said >= 1.0:
            print("reopened", reopened, flush=True)
            said = now


main()
