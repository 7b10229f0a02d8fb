/* Durations: "500ms", "15s", "1.5m", "2h", or a bare number of seconds. */
#ifndef LEADERRUN_DURATION_H
#define LEADERRUN_DURATION_H

#include <stddef.h>
#include <stdint.h>

#define USEC_PER_MSEC INT64_C(1000)
#define USEC_PER_SEC  INT64_C(1000000)

/* Parses TEXT into microseconds. Returns 0, or -1 with a reason in ERR
 * ("expected a number with unit ms, s, m or h, like 15s"). Negative,
 * empty, overflowing and trailing-garbage inputs are errors; rounding is
 * towards zero at the microsecond. */
int duration_parse(const char *text, int64_t *out_us, char *err, size_t errlen);

/* Formats US compactly for messages: "1.5s", "250ms", "2h". */
void duration_format(int64_t us, char *buf, size_t len);

#endif
