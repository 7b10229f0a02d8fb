#!/usr/bin/env bash
# client_soname - the soname leaderrun dlopens is the one of the client
# library meson finds, read from the file, not a constant for one library
# (built against Oracle's libmysqlclient 9.x, leaderrun asked for
# 8.0's libmysqlclient.so.21 and every run failed). Configures this source
# tree against fake client libraries (a header, a .pc file and a shared
# library with the soname given) and reads the build's config.h:
#   1. a libmysqlclient whose soname is libmysqlclient.so.24 (8.4, 9.x);
#   2. one whose soname is libmysqlclient.so.21 (8.0); both times --version
#      names it "MySQL libmysqlclient 9.7.4" (the fake's version);
#   3. one with no soname: the configure fails and says why.
#
# Usage: tests/build/client_soname.sh   (meson test --suite build)
# Exit 77 when meson, pkg-config or a C compiler is missing.
set -euo pipefail

top=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
for tool in meson pkg-config cc; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done

passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

work=$(mktemp -d /tmp/lrsoname.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A fake Oracle client in $work/$1: libmysqlclient.so with soname $2 ("" for
# none), mysqlclient.pc and a mysql.h that says MySQL 9.7.4.
fake_client() {
    local dir=$work/$1 soname=$2
    mkdir -p "$dir/lib/pkgconfig" "$dir/include"
    printf '#define LIBMYSQL_VERSION "9.7.4"\n#define MYSQL_VERSION_ID 90704\n' >"$dir/include/mysql.h"
    echo 'int mysql_init(void) { return 0; }' >"$dir/fake.c"
    cc -shared -fPIC ${soname:+-Wl,-soname,$soname} -o "$dir/lib/libmysqlclient.so" "$dir/fake.c"
    cat >"$dir/lib/pkgconfig/mysqlclient.pc" <<PC
prefix=$dir
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: mysqlclient
Description: a fake Oracle MySQL client library
Version: 9.7.4
Libs: -L\${libdir} -lmysqlclient
Cflags: -I\${includedir}
PC
}

# Configures against the fake client in $work/$1; the output in $work/$1.log.
configure() {
    PKG_CONFIG_PATH=$work/$1/lib/pkgconfig meson setup "$work/$1/build" "$top" >"$work/$1.log" 2>&1
}

for soname in libmysqlclient.so.24 libmysqlclient.so.21; do
    fake_client "$soname" "$soname"
    if ! configure "$soname"; then
        bad "configure against a client whose soname is $soname failed:"
        tail -5 "$work/$soname.log"
    elif grep -qx "#define LEADERRUN_CLIENT_SONAME \"$soname\"" "$work/$soname/build/config.h"; then
        ok "a client library whose soname is $soname is loaded as $soname"
    else
        bad "built against $soname, config.h says: $(grep CLIENT_SONAME "$work/$soname/build/config.h" || echo nothing)"
    fi
    # --version names it (config.h's LEADERRUN_CLIENT).
    if grep -qx '#define LEADERRUN_CLIENT "MySQL libmysqlclient 9.7.4"' "$work/$soname/build/config.h"; then
        ok "--version names it MySQL libmysqlclient 9.7.4"
    else
        bad "built against Oracle's 9.7.4, config.h says: $(grep 'CLIENT ' "$work/$soname/build/config.h" || echo nothing)"
    fi
done

fake_client nosoname ""
if configure nosoname; then
    bad "a client library with no soname configured: $(grep CLIENT_SONAME "$work/nosoname/build/config.h" || true)"
elif grep -q "cannot tell the soname of the client library.*names no SONAME" "$work/nosoname.log"; then
    ok "a client library with no soname fails the configure: $(grep -o 'cannot tell the soname.*' "$work/nosoname.log")"
else
    bad "a client library with no soname: the configure failed, but not saying why:"
    tail -5 "$work/nosoname.log"
fi

echo "$passed passed, $failed failed"
((failed == 0))
