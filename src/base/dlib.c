#include "dlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *dlib_load(const char *soname, int flags, const char *what, const struct dlib_sym *syms, size_t n, char *err,
		size_t errlen)
{
	void *h = dlopen(soname, flags | RTLD_LOCAL);

	if (!h) {
		snprintf(err, errlen, "cannot load %s: %s", what, dlerror());
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		void *sym = dlsym(h, syms[i].name);
		if (!sym && !syms[i].optional) {
			snprintf(err, errlen, "%s: no symbol %s", soname, syms[i].name);
			/* A half-filled table must not look loaded to a caller
			 * that tests one of its fields. */
			while (i-- > 0)
				memset(syms[i].field, 0, sizeof(sym));
			return NULL;
		}
		/* POSIX guarantees that a void * from dlsym converts to a
		 * function pointer; ISO C does not say, hence the memcpy. */
		memcpy(syms[i].field, &sym, sizeof(sym));
	}
	return h;
}
