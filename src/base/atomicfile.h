/* Writing a small file that others read, safely in a shared directory. */
#ifndef LEADERRUN_ATOMICFILE_H
#define LEADERRUN_ATOMICFILE_H

#include <stddef.h>

/* Replaces PATH with TEXT (N bytes), mode 0644: written to a new file
 * beside it (mkstemp: O_EXCL, so nothing planted is opened), then renamed
 * over PATH. rename(2) replaces a symlink at PATH, never its target, and a
 * reader sees the old content or the new, never a part. Returns 0, or -1
 * with the reason in WHY. */
int atomicfile_write(const char *path, const char *text, size_t n, char *why, size_t whylen);

#endif
