// SPDX-License-Identifier: BSD-2-Clause
/*
 * ferryd - the daemon: applies the config file, then serves the control
 * socket until `shutdown`, SIGTERM or SIGINT, and detaches from every port
 * on the way out.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_ctl.h"
#include "commands.h"
#include "ferry.h"
#include "ferryd_takeover.h"
#include "log.h"
#include "metrics_http.h"
#include "privs.h"
#include "proxy.h"
#include "server.h"
#include "steer.h"
#include "takeover.h"
#include "sockmap.h"

#define DEFAULT_SOCKET "/run/ferry/ferryd.sock"

/* long-only options: no short letter */
enum { OPT_METRICS = 256, OPT_TAKEOVER };

/* The old daemon's listener closes just after our connection does. */
#define BIND_RETRY_MS 2000

static const struct option long_opts[] = {
	{"help", no_argument, NULL, 'h'},
	{"metrics", required_argument, NULL, OPT_METRICS},
	{"takeover", no_argument, NULL, OPT_TAKEOVER},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ferryd [-c FILE] [-s SOCKET] [-f] [--metrics "
		"[ADDR:]PORT] [--takeover]\n"
		"  -c FILE    apply the commands in FILE at start (one per "
		"line)\n"
		"  -s SOCKET  control socket (default " DEFAULT_SOCKET ")\n"
		"  -f         stay in the foreground\n"
		"  --metrics [ADDR:]PORT\n"
		"             serve GET /metrics (Prometheus text) on "
		"ADDR:PORT;\n"
		"             ADDR is an IPv4 address, [IPv6] or localhost;\n"
		"             without ADDR, loopback (127.0.0.1) only;\n"
		"             the counters are refreshed once a second\n"
		"  --takeover hot restart: adopt the ports of the ferryd "
		"serving\n"
		"             SOCKET, which hands over and exits; then serve "
		"SOCKET\n");
}

/*
 * The daemon's state. Handlers and the tick share one ctx pointer, so ctx
 * comes first: handlers read the pointer as a struct ferryd_ctx, the tick
 * as the whole struct (C11 6.7.2.1: a struct and its first member share an
 * address).
 */
struct ferryd {
	struct ferryd_ctx ctx;
	struct metrics_http *mh; /* NULL without --metrics */
};

struct sigwaiter {
	sigset_t set;
	struct ctl_server *srv;
	int done; /* main is past serving: the wake-up is ours, not a stop */
};

/* Signals are blocked everywhere and taken here, outside any handler. */
static void *sig_main(void *arg)
{
	struct sigwaiter *sw = arg;
	int sig;

	if (!sigwait(&sw->set, &sig) &&
	    !__atomic_load_n(&sw->done, __ATOMIC_ACQUIRE)) {
		log_info("signal %d: shutting down", sig);
		ctl_server_stop(sw->srv);
	}
	return NULL;
}

/*
 * The dataplane may only be read on the control thread, so this is where
 * the metrics text is rendered; the HTTP thread serves the last copy.
 */
static void metrics_refresh(struct ferryd *d)
{
	if (d->mh)
		metrics_http_publish(d->mh, ferry_metrics(d->ctx.f));
}

static void tick(void *arg)
{
	struct ferryd *d = arg;

	ferry_tick(d->ctx.f);
	ferryd_route_watch(&d->ctx);
	ferry_capture_tick(d->ctx.f);
	ferry_handover_tick(d->ctx.f);
	ferry_sockmap_tick(d->ctx.sm);
	metrics_refresh(d);
}

/*
 * --takeover: the old daemon's ports become ours; 0, or 1 with the old
 * daemon serving again (or left alone when it never let go of anything).
 */
static int take_over(struct ferryd_ctx *ctx, const char *sock)
{
	struct ferryd_takeover *t;
	struct ferry_err msg;
	int rc;

	t = ferryd_takeover_connect(sock, &msg);
	if (!t) {
		log_err("--takeover: %s", msg.msg);
		ferry_destroy(ctx->f);
		ctx->f = NULL;
		return 1;
	}
	rc = ferryd_takeover_run(t, ctx, &msg);
	if (rc) {
		log_err("--takeover failed: %s", msg.msg);
		/* Our sockets hold the queues: gone first, then it resumes.
		 * Its own sockets, if it passed them, go back untouched. */
		ferry_takeover_giveback(ctx->f);
		ferry_takeover_keep_pins(ctx->f);
		ferry_destroy(ctx->f);
		ctx->f = NULL;
		ferryd_takeover_abort(t);
		ferryd_takeover_close(t);
		return 1;
	}
	/* Forwarding is ours already; a lost commit changes nothing here. */
	if (ferryd_takeover_commit(t, &msg))
		log_warn("--takeover: %s", msg.msg);
	ferryd_takeover_close(t);
	return 0;
}

/* After a takeover the old daemon is on its way out: wait for its path. */
static struct ctl_server *server_create(const struct ctl_server_params *sp,
					bool takeover)
{
	struct ctl_server *srv;
	int waited = 0;

	while (!(srv = ctl_server_create(sp)) && takeover &&
	       errno == EADDRINUSE && waited < BIND_RETRY_MS) {
		usleep(10000);
		waited += 10;
	}
	return srv;
}

int main(int argc, char **argv)
{
	const char *config = NULL, *sock = DEFAULT_SOCKET, *metrics = NULL;
	struct ferryd d = {{0}};
	struct ferryd_ctx *ctx = &d.ctx;
	char msg[256];
	struct sigwaiter sw;
	struct ferry_err err = {{0}};
	struct ctl_server_params sp;
	bool foreground = false, takeover = false;
	pthread_t sig_thread;
	int opt, rc, lineno = 0;

	while ((opt = getopt_long(argc, argv, "c:s:fh", long_opts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_METRICS:
			metrics = optarg;
			break;
		case OPT_TAKEOVER:
			takeover = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (takeover && config) {
		log_err("--takeover takes the running configuration of the "
			"old ferryd; -c does not combine with it");
		return 2;
	}
	/* Only what setting up and serving need, from here on (privs.h). */
	if (ferry_privs_narrow(FERRY_PRIVS_SETUP))
		log_warn("could not narrow capabilities to the setup set");
	/* Bound now: a bad or busy address fails before any port is touched. */
	if (metrics) {
		d.mh = metrics_http_create(metrics, &err);
		if (!d.mh) {
			log_err("%s", err.msg);
			return 2;
		}
	}

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sw.set);
	sigaddset(&sw.set, SIGTERM);
	sigaddset(&sw.set, SIGINT);
	sigaddset(&sw.set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sw.set, NULL);

	if (ferryd_commands_init(ctx)) {
		log_err("out of memory");
		rc = 1;
		goto out_metrics;
	}
	ctx->f = ferry_create();
	if (!ctx->f) {
		log_err("out of memory");
		rc = 1;
		goto out_metrics;
	}
	ctx->sm = ferry_sockmap_create();
	if (!ctx->sm) {
		log_err("out of memory");
		rc = 1;
		goto out_ferry;
	}
	ctx->proxy = ferry_proxy_create();
	if (!ctx->proxy) {
		log_err("cannot start the proxy thread: %s", strerror(errno));
		rc = 1;
		goto out_ferry;
	}
	if (takeover) {
		rc = take_over(ctx, sock);
		if (rc) {
			/* The ports the handover made are gone already; the
			 * old ferryd's programs stay where they are. */
			ferry_proxy_destroy(ctx->proxy);
			ferry_sockmap_destroy(ctx->sm);
			goto out_metrics;
		}
	}
	if (config) {
		/* Rules go to the classifiers once, after the last line. */
		ferry_rules_hold(ferry_rules(ctx->f), true, NULL);
		rc = ctl_run_file(ctx->cmds, ctx->n_cmds, ctx, config, &lineno,
				  &err);
		if (!rc)
			rc = ferry_rules_hold(ferry_rules(ctx->f), false, &err);
		else
			ferry_rules_hold(ferry_rules(ctx->f), false, NULL);
		if (rc) {
			log_err("%s: %s", config, err.msg);
			rc = 1;
			goto out_ferry;
		}
		log_info("applied %s", config);
		if (ctx->stop) {
			rc = 0;
			goto out_ferry;
		}
	}

	sp = (struct ctl_server_params){
		.path = sock,
		.table = ctx->cmds,
		.n_cmds = ctx->n_cmds,
		.ctx = &d,
		.tick = tick,
		.tick_ms = 1000,
	};
	ctx->srv = server_create(&sp, takeover);
	if (!ctx->srv) {
		log_err("control socket %s: %s", sock, strerror(errno));
		rc = 1;
		goto out_ferry;
	}
	/* Set up: keep what commands need while serving, and say what. */
	if (ferry_privs_narrow(FERRY_PRIVS_RUNTIME))
		log_warn("could not narrow capabilities to the run-time set");
	ferry_privs_describe(msg, sizeof(msg));
	log_info("capabilities kept: %s", msg[0] ? msg : "none");
	if (!foreground && daemon(0, 1)) {
		log_err("daemon: %s", strerror(errno));
		rc = 1;
		goto out_server;
	}
	/* After daemon(): a fork would leave the HTTP thread behind. */
	if (d.mh) {
		metrics_refresh(&d);
		rc = metrics_http_start(d.mh);
		if (rc) {
			log_err("metrics: cannot start the HTTP server: %s",
				strerror(-rc));
			rc = 1;
			goto out_server;
		}
		log_info("metrics on %s", metrics_http_url(d.mh));
	}
	sw.srv = ctx->srv;
	sw.done = 0;
	if (pthread_create(&sig_thread, NULL, sig_main, &sw)) {
		log_err("cannot start the signal thread");
		rc = 1;
		goto out_server;
	}
	log_info("ferryd %s ready on %s", FERRY_VERSION, sock);
	rc = ctl_server_run(ctx->srv);
	if (rc)
		log_err("control socket: %s", strerror(-rc));
	rc = rc ? 1 : 0;
	/* The signal thread must be gone before the server it would stop:
	 * wake it and wait. Later signals stay blocked and pending. */
	__atomic_store_n(&sw.done, 1, __ATOMIC_RELEASE);
	pthread_kill(sig_thread, SIGHUP);
	pthread_join(sig_thread, NULL);

out_server:
	ctl_server_destroy(ctx->srv);
out_ferry:
	ferry_proxy_destroy(ctx->proxy);
	ferry_sockmap_destroy(ctx->sm);
	ferry_destroy(ctx->f);
out_metrics:
	ferryd_commands_fini(ctx);
	metrics_http_destroy(d.mh);
	log_info("ferryd exits");
	return rc;
}
