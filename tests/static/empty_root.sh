#!/usr/bin/env bash
# empty_root - the static binary (scripts/package static) in a root file
# system that holds nothing but itself, /etc/hosts, /etc/resolv.conf and a
# CA bundle: no libc, no shared library, no NSS module. Every leaderrun below
# runs under chroot there, and so does every command it runs (leaderrun
# itself: there is nothing else in that root).
#
#   1. acquire: a run by host name (/etc/hosts) with TLS verified by default
#      (a networked name: VERIFY_IDENTITY against the root's CA bundle);
#   2. the same through DNS: a name only a test DNS server on 127.0.0.1 knows;
#   3. --notify over HTTPS to a local server whose certificate the test CA
#      signed;
#   4. handover: a standby takes the lease when the holder's command ends;
#   5. kill on loss: a holder whose row is taken over kills its command and
#      exits 76.
#
# Usage: tests/static/empty_root.sh [BINARY]   (as root; default
#        build-package/leaderrun-static). Exit 77: skipped (no binary, not
#        root). Also run by `meson test --suite static` when the binary exists.
set -euo pipefail

top=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
bin=${1:-${LEADERRUN_STATIC:-$top/build-package/leaderrun-static}}
[[ -x $bin ]] || { echo "empty_root: SKIP: no $bin (build it with scripts/package static)"; exit 77; }
((EUID == 0)) || { echo "empty_root: SKIP: chroot needs root"; exit 77; }
command -v python3 >/dev/null || { echo "empty_root: SKIP: no python3 for the HTTPS and DNS servers"; exit 77; }

passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

work=$(mktemp -d /tmp/lrroot.XXXXXX)
root=$work/root
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    "$top/scripts/sandbox-db" stop "$work/db" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# --- a test CA, and certificates for the database and the webhook receiver
(
    cd "$work"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=leaderrun-test-ca \
        -keyout ca.key -out ca.pem 2>/dev/null
    for who in db hooks; do
        openssl req -newkey rsa:2048 -nodes -subj "/CN=$who.test" -keyout $who.key -out $who.csr 2>/dev/null
        printf 'subjectAltName=DNS:%s.test,DNS:%s-dns.test\n' $who $who >$who.ext
        openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile $who.ext -out $who.pem 2>/dev/null
    done
    chmod 644 ./*.key
)

# --- the database, with TLS
export SANDBOX_DB_EXTRA_ARGS="--ssl-ca=$work/ca.pem --ssl-cert=$work/db.pem --ssl-key=$work/db.key"
eval "$("$top/scripts/sandbox-db" start "$work/db")"
sql() { "$top/scripts/sandbox-db" sql "$work/db" -N -B -e "$1"; }

# --- the root: exactly four files
mkdir -p "$root/etc/ssl/certs"
cp "$bin" "$root/leaderrun"
printf '127.0.0.1 localhost\n127.0.0.1 db.test hooks.test\n' >"$root/etc/hosts"
printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:2\n' >"$root/etc/resolv.conf"
cp "$work/ca.pem" "$root/etc/ssl/certs/ca-certificates.crt"
files=$(cd "$root" && find . -type f -o -type l | sort | tr '\n' ' ')
if [[ $files == "./etc/hosts ./etc/resolv.conf ./etc/ssl/certs/ca-certificates.crt ./leaderrun " ]]; then
    ok "the root holds only: $files"
else
    bad "the root holds: $files"
fi

# --- a DNS server on 127.0.0.1:53 that knows *-dns.test (A 127.0.0.1)
cat >"$work/dns.py" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
open(sys.argv[1], "w").write("ready\n")
while True:
    q, addr = s.recvfrom(512)
    qid, flags, qd = struct.unpack(">HHH", q[:6])
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode()); i += 1 + q[i]
    name, qtype = ".".join(labels), struct.unpack(">H", q[i + 1:i + 3])[0]
    question = q[12:i + 5]
    known = name.endswith("-dns.test")
    ans = b""
    if known and qtype == 1:
        ans = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 30, 4) + socket.inet_aton("127.0.0.1")
    rcode = 0 if known else 3
    hdr = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, 1 if ans else 0, 0, 0)
    s.sendto(hdr + question + ans, addr)
EOF
dns_ok=0
if ! ss -lun | grep -q '127.0.0.1:53 \|0.0.0.0:53 \|\*:53 '; then
    python3 "$work/dns.py" "$work/dns.ready" 2>"$work/dns.err" &
    pids+=($!)
    for _ in $(seq 50); do [[ -s $work/dns.ready ]] && break; sleep 0.1; done
    [[ -s $work/dns.ready ]] && dns_ok=1
fi

# --- an HTTPS webhook receiver that appends each body to a file
cat >"$work/hooks.py" <<'EOF'
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(sys.argv[3], "ab") as f:
            f.write(body + b"\n")
        self.send_response(200); self.end_headers()
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(sys.argv[4], "w").write("%d\n" % srv.server_address[1])
srv.serve_forever()
EOF
python3 "$work/hooks.py" "$work/hooks.pem" "$work/hooks.key" "$work/hooks.log" "$work/hooks.port" 2>"$work/hooks.err" &
pids+=($!)
for _ in $(seq 50); do [[ -s $work/hooks.port ]] && break; sleep 0.1; done
hport=$(cat "$work/hooks.port")

dsn="mysql://$LR_DB_USER:$LR_DB_PASSWORD@db.test:$LR_DB_PORT/$LR_DB_NAME"
dns_dsn="mysql://$LR_DB_USER:$LR_DB_PASSWORD@db-dns.test:$LR_DB_PORT/$LR_DB_NAME"
lr() { chroot "$root" /leaderrun "$@"; }

# 1. acquire by host name, TLS verified by default
rc=0
lr -v -d "$dsn" -n -l s1 -- /leaderrun --version >"$work/1.out" 2>"$work/1.err" || rc=$?
if ((rc == 0)) && grep -q '^leaderrun ' "$work/1.out" && grep -q 'certificate verified' "$work/1.err"; then
    ok "acquire through /etc/hosts, TLS verified: $(grep -o 'database server.*' "$work/1.err" | head -n 1)"
else
    bad "acquire through /etc/hosts (exit $rc): $(cat "$work/1.err")"
fi
# A certificate for another name is refused (the verification is real).
rc=0
lr -d "mysql://$LR_DB_USER:$LR_DB_PASSWORD@hooks.test:$LR_DB_PORT/$LR_DB_NAME" -n -l s1 -- /leaderrun --version \
    >/dev/null 2>"$work/1b.err" || rc=$?
if ((rc == 77)); then
    ok "a server whose certificate names another host is refused (exit 77)"
else
    bad "wrong-name server: exit $rc: $(cat "$work/1b.err")"
fi

# 2. the same through DNS
if ((dns_ok)); then
    rc=0
    lr -v -d "$dns_dsn" -n -l s2 -- /leaderrun --version >"$work/2.out" 2>"$work/2.err" || rc=$?
    if ((rc == 0)) && grep -q 'certificate verified' "$work/2.err"; then
        ok "acquire through DNS (a name only the test DNS server knows)"
    else
        bad "acquire through DNS (exit $rc): $(cat "$work/2.err")"
    fi
else
    bad "port 53 on 127.0.0.1 is taken or the DNS server did not start: DNS untested"
fi

# 3. --notify over HTTPS
rc=0
lr -d "$dsn" -n -l s3 --notify "https://hooks.test:$hport/hook" -- /leaderrun --version >/dev/null \
    2>"$work/3.err" || rc=$?
if ((rc == 0)) && grep -q '"acquired"' "$work/hooks.log" 2>/dev/null && grep -q '"released"' "$work/hooks.log"; then
    ok "--notify over HTTPS, verified against the root's CA bundle: $(wc -l <"$work/hooks.log") events"
else
    bad "--notify (exit $rc): $(cat "$work/3.err"); received: $(cat "$work/hooks.log" 2>/dev/null)"
fi

# A command that blocks until the test opens a gate: leaderrun itself,
# waiting for a lease row the test holds from outside.
gate_close() { sql "REPLACE INTO leaderrun_lease (name, holder, term, expires_at) VALUES ('$1', 'test', 1, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)"; }
gate_open() { sql "UPDATE leaderrun_lease SET expires_at = UTC_TIMESTAMP(6) WHERE name = '$1'"; }
holder_of() { sql "SELECT holder FROM leaderrun_lease WHERE name = '$1' AND expires_at > UTC_TIMESTAMP(6)"; }
wait_holder() { # wait_holder LEASE: until someone but the test holds it (10 s)
    local h
    for _ in $(seq 100); do
        h=$(holder_of "$1")
        [[ -n $h && $h != test ]] && return 0
        sleep 0.1
    done
    return 1
}

# 4. handover
gate_close g4
lr -d "$dsn" -l h4 --retry-interval 200ms -- /leaderrun -d "$dsn" -l g4 -w 60s --retry-interval 200ms -- \
    /leaderrun --version >"$work/4a.out" 2>"$work/4a.err" &
a=$!
pids+=($a)
wait_holder h4 || bad "the first holder did not take h4"
first=$(holder_of h4)
lr -d "$dsn" -l h4 -w 60s --retry-interval 200ms -- /leaderrun --version >"$work/4b.out" 2>"$work/4b.err" &
b=$!
pids+=($b)
sleep 0.5
gate_open g4
arc=0 brc=0
wait "$a" || arc=$?
wait "$b" || brc=$?
if ((arc == 0 && brc == 0)) && grep -q '^leaderrun ' "$work/4b.out"; then
    ok "handover: the standby ran once the holder ($first) finished"
else
    bad "handover: holder exit $arc, standby exit $brc: $(cat "$work/4a.err" "$work/4b.err")"
fi

# 5. kill on loss
gate_close g5
lr -d "$dsn" -l k5 --ttl 3s -- /leaderrun -d "$dsn" -l g5 -w 60s -- /leaderrun --version \
    >"$work/5.out" 2>"$work/5.err" &
c=$!
pids+=($c)
if wait_holder k5; then
    sql "UPDATE leaderrun_lease SET holder = 'thief', term = term + 1, expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE name = 'k5'"
    crc=0
    wait "$c" || crc=$?
    # The command (a leaderrun waiting on g5) must be gone too.
    if ((crc == 76)) && ! pgrep -f -- "-l g5 -w 60s" >/dev/null; then
        ok "kill on loss: exit 76, the command is gone"
    else
        bad "kill on loss: exit $crc: $(cat "$work/5.err")"
    fi
else
    bad "the holder did not take k5: $(cat "$work/5.err")"
fi

echo "empty_root: $passed passed, $failed failed"
((failed == 0))
