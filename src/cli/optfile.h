/* The settings leaderrun must read from MySQL option files itself: a
 * `host` that lists several hosts ("h1:3306,h2"), which only leaderrun's
 * own connect loop understands, and the TLS settings (`ssl-mode`,
 * `ssl-ca`) that decide whether a server must be verified before the
 * login goes out. Everything else in those files is left to the
 * client library, which reads them at connect time. */
#ifndef LEADERRUN_OPTFILE_H
#define LEADERRUN_OPTFILE_H

#include <stddef.h>

/* The last `host` in the groups [client], [client-server], [client-mariadb]
 * and [leaderrun] of DEFAULTS_FILE, or (NULL) of the files the client
 * library reads: /etc/my.cnf, /etc/mysql/my.cnf, $MARIADB_HOME/my.cnf,
 * $MYSQL_HOME/my.cnf, ~/.my.cnf, following !include and !includedir.
 * Returns 1 and fills OUT, or 0 when no file sets it. Unreadable files are
 * skipped, as the library skips them; so are FIFOs and devices, which are
 * never opened in a way that could block (see optfile_check). */
int optfile_host(const char *defaults_file, char *out, size_t len);

/* The same for any option KEY ('-' and '_' alike). */
int optfile_get(const char *defaults_file, const char *key, char *out, size_t len);

/* Whether the client library can read the same files without hanging:
 * -1 with a one-line message naming the first FIFO, device or socket among
 * them (an !include of a FIFO, a FIFO at ~/.my.cnf), on which its fopen
 * would wait for ever; else 0. */
int optfile_check(const char *defaults_file, char *err, size_t errlen);

#endif
