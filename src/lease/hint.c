#include "hint.h"

#include <stdio.h>

/* A hint statement failed. A lost connection (a server restart, a killed
 * session) says nothing about the hint: the next statement reconnects and
 * it works again. Anything else (the server refuses named locks) switches
 * it off for the rest of the run. */
static void hint_failed(struct hint *h, enum db_status st)
{
	if (st != DB_UNAVAILABLE && db_connected(h->db))
		h->on = false;
}

/* The hint's statements go as text: the lock name is leaderrun's own hex
 * ("leaderrun:" and 16 hex digits, see lease_hint_name) and a validated
 * database name, never user data, and a prepare would cost a round trip
 * each. */
static enum db_status hint_query(struct hint *h, const char *q, int64_t *v)
{
	struct db_err err;

	*v = 0;
	return db_query_int(h->db, q, v, &err);
}

void hint_init(struct hint *h, struct db *db, const struct lease_sql *sql, bool on)
{
	*h = (struct hint){.db = db, .sql = sql, .on = on};
}

void hint_keep(struct hint *h, const char *name)
{
	snprintf(h->keep, sizeof(h->keep), "%s", name);
	h->keep_lost = false;
}

void hint_new_session(struct hint *h, bool galera)
{
	h->held = false;
	h->marked = 0;
	if (h->keep[0]) {
		h->keep[0] = '\0';
		h->keep_lost = true;
	}
	/* The hint's named lock is local to one node and session: on Galera
	 * (where MariaDB refuses it anyway) a follower could wait on a lock
	 * the leader never took. */
	if (galera)
		h->on = false;
}

/* The SQL expression of SLOT's hint name: leaderrun:HASH:DB[:sSLOT], DB
 * 8 hex digits of the database's SHA-256, computed by the server
 * (lease_hint_name). At most 40 characters, 61 with a term's mark.
 *
 * Older builds named the hint for table and lease alone (slot 0's hint
 * was leaderrun:HASH). In a fleet of old and new builds on one database
 * the two kinds of name never meet: a follower finds the other kind's
 * leader's hint unheld and polls the row at its retry interval, and wakes
 * at the expiry it read at the latest. That costs latency, never safety:
 * the hint decides nothing, every acquisition is the row's
 * compare-and-set. */
void hint_sql(char *out, size_t len, const struct lease_sql *sql, unsigned slot)
{
	char suffix[24] = "";

	if (slot > 0)
		snprintf(suffix, sizeof(suffix), ", ':s%u'", slot);
	snprintf(out, len, "CONCAT('%s:', LEFT(SHA2(COALESCE(%s, ''), 256), 8)%s)", sql->hint_name, sql->hint_db,
		 suffix);
}

void hint_take(struct hint *h, unsigned slot, uint64_t term)
{
	char q[384], name[192];
	int64_t v;
	enum db_status st;

	h->woken_for = 0;
	/* Its followers are to wait for that slot's leader, not for us. */
	if (h->on && h->held && h->slot != slot)
		hint_drop(h);
	if (!h->on || (h->held && h->marked == term))
		return;
	h->slot = slot;
	/* Both: the hint, and the term's mark, which says to followers that
	 * the hint's holder is this term's leader (the mark is never taken
	 * by anyone else: terms are unique). The name is computed once, in
	 * a derived table of no table. */
	hint_sql(name, sizeof(name), h->sql, slot);
	snprintf(q, sizeof(q),
		 "SELECT GET_LOCK(CONCAT(h, ':%llu'), 0) + 2 * GET_LOCK(h, 0) FROM (SELECT %s AS h) AS hint",
		 (unsigned long long)term, name);
	st = hint_query(h, q, &v);
	if (st != DB_OK)
		hint_failed(h, st);
	/* A follower woken by the hint holds it already: GET_LOCK on a lock
	 * of one's own succeeds (and counts; hint_drop lets go of all). */
	h->held = h->on && st == DB_OK && v == 3;
	h->marked = h->held ? term : 0;
}

void hint_took(struct hint *h, const struct lease_with *with, uint64_t term)
{
	if (with->hint_failed)
		h->on = false;
	h->woken_for = 0;
	h->slot = 0;
	h->held = h->on && with->hint_got;
	h->marked = h->held ? term : 0;
}

/* The reply of the wait's statement (see hint_wait). */
static enum hint_wake hint_wake_of(int64_t v)
{
	switch (v) {
	case 11: /* the lock, and the mark gone too: the leader's session ended */
		return HINT_LEADER_GONE;
	case 1: /* the lock, with the mark still held: handed on by somebody else */
		return HINT_HANDED_ON;
	case 2: /* nobody held it */
	case 3: /* somebody other than TERM's leader holds it */
		return HINT_POLL;
	default:
		return HINT_TIMED_OUT;
	}
}

enum hint_wake hint_wait(struct hint *h, unsigned slot, uint64_t term, int64_t timeout_us)
{
	char q[768], name[192];
	int64_t v, ms = timeout_us <= 0 ? 0 : (timeout_us + 999) / 1000;
	enum hint_wake how;
	enum db_status st;

	h->woken_slot = slot;
	h->woken_for = 0;
	if (!h->on)
		return HINT_OFF;
	/* Only a hint that TERM's leader holds is worth blocking on: it lets
	 * go when that leader does, or dies with it. A free lock is not
	 * taken (a leader that could not take the hint takes it at its next
	 * renew, and a follower that grabbed it would wake for nothing); one
	 * held by somebody else (a follower woken by a dead leader, or a
	 * leader frozen out of its term) would not wake us when TERM's leader
	 * lets go.
	 * No table in this statement (the derived table reads none): a
	 * follower blocks here for up to a ttl, and a statement that kept the
	 * lease table open that long would hold its metadata lock, so that an
	 * ALTER TABLE queued behind it would stall the leader's renews
	 * (measured on MariaDB 10.11). The timeout has millisecond steps
	 * (MariaDB takes fractions; MySQL rounds). */
	hint_sql(name, sizeof(name), h->sql, slot);
	snprintf(q, sizeof(q),
		 "SELECT CASE WHEN IS_USED_LOCK(h) IS NULL THEN 2 "
		 "WHEN NOT IS_USED_LOCK(h) <=> IS_USED_LOCK(CONCAT(h, ':%llu')) THEN 3 "
		 "ELSE GET_LOCK(h, %lld.%03lld) + 10 * (IS_USED_LOCK(CONCAT(h, ':%llu')) IS NULL) END "
		 "FROM (SELECT %s AS h) AS hint",
		 (unsigned long long)term, (long long)(ms / 1000), (long long)(ms % 1000), (unsigned long long)term,
		 name);
	st = hint_query(h, q, &v);
	if (st != DB_OK) {
		/* Not woken, whatever the reply said: look again. */
		hint_failed(h, st);
		return h->on ? HINT_POLL : HINT_OFF;
	}
	how = hint_wake_of(v);
	if (how == HINT_LEADER_GONE || how == HINT_HANDED_ON) {
		h->held = true;
		h->slot = slot;
	}
	if (how == HINT_LEADER_GONE)
		h->woken_for = term;
	return how;
}

enum hint_wake hint_wait_behind(struct hint *h, const char *lock, int64_t timeout_us)
{
	char q[256];
	int64_t v, ms = timeout_us <= 0 ? 0 : (timeout_us + 999) / 1000;
	enum db_status st;

	h->woken_for = 0;
	if (!h->on)
		return HINT_OFF;
	/* Taken only to learn that it came free, and given back in the same
	 * statement: its owner, writing its row again, waits a second for it
	 * (standby_register). LOCK has standby_lock_name's form (lease.c
	 * checked the row's). */
	snprintf(q, sizeof(q), "SELECT IF(GET_LOCK('%s', %lld.%03lld) = 1, RELEASE_LOCK('%s') + 10, 0)", lock,
		 (long long)(ms / 1000), (long long)(ms % 1000), lock);
	st = hint_query(h, q, &v);
	if (st != DB_OK) {
		hint_failed(h, st);
		return h->on ? HINT_POLL : HINT_OFF;
	}
	return v == 11 ? HINT_BEHIND_GONE : HINT_TIMED_OUT;
}

void hint_nudge(struct hint *h)
{
	char q[160];
	int64_t v;

	if (!h->keep[0] || !db_connected(h->db))
		return;
	snprintf(q, sizeof(q), "SELECT RELEASE_LOCK('%s') + GET_LOCK('%s', 1)", h->keep, h->keep);
	(void)hint_query(h, q, &v);
	if (v != 2)
		h->keep_lost = true;
}

bool hint_after_attempt(struct hint *h, enum lease_outcome outcome, const struct lease_info *info)
{
	uint64_t woken_for = h->woken_for;

	/* Once: the attempt after the wake decides. */
	h->woken_for = 0;
	if (!h->held || !db_connected(h->db))
		return false;
	if (woken_for != 0 && outcome == LEASE_BUSY && info->why == BUSY_HELD && info->term == woken_for &&
	    info->slot == h->woken_slot && info->expires_in_us > 0)
		return true;
	hint_drop(h);
	return false;
}

void hint_drop(struct hint *h)
{
	int64_t v;

	char q[128];

	/* All of this session's named locks: a follower woken by the hint
	 * took it once more when it won the row, and named locks count. The
	 * one kept is taken again in the same statement (its name is
	 * standby.h's hex, no user text), waiting a second for it: a
	 * candidate that waits behind this one (hint_wait_behind) is granted
	 * it the moment it is let go of, and gives it back at once. */
	if (h->keep[0])
		snprintf(q, sizeof(q), "SELECT (RELEASE_ALL_LOCKS() > 0) + GET_LOCK('%s', 1)", h->keep);
	else
		snprintf(q, sizeof(q), "SELECT RELEASE_ALL_LOCKS() > 0");
	(void)hint_query(h, q, &v);
	hint_dropped(h);
}

void hint_dropped(struct hint *h)
{
	h->held = false;
	h->marked = 0;
}
