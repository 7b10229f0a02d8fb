#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lease.h"
#include "leasename.h"

static const char *derive(char *const argv[])
{
	static char out[LEASE_NAME_MAX + 1];
	leasename_from_argv(argv, out, sizeof(out));
	return out;
}

Test(leasename, short_command_lines_read_as_typed)
{
	cr_assert_str_eq(derive((char *[]){"./nightly.sh", "--full", NULL}), "./nightly.sh --full");
}

Test(leasename, same_argv_same_name)
{
	char a[LEASE_NAME_MAX + 1];
	snprintf(a, sizeof(a), "%s", derive((char *[]){"backup", "db1", NULL}));
	cr_assert_str_eq(a, derive((char *[]){"backup", "db1", NULL}));
}

Test(leasename, argument_boundaries_matter)
{
	char a[LEASE_NAME_MAX + 1];
	snprintf(a, sizeof(a), "%s", derive((char *[]){"echo", "a b", NULL}));
	cr_assert_str_neq(a, derive((char *[]){"echo", "a", "b", NULL}));
}

Test(leasename, long_command_lines_are_shortened_stably_and_fit)
{
	char big[600], a[LEASE_NAME_MAX + 1], err[128];

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(a, sizeof(a), "%s", derive((char *[]){"cmd", big, NULL}));
	cr_assert_leq(strlen(a), LEASE_NAME_MAX);
	cr_assert(strchr(a, '~'), "shortened names carry a hash: %s", a);
	cr_assert_eq(lease_name_validate("lease", a, LEASE_NAME_MAX, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(a, derive((char *[]){"cmd", big, NULL}));
	big[500] = 'z';
	cr_assert_str_neq(a, derive((char *[]){"cmd", big, NULL}), "a change past the prefix changes the name");
}

Test(leasename, unprintable_bytes_become_valid_names)
{
	char err[128];
	const char *n = derive((char *[]){"printf", "\x01\xff\n", NULL});
	cr_assert_eq(lease_name_validate("lease", n, LEASE_NAME_MAX, err, sizeof(err)), 0, "%s", err);
}

Test(leasename, holder_names_host_and_pid)
{
	char h[LEASE_HOLDER_MAX + 1], pid[32];

	leasename_holder(h, sizeof(h));
	snprintf(pid, sizeof(pid), ":%ld:", (long)getpid());
	cr_assert(strstr(h, pid), "%s", h);
}
