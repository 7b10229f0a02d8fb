/* A tiny HTTP receiver on loopback for the notification tests: records
 * "METHOD PATH BODY" per request, one line each, in a file. */
#ifndef LEADERRUN_TEST_HTTPD_H
#define LEADERRUN_TEST_HTTPD_H

/* Starts it; returns the port. Requests are appended to LOG. STATUS is the
 * HTTP status to answer with. */
int httpd_start(const char *log, int status);

#endif
