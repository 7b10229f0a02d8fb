/* --health-cmd in the lease loop: health.c decides, this file starts the
 * check when it is due (from sup_poll, whatever the loop waits for), kills
 * one that runs past its time, takes its exit status from the reaping,
 * and acts on what changed: a standby that turns unhealthy stops competing
 * (sup_wait.c asks sup_health_ok before each attempt), a leader steps down
 * (sup_health_act, from the hold loop). */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "report/role.h"
#include "sup.h"

void sup_health_init(struct sup *s)
{
	if (s->o->health_cmd)
		health_init(&s->health, s->o->health_interval_us, (unsigned)s->o->health_retries, timing_now());
}

bool sup_health_ok(const struct sup *s)
{
	return !s->o->health_cmd || s->health.ok;
}

int64_t sup_health_at(const struct sup *s, int64_t at)
{
	int64_t h;

	if (!s->o->health_cmd)
		return at;
	h = health_next(&s->health);
	return at <= 0 || h < at ? h : at;
}

/* Starts the check, with the run's variables and LEADERRUN_ROLE. */
static void sup_health_start(struct sup *s, int64_t now)
{
	const struct options *o = s->o;
	char *argv[] = {"/bin/sh", "-c", (char *)o->health_cmd, NULL};
	const struct child_lease l = {.lease = o->lease,
				      .holder = o->holder,
				      .term = s->ev.term,
				      .slot = s->ev.slot,
				      .role = role_name(s->ev.role),
				      .service_pid = (long)s->child.pid};
	char **env = child_env_build(s->environ_base, &l);
	char err[512] = "out of memory";
	pid_t pid = env ? child_spawn_hook(argv, env, err, sizeof(err)) : -1;

	child_env_free(env);
	health_started(&s->health, now);
	if (pid < 0) {
		event_emit(&s->ev, EV_HEALTH_FAILED_START, &(struct event){.err = err});
		sup_health_reaped(s, -1, -1, now);
		return;
	}
	s->health_pid = pid;
}

void sup_health_tick(struct sup *s, int64_t now)
{
	if (!s->o->health_cmd)
		return;
	if (health_overdue(&s->health, now) && s->health_pid > 0) {
		/* Too slow is failed; its exit is reaped as an orphan's. */
		kill(-s->health_pid, SIGKILL);
		s->health_pid = 0;
		sup_health_reaped(s, -1, -1, now);
	}
	if (health_due(&s->health, now))
		sup_health_start(s, now);
}

void sup_health_reaped(struct sup *s, pid_t pid, int wstatus, int64_t now)
{
	enum health_change c;

	if (pid > 0)
		s->health_pid = 0;
	c = health_result(&s->health, pid > 0 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, now);
	/* The standbys' table says it. */
	if (c != HEALTH_SAME)
		s->standby_written = false;
	if (c == HEALTH_BECAME_FAILING)
		event_emit(&s->ev, EV_HEALTH_FAILING, &(struct event){.failures = s->health.retries});
	else if (c == HEALTH_BECAME_OK)
		event_emit(&s->ev, EV_HEALTH_OK, &(struct event){.failures = s->health.passes});
}

void sup_health_act(struct sup *s, int64_t now)
{
	struct hold_step st;

	if (sup_health_ok(s) || !s->leading || s->hold.cmd != CMD_RUNNING)
		return;
	if (s->o->service && s->svc.demoting)
		return;
	s->health_down = true;
	hold_step_down(&s->hold, now, &st);
	sup_apply_step(s, &st, now, "--health-cmd failed");
}
