/* A stand-in for sudo: installed set-user-ID root by test_attack, it
 * becomes root for good (real, effective and saved IDs), leaves the
 * command's process group and sleeps ARGV[1] seconds. An unprivileged
 * leaderrun cannot signal it, as it cannot signal the commands sudo runs. */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
	if (argc < 2 || setresuid(0, 0, 0) != 0)
		return 1;
	setsid();
	sleep((unsigned)atoi(argv[1]));
	return 0;
}
