#include "outcome.h"

#include "child.h"

int outcome_exit_status(const struct outcome *o, int busy_exit)
{
	switch (o->kind) {
	case OUTCOME_CHILD_EXITED:
		return child_exit_status(o->wstatus);
	case OUTCOME_BUSY:
		return busy_exit;
	case OUTCOME_LOST:
		return EXIT_LOST;
	case OUTCOME_TIMED_OUT:
		return EXIT_TIMED_OUT;
	case OUTCOME_SIGNALLED:
		/* As if the signal had killed us, the way a shell reports it. */
		return 128 + o->signo;
	case OUTCOME_USAGE:
		return EXIT_USAGE;
	case OUTCOME_UNAVAILABLE:
		return EXIT_UNAVAILABLE;
	case OUTCOME_DENIED:
		return EXIT_DENIED;
	case OUTCOME_NO_TABLE:
		return EXIT_NO_TABLE;
	case OUTCOME_NOT_EXECUTABLE:
		return EXIT_NOT_EXECUTABLE;
	case OUTCOME_NOT_FOUND:
		return EXIT_NOT_FOUND;
	case OUTCOME_INIT_DONE:
	case OUTCOME_STOPPED:
		return 0;
	case OUTCOME_NO:
		return 1;
	case OUTCOME_INTERNAL:
		break;
	}
	return EXIT_INTERNAL;
}
