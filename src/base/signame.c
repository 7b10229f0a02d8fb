#include "signame.h"

#include <signal.h>

const char *signame_abbrev(int sig)
{
	static const char *const names[] = {
	    [SIGHUP] = "HUP",	    [SIGINT] = "INT",	[SIGQUIT] = "QUIT",   [SIGILL] = "ILL",	  [SIGTRAP] = "TRAP",
	    [SIGABRT] = "ABRT",	    [SIGBUS] = "BUS",	[SIGFPE] = "FPE",     [SIGKILL] = "KILL", [SIGUSR1] = "USR1",
	    [SIGSEGV] = "SEGV",	    [SIGUSR2] = "USR2", [SIGPIPE] = "PIPE",   [SIGALRM] = "ALRM", [SIGTERM] = "TERM",
	    [SIGSTKFLT] = "STKFLT", [SIGCHLD] = "CHLD", [SIGCONT] = "CONT",   [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP",
	    [SIGTTIN] = "TTIN",	    [SIGTTOU] = "TTOU", [SIGURG] = "URG",     [SIGXCPU] = "XCPU", [SIGXFSZ] = "XFSZ",
	    [SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH", [SIGIO] = "IO",	  [SIGPWR] = "PWR",
	    [SIGSYS] = "SYS",
	};

	if (sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])))
		return names[sig];
	return 0;
}
