#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "report/sdnotify.h"

static const socklen_t base = (socklen_t)offsetof(struct sockaddr_un, sun_path);

Test(sdnotify_address, path_counts_its_terminating_nul)
{
	struct sockaddr_un sa;
	socklen_t len = 0;
	char err[256];

	cr_assert_eq(sdnotify_address("/run/systemd/notify", &sa, &len, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sa.sun_family, AF_UNIX);
	cr_assert_str_eq(sa.sun_path, "/run/systemd/notify");
	cr_assert_eq(len, base + strlen("/run/systemd/notify") + 1);
}

Test(sdnotify_address, abstract_name_starts_with_nul_and_counts_no_terminator)
{
	struct sockaddr_un sa;
	socklen_t len = 0;
	char err[256];

	cr_assert_eq(sdnotify_address("@sd-notify/x", &sa, &len, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sa.sun_path[0], '\0');
	cr_assert_eq(memcmp(sa.sun_path + 1, "sd-notify/x", 11), 0);
	cr_assert_eq(len, base + 12);
}

Test(sdnotify_address, refuses_relative_empty_vsock_and_bare_prefixes)
{
	const char *bad[] = {"", "run/notify", "vsock:2:1234", "@", "/", NULL};
	struct sockaddr_un sa;
	socklen_t len;
	char err[256];

	for (int i = 0; bad[i]; i++) {
		err[0] = '\0';
		cr_assert_eq(sdnotify_address(bad[i], &sa, &len, err, sizeof(err)), -1, "%s accepted", bad[i]);
		cr_assert(strstr(err, "NOTIFY_SOCKET"), "message for %s: %s", bad[i], err);
	}
	cr_assert_eq(sdnotify_address(NULL, &sa, &len, err, sizeof(err)), -1);
}

Test(sdnotify_address, longest_fitting_path_and_name)
{
	struct sockaddr_un sa;
	socklen_t len;
	char v[sizeof(sa.sun_path) + 2], err[256];

	/* A path needs room for its NUL: 107 bytes fit, 108 do not. */
	memset(v, 'a', sizeof(v));
	v[0] = '/';
	v[sizeof(sa.sun_path) - 1] = '\0';
	cr_assert_eq(sdnotify_address(v, &sa, &len, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(len, sizeof(struct sockaddr_un));
	v[sizeof(sa.sun_path) - 1] = 'a';
	v[sizeof(sa.sun_path)] = '\0';
	cr_assert_eq(sdnotify_address(v, &sa, &len, err, sizeof(err)), -1);
	cr_assert(strstr(err, "bytes long"), "%s", err);
	/* An abstract name fills sun_path: 108 bytes with the '@'. */
	v[0] = '@';
	cr_assert_eq(sdnotify_address(v, &sa, &len, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(len, sizeof(struct sockaddr_un));
	v[sizeof(sa.sun_path)] = 'a';
	v[sizeof(sa.sun_path) + 1] = '\0';
	cr_assert_eq(sdnotify_address(v, &sa, &len, err, sizeof(err)), -1);
}

Test(sdnotify_watchdog, honoured_when_pid_unset_empty_or_ours)
{
	char err[256];

	cr_assert_eq(sdnotify_watchdog_usec("30000000", NULL, 42, err, sizeof(err)), 30000000);
	cr_assert_eq(sdnotify_watchdog_usec("30000000", "", 42, err, sizeof(err)), 30000000);
	cr_assert_eq(sdnotify_watchdog_usec("30000000", "42", 42, err, sizeof(err)), 30000000);
}

Test(sdnotify_watchdog, none_when_unset_or_meant_for_another_process)
{
	char err[256];

	cr_assert_eq(sdnotify_watchdog_usec(NULL, NULL, 42, err, sizeof(err)), 0);
	cr_assert_eq(sdnotify_watchdog_usec("", "42", 42, err, sizeof(err)), 0);
	cr_assert_eq(sdnotify_watchdog_usec("30000000", "43", 42, err, sizeof(err)), 0);
}

Test(sdnotify_watchdog, malformed_values_are_errors)
{
	const char *usec[] = {"0", "-5", "1s", " 5", "99999999999999999999", NULL};
	const char *pid[] = {"0", "abc", "-1", "12 ", "99999999999", NULL};
	char err[256];

	for (int i = 0; usec[i]; i++) {
		cr_assert_eq(sdnotify_watchdog_usec(usec[i], NULL, 42, err, sizeof(err)), -1, "%s", usec[i]);
		cr_assert(strstr(err, "WATCHDOG_USEC"), "%s", err);
	}
	for (int i = 0; pid[i]; i++) {
		cr_assert_eq(sdnotify_watchdog_usec("1000", pid[i], 42, err, sizeof(err)), -1, "%s", pid[i]);
		cr_assert(strstr(err, "WATCHDOG_PID"), "%s", err);
	}
}
