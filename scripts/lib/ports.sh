# lib/ports.sh - the local TCP ports in use, for scripts that pick free
# ones (lib/mariadb.sh for the sandboxes, bench.d/servers.sh for etcd).
# Sourced, not run.

used_ports() { # every local TCP port in use in this network namespace
    local f addr
    for f in /proc/net/tcp /proc/net/tcp6; do
        [[ -r $f ]] || continue
        # "  sl  local_address rem_address st ..."; local_address is ADDR:PORT in hex
        while read -r _ addr _; do
            [[ $addr == *:* ]] && echo $((16#${addr##*:}))
        done <"$f"
    done
}
