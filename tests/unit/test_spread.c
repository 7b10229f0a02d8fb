/* --spread's choice (src/lease/spread.c): the same rows give every
 * candidate the same answer, and many free leases end up spread. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "lease/spread.h"

Test(spread, twenty_free_leases_on_four_hosts_go_five_to_each)
{
	static char lease[20][16];
	static const char *const host[4] = {"web1", "web2", "web3", "web4"};
	struct spread_row rows[80];
	int per[4] = {0};
	size_t n = 0;

	for (int l = 0; l < 20; l++) {
		snprintf(lease[l], sizeof(lease[l]), "job-%d", l);
		for (int k = 0; k < 4; k++)
			rows[n++] = (struct spread_row){lease[l], host[k], false};
	}
	for (int l = 0; l < 20; l++) {
		const char *c = spread_choice(rows, n, lease[l]);
		cr_assert_not_null(c);
		for (int k = 0; k < 4; k++)
			per[k] += strcmp(c, host[k]) == 0;
	}
	for (int k = 0; k < 4; k++)
		cr_assert_eq(per[k], 5, "%s takes %d", host[k], per[k]);
}

Test(spread, a_host_that_holds_leases_already_gets_the_free_ones_last)
{
	struct spread_row rows[] = {
	    {"a", "busy", true},
	    {"b", "busy", true},
	    {"c", "busy", false},
	    {"c", "idle", false},
	};

	cr_assert_str_eq(spread_choice(rows, 4, "c"), "idle");
}

Test(spread, a_held_lease_or_one_without_candidates_has_no_choice)
{
	struct spread_row rows[] = {{"a", "web1", true}, {"a", "web2", false}};

	cr_assert_null(spread_choice(rows, 2, "a"));
	cr_assert_null(spread_choice(rows, 2, "nope"));
}

Test(spread, a_host_is_the_holders_name_up_to_its_first_colon)
{
	char h[64];

	spread_host("web1:812:5d0c9a1e", h, sizeof(h));
	cr_assert_str_eq(h, "web1");
	spread_host("h3", h, sizeof(h));
	cr_assert_str_eq(h, "h3");
}
