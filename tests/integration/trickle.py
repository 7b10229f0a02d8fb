#!/usr/bin/env python3
"""trickle.py [tls] [SECONDS]: a hostile database server for the tests.

Listens on 127.0.0.1 (a free port, printed on stdout) and, to every
client, announces a 100 kB packet (the MySQL header: a 3-byte
little-endian length and a sequence byte) and then sends one byte every
half second: each read of the client's gets data within any per-read
timeout (whole seconds), and the packet never ends.

With "tls": a complete greeting that offers TLS instead; once the client
asks for TLS, the same trickle inside a TLS record that never ends (the
client's TLS layer reads the socket directly).

Ends after SECONDS (default 60), or as soon as the test that started it
is gone, so that a failed test leaves nothing behind.
"""
import os
import socket
import struct
import sys
import threading
import time

TLS = len(sys.argv) > 1 and sys.argv[1] == "tls"
LIFE = float(sys.argv[-1]) if len(sys.argv) > 1 and sys.argv[-1] != "tls" else 60.0
PARENT = os.getppid()


def packet(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def greeting():
    # Protocol 10: CLIENT_LONG_PASSWORD | CONNECT_WITH_DB | PROTOCOL_41 |
    # SSL | TRANSACTIONS | SECURE_CONNECTION | PLUGIN_AUTH.
    caps = 0x1 | 0x8 | 0x200 | 0x800 | 0x2000 | 0x8000 | 0x80000
    return packet(
        0,
        b"\x0a" + b"5.5.5-10.11.0-MariaDB\0" + struct.pack("<I", 7) + b"12345678\0"
        + struct.pack("<H", caps & 0xFFFF) + b"\x21" + struct.pack("<H", 2)
        + struct.pack("<H", caps >> 16) + b"\x15" + b"\0" * 10
        + b"abcdefghijkl\0" + b"mysql_native_password\0",
    )


def trickle(conn):
    try:
        if TLS:
            conn.sendall(greeting())
            conn.recv(4096)  # the client's TLS request
            # A handshake record of 16 kB, of which only the header comes.
            conn.sendall(b"\x16\x03\x03\x40\x00")
        else:
            conn.sendall(struct.pack("<I", 100000)[:3] + b"\0")
        while True:
            time.sleep(0.5)
            conn.sendall(b"\x0a")
    except OSError:
        pass
    finally:
        conn.close()


def main():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.5)
    print(srv.getsockname()[1], flush=True)
    end = time.monotonic() + LIFE
    while time.monotonic() < end and os.getppid() == PARENT:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=trickle, args=(conn,), daemon=True).start()


main()
