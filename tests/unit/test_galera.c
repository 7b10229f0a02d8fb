#include <criterion/criterion.h>
#include <string.h>

#include "db/galera.h"

Test(galera, iso_8601_durations_as_galera_writes_them)
{
	const char *end;

	cr_assert_eq(galera_parse_duration("PT5S", &end), 5000000);
	cr_assert_eq(*end, '\0');
	cr_assert_eq(galera_parse_duration("PT1.5S", NULL), 1500000);
	cr_assert_eq(galera_parse_duration("PT0.25S", NULL), 250000);
	cr_assert_eq(galera_parse_duration("PT1M30S", NULL), 90000000);
	cr_assert_eq(galera_parse_duration("PT2H", NULL), INT64_C(7200000000));
	cr_assert_eq(galera_parse_duration("P1DT1S", NULL), INT64_C(86401000000));
	cr_assert_eq(galera_parse_duration("PT3S; next", &end), 3000000);
	cr_assert_str_eq(end, "; next");
}

Test(galera, malformed_durations_are_refused)
{
	cr_assert_eq(galera_parse_duration("5S", NULL), -1);
	cr_assert_eq(galera_parse_duration("PT", NULL), -1);
	cr_assert_eq(galera_parse_duration("P", NULL), -1);
	cr_assert_eq(galera_parse_duration("PTS", NULL), -1);
	cr_assert_eq(galera_parse_duration("PT5S5M", NULL), -1, "units out of order");
	cr_assert_eq(galera_parse_duration("PT5X", NULL), -1);
	cr_assert_eq(galera_parse_duration("P5S", NULL), -1, "seconds need the T");
}

Test(galera, suspect_timeout_is_found_among_the_provider_options)
{
	const char *opts = "base_dir = /var/lib/mysql/; evs.inactive_timeout = PT15S; evs.suspect_timeout = PT5S; "
			   "evs.use_aggregate = true; gcache.size = 128M";

	cr_assert_eq(galera_suspect_timeout_us(opts), 5000000);
	cr_assert_eq(galera_suspect_timeout_us("evs.suspect_timeout = PT2.5S"), 2500000);
	cr_assert_eq(galera_suspect_timeout_us("x.evs.suspect_timeout = PT9S; evs.suspect_timeout = PT1S"), 1000000,
		     "only the whole key counts");
	cr_assert_eq(galera_suspect_timeout_us("evs.suspect_timeout = soon"), 0);
	cr_assert_eq(galera_suspect_timeout_us(""), 0);
}

Test(galera, local_state_names)
{
	cr_assert_str_eq(galera_state_name(GALERA_SYNCED), "4 Synced");
	cr_assert_str_eq(galera_state_name(2), "2 Donor/Desynced");
	cr_assert_str_eq(galera_state_name(-1), "unknown");
	cr_assert_str_eq(galera_state_name(9), "unknown");
}
