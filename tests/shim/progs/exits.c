/*
 * exits.c - every way out. Writes "e.mark" = 1, then leaves by:
 *   return | exit | _exit | _Exit | quick_exit (status 7), or
 *   pthread_exit: main calls pthread_exit while a second thread is still
 *   running; that thread writes "e.mark" = 2 and returns, so the process
 *   ends when its last thread ends (status 0).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weak.h"

static int g_id = -1;
static pthread_barrier_t g_bar;

static void *last(void *p)
{
	(void)p;
	pthread_barrier_wait(&g_bar);
	usleep(20000); /* let main finish pthread_exit first (not asserted) */
	weak_int(g_id, 2);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "return";
	pthread_t th;

	g_id = weak_register_int("e.mark");
	weak_int(g_id, 1);
	printf("leaving by %s\n", how);
	fflush(stdout);
	if (!strcmp(how, "exit"))
		exit(7);
	if (!strcmp(how, "_exit"))
		_exit(7);
	if (!strcmp(how, "_Exit"))
		_Exit(7);
	if (!strcmp(how, "quick_exit"))
		quick_exit(7);
	if (!strcmp(how, "pthread_exit")) {
		pthread_barrier_init(&g_bar, NULL, 2);
		pthread_create(&th, NULL, last, NULL);
		pthread_barrier_wait(&g_bar);
		pthread_exit(NULL);
	}
	return 7;
}
