#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int atomicfile_fill(int fd, const char *text, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(fd, text + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		done += (size_t)w;
	}
	return 0;
}

int atomicfile_write(const char *path, const char *text, size_t n, char *why, size_t whylen)
{
	char tmp[PATH_MAX + 16];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp)) {
		snprintf(why, whylen, "%s: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	/* Readable by a probe or a collector whatever the umask made of
	 * mkstemp's 0600. */
	if (atomicfile_fill(fd, text, n) != 0 || fchmod(fd, 0644) != 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) != 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
