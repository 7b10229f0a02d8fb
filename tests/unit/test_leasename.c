#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/leasename.h"
#include "lease/lease.h"

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

Test(leasename, empty_command_still_names_a_valid_lease)
{
	char err[128];
	/* Found by the fuzzer: argv [""] derived the empty name. */
	const char *n = derive((char *[]){"", NULL});
	cr_assert_eq(lease_name_validate("lease", n, LEASE_NAME_MAX, err, sizeof(err)), 0, "'%s': %s", n, err);
}

Test(leasename, only_well_formed_utf8_is_a_name)
{
	char err[128];

	cr_assert_eq(lease_name_validate("lease",
					 "n\xc3\xa4"
					 "chtlich",
					 LEASE_NAME_MAX, err, sizeof(err)),
		     0);
	cr_assert_eq(lease_name_validate("lease", "\xf0\x9f\x98\x80", LEASE_NAME_MAX, err, sizeof(err)), 0);
	cr_assert_eq(lease_name_validate("lease", "\xc0\xaf", LEASE_NAME_MAX, err, sizeof(err)), -1, "overlong");
	cr_assert_eq(lease_name_validate("lease", "\xe0\x80\xaf", LEASE_NAME_MAX, err, sizeof(err)), -1, "overlong");
	cr_assert_eq(lease_name_validate("lease", "\xed\xa0\x80", LEASE_NAME_MAX, err, sizeof(err)), -1, "surrogate");
	cr_assert_eq(lease_name_validate("lease", "\xf4\x90\x80\x80", LEASE_NAME_MAX, err, sizeof(err)), -1,
		     "past U+10FFFF");
	cr_assert_eq(lease_name_validate("lease", "\xc2\x85", LEASE_NAME_MAX, err, sizeof(err)), -1, "C1 control");
}

Test(leasename, a_tilde_never_makes_an_exact_name)
{
	char a[LEASE_NAME_MAX + 1];
	/* Found by the fuzzer: ["~<hash of "">"] equalled [""]'s name. */
	snprintf(a, sizeof(a), "%s", derive((char *[]){"", NULL}));
	cr_assert_str_neq(a, derive((char *[]){a, NULL}));
}

/* ---- -c STRING ---------------------------------------------------------- */

static const char *derive_string(const char *s)
{
	static char out[2][LEASE_NAME_MAX + 1];
	static int k;

	k ^= 1;
	leasename_from_string(s, out[k], sizeof(out[k]));
	return out[k];
}

Test(leasename, plain_shell_strings_read_as_typed_and_match_their_words)
{
	char a[LEASE_NAME_MAX + 1];

	cr_assert_str_eq(derive_string("cd /srv/app && ./nightly.sh"), "cd /srv/app && ./nightly.sh");
	snprintf(a, sizeof(a), "%s", derive((char *[]){"./nightly.sh", "--full", NULL}));
	cr_assert_str_eq(derive_string("./nightly.sh --full"), a, "the same words as COMMAND share the lease");
	/* Without a blank, the string is one word: the same name as that
	 * word given as COMMAND, hashed or not. */
	snprintf(a, sizeof(a), "%s", derive((char *[]){"~/bin/job", NULL}));
	cr_assert_str_eq(derive_string("~/bin/job"), a);
}

Test(leasename, different_shell_strings_never_share_a_name)
{
	static const char *const strings[] = {"echo a", "echo  a", " echo a", "echo a ", "echo\ta",  "echo\na",
					      "echo_a", "echo a~", "echo ~a", "echo a;", "echo 'a'", "echo \"a\""};
	size_t n = sizeof(strings) / sizeof(strings[0]);
	char names[sizeof(strings) / sizeof(strings[0])][LEASE_NAME_MAX + 1], err[128];

	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "%s", derive_string(strings[i]));
		cr_assert_eq(lease_name_validate("lease", names[i], LEASE_NAME_MAX, err, sizeof(err)), 0, "'%s': %s",
			     names[i], err);
		/* The name column ignores trailing spaces when it compares:
		 * a name may not end in one. */
		cr_assert_neq(names[i][strlen(names[i]) - 1], ' ', "'%s'", names[i]);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			cr_assert_str_neq(names[i], names[j], "'%s' and '%s' share a name", strings[i], strings[j]);
	cr_assert(strchr(derive_string("echo  a"), '~'), "doubled blanks are hashed");
	cr_assert(strchr(derive_string("echo a "), '~'), "a trailing blank is hashed");
}

Test(leasename, long_shell_strings_are_shortened_stably_and_fit)
{
	char big[600], a[LEASE_NAME_MAX + 1], err[128];

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[10] = ' ';
	snprintf(a, sizeof(a), "%s", derive_string(big));
	cr_assert_leq(strlen(a), LEASE_NAME_MAX);
	cr_assert(strchr(a, '~'), "%s", a);
	cr_assert_eq(lease_name_validate("lease", a, LEASE_NAME_MAX, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(a, derive_string(big));
	big[500] = 'z';
	cr_assert_str_neq(a, derive_string(big), "a change past the prefix changes the name");
}
