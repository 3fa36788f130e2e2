// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostcheck.c - `host check`: reading files under the root prefix, making
 * rows, and the table of checks (hostcheck_host.c: the host's rows,
 * hostcheck_nic.c: one interface's). A check never fails as a whole: what
 * it cannot read becomes a "warn" row saying so.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hostcheck_int.h"

static const char *const status_names[] = {
	[HC_OK] = "ok",
	[HC_WARN] = "warn",
	[HC_FAIL] = "fail",
};

/* ------------------------------------------------------------- files */

static void hc_path(const struct hc *h, char *buf, size_t len, const char *fmt,
		    va_list ap)
{
	int n = snprintf(buf, len, "%s", h->root);

	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
}

int hc_read_str(const struct hc *h, char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	char *nl;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

int hc_read_long(const struct hc *h, long *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64], *end;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	errno = 0;
	*v = strtol(buf, &end, 10);
	return errno || end == buf ? -EINVAL : 0;
}

DIR *hc_open_dir(const struct hc *h, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	return opendir(path);
}

bool hc_exists(const struct hc *h, const char *fmt, ...)
{
	char path[PATH_MAX];
	struct stat st;
	va_list ap;

	va_start(ap, fmt);
	hc_path(h, path, sizeof(path), fmt, ap);
	va_end(ap);
	return !stat(path, &st);
}

uint64_t hc_cpulist_parse(const char *s)
{
	uint64_t mask = 0;
	char *end;

	while (*s) {
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (; a <= b && a < 64; a++)
			if (a >= 0)
				mask |= 1ull << a;
		if (*s != ',')
			break;
		s++;
	}
	return mask;
}

/* --------------------------------------------------------------- rows */

void hc_row(struct hc *h, const char *check, enum hc_status st, const char *fix,
	    const char *fmt, ...)
{
	char value[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	json_array_append_new(h->rows,
			      json_pack("{s:s, s:s, s:s, s:s}", "check", check,
					"status", status_names[st], "value",
					value, "fix", fix ? fix : "-"));
}

/* ------------------------------------------------------------- table */

struct hc_check {
	void (*fn)(struct hc *h);
	bool per_interface;
};

static const struct hc_check checks[] = {
	{hc_check_kernel, false},   {hc_check_bpf_sysctls, false},
	{hc_check_mounts, false},   {hc_check_hugepages, false},
	{hc_check_memlock, false},  {hc_check_workers, false},
	{hc_check_driver, true},    {hc_check_xdp_features, true},
	{hc_check_numa, true},	    {hc_check_queues, true},
	{hc_check_irqs, true},	    {hc_check_busy_poll, true},
	{hc_check_veth_csum, true},
};

static void read_cpu_nodes(struct hc *h)
{
	struct dirent *de;
	int c;

	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++) {
		DIR *d;

		h->cpu_node[c] = -1;
		if (!(h->online & (1ull << c)))
			continue;
		d = hc_open_dir(h, "/sys/devices/system/cpu/cpu%d", c);
		while (d && (de = readdir(d)))
			if (!strncmp(de->d_name, "node", 4))
				h->cpu_node[c] = atoi(de->d_name + 4);
		if (d)
			closedir(d);
	}
}

json_t *ferry_host_check(const struct ferry_hostcheck_params *p, int *err,
			 struct ferry_err *msg)
{
	struct hc h = {
		.p = p,
		.probes = p->probes ? p->probes : &hc_real_probes,
		.root = p->root ? p->root : "",
		.ifname = p->ifname,
		.nic_node = -1,
	};
	char online[256] = "";
	size_t i;

	if (p->ifname && (strlen(p->ifname) >= 16 || strchr(p->ifname, '/') ||
			  !hc_exists(&h, "/sys/class/net/%s", p->ifname))) {
		*err = -ENODEV;
		ferry_errf(msg, "no interface '%s' here", p->ifname);
		return NULL;
	}
	if (hc_read_str(&h, online, sizeof(online),
			"/sys/devices/system/cpu/online"))
		snprintf(online, sizeof(online), "0");
	h.online = hc_cpulist_parse(online);
	if (p->cpus & ~h.online) {
		*err = -EINVAL;
		ferry_errf(msg, "CPU %d is not online",
			   __builtin_ctzll(p->cpus & ~h.online));
		return NULL;
	}
	h.cpus = p->cpus ? p->cpus : h.online;
	read_cpu_nodes(&h);
	h.rows = json_array();
	if (!h.rows) {
		*err = -ENOMEM;
		ferry_errf(msg, "out of memory");
		return NULL;
	}
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (!checks[i].per_interface || h.ifname)
			checks[i].fn(&h);
	*err = 0;
	return h.rows;
}
