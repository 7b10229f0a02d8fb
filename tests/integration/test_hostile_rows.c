/* Issue 25, "Nothing escapes": any contender may write the lease and
 * history tables (it has UPDATE on them), so every string column is
 * hostile. Rows carrying terminal escapes, CR, LF, C0 and C1 controls and
 * DEL go through --status, --history, --release and the logs: the text
 * outputs show them escaped (no raw control byte, no fake table row), and
 * every JSON output parses, whole. The two Prometheus outputs merge in one
 * node_exporter textfile directory. */
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "harness.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

/* A screen clear, a window title, a carriage return over the line, a fake
 * table row after a newline, a tab, DEL, CSI as the C1 control U+009B and
 * NEL (U+0085). */
static const char HOLDER[] = "evil\x1b[2J\x1b]0;pwned\x07\rfake\nrow-lease  held  intruder  7\t\x7f\xc2\x9b"
			     "31m\xc2\x85"
			     "end";
static const char HOST[] = "\x1b[31mhost\r\nx";
static const char OUTCOME[] = "\x1b[2Jexit";

static int run(struct h_proc *p, const char *const args[])
{
	h_leaderrun(p, args);
	return h_finish(p, 30000);
}

/* S as SQL: CONVERT(UNHEX('...') USING utf8mb4), in a static rotating
 * buffer. */
static const char *sql_str(const char *s)
{
	static char buf[4][1200];
	static int k;
	char *b = buf[k++ % 4];
	size_t n = (size_t)sprintf(b, "CONVERT(UNHEX('");

	for (; *s; s++)
		n += (size_t)sprintf(b + n, "%02x", (unsigned char)*s);
	sprintf(b + n, "') USING utf8mb4)");
	return b;
}

/* 255 bytes of \x01: the longest paused_by, six bytes each as \u0001. */
static const char *long_controls(void)
{
	static char s[256];

	memset(s, 1, 255);
	s[255] = '\0';
	return s;
}

/* A lease with one finished run, then held for an hour and paused by
 * hostile strings, as a contender with UPDATE could leave it. */
static void hostile_lease(const char *lease, bool paused)
{
	struct h_proc p;

	cr_assert_eq(run(&p, (const char *const[]){"-n", "-l", lease, "--", "true", NULL}), 0, "%s", h_slurp(p.err));
	h_sql("UPDATE leaderrun_lease SET holder=%s, paused_by=%s, paused_until=%s, "
	      "expires_at=UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, renewed_at=UTC_TIMESTAMP(6) WHERE name='%s'",
	      sql_str(HOLDER), sql_str(long_controls()), paused ? "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR" : "NULL", lease);
	h_sql("UPDATE leaderrun_history SET holder=%s, host=%s, outcome=%s WHERE lease='%s'", sql_str(HOLDER),
	      sql_str(HOST), sql_str(OUTCOME), lease);
}

/* Fails on any raw control character in the file at PATH but the line
 * ends: C0 but LF, DEL, C1 (UTF-8 C2 80..C2 9F). */
static void assert_no_raw_controls(const char *what, const char *path)
{
	const unsigned char *s = (const unsigned char *)h_slurp(path);

	for (size_t i = 0; s[i]; i++) {
		bool bad = (s[i] < 0x20 && s[i] != '\n') || s[i] == 0x7f ||
			   (s[i] == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f);
		cr_assert(!bad, "%s: raw control byte 0x%02x at offset %zu", what, s[i], i);
	}
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static int lines(const char *path)
{
	int n = 0;

	for (const char *s = h_slurp(path); *s; s++)
		n += *s == '\n';
	return n;
}

/* Python's strict JSON (no raw controls in strings) on strict UTF-8: the
 * file at PATH is one document (LINES false) or one per line. With KEY,
 * the first object's KEY (of the document's first element) must be EXPECT
 * exactly: nothing truncated. */
static void assert_json(const char *what, const char *path, bool per_line, const char *key, const char *expect)
{
	static const char py[] =
	    "import json, sys\n"
	    "text = open(sys.argv[1], 'rb').read().decode('utf-8')\n"
	    "docs = [json.loads(l) for l in text.split('\\n') if l] if sys.argv[2] == 'lines' else [json.loads(text)]\n"
	    "if sys.argv[3]:\n"
	    "    first = docs[0][0] if isinstance(docs[0], list) else docs[0]\n"
	    "    want = bytes.fromhex(sys.argv[4]).decode('utf-8')\n"
	    "    assert first[sys.argv[3]] == want, repr(first[sys.argv[3]])\n";
	char hex[1024] = "";
	struct h_proc p;

	for (size_t i = 0; expect && expect[i] && i < 500; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)expect[i]);
	h_start(&p,
		(const char *const[]){"python3", "-c", py, path, per_line ? "lines" : "doc", key ? key : "", hex, NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s is not valid JSON: %s", what, h_slurp(p.err));
}

Test(hostile_rows, status_table_shows_control_characters_escaped_on_one_line)
{
	struct h_proc p;
	const char *lease = h_lease("st");

	hostile_lease(lease, true);
	cr_assert_eq(run(&p, (const char *const[]){"--status", lease, NULL}), 0, "%s", h_slurp(p.err));
	assert_no_raw_controls("--status", p.out);
	/* Header, the row, the footer: no fake row. */
	cr_assert_eq(lines(p.out), 3, "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "evil\\x1b[2J"), "ESC not shown as \\x1b: %s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\\x01\\x01"), "paused_by not shown: %s", h_slurp(p.out));
}

Test(hostile_rows, status_of_every_lease_escapes_a_hostile_lease_name)
{
	struct h_proc p;
	char name[200];

	snprintf(name, sizeof(name), "%s\x1b[2J\r\nfake", h_lease("name"));
	h_sql("INSERT INTO leaderrun_lease (name, holder) VALUES (%s, %s)", sql_str(name), sql_str(HOLDER));
	cr_assert_eq(run(&p, (const char *const[]){"--status", NULL}), 0, "%s", h_slurp(p.err));
	assert_no_raw_controls("--status (all)", p.out);
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--json", NULL}), 0, "%s", h_slurp(p.err));
	assert_json("--status --json (all)", p.out, false, NULL, NULL);
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--format", "prometheus", NULL}), 0, "%s",
		     h_slurp(p.err));
	assert_no_raw_controls("--status --format prometheus (all)", p.out);
}

Test(hostile_rows, status_json_of_hostile_rows_parses_and_keeps_every_character)
{
	struct h_proc p;
	const char *lease = h_lease("sj");

	hostile_lease(lease, true);
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--json", lease, NULL}), 0, "%s", h_slurp(p.err));
	assert_json("--status --json", p.out, false, "holder", HOLDER);
	assert_json("--status --json", p.out, false, "paused_by", long_controls());
}

Test(hostile_rows, status_prometheus_of_hostile_rows_carries_no_raw_control_and_parses)
{
	struct h_proc p, check;
	const char *lease = h_lease("sp");
	char cmd[400];

	hostile_lease(lease, false);
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--format", "prometheus", lease, NULL}), 0, "%s",
		     h_slurp(p.err));
	assert_no_raw_controls("--status --format prometheus", p.out);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s'", p.out);
	h_start(&check, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
	cr_assert_eq(h_finish(&check, 20000), 0, "promtool: %s %s\n%s", h_slurp(check.out), h_slurp(check.err),
		     h_slurp(p.out));
}

Test(hostile_rows, history_text_and_json_of_hostile_runs)
{
	struct h_proc p;
	const char *lease = h_lease("hi");

	hostile_lease(lease, false);
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, NULL}), 0, "%s", h_slurp(p.err));
	assert_no_raw_controls("--history", p.out);
	cr_assert_eq(lines(p.out), 3, "%s", h_slurp(p.out));
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, "--json", NULL}), 0, "%s", h_slurp(p.err));
	assert_json("--history --json", p.out, false, "holder", HOLDER);
	assert_json("--history --json", p.out, false, "host", HOST);
	assert_json("--history --json", p.out, false, "outcome", OUTCOME);
}

Test(hostile_rows, json_logs_quoting_a_hostile_row_stay_json)
{
	struct h_proc p;
	const char *lease = h_lease("jl");

	/* Paused: the notice quotes the 255 controls of paused_by. */
	hostile_lease(lease, true);
	cr_assert_eq(
	    run(&p, (const char *const[]){"-v", "--log-format", "json", "-n", "-l", lease, "--", "true", NULL}), 75,
	    "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "\"event\":\"paused\""), "%s", h_slurp(p.err));
	assert_json("JSON log (paused)", p.err, true, NULL, NULL);
	/* Held: "held by HOLDER". */
	h_sql("UPDATE leaderrun_lease SET paused_until=NULL WHERE name='%s'", lease);
	cr_assert_eq(
	    run(&p, (const char *const[]){"-v", "--log-format", "json", "-n", "-l", lease, "--", "true", NULL}), 75,
	    "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "\"event\":\"busy\""), "%s", h_slurp(p.err));
	assert_json("JSON log (busy)", p.err, true, NULL, NULL);
}

Test(hostile_rows, text_logs_and_operator_messages_escape_a_hostile_row)
{
	struct h_proc p;
	const char *lease = h_lease("tl");

	hostile_lease(lease, true);
	cr_assert_eq(run(&p, (const char *const[]){"-v", "-n", "-l", lease, "--", "true", NULL}), 75, "%s",
		     h_slurp(p.err));
	assert_no_raw_controls("text log (paused)", p.err);
	cr_assert_eq(lines(p.err), count(h_slurp(p.err), "leaderrun["), "a log line that is no log line: %s",
		     h_slurp(p.err));
	h_sql("UPDATE leaderrun_lease SET paused_until=NULL WHERE name='%s'", lease);
	cr_assert_eq(run(&p, (const char *const[]){"-v", "-n", "-l", lease, "--", "true", NULL}), 75, "%s",
		     h_slurp(p.err));
	assert_no_raw_controls("text log (busy)", p.err);
	cr_assert(strstr(h_slurp(p.err), "held by evil\\x1b[2J"), "%s", h_slurp(p.err));
	/* --pause, --resume and --release quote the row's holder and pauser. */
	cr_assert_eq(run(&p, (const char *const[]){"--pause", lease, NULL}), 0, "%s", h_slurp(p.err));
	assert_no_raw_controls("--pause", p.out);
	h_sql("UPDATE leaderrun_lease SET paused_by=%s WHERE name='%s'", sql_str(HOLDER), lease);
	cr_assert_eq(run(&p, (const char *const[]){"--resume", lease, NULL}), 0, "%s", h_slurp(p.err));
	assert_no_raw_controls("--resume", p.out);
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, NULL}), 0, "%s", h_slurp(p.err));
	assert_no_raw_controls("--release", p.out);
	cr_assert_eq(lines(p.out), 1, "%s", h_slurp(p.out));
}

/* How many samples of leaderrun's TEXT has. */
static int samples(const char *text)
{
	int n = 0;

	for (const char *s = text; s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		n += strncmp(s, "leaderrun_", 10) == 0;
	return n;
}

static const char *node_exporter(void)
{
	static const char *const where[] = {"/usr/bin/prometheus-node-exporter", "/usr/sbin/prometheus-node-exporter",
					    "/usr/bin/node_exporter"};

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

/* Scrapes node_exporter's /metrics into FILE with python3 (no curl in the
 * test dependencies); true once it answers. */
static bool scrape(int port, const char *file)
{
	char url[64];
	struct h_proc p;
	static const char py[] =
	    "import sys, urllib.request\n"
	    "open(sys.argv[2], 'wb').write(urllib.request.urlopen(sys.argv[1], timeout=5).read())\n";

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	h_start(&p, (const char *const[]){"python3", "-c", py, url, file, NULL}, NULL);
	return h_finish(&p, 20000) == 0;
}

Test(hostile_rows, metrics_file_and_status_prometheus_merge_in_one_textfile_directory)
{
	struct h_proc holder, status, ne;
	const char *lease = h_lease("ne"), *bin = node_exporter();
	char dir[300], a[400], b[400], scraped[400], flag[400], listen[64], line[400], *fa, *fb;
	int port;
	FILE *f;

	if (!bin)
		cr_skip_test("prometheus-node-exporter not installed (scripts/install-deps test installs it)");
	snprintf(dir, sizeof(dir), "%s/textfile", h_dir());
	cr_assert_eq(mkdir(dir, 0755), 0);
	snprintf(a, sizeof(a), "%s/a.prom", dir);
	snprintf(b, sizeof(b), "%s/b.prom", dir);
	snprintf(scraped, sizeof(scraped), "%s/scraped", h_dir());
	LR(&holder, "-t", "5s", "-l", lease, "--metrics-file", a, "--", "sh", "-c", "echo up; exec sleep 30");
	cr_assert(h_wait_file(holder.out, "up", 10000), "%s", h_slurp(holder.err));
	snprintf(line, sizeof(line), "{lease=\"%s\"} 1", lease);
	cr_assert(h_wait_file(a, line, 10000), "%s", h_slurp(a));
	cr_assert_eq(run(&status, (const char *const[]){"--status", "--format", "prometheus", NULL}), 0, "%s",
		     h_slurp(status.err));
	f = fopen(b, "w");
	fputs(h_slurp(status.out), f);
	fputc('\n', f);
	fclose(f);

	port = h_free_port();
	snprintf(flag, sizeof(flag), "--collector.textfile.directory=%s", dir);
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", port);
	h_start(&ne,
		(const char *const[]){bin, flag, "--collector.disable-defaults", "--collector.textfile", listen, NULL},
		NULL);
	{
		int64_t end = h_now_ms() + 15000;
		while (!scrape(port, scraped) && h_now_ms() < end)
			h_sleep_ms(100);
	}
	/* The files as scraped: the holder's changes when its command ends. */
	fa = strdup(h_slurp(a));
	fb = strdup(h_slurp(b));
	kill(ne.pid, SIGTERM);
	h_finish(&ne, 10000);
	kill(holder.pid, SIGTERM);
	h_finish(&holder, 20000);
	cr_assert(strstr(h_slurp(scraped), "node_textfile_scrape_error 0"),
		  "node_exporter could not merge the files: %s\n--- a.prom:\n%s\n--- b.prom:\n%s\n--- stderr:\n%s",
		  h_slurp(scraped), h_slurp(a), h_slurp(b), h_slurp(ne.err));
	/* node_exporter logs a gathering error and drops the samples of a
	 * family whose HELP or TYPE differs between files, or a series that
	 * both carry, and still says scrape_error 0: every sample of both
	 * files must come through. */
	cr_assert_null(strstr(h_slurp(ne.err), "error gathering metrics"), "%s", h_slurp(ne.err));
	{
		char *got = strdup(h_slurp(scraped));
		int ns = samples(got), na = samples(fa), nb = samples(fb);
		cr_assert_eq(ns, na + nb,
			     "%d + %d samples in, %d out\n--- a.prom:\n%s\n--- b.prom:\n%s\n--- scraped:\n%s", na, nb,
			     ns, fa, fb, got);
		free(got);
		free(fa);
		free(fb);
	}
	/* Both writers' samples of the lease are there. */
	snprintf(line, sizeof(line), "leaderrun_lease_held{lease=\"%s\"} 1", lease);
	cr_assert(strstr(h_slurp(scraped), line), "the fleet's sample is missing: %s", h_slurp(scraped));
	snprintf(line, sizeof(line), "leaderrun_lease_acquisitions_total{lease=\"%s\"} 1", lease);
	cr_assert(strstr(h_slurp(scraped), line), "the process's sample is missing: %s", h_slurp(scraped));
}
