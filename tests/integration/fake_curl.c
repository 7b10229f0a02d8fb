/* A libcurl.so.4 that lacks curl_easy_setopt and the rest: what a broken
 * or foreign library first on the library path looks like to leaderrun's
 * dlopen (test_runtime.c). The two functions it has succeed. */
int curl_global_init(long flags);
void *curl_easy_init(void);

int curl_global_init(long flags)
{
	(void)flags;
	return 0;
}

void *curl_easy_init(void)
{
	static int handle;
	return &handle;
}
