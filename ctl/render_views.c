// SPDX-License-Identifier: BSD-2-Clause
/*
 * render_views.c - the views of the replies an operator reads most, one
 * per command in the table at the end: help, port show, stats (which
 * `stats --watch` draws too), worker show, steer show, host check, proxy
 * show. Each draws its own layout for the fields it knows and hands every
 * other field to the generic renderer (render.c), so a field the daemon
 * adds later is shown too.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_int.h"

/* `help`: the synopsis column, longer ones push the description right. */
#define HELP_SYNOPSIS_COLS 40

/* A list whose every element is an object: what the per-row views draw. */
static bool all_objects(const json_t *arr)
{
	size_t i;
	json_t *e;

	if (!json_is_array(arr))
		return false;
	json_array_foreach(arr, i, e) if (!json_is_object(e)) return false;
	return true;
}

/* ---- help ---- */

/*
 * "port add NAME dev IFNAME [OPTION]...": the words outside brackets, the
 * bracketed groups (optional keywords) said once. Used when the daemon
 * sends no synopsis of its own and the whole one would not fit.
 */
static void short_synopsis(const char *cmd, const char *args, char *buf,
			   size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "%s", cmd);
	bool opts = false;
	const char *s = args;

	while (*s && len + 16 < size) {
		size_t n;

		while (*s == ' ')
			s++;
		if (*s == '[') {
			int depth = 0;

			/* A bracketed group, nested ones included. */
			do {
				depth += *s == '[';
				depth -= *s == ']';
				s++;
			} while (*s && depth > 0);
			if (!opts)
				len += (size_t)snprintf(buf + len, size - len,
							" [OPTION]...");
			opts = true;
			continue;
		}
		n = strcspn(s, " [");
		if (n == 0)
			break;
		if (len + n + 2 >= size)
			break;
		len += (size_t)snprintf(buf + len, size - len, " %.*s", (int)n,
					s);
		s += n;
		opts = false;
	}
}

static void synopsis_of(const json_t *e, char *buf, size_t size)
{
	const char *cmd = json_string_value(json_object_get(e, "command"));
	const char *args = json_string_value(json_object_get(e, "args"));
	const char *syn = json_string_value(json_object_get(e, "synopsis"));

	if (!cmd)
		cmd = "?";
	if (syn) {
		/* Either the whole synopsis or only its arguments. */
		if (!strncmp(syn, cmd, strlen(cmd)))
			snprintf(buf, size, "%s", syn);
		else
			snprintf(buf, size, "%s %s", cmd, syn);
		return;
	}
	if (!args || !args[0])
		snprintf(buf, size, "%s", cmd);
	else if (strlen(cmd) + 1 + strlen(args) <= HELP_SYNOPSIS_COLS)
		snprintf(buf, size, "%s %s", cmd, args);
	else
		short_synopsis(cmd, args, buf, size);
}

/* The first clause of a help text, cut at a word to fit cols. */
static void short_help(const char *help, size_t cols, char *buf, size_t size)
{
	size_t n = strcspn(help, ";(");

	while (n && help[n - 1] == ' ')
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(buf, help, n);
	buf[n] = '\0';
	if (render_text_width(buf) <= cols)
		return;
	n = render_cols_to_bytes(buf, n, cols > 3 ? cols - 3 : 0);
	while (n > 0 && buf[n] != ' ')
		n--;
	strcpy(buf + n, "...");
}

static int help_list(struct view *v, const json_t *list)
{
	char syn[256], desc[256];
	size_t i, w, col = 0;
	json_t *e;

	json_array_foreach(list, i, e)
	{
		synopsis_of(e, syn, sizeof(syn));
		w = render_text_width(syn);
		if (w <= HELP_SYNOPSIS_COLS && w > col)
			col = w;
	}
	json_array_foreach(list, i, e)
	{
		const char *help =
			json_string_value(json_object_get(e, "summary"));
		size_t left;

		if (!help)
			help = json_string_value(json_object_get(e, "help"));
		synopsis_of(e, syn, sizeof(syn));
		w = render_text_width(syn);
		if (w < col)
			w = col;
		left = HELP_LIST_WIDTH - 2 - (w + 2);
		if (w + 2 + 2 + 10 > HELP_LIST_WIDTH || !help || !help[0]) {
			fprintf(v->f, "  %s\n", syn);
			continue;
		}
		short_help(help, left, desc, sizeof(desc));
		fprintf(v->f, "  %-*s  %s\n",
			(int)(col + strlen(syn) - render_text_width(syn)), syn,
			desc);
	}
	fprintf(v->f, "'help COMMAND' describes one in full.\n");
	return 0;
}

static int view_help(struct view *v, const json_t *data)
{
	static const char *const shown[] = {"command",	"args",	   "help",
					    "synopsis", "summary", "usage",
					    NULL};
	const char *usage, *help, *key;
	char syn[4096];
	json_t *val;
	size_t i;
	int rc;

	if (json_is_array(data))
		return help_list(v, data);
	/* Not one command's entry: a shape this view does not know. */
	if (!json_is_object(data) || (!json_object_get(data, "command") &&
				      !json_object_get(data, "usage")))
		return view_generic(v, data);
	usage = json_string_value(json_object_get(data, "usage"));
	if (!usage) {
		const char *cmd =
			json_string_value(json_object_get(data, "command"));
		const char *args =
			json_string_value(json_object_get(data, "args"));

		snprintf(syn, sizeof(syn), "%s%s%s", cmd ? cmd : "?",
			 args && args[0] ? " " : "", args ? args : "");
		usage = syn;
	}
	fputs("usage: ", v->f);
	put_wrapped(v, 7, 11, usage);
	help = json_string_value(json_object_get(data, "help"));
	if (help && help[0]) {
		fputs("\n  ", v->f);
		put_wrapped(v, 2, 2, help);
	}
	/* Whatever else the daemon adds (options, examples): generically. */
	json_object_foreach((json_t *)data, key, val)
	{
		bool known = false;

		for (i = 0; shown[i]; i++)
			known |= !strcmp(shown[i], key);
		if (known)
			continue;
		fputc('\n', v->f);
		rc = gen_member(v, key, val, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- port show ---- */

struct field {
	const char *key;
	const char *label;
};

/*
 * The settings that matter, a line each; fields not named here follow,
 * packed, so a setting added later is still shown.
 */
static const struct field port_lines[][8] = {
	{{"app", "app"},
	 {"default", "default"},
	 {"steer_rules", "steer rules"},
	 {"workers", "workers"}},
	{{"mode", "mode"},
	 {"mode_requested", "requested"},
	 {"xdp", "xdp"},
	 {"xdp_chosen_by", "chosen by"},
	 {"prog_id", "prog"},
	 {"backend", "backend"},
	 {"xdp_restore", "xdp-restore"}},
	{{"queues", "queues"},
	 {"queue_first", "first"},
	 {"umem", "umem"},
	 {"tx_budget", "tx budget"},
	 {"need_wakeup", "need wakeup"},
	 {"busy_poll", "busy poll"},
	 {"busy_poll_prefer", "prefer"}},
	{{"driver", "driver"},
	 {"profile", "profile"},
	 {"ifindex", "ifindex"},
	 {"mtu", "mtu"},
	 {"mac", "mac"},
	 {"numa_node", "numa"}},
};

/* In the port's first line. */
static const char *const port_head[] = {"name", "ifname", "state", "reason",
					NULL};

static bool in_list(const char *const *list, const char *key)
{
	size_t i;

	for (i = 0; list[i]; i++)
		if (!strcmp(list[i], key))
			return true;
	return false;
}

static bool in_port_lines(const char *key)
{
	size_t l, i;

	for (l = 0; l < ARRAY_LEN(port_lines); l++)
		for (i = 0; i < ARRAY_LEN(port_lines[l]); i++)
			if (port_lines[l][i].key &&
			    !strcmp(port_lines[l][i].key, key))
				return true;
	return in_list(port_head, key);
}

static const char *str_of(const json_t *obj, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s && s[0] ? s : dflt;
}

static int port_block(struct view *v, const json_t *port)
{
	const char *reason = str_of(port, "reason", NULL), *key;
	struct pack p;
	size_t l, i;
	json_t *val;
	int rc;

	fprintf(v->f, "%s  %s  %s%s%s%s\n", str_of(port, "name", "?"),
		str_of(port, "ifname", "-"), str_of(port, "state", "-"),
		reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
	for (l = 0; l < ARRAY_LEN(port_lines); l++) {
		pack_begin(&p, v, 4);
		for (i = 0; i < ARRAY_LEN(port_lines[l]); i++) {
			const struct field *fd = &port_lines[l][i];
			const json_t *fv;

			if (!fd->key)
				break;
			fv = json_object_get(port, fd->key);
			if (!fv)
				continue;
			if (json_is_boolean(fv))
				pack_add(&p, fd->label,
					 json_is_true(fv) ? "on" : "off");
			else if (pack_value(&p, fd->label, fv) < 0)
				return -ENOMEM;
		}
		pack_end(&p);
	}
	/* Scalars no line names, as they are. */
	pack_begin(&p, v, 4);
	json_object_foreach((json_t *)port, key, val)
	{
		if (in_port_lines(key) ||
		    !(is_scalar(val) || is_flat_array(val)))
			continue;
		if (json_is_array(val) && json_array_size(val) == 0)
			continue;
		if (!strcmp(key, "warnings"))
			continue;
		if (pack_value(&p, key, val) < 0)
			return -ENOMEM;
	}
	pack_end(&p);
	json_array_foreach(json_object_get(port, "warnings"), i, val)
		fprintf(v->f, "    warning: %s\n", json_string_value(val));
	json_object_foreach((json_t *)port, key, val)
	{
		if (is_scalar(val) || is_flat_array(val))
			continue;
		rc = gen_member(v, key, val, 4);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int view_ports(struct view *v, const json_t *data)
{
	size_t i;
	json_t *port;
	int rc;

	if (!all_objects(data))
		return view_generic(v, data);
	if (json_array_size(data) == 0)
		fprintf(v->f, "no ports\n");
	json_array_foreach(data, i, port)
	{
		if (i)
			fputc('\n', v->f);
		rc = json_is_object(port) ? port_block(v, port)
					  : view_generic(v, port);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- stats ---- */

/* The element of arr whose member key equals like's; NULL if none. */
static const json_t *find_like(const json_t *arr, const char *key,
			       const json_t *like)
{
	json_t *want = json_object_get(like, key), *e;
	size_t i;

	json_array_foreach(arr, i, e)
	{
		if (json_equal(json_object_get(e, key), want))
			return e;
	}
	return NULL;
}

static json_int_t counter(const json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

/*
 * Packets and bits per second: from two samples when watching, else the
 * daemon's pps and, for bits, that pps times the mean frame size so far.
 */
static void rates(const struct view *v, const json_t *cur, const json_t *prev,
		  const char *dir, double *pps, double *bps)
{
	char pk[32], by[32], rk[32];
	json_int_t packets, bytes;

	snprintf(pk, sizeof(pk), "%s_packets", dir);
	snprintf(by, sizeof(by), "%s_bytes", dir);
	snprintf(rk, sizeof(rk), "%s_pps", dir);
	packets = counter(cur, pk);
	bytes = counter(cur, by);
	if (prev && v->dt > 0 && packets >= counter(prev, pk) &&
	    bytes >= counter(prev, by)) {
		*pps = (double)(packets - counter(prev, pk)) / v->dt;
		*bps = (double)(bytes - counter(prev, by)) * 8 / v->dt;
		return;
	}
	*pps = json_number_value(json_object_get(cur, rk));
	*bps = packets > 0 ? *pps * 8 * (double)bytes / (double)packets : 0;
}

/* Counters the RX/TX lines and the drop line show. */
static const char *const traffic_keys[] = {
	"rx_packets", "rx_bytes", "tx_packets",	  "tx_bytes", "rx_pps",
	"tx_pps",     "drops",	  "drop_reasons", NULL,
};

/* "dropped 12: no_tx_queue 10, app_drop 2" */
static void drop_line(struct view *v, const json_t *c, int indent)
{
	char n[32];
	const char *k;
	bool first = true;
	json_t *e;

	if (!v->all && counter(c, "drops") == 0)
		return;
	fprintf(v->f, "%*sdropped %s", indent, "",
		render_count(counter(c, "drops"), n, sizeof(n)));
	json_object_foreach(json_object_get(c, "drop_reasons"), k, e)
	{
		if (!v->all && is_zero(e))
			continue;
		fprintf(v->f, "%s%s %s", first ? ": " : ", ", k,
			render_count(json_integer_value(e), n, sizeof(n)));
		first = false;
	}
	fputc('\n', v->f);
}

static void traffic_lines(struct view *v, const json_t *c, const json_t *prev,
			  int indent)
{
	static const char *const dirs[] = {"rx", "tx"};
	char a[32], b[32], pps_s[32], bps_s[32];
	double pps, bps;
	size_t i;

	fprintf(v->f, "%*s    %15s  %17s  %10s  %10s\n", indent, "", "packets",
		"bytes", "pps", "bit/s");
	for (i = 0; i < ARRAY_LEN(dirs); i++) {
		char pk[32], by[32];

		snprintf(pk, sizeof(pk), "%s_packets", dirs[i]);
		snprintf(by, sizeof(by), "%s_bytes", dirs[i]);
		rates(v, c, prev, dirs[i], &pps, &bps);
		fprintf(v->f, "%*s%s  %15s  %17s  %10s  %10s\n", indent, "",
			i ? "TX" : "RX",
			render_count(counter(c, pk), a, sizeof(a)),
			render_count(counter(c, by), b, sizeof(b)),
			render_rate(pps, pps_s, sizeof(pps_s)),
			render_rate(bps, bps_s, sizeof(bps_s)));
	}
	drop_line(v, c, indent);
}

/* A queue's own line leaves out what its table row shows. */
static const char *const queue_keys[] = {
	"rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
	"rx_pps",     "tx_pps",	  "drops",	"drop_reasons",
	"queue",      "worker",	  NULL,
};

static const char *const queue_cols[] = {"queue", "worker", "rx_packets",
					 "tx_packets", "drops"};

/* One row per queue: where it runs, its traffic and rates, its drops. */
static void queue_table(struct view *v, const json_t *queues,
			const json_t *prev_queues, int indent)
{
	char c[ARRAY_LEN(queue_cols)][32], rp[32], tp[32];
	size_t i, k;
	json_t *q;

	fprintf(v->f, "%*s%5s  %6s  %15s  %15s  %12s  %10s  %10s\n", indent, "",
		"queue", "worker", "rx_packets", "tx_packets", "drops",
		"rx_pps", "tx_pps");
	json_array_foreach(queues, i, q)
	{
		const json_t *pq = find_like(prev_queues, "queue", q);
		double rpps, tpps, bps;

		for (k = 0; k < ARRAY_LEN(queue_cols); k++) {
			const json_t *e = json_object_get(q, queue_cols[k]);

			if (json_is_integer(e) && json_integer_value(e) < 0)
				strcpy(c[k], "-");
			else if (k >= 2 && json_is_integer(e))
				render_count(json_integer_value(e), c[k],
					     sizeof(c[k]));
			else
				scalar_text(e, c[k], sizeof(c[k]));
		}
		rates(v, q, pq, "rx", &rpps, &bps);
		rates(v, q, pq, "tx", &tpps, &bps);
		fprintf(v->f, "%*s%5s  %6s  %15s  %15s  %12s  %10s  %10s\n",
			indent, "", c[0], c[1], c[2], c[3], c[4],
			render_rate(rpps, rp, sizeof(rp)),
			render_rate(tpps, tp, sizeof(tp)));
	}
}

static int stats_port(struct view *v, const json_t *port, const json_t *prev)
{
	static const char *const head[] = {"name", "ifname", "totals", "queues",
					   NULL};
	const json_t *totals = json_object_get(port, "totals");
	const json_t *ptot = json_object_get(prev, "totals");
	const json_t *queues = json_object_get(port, "queues");
	const json_t *q0 = json_array_get(queues, 0);
	const char *key;
	struct pack p;
	json_t *val;
	size_t i;
	int rc;

	fprintf(v->f, "%s  %s", str_of(port, "name", "?"),
		str_of(port, "ifname", "-"));
	if (json_array_size(queues) == 1) {
		char w[32] = "-";

		if (counter(q0, "worker") >= 0)
			scalar_text(json_object_get(q0, "worker"), w,
				    sizeof(w));
		fprintf(v->f, "  queue %" JSON_INTEGER_FORMAT " on worker %s",
			counter(q0, "queue"), w);
	}
	fputc('\n', v->f);
	traffic_lines(v, totals, ptot, 4);
	rc = pack_counters(v, 4, "counters", totals, traffic_keys);
	if (rc < 0)
		return rc;
	/* The port's own scalars (xdp_malformed, ...) and sets (xdp). */
	pack_begin(&p, v, 4);
	json_object_foreach((json_t *)port, key, val)
	{
		if (in_list(head, key) || !is_scalar(val) ||
		    (!v->all && is_zero(val)))
			continue;
		if (pack_value(&p, key, val) < 0)
			return -ENOMEM;
	}
	pack_end(&p);
	json_object_foreach((json_t *)port, key, val)
	{
		if (in_list(head, key) || is_scalar(val))
			continue;
		rc = gen_member(v, key, val, 4);
		if (rc < 0)
			return rc;
	}
	if (json_array_size(queues) > 1 || (v->all && queues)) {
		fprintf(v->f, "    queues:\n");
		queue_table(v, queues, json_object_get(prev, "queues"), 6);
		json_array_foreach(queues, i, val)
		{
			char title[48];

			snprintf(title, sizeof(title),
				 "queue %" JSON_INTEGER_FORMAT,
				 counter(val, "queue"));
			rc = pack_counters(v, 6, title, val, queue_keys);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static const char *const worker_cols[] = {"id", "cpu", "idle", "sockets"};

/*
 * Workers: a small table of where they run and how busy they are, then
 * per worker its other counters that are not zero.
 */
static int stats_workers(struct view *v, const json_t *workers,
			 const json_t *prev_workers)
{
	static const char *const shown[] = {
		"id",	      "cpu",	"idle",	      "sockets", "rx_packets",
		"tx_packets", "rx_pps", "busy_share", NULL,
	};
	char c[ARRAY_LEN(worker_cols)][32], rx[32], tx[32], pps[32];
	size_t i, k;
	json_t *w;
	int rc;

	fprintf(v->f, "workers:\n  %6s  %4s  %5s  %7s  %15s  %15s  %10s  %5s\n",
		"worker", "cpu", "idle", "sockets", "rx_packets", "tx_packets",
		"rx_pps", "busy%");
	json_array_foreach(workers, i, w)
	{
		const json_t *pw = find_like(prev_workers, "id", w);
		double r = json_number_value(json_object_get(w, "rx_pps"));

		for (k = 0; k < ARRAY_LEN(worker_cols); k++)
			scalar_text(json_object_get(w, worker_cols[k]), c[k],
				    sizeof(c[k]));
		if (pw && v->dt > 0 &&
		    counter(w, "rx_packets") >= counter(pw, "rx_packets"))
			r = (double)(counter(w, "rx_packets") -
				     counter(pw, "rx_packets")) /
			    v->dt;
		fprintf(v->f, "  %6s  %4s  %5s  %7s  %15s  %15s  %10s  %5.1f\n",
			c[0], c[1], c[2], c[3],
			render_count(counter(w, "rx_packets"), rx, sizeof(rx)),
			render_count(counter(w, "tx_packets"), tx, sizeof(tx)),
			render_rate(r, pps, sizeof(pps)),
			100.0 * json_number_value(
					json_object_get(w, "busy_share")));
	}
	json_array_foreach(workers, i, w)
	{
		char title[48];

		snprintf(title, sizeof(title), "worker %" JSON_INTEGER_FORMAT,
			 counter(w, "id"));
		rc = pack_counters(v, 2, title, w, shown);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int steer_rules(struct view *v, const json_t *data, int indent);

int render_stats(FILE *f, const json_t *data, const json_t *prev, double dt,
		 bool all, int width)
{
	struct view v = {
		.f = f, .all = all, .width = width, .prev = prev, .dt = dt};
	const json_t *ports = json_object_get(data, "ports");
	const char *key;
	bool any = false;
	json_t *val;
	size_t i;
	int rc;

	json_array_foreach(all_objects(ports) ? ports : NULL, i, val)
	{
		if (i)
			fputc('\n', f);
		rc = stats_port(
			&v, val,
			find_like(json_object_get(prev, "ports"), "name", val));
		if (rc < 0)
			return rc;
		any = true;
	}
	json_object_foreach((json_t *)data, key, val)
	{
		if (!strcmp(key, "ports") && all_objects(val))
			continue;
		if (json_is_array(val) && json_array_size(val) == 0)
			continue;
		if (any)
			fputc('\n', f);
		any = true;
		if (!strcmp(key, "workers") && all_objects(val))
			rc = stats_workers(&v, val,
					   json_object_get(prev, "workers"));
		else if (!strcmp(key, "steer")) {
			fprintf(f, "steer:\n");
			rc = steer_rules(&v, val, 2);
		} else if (!strcmp(key, "ledger")) {
			fprintf(f, "ledger (every port, retired ones too):\n");
			traffic_lines(&v, val, json_object_get(prev, key), 2);
			rc = pack_counters(&v, 2, "counters", val,
					   traffic_keys);
			if (rc == 0)
				rc = pack_counters(&v, 2, "xdp",
						   json_object_get(val, "xdp"),
						   NULL);
		} else
			rc = gen_member(&v, key, val, 0);
		if (rc < 0)
			return rc;
	}
	if (!any)
		fprintf(f, "no ports and no workers\n");
	return 0;
}

static int view_stats(struct view *v, const json_t *data)
{
	if (!json_is_object(data))
		return view_generic(v, data);
	return render_stats(v->f, data, NULL, 0, v->all, v->width);
}

/* ---- workers, steering, host check ---- */

static int view_workers(struct view *v, const json_t *data)
{
	static const char *const skip[] = {"id", "cpu", "idle", "sockets",
					   NULL};
	size_t i;
	json_t *w;
	int rc;

	if (!all_objects(data))
		return view_generic(v, data);
	if (json_array_size(data) == 0)
		fprintf(v->f, "no workers\n");
	json_array_foreach(data, i, w)
	{
		char *sockets = value_text(json_object_get(w, "sockets"));

		if (!sockets)
			return -ENOMEM;
		fprintf(v->f,
			"worker %" JSON_INTEGER_FORMAT
			"  cpu %" JSON_INTEGER_FORMAT "  idle %s  sockets %s\n",
			counter(w, "id"), counter(w, "cpu"),
			str_of(w, "idle", "-"), sockets);
		free(sockets);
		rc = gen_block(v, w, 0, skip, true);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* "proto udp dport 9000": the match's fields that are set. */
static void match_text(const json_t *m, char *buf, size_t size)
{
	size_t len = 0;
	const char *k;
	char t[64];
	json_t *e;

	buf[0] = '\0';
	json_object_foreach((json_t *)m, k, e)
	{
		if (json_is_null(e) || len >= size)
			continue;
		scalar_text(e, t, sizeof(t));
		len += (size_t)snprintf(buf + len, size - len, "%s%s %s",
					len ? " " : "", k, t);
	}
	if (!buf[0])
		snprintf(buf, size, "any");
}

static int steer_rules(struct view *v, const json_t *data, int indent)
{
	static const char *const skip[] = {"name", "port", "match", "cpus",
					   NULL};
	char m[256];
	size_t i;
	json_t *r;
	int rc;

	if (json_array_size(data) == 0)
		fprintf(v->f, "%*sno steering rules\n", indent, "");
	json_array_foreach(data, i, r)
	{
		char *cpus = value_text(json_object_get(r, "cpus"));

		if (!cpus)
			return -ENOMEM;
		match_text(json_object_get(r, "match"), m, sizeof(m));
		fprintf(v->f, "%*s%s  port %s  match %s  to cpus %s\n", indent,
			"", str_of(r, "name", "?"), str_of(r, "port", "-"), m,
			cpus);
		free(cpus);
		rc = gen_block(v, r, indent, skip, true);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int view_steer(struct view *v, const json_t *data)
{
	if (!all_objects(data))
		return view_generic(v, data);
	return steer_rules(v, data, 0);
}

/*
 * acl show: every port's rule table in order, both kinds, one line per
 * rule; a match too long for its column goes on over continuation lines,
 * so no line passes 120 columns.
 */
#define ACL_MATCH_W 44

static void acl_cell(char *dst, size_t w, const char *s)
{
	/* Longer than the column: cut, marked by '~'. */
	if (strlen(s) > w)
		snprintf(dst, w + 1, "%.*s~", (int)(w - 1), s);
	else
		snprintf(dst, w + 1, "%s", s);
}

static int view_acl(struct view *v, const json_t *data)
{
	char m[320], port[11], name[17], line[ACL_MATCH_W + 1], pk[32], by[32];
	size_t i, at, n, cut;
	json_t *r;

	if (!all_objects(data))
		return view_generic(v, data);
	if (json_array_size(data) == 0) {
		fprintf(v->f, "no rules\n");
		return 0;
	}
	fprintf(v->f, "%-4s %-10s %-16s %-5s %-*s %-6s %12s %14s\n", "#",
		"port", "name", "kind", ACL_MATCH_W, "match", "action",
		"packets", "bytes");
	json_array_foreach(data, i, r)
	{
		match_text(json_object_get(r, "match"), m, sizeof(m));
		acl_cell(port, sizeof(port) - 1, str_of(r, "port", "-"));
		acl_cell(name, sizeof(name) - 1, str_of(r, "name", "?"));
		n = strlen(m);
		for (at = 0; at == 0 || at < n;) {
			cut = n - at;
			if (cut > ACL_MATCH_W) {
				/* At the last space that fits. */
				cut = ACL_MATCH_W;
				while (cut > 1 && m[at + cut] != ' ')
					cut--;
				if (cut <= 1)
					cut = ACL_MATCH_W;
			}
			snprintf(line, sizeof(line), "%.*s", (int)cut, m + at);
			if (at == 0)
				fprintf(v->f,
					"%-4" JSON_INTEGER_FORMAT
					" %-10s %-16s %-5s %-*s %-6s %12s "
					"%14s\n",
					counter(r, "index"), port, name,
					str_of(r, "kind", "-"), ACL_MATCH_W,
					line, str_of(r, "action", "-"),
					render_count(counter(r, "packets"), pk,
						     sizeof(pk)),
					render_count(counter(r, "bytes"), by,
						     sizeof(by)));
			else
				fprintf(v->f, "%-39s %s\n", "", line);
			at += cut;
			while (at < n && m[at] == ' ')
				at++;
		}
	}
	return 0;
}

static int view_host_check(struct view *v, const json_t *data)
{
	size_t i, w = 0, n;
	json_t *c;

	if (!all_objects(data) || json_array_size(data) == 0)
		return view_generic(v, data);
	json_array_foreach(data, i, c)
	{
		n = render_text_width(str_of(c, "check", "-"));
		if (n > w && n <= 36)
			w = n;
	}
	json_array_foreach(data, i, c)
	{
		const char *check = str_of(c, "check", "-");
		const char *fix = str_of(c, "fix", "-");
		size_t cw = render_text_width(check);

		fprintf(v->f, "%-4s  %s%*s  ", str_of(c, "status", "-"), check,
			cw < w ? (int)(w - cw) : 0, "");
		put_wrapped(v, 6 + (cw > w ? cw : w) + 2, 6 + w + 2,
			    str_of(c, "value", "-"));
		if (strcmp(fix, "-")) {
			fprintf(v->f, "%*sfix: ", (int)(6 + w + 2), "");
			put_wrapped(v, 6 + w + 7, 6 + w + 7, fix);
		}
	}
	return 0;
}

/*
 * A proxy: where it listens and what it connects to, its settings, then
 * its counters (the zero ones with -a only), the last abort and the flows.
 */
static int proxy_block(struct view *v, const json_t *px)
{
	static const char *const head[] = {"name", "listen", "backend", NULL};
	static const char *const settings[] = {"mode", "limit", "coalesce",
					       NULL};
	const char *key;
	struct pack p;
	json_t *val;
	size_t i;
	int rc;

	fprintf(v->f, "%s  listen %s  backend %s\n", str_of(px, "name", "?"),
		str_of(px, "listen", "-"), str_of(px, "backend", "-"));
	pack_begin(&p, v, 4);
	for (i = 0; settings[i]; i++)
		if (json_object_get(px, settings[i]) &&
		    pack_value(&p, settings[i],
			       json_object_get(px, settings[i])) < 0)
			return -ENOMEM;
	pack_end(&p);
	/* Every other scalar is a counter, a string or null. */
	pack_begin(&p, v, 4);
	json_object_foreach((json_t *)px, key, val)
	{
		if (in_list(head, key) || in_list(settings, key) ||
		    !is_scalar(val) || json_is_null(val) ||
		    (!v->all && is_zero(val)))
			continue;
		if (json_is_integer(val)) {
			char n[32];

			pack_add(&p, key,
				 render_count(json_integer_value(val), n,
					      sizeof(n)));
		} else if (pack_value(&p, key, val) < 0) {
			return -ENOMEM;
		}
	}
	pack_end(&p);
	json_object_foreach((json_t *)px, key, val)
	{
		if (is_scalar(val) ||
		    (json_is_array(val) && !json_array_size(val)))
			continue;
		rc = gen_member(v, key, val, 4);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int view_proxy(struct view *v, const json_t *data)
{
	const json_t *proxies = json_object_get(data, "proxies");
	const char *key;
	size_t i;
	json_t *val;
	int rc;

	if (!all_objects(proxies))
		return view_generic(v, data);
	if (json_array_size(proxies) == 0)
		fprintf(v->f, "no proxies\n");
	json_array_foreach(proxies, i, val)
	{
		if (i)
			fputc('\n', v->f);
		rc = proxy_block(v, val);
		if (rc < 0)
			return rc;
	}
	/* The counters of no proxy in particular. */
	json_object_foreach((json_t *)data, key, val)
	{
		if (!strcmp(key, "proxies") || (!v->all && is_zero(val)))
			continue;
		rc = gen_member(v, key, val, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Text the daemon formats itself (Prometheus, config lines): as it is. */
static int view_text(struct view *v, const json_t *data)
{
	if (!json_is_string(data))
		return view_generic(v, data);
	fputs(json_string_value(data), v->f);
	return 0;
}

/* ---- replies ---- */

static const struct view_row views[] = {
	{.words = "help", .fn = view_help, .help = true},
	{.words = "port show", .fn = view_ports},
	{.words = "port add", .fn = view_ports},
	{.words = "stats", .fn = view_stats},
	{.words = "worker show", .fn = view_workers},
	{.words = "workers", .fn = view_workers},
	{.words = "steer show", .fn = view_steer},
	{.words = "acl show", .fn = view_acl},
	{.words = "acl add", .fn = view_acl},
	{.words = "host check", .fn = view_host_check},
	{.words = "proxy show", .fn = view_proxy},
	{.words = "metrics", .fn = view_text, .raw = true},
	{.words = "show config", .fn = view_text, .raw = true},
};

/* The row whose words begin argv, the longest one. */
const struct view_row *render_view_for(int argc, char *const *argv)
{
	const struct view_row *best = NULL;
	size_t i, best_n = 0;

	for (i = 0; i < ARRAY_LEN(views); i++) {
		char words[64], *save = NULL, *w;
		size_t n = 0;
		bool match = true;

		snprintf(words, sizeof(words), "%s", views[i].words);
		for (w = strtok_r(words, " ", &save); w;
		     w = strtok_r(NULL, " ", &save), n++)
			if ((int)n >= argc || strcmp(argv[n], w)) {
				match = false;
				break;
			}
		if (match && n > best_n) {
			best = &views[i];
			best_n = n;
		}
	}
	return best;
}
