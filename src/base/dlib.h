/* A shared library's functions through a table of pointers, one style for
 * the client library (db/db_lib.c) and libcurl (notify.c). The default build
 * loads the library with dlopen when a run first needs it (mapping
 * it, and its TLS stack, before main cost every run, --version
 * included); the static build (-Dprefer_static=true) links it in and
 * fills the same table with the linked functions, without dlopen.
 *
 * Each user lists the functions it calls once, as an X macro, and names
 * its table `lib`; the names of the fields are the functions' own, their
 * types come from the library's header:
 *
 *     #define CURL_API(X) X(curl_easy_init) X(curl_easy_perform)
 *     static struct { CURL_API(DLIB_FIELD) } lib;
 *
 *     static const struct dlib_sym syms[] = {CURL_API(DLIB_SYM)};   (default)
 *     dlib_load("libcurl.so.4", RTLD_NOW, "libcurl", syms, n, err, len);
 *
 *     CURL_API(DLIB_LINK)                                           (static)
 *
 * Only db/ includes <mysql.h> and only notify.c <curl/curl.h>: this file
 * names neither library. */
#ifndef LEADERRUN_DLIB_H
#define LEADERRUN_DLIB_H

#include <stdbool.h>
#include <stddef.h>

#define DLIB_FIELD(f) __typeof__(f) *f;
#define DLIB_LINK(f)  lib.f = f;
#define DLIB_SYM(f)   {#f, &lib.f, false},

/* A symbol to look up, and the table's field (a function pointer) that
 * takes it. An optional one that is missing leaves the field NULL. */
struct dlib_sym {
	const char *name;
	void *field;
	bool optional;
};

/* dlopens SONAME with FLAGS (RTLD_LOCAL added) and fills the fields of
 * SYMS[0..N). Returns the handle, or NULL with a message in ERR: "cannot
 * load WHAT: <dlerror>", or "SONAME: no symbol NAME" (then no field is
 * filled). */
void *dlib_load(const char *soname, int flags, const char *what, const struct dlib_sym *syms, size_t n, char *err,
		size_t errlen);

#endif
