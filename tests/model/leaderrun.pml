/* leaderrun's lease protocol, as the C code runs it, for spin.
 *
 * tests/model/README.md maps every process and variable here to the C
 * function it stands for; scripts/check-model runs the checks. One file for
 * the real model and every mutant: a mutant is this file with one -DMUTANT_*
 * macro, so the two cannot drift apart.
 *
 * Time is discrete. One tick of the clock process is one unit of real time;
 * the clients' CLOCK_BOOTTIME advances one unit a tick, the server's clock
 * one unit, or two (fast) or none (slow) within the drift bound. Every
 * timer is a countdown of ticks, so the state space is finite without a
 * horizon. A tick waits until every supervisor that is not paused has
 * handled what is due (poll() returns at once for a due timer or a ready
 * descriptor), and until every statement has run or been lost within its
 * delay bound: between two ticks everything else interleaves freely. */

/* ---- parameters: the assumptions of leaderrun(1) SAFETY, in ticks ------ */

#ifndef TTL
#define TTL 7		/* --ttl */
#endif
#ifndef RENEW
#define RENEW 2		/* --renew-interval: ttl/3, rounded down */
#endif
#ifndef GRACE
#define GRACE 1		/* --kill-grace: ttl/4, rounded down */
#endif
#ifndef MARGIN
#define MARGIN 3	/* the margin: DRIFT + PAUSE + 1 tick for SIGKILL */
#endif
#ifndef BUDGET
#define BUDGET 1	/* timing_attempt_budget: renew/2 */
#endif
#ifndef RETRY
#define RETRY 1		/* timing_retry_step after a failed renew */
#endif
#ifndef WAIT
#define WAIT 2		/* --retry-interval: a follower's longest sleep */
#endif
/* A statement runs within DELAY ticks of its send, its reply comes within
 * DELAY ticks of that, or either is lost. */
#ifndef DELAY
#define DELAY 1
#endif
/* The server's clock gains (or loses) at most DRIFT ticks on the clients'
 * in all: rate error over a lease period and steps together. A whole run
 * is a few lease periods, and spending the budget inside one of them is
 * the worst case. */
#ifndef DRIFT
#define DRIFT 1
#endif
/* A supervisor may be frozen (descheduled, stopped, a VM pause) for up to
 * PAUSE ticks at a time, any number of times. */
#ifndef PAUSE
#ifdef MUTANT_LONG_PAUSE
#define PAUSE (MARGIN - DRIFT)	/* one tick more than the margin leaves */
#else
#define PAUSE 1
#endif
#endif
#ifndef FAULTS
#define FAULTS 1	/* lost statements, lost replies, server restarts */
#endif
#ifndef CRASHES
#define CRASHES 1	/* leaderrun killed (SIGKILL) */
#endif
#ifndef ROUNDS
#define ROUNDS 1	/* runs of leaderrun per contender (safety) */
#endif
/* --preempt: revocations the waiting contender of the higher priority
 * (contender PREEMPTOR) sends, in all. */
#ifndef PREEMPTS
#define PREEMPTS 1
#endif
#define PREEMPTOR 1
/* --schedule with --catch-up (-DSCHEDULE): the slots, each contended for
 * by its first attempt, then rerun while its attempts are lost. */
#define NSLOTS 2
#ifdef SCHEDULE
/* Whether the contender goes on: a slot left, and a term to hand out (a
 * bound of the search, not the code's rule: once the terms are spent,
 * nothing more can start). */
#define SCHED_GO(i) (tg[i] < NSLOTS && row_term < MAXTERM)
#else
#define SCHED_GO(i) true
#endif
#ifndef MAXTERM
#ifdef LIVENESS
#define MAXTERM 255	/* liveness: terms are not checked */
#elif defined(SCHEDULE)
#define MAXTERM 2	/* a slot's attempt and its rerun, or two slots */
#else
#define MAXTERM 5	/* terms handed out before acquires stop matching */
#endif
#endif

/* The local deadline counts from the send: t_send + ttl - margin. */
#ifdef MUTANT_NO_MARGIN
#define DLEN TTL
#else
#define DLEN (TTL - MARGIN)
#endif

#define N 2		/* contenders */

/* ---- state ------------------------------------------------------------ */

/* supervisor phases (ph) */
#define WAITING 0	/* sup_acquire */
#define HOLD 1		/* sup_hold */
#define RELEASING 2	/* sup_release */
#define GONE 3		/* exited, or crashed for good */

/* a process of the command (ch: the command, gch: one descendant it left) */
#define NONE 0
#define ALIVE 1
#define ZOMBIE 2	/* dead, not yet reaped */

/* the statement on the worker's connection (sq) */
#define IDLE 0
#define SENT 1		/* on its way to the server */
#define EXECD 2		/* committed, the reply on its way */
#define ANSWERED 3	/* the worker has the reply */
#define LOST 4		/* statement or reply lost: nothing comes */

/* statements (sop, lop) */
#define ACQ 1		/* lease_acquire */
#define RNW 2		/* lease_renew */
#define REL 3		/* lease_release */
#define REV 4		/* --preempt: the revocation of the holder's term */
#define RACQ 5		/* --catch-up: the rerun of the row's slot */
#define RELX 6		/* --schedule: the release that records last_exit */
#define IS_ACQ(op) ((op) == ACQ || (op) == RACQ)
#define IS_REL(op) ((op) == REL || (op) == RELX)

/* The row (one lease name). Rows survive a server restart: commits are
 * durable. row_exp counts server ticks until expires_at; 0 is expired. */
byte row_holder;	/* 0: nobody yet, else contender + 1 */
byte row_term;
byte row_exp;
bool row_revoked;	/* revoked_term = term: the term renews no more */
byte drifted;		/* server ticks gained or lost so far */
byte faults;
byte crashes;
bool hint;		/* the wake-up hint's lock was let go */

byte ph[N];
byte rounds[N];
byte ch[N], gch[N];
bool spawned[N];	/* the command left its descendant already */
byte term[N];		/* s->term */
byte dl[N];		/* ticks to sup_deadline(); also the watcher's */
byte rnw[N];		/* ticks to next_renew (RELEASING: to give_up) */
byte gr[N];		/* ticks to the SIGKILL after the kill signal */
byte wt[N];		/* a follower's ticks of sleep left */
bool stop_sent[N], killed[N], lost[N], draining[N], aborted[N];
bool revoked[N];	/* a renew found our term revoked: HOLD_REVOKED */
byte seen[N];		/* the preemptor: the holder's term its last read saw */
byte preempts;		/* revocations sent */
byte pz[N];		/* ticks of pause left: the supervisor is frozen */

byte sq[N], sop[N], sdl[N], sterm[N];
byte age[N];		/* ticks since the worker sent the statement */
byte rres[N];		/* affected rows of the statement */
byte rid[N];		/* its LAST_INSERT_ID(); for a 0-row renew, renew_why:
			 * 1 if the term is held but revoked */
byte rexp[N];		/* the expiry a 0-row acquire read (lease_read) */
byte rsl[N];		/* --schedule: what it read of the slot (SLOT_READ) */
/* A statement whose attempt was abandoned may still reach the server. */
byte lop[N], ldl[N], lterm[N];

byte last_term;		/* the highest term ever handed to a command */
bool acquired_after_crash;

/* The fence (leaderrun_fence, one row) and the jobs' transactions. A job's
 * transaction runs on a session of its own, which outlives the command: a
 * killed job's transaction stays open until the server ends the session
 * (a timeout, a restart) or leaderrun_fence_end KILLs it. */
#define TX_NONE 0
#define TX_FENCED 1	/* fenced with tx_term (the row written and locked),
			 * its data row written; COMMIT to come */
byte fence_term;	/* the row's committed term */
byte fence_lock;	/* whose transaction holds the row's X lock: contender + 1 */
byte tx[N];		/* the job's transaction */
byte tx_term[N];	/* the LEADERRUN_TERM it fences with */

/* leaderrun's move of the fence to the new term (mv) */
#define MV_NONE 0
#define MV_SENT 1	/* UPDATE ... SET term=NEW WHERE term < NEW: waits for the lock */
#define MV_WAITED 2	/* its lock wait timed out (1205): end the stale session, again */
#define MV_DONE 3	/* committed: the command may start */
byte mv[N];
bool fencing[N];	/* acquired; the command waits for the move */

/* --preempt: the waiting preemptor, not frozen, its connection idle,
 * having read the holder's term, may send its one revocation at any time
 * (any priority rule picks some such moment). */
#define PREEMPTING(i) (i == PREEMPTOR && preempts < PREEMPTS)
#define PREEMPT_OK(i) \
	(PREEMPTING(i) && ph[i] == WAITING && sq[i] == IDLE && pz[i] == 0 && seen[i] != 0)

#ifdef SCHEDULE
/* --schedule, --catch-up: slot S (1..NSLOTS) is due once the server's
 * clock passed its time; the row's last_slot (0: NULL), and last_exit IS
 * NOT NULL (the slot's run ended by itself and was recorded). */
byte now_slot;
byte row_slot;
bool row_exit;
byte hslot[N];		/* the slot of the contender's run (1..NSLOTS) */
byte tg[N];		/* the slot it is after, from 0: slot tg + 1 */
bool rr[N];		/* its last read: that slot's attempt is to be rerun */
bool exited[N];		/* its command ended by itself: the release records it */
/* ghosts for the properties, per slot */
bool self_ended[NSLOTS + 1];	/* an attempt's command ended by itself */
bool slot_done[NSLOTS + 1];	/* a release recorded its last_exit */
byte slot_max_term[NSLOTS + 1];	/* the term of its latest command */
byte slot_rev_term[NSLOTS + 1];	/* the term of it an operator revoked */
#endif

/* Named in the assertions, so that a trail says which property failed. */
hidden byte mutual_exclusion, terms_grow, release_after_reap, fenced_writes;
hidden byte slot_attempts_exclusive, rerun_term_grows, slot_done_stays_done;
hidden byte done_only_if_ended, revoked_not_rerun;

/* ---- the server: one statement, executed atomically ------------------- */

#ifdef SCHEDULE
#define FIRST_OK(t) && row_slot < t && now_slot >= t
#ifdef MUTANT_RERUN_AT_ONCE
#define RERUN_FREE true	/* a held row of the slot, last_exit NULL, taken over */
#else
#define RERUN_FREE (row_exp == 0)
#endif
#ifdef MUTANT_RERUN_REVOKED
#define NOT_REVOKED true	/* revoked_term < term left out */
#else
#define NOT_REVOKED (!row_revoked)
#endif
/* After 0 rows, lease_read: the slot S (t) still to come (0), its
 * attempt held or lost, to be rerun once the row is free (1), or done:
 * ended, revoked, or a later slot taken (2). */
#define SLOT_READ(t, rd) \
	rd = (row_slot < t -> 0 : (row_slot == t && !row_exit && NOT_REVOKED -> 1 : 2))
#else
#define FIRST_OK(t)
#define SLOT_READ(t, rd) skip
#endif

inline srv_exec(op, i, t, res, iid, ex, rd)
{
	if
	:: op == ACQ ->
		/* WHERE name=? AND expires_at <= UTC_TIMESTAMP(6); --schedule,
		 * slot S (t): AND (last_slot IS NULL OR last_slot < S) AND
		 * UTC_TIMESTAMP(6) >= S, and slot_term=term+1, last_slot=S,
		 * last_exit=NULL. */
		if
		:: row_exp == 0 && row_term < MAXTERM FIRST_OK(t) ->
			row_holder = i + 1;
#ifdef SCHEDULE
			row_slot = t;
			row_exit = false;
#endif
#ifdef LIVENESS
			row_term = (row_term + 1) % 4;	/* not checked here */
#else
			row_term++;
#endif
			row_exp = TTL;
			row_revoked = false;	/* revoked_term <> the new term */
			res = 1;
			iid = row_term
		:: else ->
			res = 0;
			/* On Galera a loser's LAST_INSERT_ID() was found equal
			 * to the winner's new term. */
			iid = row_term;
			ex = row_exp;
			SLOT_READ(t, rd)
		fi
#ifdef SCHEDULE
	:: op == RACQ ->
		/* --catch-up, slot S (t): WHERE expires_at <= UTC_TIMESTAMP(6)
		 * AND last_slot = S AND last_exit IS NULL AND revoked_term <
		 * term AND UTC_TIMESTAMP(6) < S + WINDOW (the window is taken
		 * as open: a closed one only takes reruns away); term=term+1,
		 * slot_term kept. */
		if
		:: RERUN_FREE && row_term < MAXTERM && row_slot == t && !row_exit && NOT_REVOKED ->
			row_holder = i + 1;
#ifndef MUTANT_RERUN_SAME_TERM
			row_term++;
#endif
			row_exp = TTL;
			res = 1;
			iid = row_term
		:: else ->
			res = 0;
			iid = row_term;
			ex = row_exp;
			SLOT_READ(t, rd)
		fi
#endif
	:: op == RNW ->
		/* WHERE holder=? AND term=? AND expires_at > UTC_TIMESTAMP(6)
		 * AND revoked_term <> term. After 0 rows, lease_renew asks
		 * why (renew_why): held but revoked, or lost. (One step here:
		 * asked a moment later, the row can only have expired since,
		 * which answers "lost", the safe side.) */
		if
		:: row_holder == i + 1 && row_term == t && row_exp > 0 && !row_revoked ->
			row_exp = TTL;
			res = 1
		:: else ->
			res = 0;
			iid = (row_holder == i + 1 && row_term == t && row_exp > 0 -> 1 : 0)
		fi
	:: op == REV ->
		/* --preempt: UPDATE SET revoked_term=term WHERE holder=H AND
		 * term=T AND expires_at > UTC_TIMESTAMP(6); H is the other
		 * contender, T the term the preemptor read. */
		if
		:: row_holder == 2 - i && row_term == t && row_exp > 0 && !row_revoked ->
#ifdef MUTANT_PREEMPT_FORCE
			/* expires_at=UTC_TIMESTAMP(6), as --release --force */
			row_exp = 0;
#else
			row_revoked = true;
#endif
#ifdef SCHEDULE
			slot_rev_term[row_slot] = row_term;	/* --release: no loss */
#endif
			res = 1
		:: else -> res = 0
		fi
	:: IS_REL(op) ->
		if
		:: row_holder == i + 1 && row_term == t && row_exp > 0 ->
			row_exp = 0;
			hint = true;	/* RELEASE_ALL_LOCKS(): a follower may wake */
#ifdef SCHEDULE
			/* RELX: last_exit=the command's status */
			if
			:: op == RELX ->
				assert(done_only_if_ended || self_ended[row_slot]);
				row_exit = true;
				slot_done[row_slot] = true
			:: else
			fi;
#endif
			res = 1
		:: else -> res = 0
		fi
	fi
}

#define SERVER_FOR(i) \
	:: atomic { sq[i] == SENT -> \
		srv_exec(sop[i], i, sterm[i], rres[i], rid[i], rexp[i], rsl[i]); \
		sq[i] = EXECD; sdl[i] = DELAY } \
	:: atomic { sq[i] == EXECD -> sq[i] = ANSWERED; WAKE(i) } \
	:: atomic { (sq[i] == SENT || sq[i] == EXECD) && faults < FAULTS -> \
		sq[i] = LOST; faults++ } \
	:: atomic { lop[i] != 0 -> \
		srv_exec(lop[i], i, lterm[i], tres, tid, tex, tsl); lop[i] = 0 } \
	:: atomic { lop[i] != 0 -> lop[i] = 0 }

/* "term < NEW". The liveness run counts terms modulo 4: there every term
 * but the newest is older. */
#ifdef LIVENESS
#define OLDER(t, u) ((t) != (u))
#else
#define OLDER(t, u) ((t) < (u))
#endif

/* The move of the fence, in one autocommit statement: it waits for the
 * row's lock (innodb_lock_wait_timeout=1 on leaderrun's session), then
 * sets the row's term, never backwards, and commits; or its lock wait
 * times out (1205) and leaderrun is told. */
#ifdef MUTANT_MOVE_NO_WAIT
#define MOVE_FREE true	/* it commits over an open fenced transaction */
#else
#define MOVE_FREE (fence_lock == 0)
#endif
#define MOVE_FOR(i) \
	:: atomic { mv[i] == MV_SENT -> \
		if \
		:: MOVE_FREE -> \
			if :: OLDER(fence_term, term[i]) -> fence_term = term[i] :: else fi; \
			mv[i] = MV_DONE \
		:: fence_lock != 0 -> mv[i] = MV_WAITED \
		fi; \
		WAKE(i) }

/* A transaction ends (commit or rollback): its lock is let go. */
inline tx_end(j)
{
	if :: fence_lock == j + 1 -> fence_lock = 0 :: else fi;
	tx[j] = TX_NONE;
	tx_term[j] = 0
}

/* CALL leaderrun_fence_end(lease, slot, NEW): reads the row's uncommitted
 * fenced_by and KILLs that session when the row's term is older. */
inline fence_end(i)
{
	if
	:: fence_lock == 1 && OLDER(tx_term[0], term[i]) -> tx_end(0)
	:: fence_lock == 2 && OLDER(tx_term[1], term[i]) -> tx_end(1)
	:: else
	fi
}


/* ---- the command and its descendant ----------------------------------- */

/* --schedule: the command ended by itself if it exited before leaderrun
 * stopped it (the kill signal, SIGKILL); only then does the release record
 * its exit. */
#ifdef MUTANT_EXIT_OF_STOPPED
#define STOPPED(i) exited[i] = true	/* a stopped command's status recorded */
#else
#define STOPPED(i) skip
#endif
#ifdef SCHEDULE
#define ENDED(i) \
	if \
	:: !stop_sent[i] && !killed[i] -> exited[i] = true; self_ended[hslot[i]] = true \
	:: else -> STOPPED(i) \
	fi
#else
#define ENDED(i) skip
#endif

/* It exits whenever it likes: at once on the kill signal, later, or never
 * (then SIGKILL). It may leave a descendant that outlives it. */
#define COMMAND_FOR(i) \
	:: atomic { ch[i] == ALIVE -> ch[i] = ZOMBIE; ENDED(i); WAKE(i) } \
	:: atomic { ch[i] == ALIVE && !spawned[i] -> gch[i] = ALIVE; spawned[i] = true } \
	:: atomic { gch[i] == ALIVE -> gch[i] = ZOMBIE; WAKE(i) }

/* The job's transactions, on a session of its own. One step while the
 * command runs: START TRANSACTION, CALL leaderrun_fence(lease, its
 * LEADERRUN_TERM), which waits for the row's lock, then writes the row
 * (holding its lock to the end) if the term is the row's, else fails with
 * 45000 and the job rolls back; then the INSERT of a data row tagged with
 * the term (a row nobody else waits for). Then the transaction may stay
 * open for any time, the command dead or not (a frozen VM resumed, a
 * COMMIT delayed in the network, a host cut off), until its COMMIT, or
 * until its session ends (the server's timeouts, a restart, a KILL from
 * leaderrun_fence_end): it rolls back. A CALL delivered late adds nothing:
 * before the move it succeeds as it would have at once, after it it fails.
 * With one run each, only a transaction begun while the other contender
 * still waits can turn stale (only a waiting contender acquires a newer
 * term); the others (the newest term's, or one whose fence the move
 * already refuses) are left out, which keeps the search small. */
#ifdef MUTANT_FENCE_NO_LOCK
#define FENCE_FREE(i) true
#define FENCE_LOCK(i) skip	/* the term read, the row neither written nor locked */
#else
#define FENCE_FREE(i) (fence_lock == 0)
#define FENCE_LOCK(i) fence_lock = i + 1
#endif
#if ROUNDS == 1 && !defined(SCHEDULE)
#define MAY_GO_STALE(i) (ph[1 - i] == WAITING)
#else
#define MAY_GO_STALE(i) true
#endif
#define JOB_FOR(i) \
	:: atomic { ch[i] == ALIVE && tx[i] == TX_NONE && MAY_GO_STALE(i) && FENCE_FREE(i) -> \
		if \
		:: fence_term == term[i] -> FENCE_LOCK(i); tx[i] = TX_FENCED; tx_term[i] = term[i] \
		:: else	/* 45000: stale; the job rolls back */ \
		fi } \
	:: atomic { tx[i] == TX_FENCED -> \
		assert(fenced_writes || tx_term[i] >= last_term); \
		tx_end(i) } \
	:: atomic { tx[i] == TX_FENCED -> tx_end(i) }


/* ---- the supervisor (and its worker thread, and its watcher) ---------- */

#define RUNNING(i) (ch[i] != NONE || gch[i] != NONE)
/* poll() returns: the supervisor handles it now, unless frozen */
#define WAKE(i) if :: pz[i] == 0 && ph[i] != GONE -> sup_step(i) :: else fi
#define SAT_DEC(x) if :: x > 0 -> x-- :: else fi

/* child_signal(SIGKILL) and child_kill_orphans: every process of the group
 * dies; reaping is still to come. */
inline kill_group(i)
{
	if :: ch[i] == ALIVE -> ch[i] = ZOMBIE; STOPPED(i) :: else fi;
	if :: gch[i] == ALIVE -> gch[i] = ZOMBIE :: else fi
}

/* The watcher's SIGKILL (leaderrun dead, or frozen past the deadline):
 * the command's group, and for a service the term's hooks' groups, where
 * a worker a promote started in the background (`worker &`) lives on
 * after the promote exited: the descendant gch stands for it too. */
inline watcher_kill(i)
{
	if :: ch[i] == ALIVE -> ch[i] = ZOMBIE :: else fi;
#ifdef MUTANT_WATCHER_FORGETS_HOOK
	/* --service: the hook's group forgotten once the hook exited: its
	 * worker works on. */
	skip
#else
	if :: gch[i] == ALIVE -> gch[i] = ZOMBIE :: else fi
#endif
}

/* worker_submit + lease_*: sent_at = timing_now(), then the statement. */
inline send(i, op, t)
{
	sop[i] = op;
	sterm[i] = t;
	sq[i] = SENT;
	sdl[i] = DELAY;
	age[i] = 0;
	aborted[i] = false
}

/* The slot is free again; what it held is forgotten (fewer states). */
inline clear(i)
{
	sq[i] = IDLE; sop[i] = 0; sdl[i] = 0; sterm[i] = 0; age[i] = 0;
	rres[i] = 0; rid[i] = 0; rexp[i] = 0; rsl[i] = 0
}

/* worker_abort: the socket is shut; a statement still on its way may yet
 * run (lop); the worker reports an error. */
inline abandon(i)
{
	if
	:: sq[i] == SENT -> lop[i] = sop[i]; ldl[i] = sdl[i]; lterm[i] = sterm[i]
	:: else
	fi;
	clear(i)
}

/* The next run of leaderrun on this host, or none. */
inline finish(i)
{
	if :: sq[i] != IDLE -> abandon(i) :: else fi;
#ifdef LIVENESS
	ph[i] = WAITING;
#elif defined(SCHEDULE)
	/* --schedule runs until stopped: on to the next slot (after a
	 * crash, restarted). Once the terms are spent nothing more can be
	 * acquired: it stops, which ends the search there. */
	if :: hslot[i] != 0 -> tg[i] = hslot[i] :: else fi;
	ph[i] = (SCHED_GO(i) -> WAITING : GONE);
	exited[i] = false;
	hslot[i] = 0;
	rr[i] = false;
#else
	rounds[i]++;
	if
	:: rounds[i] < ROUNDS -> ph[i] = WAITING
	:: else -> ph[i] = GONE
	fi;
#endif
	stop_sent[i] = false; killed[i] = false; lost[i] = false;
	draining[i] = false; spawned[i] = false; term[i] = 0;
	fencing[i] = false; mv[i] = MV_NONE;
	revoked[i] = false; seen[i] = 0;
	dl[i] = 0; rnw[i] = 0; gr[i] = 0; wt[i] = 0
}

/* exec: the properties, at the only moment a command starts */
inline start_command(i)
{
#ifdef SCHEDULE
	assert(slot_attempts_exclusive || !(RUNNING(1 - i) && hslot[1 - i] == hslot[i]));
	assert(rerun_term_grows || term[i] > slot_max_term[hslot[i]]);
	assert(slot_done_stays_done || !slot_done[hslot[i]]);
	/* the revoked attempt itself may still start: it learns at its
	 * next renew */
	assert(revoked_not_rerun || !(slot_rev_term[hslot[i]] != 0 && term[i] > slot_rev_term[hslot[i]]));
	slot_max_term[hslot[i]] = term[i];
#endif
	assert(mutual_exclusion || !RUNNING(1 - i));
#ifndef LIVENESS
	assert(terms_grow || term[i] > last_term);
	last_term = term[i];
#endif
	ch[i] = ALIVE;
#ifdef LIVENESS
	/* The worst case for the takeover: the first contender's job fences
	 * at once and never ends its transaction (the host is cut off, the
	 * server keeps the session past the run): only leaderrun_fence_end
	 * ends it. */
	if
	:: i == 0 -> tx[0] = TX_FENCED; tx_term[0] = term[0]; fence_lock = 1
	:: else
	fi;
#endif
	if :: crashes > 0 -> acquired_after_crash = true :: else fi
}

/* sup_acquire: one pass of its loop. */
inline sup_wait(i)
{
	if
	:: sq[i] == ANSWERED && sop[i] == REV ->
		/* --preempt: revoked or not, it waits on as a follower; only
		 * its own acquisition lets its command start. */
#ifdef MUTANT_PREEMPT_EARLY
		/* the command starts once the revocation committed, before
		 * the holder stopped, without an acquisition */
		if
		:: rres[i] == 1 -> assert(mutual_exclusion || !RUNNING(1 - i))
		:: else
		fi;
#endif
		clear(i)
	:: sq[i] == ANSWERED && IS_ACQ(sop[i]) ->
#ifdef MUTANT_TERM_FROM_0_ROWS
		/* The term, and the success, read from LAST_INSERT_ID()
		 * whatever the affected-row count. */
		if
		:: rid[i] != 0 ->
#else
		/* lease_try: only the 1-row acquire's insert id is a term. */
		if
		:: rres[i] == 1 ->
#endif
			term[i] = rid[i];
#ifdef SCHEDULE
			hslot[i] = sterm[i];
#endif
			/* sup_acquire, child_spawn: the deadline from the send */
			dl[i] = (age[i] < DLEN -> DLEN - age[i] : 0);
			rnw[i] = (age[i] < RENEW -> RENEW - age[i] : 0);
			ph[i] = HOLD;
			seen[i] = 0;
#ifdef MUTANT_NO_FENCE_MOVE
			/* The fence is not moved: only created, with the
			 * first term, on first use. */
			if :: fence_term == 0 -> fence_term = term[i] :: else fi;
			start_command(i)
#else
			/* the fence moves to the new term first */
			fencing[i] = true;
			mv[i] = MV_SENT
#endif
		:: else ->
			/* Busy: sleep to the expiry read, at most the retry
			 * interval (the hint may wake it sooner). The
			 * preemptor remembers whose term it waits for. */
			wt[i] = (rexp[i] < WAIT -> rexp[i] : WAIT);
#ifdef SCHEDULE
			/* the slot's rerun next, or on to the next slot */
			rr[i] = (rsl[i] == 1);
			if :: rsl[i] == 2 -> tg[i]++ :: else fi;
#endif
			if :: PREEMPTING(i) -> seen[i] = rid[i] :: else fi
		fi;
		clear(i)
	:: sq[i] == LOST && sop[i] == REV ->
		/* a failed revocation: it just waits on */
		abandon(i)
	:: sq[i] == LOST && IS_ACQ(sop[i]) ->
		/* An error, retried. (An acquire is not cut off: it waits for
		 * its answer, which comes within 2 * DELAY or is lost.) */
		abandon(i);
		wt[i] = RETRY
#ifdef SCHEDULE
	:: sq[i] == IDLE && !SCHED_GO(i) -> finish(i)
#endif
	:: sq[i] == IDLE && (wt[i] == 0 || hint) && SCHED_GO(i) ->
		hint = false;
		wt[i] = 0;
#ifdef MUTANT_PROMOTE_EARLY
		/* --service: --on-promote runs as the wait ends, before the
		 * acquisition (and the fence) committed: leading begins here. */
		assert(mutual_exclusion || !RUNNING(1 - i));
#endif
#ifdef SCHEDULE
		/* the slot's first attempt, or its rerun once a read found
		 * its attempt held or lost (with --catch-up, the row free) */
		if
		:: rr[i] -> send(i, RACQ, tg[i] + 1)
		:: else -> send(i, ACQ, tg[i] + 1)
		fi
#else
		send(i, ACQ, 0)
#endif
	:: else
	fi
}

/* sup_hold: one pass of its loop (sup_on_renew, sup_reap, sup_on_timers). */
inline sup_hold(i)
{
	/* sup_on_renew */
	if
	:: sq[i] == ANSWERED ->
		if
		:: lost[i] || revoked[i]
#ifdef MUTANT_RENEW_REVOKED
		/* a revoked term's 0-row renew taken for a renewed one */
		:: !lost[i] && !revoked[i] && (rres[i] == 1 || rid[i] == 1) ->
#else
		:: !lost[i] && !revoked[i] && rres[i] == 1 ->
#endif
#ifdef MUTANT_REPLY_DEADLINE
			/* the deadline counted from the reply */
			dl[i] = DLEN;
#else
			if :: age[i] < DLEN && DLEN - age[i] > dl[i] -> dl[i] = DLEN - age[i] :: else fi;
#endif
			rnw[i] = (age[i] < RENEW -> RENEW - age[i] : 0)
#ifndef MUTANT_RENEW_REVOKED
		:: !lost[i] && !revoked[i] && rres[i] == 0 && rid[i] == 1 ->
			/* on_revoked: still ours until we let go; renews stop,
			 * the command is stopped the normal way (the kill
			 * signal, SIGKILL after the grace or at the deadline),
			 * and once all is reaped it is released. Not yet
			 * started (the fence moving): it does not start. */
			revoked[i] = true;
			if
			:: !stop_sent[i] && !killed[i] -> stop_sent[i] = true; gr[i] = GRACE
			:: else
			fi
#endif
		:: !lost[i] && !revoked[i] && rres[i] == 0 && rid[i] == 0 ->
			/* someone else may hold it: SIGKILL at once */
			lost[i] = true;
			killed[i] = true;
			kill_group(i)
		fi;
		clear(i)
	:: sq[i] == LOST ->
		/* an error: retried at short steps on a fresh connection */
		abandon(i);
		rnw[i] = RETRY
	:: else
	fi;
	/* sup_on_timers */
#ifdef MUTANT_LATE_RENEW
	/* The deadline waits for the renew in flight, which counts when it
	 * comes back. */
	if :: sq[i] != IDLE :: else ->
#endif
	if
	:: !killed[i] && dl[i] == 0 ->
		stop_sent[i] = true;
		killed[i] = true;
		kill_group(i)
	:: !killed[i] && (stop_sent[i] || draining[i]) && gr[i] == 0 ->
		killed[i] = true;
		kill_group(i)
	:: !stop_sent[i] && dl[i] <= GRACE && dl[i] > 0 ->
		/* the kill signal: the command may now exit, or not */
		stop_sent[i] = true;
		if :: !draining[i] || gr[i] > GRACE -> gr[i] = GRACE :: else fi
	:: else
	fi;
#ifdef MUTANT_LATE_RENEW
	fi;
#endif
	/* The move of the fence: the command starts once it committed, if
	 * its time is not up; after a lock wait timed out, the stale session
	 * is ended and the move tried again. */
	if
	:: fencing[i] && (stop_sent[i] || killed[i]) ->
		fencing[i] = false;	/* too late: no command */
		mv[i] = MV_NONE
	:: fencing[i] && !stop_sent[i] && !killed[i] && mv[i] == MV_DONE ->
		fencing[i] = false;
		mv[i] = MV_NONE;
		start_command(i)
	:: fencing[i] && mv[i] == MV_WAITED ->
		fence_end(i);
		mv[i] = MV_SENT
	:: else
	fi;
	/* sup_reap, sup_all_reaped: the command, then orphans of the group */
	if
	:: ch[i] == ZOMBIE ->
		ch[i] = NONE;
		draining[i] = true;
		/* sup_start_drain: the kill signal, SIGKILL after the grace */
		if :: !stop_sent[i] || gr[i] > GRACE -> gr[i] = GRACE :: else fi
	:: else
	fi;
	if :: gch[i] == ZOMBIE -> gch[i] = NONE :: else fi;
	if
	:: lost[i] || revoked[i]	/* hold_renewing() false */
#ifndef MUTANT_LATE_RENEW
	:: !lost[i] && !revoked[i] && (sq[i] == SENT || sq[i] == EXECD) && age[i] >= BUDGET ->
		/* worker_abort: cut off, so a retry fits */
		abandon(i);
		rnw[i] = RETRY
#endif
	:: !lost[i] && !revoked[i] && sq[i] == IDLE && rnw[i] == 0 ->
		send(i, RNW, term[i])
	:: else
	fi;
	/* all reaped: on to the release, giving up at
	 * min(deadline, now + renew) */
#ifdef MUTANT_RELEASE_BEFORE_REAP
	if :: !fencing[i] && ch[i] != ALIVE ->
#elif defined(MUTANT_DEMOTE_NOT_AWAITED)
	/* --service: the lease goes back as --on-demote starts (the kill
	 * signal), not once it ended. */
	if :: !fencing[i] && (!RUNNING(i) || stop_sent[i]) ->
#else
	if :: !fencing[i] && !RUNNING(i) ->
#endif
		ph[i] = RELEASING;
		rnw[i] = (dl[i] < RENEW -> dl[i] : RENEW);
		gr[i] = 0
	:: else
	fi
}

/* sup_release: let a renew in flight land, then give the row back, but
 * not a moment past the deadline (rnw counts to give_up). */
inline sup_release(i)
{
	if :: gch[i] == ZOMBIE -> gch[i] = NONE :: else fi;
	if :: ch[i] == ZOMBIE -> ch[i] = NONE :: else fi;
	if
	:: lost[i] -> finish(i)
	:: !lost[i] && sq[i] == ANSWERED && sop[i] == RNW ->
		if
		:: rres[i] == 1 && age[i] < DLEN && DLEN - age[i] > dl[i] -> dl[i] = DLEN - age[i]
		:: else
		fi;
		clear(i)
	:: !lost[i] && sq[i] == ANSWERED && IS_REL(sop[i]) -> finish(i)
	:: !lost[i] && sq[i] == LOST && sop[i] == RNW -> clear(i)
	:: !lost[i] && sq[i] == IDLE && rnw[i] > 0 ->
		assert(release_after_reap || !RUNNING(i));
#ifdef SCHEDULE
		if
		:: exited[i] -> send(i, RELX, term[i])
		:: else -> send(i, REL, term[i])
		fi
#else
		send(i, REL, term[i])
#endif
	:: !lost[i] && ((sq[i] != ANSWERED && rnw[i] == 0) || (sq[i] == LOST && IS_REL(sop[i]))) -> finish(i)
	:: else
	fi
}

/* One pass of the supervisor's loop: what poll() returned, and what
 * follows at once. */
inline sup_step(i)
{
	if :: ph[i] == WAITING -> sup_wait(i) :: else fi;
	if :: ph[i] == HOLD -> sup_hold(i) :: else fi;
	if :: ph[i] == RELEASING -> sup_release(i) :: else fi
}

/* leaderrun killed: the watcher sees its pipe close and SIGKILLs the
 * group, whose processes init reaps; the worker's statement may still
 * reach the server. */
inline crash(i)
{
	watcher_kill(i);
	ch[i] = NONE;
	/* init reaps what the watcher killed */
	if :: gch[i] != ALIVE -> gch[i] = NONE :: else fi;
	crashes++;
#ifdef LIVENESS
	if :: sq[i] != IDLE -> abandon(i) :: else fi;
	ph[i] = GONE;
	dl[i] = 0; rnw[i] = 0; gr[i] = 0; wt[i] = 0; term[i] = 0; pz[i] = 0;
	stop_sent[i] = false; killed[i] = false; lost[i] = false;
	draining[i] = false; spawned[i] = false;
	fencing[i] = false; mv[i] = MV_NONE;
	revoked[i] = false; seen[i] = 0
#else
	pz[i] = 0;
	finish(i)
#endif
}

#ifdef LIVENESS
/* Only the first contender crashes, only while it holds the lease, and the
 * second keeps coming back. */
#define CRASH_OK(i) (i == 0 && crashes < CRASHES && ph[i] == HOLD)
#else
#define CRASH_OK(i) (crashes < CRASHES && ph[i] != GONE)
#endif

active proctype leaderrun()
{
end:	do
	:: atomic { CRASH_OK(0) -> crash(0) }
	:: atomic { CRASH_OK(1) -> crash(1) }
	:: atomic { PREEMPT_OK(PREEMPTOR) ->
		preempts++;
		send(PREEMPTOR, REV, seen[PREEMPTOR]);
		seen[PREEMPTOR] = 0 }
	od
}

/* ---- time ---------------------------------------------------------------- */

/* Statements run or are lost within their bound before time moves on.
 * The move of the fence may take any time in the safety runs (the deadline
 * decides whether the command may still start after it); the liveness run
 * has it run, or its lock wait time out, within the tick (the lock wait is
 * 1 s, a tick about 2 s), so that the waiter's command starts in time. */
#ifdef LIVENESS
#define MOVED(i) (mv[i] != MV_SENT)
#else
#define MOVED(i) true
#endif
#define SETTLED(i) \
	(!((sq[i] == SENT || sq[i] == EXECD) && sdl[i] == 0) && \
	 !(lop[i] != 0 && ldl[i] == 0) && MOVED(i))

/* The clients' clocks, then each supervisor's poll() returns for what is
 * due, unless it is frozen: a freeze starts at a tick and lasts 1..PAUSE
 * ticks, and the supervisor runs before it can freeze again. While it is
 * frozen, the watcher (child_watch.c watcher_main) still SIGKILLs the group at
 * the deadline. */
inline client_tick(i)
{
	if :: ph[i] != WAITING -> SAT_DEC(dl[i]) :: else fi;
	SAT_DEC(rnw[i]); SAT_DEC(gr[i]); SAT_DEC(wt[i]);
	if :: sq[i] == SENT || sq[i] == EXECD -> SAT_DEC(sdl[i]) :: else fi;
	if :: sq[i] != IDLE && age[i] < TTL -> age[i]++ :: else fi;
	if :: lop[i] != 0 -> SAT_DEC(ldl[i]) :: else fi;
	if
	:: pz[i] > 0 -> pz[i]--
	:: else ->
		if
		:: true
		:: PAUSE > 0 && ph[i] != GONE -> pz[i] = PAUSE
		:: PAUSE > 1 && ph[i] != GONE -> pz[i] = 1
		fi
	fi;
	if
	:: pz[i] == 0 && ph[i] != GONE -> sup_step(i)
	:: else
	fi;
#ifdef MUTANT_LATE_RENEW
	if
	:: ph[i] != WAITING && dl[i] == 0 && sq[i] == IDLE -> kill_group(i)
#else
	if
	:: ph[i] != WAITING && dl[i] == 0 -> watcher_kill(i)
#endif
	:: else
	fi
}

/* A tick in two steps: the server's clock first, then the clients'. A
 * statement may run in between: the holder's SIGKILL at its deadline takes
 * effect up to a tick after the server's clock moved. */
bool half;

active proctype clock()
{
end:	do
	:: atomic { !half && SETTLED(0) && SETTLED(1) ->
		/* the server's clock: one tick, or two, or none */
		if
		:: SAT_DEC(row_exp)
		:: drifted < DRIFT -> SAT_DEC(row_exp); SAT_DEC(row_exp); drifted++
		:: drifted < DRIFT -> drifted++
		fi;
#ifdef SCHEDULE
		/* it passes the next slot's time, or not yet */
		if
		:: now_slot < NSLOTS -> now_slot++
		:: true
		fi;
#endif
		half = true }
	:: atomic { half ->
		client_tick(0);
		client_tick(1);
		half = false }
	od
}

/* ---- the environment's processes -------------------------------------- */

active proctype server()
{
	byte tres, tid, tex, tsl;
end:	do
	SERVER_FOR(0)
	SERVER_FOR(1)
	/* A restart: every statement in flight and every session is lost;
	 * the row stays. */
	:: atomic { faults < FAULTS ->
		faults++;
		if :: sq[0] == SENT || sq[0] == EXECD -> sq[0] = LOST :: else fi;
		if :: sq[1] == SENT || sq[1] == EXECD -> sq[1] = LOST :: else fi;
		lop[0] = 0; lop[1] = 0;
		/* open transactions roll back; a move is retried */
		tx_end(0); tx_end(1);
		hint = false }
	od
}

active proctype command()
{
end:	do
	COMMAND_FOR(0)
	COMMAND_FOR(1)
	od
}

#if !defined(LIVENESS) && !defined(NO_JOBS)
active proctype job()
{
end:	do
	JOB_FOR(0)
	JOB_FOR(1)
	od
}
#endif

/* leaderrun's move of the fence on the server: a process of its own, so
 * that weak fairness gives it its turn in the liveness run. */
active proctype move()
{
end:	do
	MOVE_FOR(0)
	MOVE_FOR(1)
	od
}

#ifdef LIVENESS
/* Once the holder is dead, the waiter eventually holds the lease. */
ltl waiter_acquires { [] ((crashes > 0) -> <> acquired_after_crash) }
#endif
