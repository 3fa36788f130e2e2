/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_server.c - the control socket, served on a thread from a temporary
 * directory: pipelined and partial lines, oversized lines, the client limit,
 * a live daemon guarding its socket, stale sockets, stop and cleanup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server.h"

struct fixture {
	char dir[64];
	char sub[96];
	char path[128];
	struct ctl_server *srv;
	pthread_t thread;
	int run_rc;
	int ticks; /* read only after the thread is joined */
};

/* ---- the table ---- */

static int cmd_echo(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	char buf[CTL_MAX_LINE] = "";
	size_t len = 0;
	int i;

	(void)ctx;
	(void)err;
	for (i = 0; i < argc; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s",
				i ? " " : "", argv[i]);
	*data = json_string(buf);
	return 0;
}

static int cmd_stop(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	struct fixture *fx = ctx;

	(void)argc;
	(void)argv;
	(void)data;
	(void)err;
	ctl_server_stop(fx->srv);
	return 0;
}

static const struct ctl_cmd table[] = {
	{.name = "echo", .args = "WORD...", .help = "echo", .fn = cmd_echo},
	{.name = "stop", .args = "", .help = "stop the server", .fn = cmd_stop},
};

static void on_tick(void *ctx)
{
	struct fixture *fx = ctx;

	fx->ticks++;
}

/* ---- helpers ---- */

static void *serve(void *arg)
{
	struct fixture *fx = arg;

	fx->run_rc = ctl_server_run(fx->srv);
	return NULL;
}

static struct ctl_server *server_create(struct fixture *fx)
{
	const struct ctl_server_params p = {
		.path = fx->path,
		.table = table,
		.n_cmds = sizeof(table) / sizeof(table[0]),
		.ctx = fx,
		.tick = on_tick,
		.tick_ms = 10,
	};

	return ctl_server_create(&p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/ferry-test-srv-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	/* Two levels the server has to create itself. */
	snprintf(fx->sub, sizeof(fx->sub), "%s/run/ferry", fx->dir);
	snprintf(fx->path, sizeof(fx->path), "%s/ferryd.sock", fx->sub);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char run[128];

	unlink(fx->path);
	rmdir(fx->sub);
	snprintf(run, sizeof(run), "%s/run", fx->dir);
	rmdir(run);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void start(struct fixture *fx)
{
	fx->srv = server_create(fx);
	if (!fx->srv)
		fail_msg("ctl_server_create: %s", strerror(errno));
	assert_int_equal(pthread_create(&fx->thread, NULL, serve, fx), 0);
}

static void join(struct fixture *fx)
{
	assert_int_equal(pthread_join(fx->thread, NULL), 0);
	assert_int_equal(fx->run_rc, 0);
	ctl_server_destroy(fx->srv);
	fx->srv = NULL;
}

static int client(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	/* A broken server fails the test instead of hanging it. */
	assert_int_equal(
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		fail_msg("connect %s: %s", path, strerror(errno));
	return fd;
}

static void send_str(int fd, const char *s)
{
	size_t len = strlen(s);

	assert_int_equal(send(fd, s, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* One reply line, byte by byte so nothing after it is consumed. */
static char *read_line(int fd)
{
	static char line[CTL_MAX_LINE * 2];
	size_t len = 0;

	while (len + 1 < sizeof(line)) {
		ssize_t n = recv(fd, &line[len], 1, 0);

		if (n <= 0)
			fail_msg("no reply line (%s)",
				 n < 0 ? strerror(errno) : "EOF");
		if (line[len] == '\n')
			break;
		len++;
	}
	line[len] = '\0';
	return line;
}

static void expect_reply(int fd, const char *want)
{
	assert_string_equal(read_line(fd), want);
}

/*
 * Closed by the server. Unix sockets report ECONNRESET instead of EOF when
 * the server closed with input of ours still unread, as after E2BIG.
 */
static void expect_closed(int fd)
{
	ssize_t n;
	char c;

	n = recv(fd, &c, 1, 0);
	if (n != 0 && !(n < 0 && errno == ECONNRESET))
		fail_msg("expected the server to close, got %zd (%s)", n,
			 n < 0 ? strerror(errno) : "data");
}

/* ---- tests ---- */

static void test_pipelined_and_partial(void **state)
{
	struct fixture *fx = *state;
	struct stat st;
	int fd;

	start(fx);
	assert_int_equal(stat(fx->sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);

	fd = client(fx->path);
	send_str(fd, "echo a  b\necho \"c d\"\n");
	expect_reply(fd, "{\"ok\":true,\"data\":\"a b\"}");
	expect_reply(fd, "{\"ok\":true,\"data\":\"c d\"}");

	send_str(fd, "echo pa");
	usleep(20000);
	send_str(fd, "rt\r\n\nnope\n");
	expect_reply(fd, "{\"ok\":true,\"data\":\"part\"}");
	expect_reply(fd, "{\"ok\":true,\"data\":null}");
	expect_reply(fd,
		     "{\"ok\":false,\"error\":{\"code\":\"EINVAL\","
		     "\"message\":\"unknown command 'nope' (try 'help')\"}}");

	/* A last line without newline still runs when the client half-closes. */
	send_str(fd, "echo last");
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	expect_reply(fd, "{\"ok\":true,\"data\":\"last\"}");
	expect_closed(fd);
	close(fd);

	fd = client(fx->path);
	send_str(fd, "stop\n");
	expect_reply(fd, "{\"ok\":true,\"data\":null}");
	close(fd);
	join(fx);
	assert_true(fx->ticks > 0);
	assert_int_equal(stat(fx->path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_oversized_line(void **state)
{
	struct fixture *fx = *state;
	char *big;
	int fd;

	start(fx);
	fd = client(fx->path);
	big = malloc(CTL_MAX_LINE + 101);
	assert_non_null(big);
	memset(big, 'x', CTL_MAX_LINE + 100);
	big[CTL_MAX_LINE + 100] = '\0';
	send_str(fd, "echo ok\n");
	send_str(fd, big);
	expect_reply(fd, "{\"ok\":true,\"data\":\"ok\"}");
	expect_reply(fd, "{\"ok\":false,\"error\":{\"code\":\"E2BIG\","
			 "\"message\":\"line longer than 4095 bytes\"}}");
	expect_closed(fd);
	close(fd);
	free(big);

	/* The longest allowed line still goes through. */
	fd = client(fx->path);
	big = malloc(CTL_MAX_LINE + 1);
	assert_non_null(big);
	memcpy(big, "echo ", 5);
	memset(big + 5, 'y', CTL_MAX_LINE - 6);
	big[CTL_MAX_LINE - 1] = '\n';
	big[CTL_MAX_LINE] = '\0';
	send_str(fd, big);
	big[CTL_MAX_LINE - 1] = '\0';
	assert_int_equal(strlen(read_line(fd)),
			 strlen("{\"ok\":true,\"data\":\"\"}") + CTL_MAX_LINE -
				 6);
	free(big);

	send_str(fd, "echo still here\n");
	expect_reply(fd, "{\"ok\":true,\"data\":\"still here\"}");
	send_str(fd, "stop\n");
	expect_reply(fd, "{\"ok\":true,\"data\":null}");
	close(fd);
	join(fx);
}

static void test_too_many_clients(void **state)
{
	struct fixture *fx = *state;
	int fds[CTL_MAX_CLIENTS], extra, i;

	start(fx);
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		fds[i] = client(fx->path);
		send_str(fds[i], "echo hi\n");
		expect_reply(fds[i], "{\"ok\":true,\"data\":\"hi\"}");
	}
	extra = client(fx->path);
	expect_reply(extra, "{\"ok\":false,\"error\":{\"code\":\"EBUSY\","
			    "\"message\":\"too many control clients\"}}");
	expect_closed(extra);
	close(extra);

	/* A slot freed is a slot for the next client, once the server saw it. */
	close(fds[0]);
	for (i = 0; i < 500; i++) {
		fds[0] = client(fx->path);
		if (send(fds[0], "echo back\n", 10, MSG_NOSIGNAL) == 10 &&
		    strcmp(read_line(fds[0]),
			   "{\"ok\":true,\"data\":\"back\"}") == 0)
			break;
		close(fds[0]);
		usleep(10000);
	}
	assert_true(i < 500);
	send_str(fds[0], "stop\n");
	expect_reply(fds[0], "{\"ok\":true,\"data\":null}");
	join(fx);
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		close(fds[i]);
}

static void test_live_and_stale_socket(void **state)
{
	struct fixture *fx = *state;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct ctl_server *second;
	int fd;

	start(fx);
	/* A daemon that answers keeps its socket. */
	second = server_create(fx);
	assert_null(second);
	assert_int_equal(errno, EADDRINUSE);
	fd = client(fx->path);
	send_str(fd, "echo alive\n");
	expect_reply(fd, "{\"ok\":true,\"data\":\"alive\"}");
	ctl_server_stop(fx->srv); /* as a signal handler would */
	join(fx);
	close(fd);

	/* One that died left a file nobody answers on: it is replaced. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_true(strlen(fx->path) < sizeof(addr.sun_path));
	memcpy(addr.sun_path, fx->path, strlen(fx->path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);
	start(fx);
	fd = client(fx->path);
	send_str(fd, "echo fresh\n");
	expect_reply(fd, "{\"ok\":true,\"data\":\"fresh\"}");
	close(fd);
	ctl_server_stop(fx->srv);
	join(fx);
	assert_int_equal(access(fx->path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pipelined_and_partial,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_line, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_many_clients, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_live_and_stale_socket,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
