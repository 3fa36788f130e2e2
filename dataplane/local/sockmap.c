// SPDX-License-Identifier: BSD-2-Clause
/*
 * sockmap.c - local TCP flow acceleration: attach, detach, show, the
 * per-service policies, and the probe for BPF_F_PERMANENT.
 *
 * The probe runs once, at the first attach or show: the sk_msg program in
 * per-message mode, with a throwaway SOCKHASH holding both ends of a TCP
 * connection over loopback, redirects a one-byte send first with
 * BPF_F_INGRESS alone (which must work: it proves the keys and the
 * plumbing) and then with flag bit 1 added. A kernel without the flag
 * answers SK_DROP and the send fails with EACCES.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <libmnl/libmnl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The skeleton names ABI structs: the header that defines them first. */
#include "sockmap.h"
#include "ferry_sockmap.skel.h"
#include "log.h"

static const char *const mode_names[] = {
#define FERRY_SM_MODE_NAME(id, name) [FERRY_SM_##id] = name,
	FERRY_SM_MODES(FERRY_SM_MODE_NAME)
#undef FERRY_SM_MODE_NAME
};

/* Map keys hashed byte by byte: no hole the compiler could leave unset. */
_Static_assert(sizeof(struct ferry_sm_svc_key) == 40, "svc key: no padding");
_Static_assert(sizeof(struct ferry_sm_policy_key) == 32,
	       "policy key: no padding");
_Static_assert(sizeof(struct ferry_sm_pend) == 16, "pending: no padding");

static const char *const decision_names[] = {
#define FERRY_SM_DECISION_NAME(id, name) [FERRY_SM_D_##id] = name,
	FERRY_SM_DECISIONS(FERRY_SM_DECISION_NAME)
#undef FERRY_SM_DECISION_NAME
};

static const char *const reason_names[] = {
#define FERRY_SM_REASON_NAME(id, name) [FERRY_SM_R_##id] = name,
	FERRY_SM_REASONS(FERRY_SM_REASON_NAME)
#undef FERRY_SM_REASON_NAME
};

static const char *const shape_names[] = {
#define FERRY_SM_SHAPE_NAME(id, name) [FERRY_SM_SHAPE_##id] = name,
	FERRY_SM_SHAPES(FERRY_SM_SHAPE_NAME)
#undef FERRY_SM_SHAPE_NAME
};

/* What the kernel said to flag bit 1. */
enum sm_probe {
	SM_PROBE_NOT_RUN,
	SM_PROBE_SUPPORTED,
	SM_PROBE_UNSUPPORTED,
	SM_PROBE_FAILED, /* could not tell: treated as unsupported */
};

/* One attachment: its programs, maps and links. */
struct sm_inst {
	struct ferry_sockmap_bpf *skel;
	struct bpf_link *sockops_link;
	struct bpf_link *tp_link;
	struct bpf_link *recv_link;
	int quiet_ticks; /* ticks in a row that nothing needed the tracepoints */
	int cgroup_fd;
	bool msg_attached;
	int mode_asked; /* as given, for the config line */
	int mode;	/* in use */
	int dflt;	/* enum ferry_sm_decision */
	char cgroup[PATH_MAX];
	char ports[256]; /* as given, "" for every port */
};

struct ferry_sockmap {
	struct sm_inst *cur;	  /* attached */
	struct sm_inst *draining; /* detached, sockets still in its map */
	json_t *last;		  /* the last detached one, as it ended */
	struct ferry_sockmap_policy policies[FERRY_SM_MAX_POLICIES];
	/* policies[i]'s cgroup path as given, "" for none (its .cgroup is
	 * kept NULL: the rows move when one is deleted). */
	char cgroups[FERRY_SM_MAX_POLICIES][FERRY_SM_CGROUP_MAX];
	unsigned n_policies;
	enum sm_probe probe;
	char probe_msg[FERRY_ERR_LEN];
};

/* ------------------------------------------------------------ helpers */

const char *ferry_sockmap_mode_name(int mode)
{
	if (mode == FERRY_SM_MODE_AUTO)
		return "auto";
	return mode >= 0 && mode < FERRY_SM__MODES ? mode_names[mode] : "?";
}

int ferry_sockmap_mode_parse(const char *s, int *mode)
{
	int i;

	if (!strcmp(s, "auto")) {
		*mode = FERRY_SM_MODE_AUTO;
		return 0;
	}
	for (i = 0; i < FERRY_SM__MODES; i++) {
		if (!strcmp(s, mode_names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *ferry_sockmap_decision_name(int d)
{
	return d >= 0 && d < FERRY_SM__DECISIONS ? decision_names[d] : "?";
}

int ferry_sockmap_decision_parse(const char *s, int *d)
{
	int i;

	for (i = 0; i < FERRY_SM__DECISIONS; i++) {
		if (!strcmp(s, decision_names[i])) {
			*d = i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *reason_name(uint32_t r)
{
	return r < FERRY_SM__REASONS ? reason_names[r] : "?";
}

static int parse_port(const char *s, size_t n, uint16_t *out)
{
	char buf[8], *end;
	unsigned long v;

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || *end || v < 1 || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

int ferry_sockmap_parse_ports(const char *s, struct ferry_sm_port_range *ranges,
			      unsigned *n, struct ferry_err *msg)
{
	const char *p = s;

	*n = 0;
	if (!*s)
		return ferry_fail(msg, -EINVAL, "ports: empty list");
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t item = comma ? (size_t)(comma - p) : strlen(p);
		const char *dash = memchr(p, '-', item);
		struct ferry_sm_port_range r;

		if (*n == FERRY_SM_MAX_RANGES)
			return ferry_fail(msg, -E2BIG,
					  "ports: more than %d items in '%s'",
					  FERRY_SM_MAX_RANGES, s);
		if (dash ? parse_port(p, dash - p, &r.lo) ||
				    parse_port(dash + 1, item - (dash + 1 - p),
					       &r.hi)
			 : parse_port(p, item, &r.lo))
			return ferry_fail(
				msg, -EINVAL,
				"ports: '%.*s' is not a port (1-65535) "
				"or a range A-B in '%s'",
				(int)item, p, s);
		if (!dash)
			r.hi = r.lo;
		if (r.hi < r.lo)
			return ferry_fail(msg, -EINVAL,
					  "ports: range '%.*s' ends before it "
					  "starts",
					  (int)item, p);
		ranges[(*n)++] = r;
		if (!comma)
			break;
		p = comma + 1;
		if (!*p)
			return ferry_fail(msg, -EINVAL,
					  "ports: '%s' ends with a comma", s);
	}
	return 0;
}

int ferry_sockmap_service_parse(const char *s, struct ferry_sm_policy_key *k,
				struct ferry_err *msg)
{
	static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
	size_t hlen;

	memset(k, 0, sizeof(*k));
	if (!colon) {
		if (parse_port(s, strlen(s), &k->port))
			goto bad;
		return 0;
	}
	hlen = (size_t)(colon - s);
	if (parse_port(colon + 1, strlen(colon + 1), &k->port) || !hlen ||
	    hlen >= sizeof(host))
		goto bad;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (host[0] == '[') {
		if (hlen < 3 || host[hlen - 1] != ']')
			goto bad;
		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, k->addr) != 1)
			goto bad;
		k->family = 6;
		/* Sockets of a dual-stack listener are keyed as IPv4. */
		if (!memcmp(k->addr, v4mapped, sizeof(v4mapped))) {
			k->family = 4;
			k->addr[0] = k->addr[3];
			k->addr[1] = k->addr[2] = k->addr[3] = 0;
		}
		return 0;
	}
	if (inet_pton(AF_INET, host, k->addr) != 1)
		goto bad;
	k->family = 4;
	return 0;
bad:
	return ferry_fail(msg, -EINVAL,
			  "service '%s': expected PORT, ADDR:PORT or "
			  "[ADDR6]:PORT (port 1-65535)",
			  s);
}

void ferry_sockmap_service_text(const struct ferry_sm_policy_key *k, char *buf,
				size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (!k->family) {
		snprintf(buf, len, "%u", k->port);
		return;
	}
	inet_ntop(k->family == 4 ? AF_INET : AF_INET6, k->addr, ip, sizeof(ip));
	snprintf(buf, len, k->family == 4 ? "%s:%u" : "[%s]:%u", ip, k->port);
}

/* The key the BPF side computes for a socket (FERRY_SM_KEY_OF). */
static int key_of_fd(int fd, struct ferry_sock_key *k)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r), nl = sizeof(uint64_t);
	uint64_t netns;

	if (getsockname(fd, (struct sockaddr *)&l, &ll) ||
	    getpeername(fd, (struct sockaddr *)&r, &rl) ||
	    getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &netns, &nl))
		return -errno;
	memset(k, 0, sizeof(*k));
	k->netns = netns;
	if (l.ss_family == AF_INET) {
		const struct sockaddr_in *l4 = (void *)&l, *r4 = (void *)&r;

		k->family = 4;
		k->local_ip[0] = l4->sin_addr.s_addr;
		k->remote_ip[0] = r4->sin_addr.s_addr;
		k->local_port = ntohs(l4->sin_port);
		k->remote_port = ntohs(r4->sin_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

static void key_text(const struct ferry_sock_key *k, bool local, char *buf,
		     size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	const uint32_t *a = local ? k->local_ip : k->remote_ip;

	inet_ntop(k->family == 4 ? AF_INET : AF_INET6, a, ip, sizeof(ip));
	snprintf(buf, len, k->family == 4 ? "%s:%u" : "[%s]:%u", ip,
		 local ? k->local_port : k->remote_port);
}

static void key_swap(const struct ferry_sock_key *k, struct ferry_sock_key *o)
{
	memset(o, 0, sizeof(*o));
	o->netns = k->netns;
	o->family = k->family;
	o->local_port = k->remote_port;
	o->remote_port = k->local_port;
	memcpy(o->local_ip, k->remote_ip, sizeof(o->local_ip));
	memcpy(o->remote_ip, k->local_ip, sizeof(o->remote_ip));
}

/* ---------------------------------------------------------- instances */

static json_t *inst_json(const struct sm_inst *in);
static void wake_up(struct sm_inst *in, const char *why);
static json_t *services_json(const struct ferry_sockmap *sm,
			     const struct sm_inst *in);

static void inst_free(struct sm_inst *in)
{
	if (!in)
		return;
	bpf_link__destroy(in->sockops_link);
	if (in->msg_attached)
		bpf_prog_detach2(
			bpf_program__fd(in->skel->progs.ferry_sm_verdict),
			bpf_map__fd(in->skel->maps.ferry_sm_socks),
			BPF_SK_MSG_VERDICT);
	bpf_link__destroy(in->tp_link);
	bpf_link__destroy(in->recv_link);
	/* Closing the SOCKHASH (last reference) takes every socket out of
	 * it: they fall back to TCP. */
	ferry_sockmap_bpf__destroy(in->skel);
	if (in->cgroup_fd >= 0)
		close(in->cgroup_fd);
	free(in);
}

/* Opens and loads the programs with their load-time knobs. */
static struct sm_inst *inst_load(int mode, const struct ferry_sockmap_params *p,
				 bool probe, struct ferry_err *msg)
{
	struct sm_inst *in = calloc(1, sizeof(*in));
	int err;

	if (!in) {
		ferry_fail(msg, -ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	in->cgroup_fd = -1;
	in->mode = mode;
	in->skel = ferry_sockmap_bpf__open();
	if (!in->skel) {
		err = -errno;
		ferry_fail(msg, err, "sockmap: cannot open the programs: %s",
			   strerror(-err));
		goto err_inst;
	}
	in->skel->rodata->mode = (uint32_t)mode;
	in->skel->rodata->probe = probe;
	if (p) {
		in->dflt = p->dflt;
		in->skel->rodata->default_decision = (uint32_t)p->dflt;
		in->skel->rodata->n_ranges = p->n_ranges;
		memcpy((void *)in->skel->rodata->ranges, p->ranges,
		       p->n_ranges * sizeof(p->ranges[0]));
		memcpy((void *)&in->skel->rodata->rule, &p->rule,
		       sizeof(p->rule));
		in->skel->rodata->lag_max = p->lag_max;
	}
	/* The probe needs neither the cgroup hook nor the byte counter. */
	if (probe) {
		bpf_program__set_autoload(in->skel->progs.ferry_sm_sockops,
					  false);
		bpf_program__set_autoload(in->skel->progs.ferry_sm_sent, false);
		bpf_program__set_autoload(in->skel->progs.ferry_sm_recvd,
					  false);
	}
	err = ferry_sockmap_bpf__load(in->skel);
	if (err) {
		ferry_fail(msg, err, "sockmap: cannot load the programs: %s",
			   strerror(-err));
		goto err_inst;
	}
	err = bpf_prog_attach(bpf_program__fd(in->skel->progs.ferry_sm_verdict),
			      bpf_map__fd(in->skel->maps.ferry_sm_socks),
			      BPF_SK_MSG_VERDICT, 0);
	if (err) {
		err = -errno;
		ferry_fail(msg, err,
			   "sockmap: cannot attach the sk_msg verdict: %s",
			   strerror(-err));
		goto err_inst;
	}
	in->msg_attached = true;
	return in;
err_inst:
	inst_free(in);
	errno = -err;
	return NULL;
}

static int sock_count(const struct sm_inst *in)
{
	struct ferry_sock_key k, next;
	int fd = bpf_map__fd(in->skel->maps.ferry_sm_socks), n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

/* -------------------------------------------------------------- probe */

/* A connected TCP pair over 127.0.0.1: *a the client, *b the server. */
static int tcp_pair(int *a, int *b)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t alen = sizeof(addr);
	int l, err;

	*a = *b = -1;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&addr, sizeof(addr)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&addr, &alen))
		goto err_listen;
	*a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*a < 0 || connect(*a, (struct sockaddr *)&addr, sizeof(addr)))
		goto err_listen;
	*b = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (*b < 0)
		goto err_listen;
	close(l);
	return 0;
err_listen:
	err = -errno;
	if (*a >= 0)
		close(*a);
	*a = -1;
	close(l);
	return err;
}

/* Sends one byte from a; 0 if b got it, else -errno of the send. */
static int probe_send(int a, int b)
{
	struct timeval tv = {.tv_sec = 1};
	char c = 'p';

	if (send(a, &c, 1, MSG_NOSIGNAL) != 1)
		return -errno;
	setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (recv(b, &c, 1, 0) != 1 || c != 'p')
		return -EIO;
	return 0;
}

static void probe_run(struct ferry_sockmap *sm)
{
	struct ferry_sock_key ka, kb;
	struct sm_inst *in;
	uint64_t va, vb;
	struct ferry_err m;
	int a = -1, b = -1, fd, err;

	sm->probe = SM_PROBE_FAILED;
	in = inst_load(FERRY_SM_PER_MESSAGE, NULL, true, &m);
	if (!in) {
		snprintf(sm->probe_msg, sizeof(sm->probe_msg), "%s", m.msg);
		goto out;
	}
	err = tcp_pair(&a, &b);
	if (!err)
		err = key_of_fd(a, &ka);
	if (!err)
		err = key_of_fd(b, &kb);
	if (err) {
		snprintf(sm->probe_msg, sizeof(sm->probe_msg),
			 "no TCP connection over 127.0.0.1 to probe with: %s",
			 strerror(-err));
		goto out;
	}
	fd = bpf_map__fd(in->skel->maps.ferry_sm_socks);
	/* The SOCKHASH's value is a u64 socket fd. */
	va = (uint64_t)a;
	vb = (uint64_t)b;
	if (bpf_map_update_elem(fd, &ka, &va, BPF_ANY) ||
	    bpf_map_update_elem(fd, &kb, &vb, BPF_ANY)) {
		snprintf(sm->probe_msg, sizeof(sm->probe_msg),
			 "cannot add the probe's sockets: %s", strerror(errno));
		goto out;
	}
	err = probe_send(a, b);
	if (err) {
		snprintf(sm->probe_msg, sizeof(sm->probe_msg),
			 "a plain ingress redirect failed (%s): cannot tell",
			 strerror(-err));
		goto out;
	}
	in->skel->bss->probe_flags = FERRY_SM_F_PERMANENT;
	err = probe_send(a, b);
	if (!err) {
		sm->probe = SM_PROBE_SUPPORTED;
		snprintf(sm->probe_msg, sizeof(sm->probe_msg),
			 "a redirect with flag bit 1 was delivered");
	} else if (err == -EACCES) {
		sm->probe = SM_PROBE_UNSUPPORTED;
		snprintf(sm->probe_msg, sizeof(sm->probe_msg),
			 "a redirect with flag bit 1 was refused: the send "
			 "failed with EACCES");
	} else {
		snprintf(sm->probe_msg, sizeof(sm->probe_msg),
			 "a redirect with flag bit 1 failed with %s",
			 strerror(-err));
	}
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	inst_free(in);
	log_info("sockmap: BPF_F_PERMANENT %s (%s)",
		 sm->probe == SM_PROBE_SUPPORTED ? "supported" : "unsupported",
		 sm->probe_msg);
}

static void probe_once(struct ferry_sockmap *sm)
{
	if (sm->probe == SM_PROBE_NOT_RUN)
		probe_run(sm);
}

/* ------------------------------------------------------------- object */

struct ferry_sockmap *ferry_sockmap_create(void)
{
	return calloc(1, sizeof(struct ferry_sockmap));
}

void ferry_sockmap_destroy(struct ferry_sockmap *sm)
{
	if (!sm)
		return;
	inst_free(sm->cur);
	inst_free(sm->draining);
	json_decref(sm->last);
	free(sm);
}

/* A cgroup v2 directory other than a hierarchy's root; returns its fd. */
static int cgroup_open(const char *path, struct ferry_err *msg)
{
	struct statfs sfs;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return ferry_fail(msg, err, "cgroup %s: %s", path,
				  strerror(-err));
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return ferry_fail(msg, -EINVAL,
				  "cgroup %s: not a cgroup v2 directory "
				  "(mount cgroup2 and make a child cgroup)",
				  path);
	}
	/* Every cgroup but the root has cgroup.type. The root would put
	 * the whole host's TCP under the programs. */
	if (fstatat(fd, "cgroup.type", &st, 0)) {
		close(fd);
		return ferry_fail(msg, -EPERM,
				  "cgroup %s: refusing the root cgroup; "
				  "attach to a child cgroup",
				  path);
	}
	return fd;
}

/* ----------------------------------------------------------- policies */

int ferry_sockmap_cgroup_id(const char *path, uint64_t *id,
			    struct ferry_err *msg)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} h;
	char full[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	int fd, err, mnt;

	if (!path || !path[0])
		return ferry_fail(msg, -EINVAL, "cgroup: empty path");
	if (snprintf(full, sizeof(full), "%s%s%s",
		     path[0] == '/' ? "" : FERRY_SM_CGROUP_ROOT,
		     path[0] == '/' ? "" : "/", path) >= (int)sizeof(full))
		return ferry_fail(msg, -ENAMETOOLONG,
				  "cgroup %s: path too long", path);
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return ferry_fail(msg, err, "cgroup %s: %s%s", full,
				  strerror(-err),
				  err == -ENOENT ? " (no such cgroup)" : "");
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return ferry_fail(msg, -EINVAL,
				  "cgroup %s: not on a cgroup v2 mount", full);
	}
	/* The kernel's cgroup id is the kernfs node id: the file handle of
	 * the directory, and on 64-bit hosts its inode number as well. */
	h.fh.handle_bytes = sizeof(h.buf) - sizeof(h.fh);
	if (!name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) &&
	    h.fh.handle_bytes == sizeof(*id)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
	} else if (!fstat(fd, &st)) {
		*id = (uint64_t)st.st_ino;
	} else {
		err = -errno;
		close(fd);
		return ferry_fail(msg, err, "cgroup %s: %s", full,
				  strerror(-err));
	}
	close(fd);
	return 0;
}

/* How many policies name a cgroup: the BPF side looks cgroups up only
 * while one does. */
static void cg_policies_write(const struct ferry_sockmap *sm,
			      struct sm_inst *in)
{
	unsigned i, n = 0;

	for (i = 0; i < sm->n_policies; i++)
		n += sm->policies[i].key.cgroup != 0;
	in->skel->bss->cg_policies = n;
}

static int policies_write(const struct ferry_sockmap *sm,
			  const struct sm_inst *in)
{
	int fd = bpf_map__fd(in->skel->maps.ferry_sm_policy);
	unsigned i;

	for (i = 0; i < sm->n_policies; i++) {
		uint32_t d = (uint32_t)sm->policies[i].decision;

		if (bpf_map_update_elem(fd, &sm->policies[i].key, &d, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* "6379" or "6379 in cgroup /sys/fs/cgroup/x", for the log. */
static void policy_text(const struct ferry_sm_policy_key *k, const char *cg,
			char *buf, size_t len)
{
	char svc[64];

	ferry_sockmap_service_text(k, svc, sizeof(svc));
	snprintf(buf, len, "%s%s%s", svc, cg && cg[0] ? " in cgroup " : "",
		 cg ? cg : "");
}

static int policy_find(const struct ferry_sockmap *sm,
		       const struct ferry_sm_policy_key *k)
{
	unsigned i;

	for (i = 0; i < sm->n_policies; i++)
		if (!memcmp(&sm->policies[i].key, k, sizeof(*k)))
			return (int)i;
	return -1;
}

int ferry_sockmap_policy_add(struct ferry_sockmap *sm,
			     const struct ferry_sockmap_policy *p,
			     struct ferry_err *msg)
{
	struct ferry_sm_policy_key key = p->key;
	uint32_t d = (uint32_t)p->decision;
	char svc[64 + FERRY_SM_CGROUP_MAX];
	uint64_t id;
	int i, fd, rc;

	if (p->decision < 0 || p->decision >= FERRY_SM__DECISIONS)
		return ferry_fail(msg, -EINVAL, "policy: bad decision");
	key.cgroup = 0;
	if (p->cgroup) {
		if (strlen(p->cgroup) >= FERRY_SM_CGROUP_MAX)
			return ferry_fail(msg, -ENAMETOOLONG,
					  "policy: cgroup path longer than %d",
					  FERRY_SM_CGROUP_MAX - 1);
		/* The saved config quotes it. */
		if (strpbrk(p->cgroup, "\"\n"))
			return ferry_fail(msg, -EINVAL,
					  "policy: cgroup path with a double "
					  "quote or a newline");
		rc = ferry_sockmap_cgroup_id(p->cgroup, &id, msg);
		if (rc)
			return rc;
		key.cgroup = id;
	}
	i = policy_find(sm, &key);
	if (i < 0 && sm->n_policies == FERRY_SM_MAX_POLICIES)
		return ferry_fail(msg, -ENOSPC,
				  "policy: the table is full (%d services)",
				  FERRY_SM_MAX_POLICIES);
	/* New connections see it from here; established ones keep theirs. */
	if (sm->cur) {
		fd = bpf_map__fd(sm->cur->skel->maps.ferry_sm_policy);
		if (bpf_map_update_elem(fd, &key, &d, BPF_ANY)) {
			int err = -errno;

			return ferry_fail(msg, err, "policy: %s",
					  strerror(-err));
		}
	}
	if (i < 0)
		i = (int)sm->n_policies++;
	sm->policies[i] = *p;
	sm->policies[i].key = key;
	sm->policies[i].cgroup = NULL;
	snprintf(sm->cgroups[i], sizeof(sm->cgroups[i]), "%s",
		 p->cgroup ? p->cgroup : "");
	if (sm->cur)
		cg_policies_write(sm, sm->cur);
	/* Only a plain policy can't turn a service's connections redirected
	 * (learn gives back what it learned, maybe redirect): a quiet
	 * attachment would keep them plain. */
	if (sm->cur && p->decision != FERRY_SM_D_PLAIN)
		wake_up(sm->cur, "a policy");
	policy_text(&key, p->cgroup, svc, sizeof(svc));
	log_info("sockmap: policy %s %s", svc, decision_names[p->decision]);
	return 0;
}

/* A policy by the service and cgroup given to `policy del`: the cgroup's
 * id while it exists, else its path as it was given. */
static int policy_find_del(const struct ferry_sockmap *sm,
			   const struct ferry_sockmap_policy *p)
{
	struct ferry_sm_policy_key k = p->key;
	struct ferry_err ignored;
	uint64_t id;
	unsigned j;
	int i;

	k.cgroup = 0;
	if (!p->cgroup)
		return policy_find(sm, &k);
	if (!ferry_sockmap_cgroup_id(p->cgroup, &id, &ignored)) {
		k.cgroup = id;
		i = policy_find(sm, &k);
		if (i >= 0)
			return i;
	}
	for (j = 0; j < sm->n_policies; j++) {
		k.cgroup = sm->policies[j].key.cgroup;
		if (k.cgroup && !strcmp(sm->cgroups[j], p->cgroup) &&
		    !memcmp(&sm->policies[j].key, &k, sizeof(k)))
			return (int)j;
	}
	return -1;
}

int ferry_sockmap_policy_del(struct ferry_sockmap *sm,
			     const struct ferry_sockmap_policy *p,
			     struct ferry_err *msg)
{
	int i = policy_find_del(sm, p);
	char svc[64 + FERRY_SM_CGROUP_MAX];
	unsigned after;

	policy_text(&p->key, p->cgroup, svc, sizeof(svc));
	if (i < 0)
		return ferry_fail(msg, -ENOENT, "policy: no policy for %s",
				  svc);
	if (sm->cur)
		bpf_map_delete_elem(
			bpf_map__fd(sm->cur->skel->maps.ferry_sm_policy),
			&sm->policies[i].key);
	after = sm->n_policies - (unsigned)i - 1;
	memmove(&sm->policies[i], &sm->policies[i + 1],
		after * sizeof(sm->policies[0]));
	memmove(sm->cgroups[i], sm->cgroups[i + 1],
		after * sizeof(sm->cgroups[0]));
	sm->n_policies--;
	if (sm->cur)
		cg_policies_write(sm, sm->cur);
	log_info("sockmap: policy %s removed", svc);
	/* The service goes back to what it learned, maybe redirect. */
	if (sm->cur)
		wake_up(sm->cur, "a policy removed");
	return 0;
}

int ferry_sockmap_policy_get(const struct ferry_sockmap *sm, unsigned i,
			     struct ferry_sockmap_policy *p)
{
	if (i >= sm->n_policies)
		return -ENOENT;
	*p = sm->policies[i];
	p->cgroup = sm->cgroups[i][0] ? sm->cgroups[i] : NULL;
	return 0;
}

/* The index of the policy a service falls under: its address and port,
 * else its port, in its cgroup (a service has one only when a policy
 * named it: bpf/ferry_sockmap.bpf.c's decide()); -1 for none. */
static int policy_index(const struct ferry_sockmap *sm,
			const struct ferry_sm_svc_key *k)
{
	struct ferry_sm_policy_key pk = {
		.cgroup = k->cgroup, .port = k->port, .family = k->family};
	int i;

	memcpy(pk.addr, k->addr, sizeof(pk.addr));
	i = policy_find(sm, &pk);
	if (i < 0) {
		memset(&pk, 0, sizeof(pk));
		pk.cgroup = k->cgroup;
		pk.port = k->port;
		i = policy_find(sm, &pk);
	}
	return i;
}

static const struct ferry_sockmap_policy *
policy_of(const struct ferry_sockmap *sm, const struct ferry_sm_svc_key *k)
{
	int i = policy_index(sm, k);

	return i < 0 ? NULL : &sm->policies[i];
}

/* A cgroup's path as a policy gave it, NULL when none does any more. */
static const char *cgroup_path(const struct ferry_sockmap *sm, uint64_t id)
{
	unsigned i;

	for (i = 0; i < sm->n_policies; i++)
		if (sm->policies[i].key.cgroup == id && sm->cgroups[i][0])
			return sm->cgroups[i];
	return NULL;
}

static json_t *policies_json(const struct ferry_sockmap *sm)
{
	json_t *arr = json_array();
	char svc[64];
	unsigned i;

	json_t *row;

	for (i = 0; arr && i < sm->n_policies; i++) {
		ferry_sockmap_service_text(&sm->policies[i].key, svc,
					   sizeof(svc));
		row = json_pack("{s:s, s:s}", "service", svc, "decision",
				decision_names[sm->policies[i].decision]);
		if (row && sm->policies[i].key.cgroup) {
			json_object_set_new(row, "cgroup",
					    json_string(sm->cgroups[i]));
			json_object_set_new(
				row, "cgroup_id",
				json_integer((json_int_t)sm->policies[i]
						     .key.cgroup));
		}
		json_array_append_new(arr, row);
	}
	return arr;
}

/* ---------------------------------------------------------- listeners */

static bool ports_match(const struct ferry_sockmap_params *p, uint16_t port)
{
	unsigned i;

	if (!p->n_ranges)
		return true;
	for (i = 0; i < p->n_ranges; i++)
		if (port >= p->ranges[i].lo && port <= p->ranges[i].hi)
			return true;
	return false;
}

/* What the sock_diag dump's callback needs. */
struct seed_ctx {
	int map_fd;
	uint64_t netns;
	const struct ferry_sockmap_params *p;
	int added;
};

/* One listener of a sock_diag reply into ferry_sm_listeners, keyed as
 * the BPF side's listener_key() does (mnl_cb_run's callback). */
static int listener_seed_one(const struct nlmsghdr *h, void *data)
{
	static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};
	struct seed_ctx *c = data;
	const struct inet_diag_msg *m;
	struct ferry_sm_svc_key k = {0};
	const struct nlattr *a;
	__u64 cg = 0;

	if (mnl_nlmsg_get_payload_len(h) < sizeof(*m))
		return MNL_CB_OK;
	m = mnl_nlmsg_get_payload(h);
	mnl_attr_for_each(a, h, sizeof(*m)) {
		if (mnl_attr_get_type(a) == INET_DIAG_CGROUP_ID &&
		    !mnl_attr_validate(a, MNL_TYPE_U64))
			cg = mnl_attr_get_u64(a);
	}
	k.port = ntohs(m->id.idiag_sport);
	if (!cg || !ports_match(c->p, k.port))
		return MNL_CB_OK;
	k.netns = c->netns;
	k.family = m->idiag_family == AF_INET ? 4 : 6;
	memcpy(k.addr, m->id.idiag_src, sizeof(k.addr));
	if (k.family == 4) {
		k.addr[1] = k.addr[2] = k.addr[3] = 0;
	} else if (!memcmp(k.addr, v4mapped, sizeof(v4mapped))) {
		k.family = 4;
		k.addr[0] = k.addr[3];
		k.addr[1] = k.addr[2] = k.addr[3] = 0;
	}
	/* One listen() made since the attach knows better. */
	if (!bpf_map_update_elem(c->map_fd, &k, &cg, BPF_NOEXIST))
		c->added++;
	return MNL_CB_OK;
}

/* Dumps family's TCP listeners into the map: 0 or -errno. */
static int listeners_dump(struct mnl_socket *nl, int family, struct seed_ctx *c)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int seq = (unsigned int)family, portid;
	struct nlmsghdr *h = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *r;
	ssize_t n;
	int ret;

	h->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	h->nlmsg_seq = seq;
	r = mnl_nlmsg_put_extra_header(h, sizeof(*r));
	r->sdiag_family = (__u8)family;
	r->sdiag_protocol = IPPROTO_TCP;
	r->idiag_states = 1u << 10; /* TCP_LISTEN */
	if (mnl_socket_sendto(nl, h, h->nlmsg_len) < 0)
		return -errno;
	portid = mnl_socket_get_portid(nl);
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, listener_seed_one,
				 c);
	} while (ret > MNL_CB_STOP);
	return ret < 0 ? -errno : 0;
}

/*
 * The TCP listeners already there when an attachment starts, with their
 * cgroups, from sock_diag: the BPF side records listeners at listen(),
 * which those went through before its program was attached, and without
 * them their clients could not find the server's cgroup (after a restart
 * of ferryd, every server's). Only ferryd's own network namespace can be
 * asked so; listeners of other namespaces are learnt at their next
 * listen(). Such an entry is not removed when its listener closes (that
 * needs the listener's close callback, set at listen()): a later listen()
 * on the same address and port replaces it. The number added, or -errno.
 */
static int listeners_seed(const struct sm_inst *in,
			  const struct ferry_sockmap_params *p)
{
	struct seed_ctx c = {
		.map_fd = bpf_map__fd(in->skel->maps.ferry_sm_listeners),
		.p = p,
	};
	socklen_t len = sizeof(c.netns);
	struct mnl_socket *nl;
	int err;

	nl = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) ||
	    getsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_NETNS_COOKIE,
		       &c.netns, &len)) {
		err = -errno;
		goto out_sock;
	}
	err = listeners_dump(nl, AF_INET, &c);
	if (!err)
		err = listeners_dump(nl, AF_INET6, &c);
out_sock:
	mnl_socket_close(nl);
	return err ? err : c.added;
}

/* ------------------------------------------------------ quiet periods */

/* The send and receive tracepoints: what measures and counts. */
static int tps_attach(struct sm_inst *in, struct ferry_err *msg)
{
	int err;

	in->tp_link = bpf_program__attach(in->skel->progs.ferry_sm_sent);
	if (!in->tp_link) {
		err = -errno;
		return ferry_fail(msg, err,
				  "sockmap: cannot attach the sock_send_length "
				  "tracepoint: %s",
				  strerror(-err));
	}
	in->recv_link = bpf_program__attach(in->skel->progs.ferry_sm_recvd);
	if (!in->recv_link) {
		err = -errno;
		bpf_link__destroy(in->tp_link);
		in->tp_link = NULL;
		return ferry_fail(msg, err,
				  "sockmap: cannot attach the sock_recv_length "
				  "tracepoint: %s",
				  strerror(-err));
	}
	return 0;
}

/* Whether the SOCKHASH holds a socket: one key, not a count (per tick). */
static bool sock_any(const struct sm_inst *in)
{
	struct ferry_sock_key k;

	return !bpf_map_get_next_key(bpf_map__fd(in->skel->maps.ferry_sm_socks),
				     NULL, &k);
}

static void tps_detach(struct sm_inst *in)
{
	bpf_link__destroy(in->recv_link);
	bpf_link__destroy(in->tp_link);
	in->recv_link = NULL;
	in->tp_link = NULL;
}

/*
 * Whether nothing needs the tracepoints: no socket in the SOCKHASH (its
 * bytes are counted by them) and no service that could have a connection
 * redirected (attach's default, a policy, a learned redirect) or that is
 * still learning, and at least one service (a fresh attachment has its
 * first connections to measure). Then only services decided plain are
 * left, whose new connections stay plain whether measured or not.
 */
static bool can_quiet(const struct ferry_sockmap *sm, const struct sm_inst *in)
{
	int fd = bpf_map__fd(in->skel->maps.ferry_sm_svcs);
	struct ferry_sm_svc_key k, next;
	const struct ferry_sockmap_policy *pol;
	struct ferry_sm_svc v;
	void *prev = NULL;
	unsigned i, n = 0;

	if (in->dflt == FERRY_SM_D_REDIRECT || sock_any(in))
		return false;
	for (i = 0; i < sm->n_policies; i++)
		if (sm->policies[i].decision == FERRY_SM_D_REDIRECT)
			return false;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		n++;
		pol = policy_of(sm, &k);
		if (pol && pol->decision == FERRY_SM_D_PLAIN)
			continue;
		if (!pol && in->dflt == FERRY_SM_D_PLAIN)
			continue;
		if (v.decision != FERRY_SM_D_PLAIN)
			return false;
	}
	/* None yet: the first connections will learn, measured. */
	return n > 0;
}

/* The tracepoints back: a connection asked (wake) or a policy needs them. */
static void wake_up(struct sm_inst *in, const char *why)
{
	struct ferry_err msg;

	if (!in->skel->bss->quiet)
		return;
	if (tps_attach(in, &msg)) {
		/* wake stays set: the next tick tries again. */
		log_warn("%s", msg.msg);
		return;
	}
	in->skel->bss->wake = 0;
	in->skel->bss->quiet = 0;
	in->quiet_ticks = 0;
	log_info("sockmap: measuring again (%s)", why);
}

/* Ticks in a row with nothing to measure before the tracepoints go. */
#define SM_QUIET_TICKS 3

static void quiet_tick(struct ferry_sockmap *sm, struct sm_inst *in)
{
	if (in->skel->bss->quiet) {
		if (in->skel->bss->wake)
			wake_up(in, "a connection needs it");
		return;
	}
	if (!can_quiet(sm, in)) {
		in->quiet_ticks = 0;
		return;
	}
	if (++in->quiet_ticks < SM_QUIET_TICKS)
		return;
	/* Quiet first: from here sockops redirects nothing. A connection
	 * redirected just before is seen by the count below. */
	in->skel->bss->quiet = 1;
	tps_detach(in);
	log_info("sockmap: every service decided plain: tracepoints "
		 "detached until a connection needs them");
	if (sock_any(in)) {
		in->skel->bss->wake = 1;
		wake_up(in, "a socket was added meanwhile");
	}
}

int ferry_sockmap_attach(struct ferry_sockmap *sm,
			 const struct ferry_sockmap_params *p,
			 struct ferry_err *msg)
{
	struct sm_inst *in;
	int cgfd, mode = p->mode, err;
	size_t i, off = 0;

	if (sm->cur)
		return ferry_fail(msg, -EBUSY,
				  "sockmap is attached to %s; detach first",
				  sm->cur->cgroup);
	ferry_sockmap_tick(sm);
	if (sm->draining)
		return ferry_fail(msg, -EBUSY,
				  "sockmap: the last detach still has %d "
				  "socket(s) draining; try again when they "
				  "have closed",
				  sock_count(sm->draining));
	if (strlen(p->cgroup) >= sizeof(in->cgroup))
		return ferry_fail(msg, -ENAMETOOLONG, "cgroup path too long");
	/* The path goes into the config line between double quotes. */
	if (strpbrk(p->cgroup, "\"\n"))
		return ferry_fail(msg, -EINVAL,
				  "cgroup path with a double quote or a "
				  "newline: not supported");
	if (p->lag_max && (p->lag_max < FERRY_SM_LAG_MAX_MIN ||
			   p->lag_max > FERRY_SM_LAG_MAX_MAX))
		return ferry_fail(
			msg, -ERANGE,
			"lag-max %llu: 0 (no bound) or %u to %u bytes",
			(unsigned long long)p->lag_max, FERRY_SM_LAG_MAX_MIN,
			FERRY_SM_LAG_MAX_MAX);
	cgfd = cgroup_open(p->cgroup, msg);
	if (cgfd < 0)
		return cgfd;
	probe_once(sm);
	if (mode == FERRY_SM_MODE_AUTO)
		mode = sm->probe == SM_PROBE_SUPPORTED ? FERRY_SM_PERMANENT
						       : FERRY_SM_APPLY_BYTES;
	if (mode == FERRY_SM_PERMANENT && sm->probe != SM_PROBE_SUPPORTED) {
		close(cgfd);
		return ferry_fail(msg, -EOPNOTSUPP,
				  "verdict permanent: this kernel has no "
				  "BPF_F_PERMANENT (%s); use verdict auto or "
				  "apply-bytes",
				  sm->probe_msg);
	}
	in = inst_load(mode, p, false, msg);
	if (!in) {
		err = -errno;
		close(cgfd);
		return err;
	}
	in->cgroup_fd = cgfd;
	in->mode_asked = p->mode;
	snprintf(in->cgroup, sizeof(in->cgroup), "%s", p->cgroup);
	for (i = 0; i < p->n_ranges && off < sizeof(in->ports); i++) {
		const struct ferry_sm_port_range *r = &p->ranges[i];

		off += snprintf(in->ports + off, sizeof(in->ports) - off,
				r->lo == r->hi ? "%s%u" : "%s%u-%u",
				i ? "," : "", r->lo, r->hi);
	}
	/* Counting first, the cgroup hook last: a socket is only added once
	 * everything that serves it is in place. */
	err = tps_attach(in, msg);
	if (err)
		goto err_inst;
	err = policies_write(sm, in);
	if (err) {
		ferry_fail(msg, err, "sockmap: cannot write the policies: %s",
			   strerror(-err));
		goto err_inst;
	}
	cg_policies_write(sm, in);
	in->sockops_link = bpf_program__attach_cgroup(
		in->skel->progs.ferry_sm_sockops, cgfd);
	if (!in->sockops_link) {
		err = -errno;
		ferry_fail(msg, err, "sockmap: cannot attach sockops to %s: %s",
			   p->cgroup, strerror(-err));
		goto err_inst;
	}
	sm->cur = in;
	log_info("sockmap: attached to %s, ports %s, verdict %s, default %s",
		 in->cgroup, in->ports[0] ? in->ports : "any",
		 mode_names[in->mode], decision_names[in->dflt]);
	/* After the hook: a listen() from here on is recorded by it. Not
	 * fatal: only cgroup policies need it, for servers already there. */
	err = listeners_seed(in, p);
	if (err < 0)
		log_warn("sockmap: cannot list the TCP listeners already there "
			 "(sock_diag: %s): policies by cgroup apply to servers "
			 "that listen from now on",
			 strerror(-err));
	else if (err > 0)
		log_info("sockmap: %d TCP listeners already there, with their "
			 "cgroups",
			 err);
	return 0;
err_inst:
	inst_free(in);
	return err;
}

/* Frees an attachment, keeping its final counters for `sockmap show`. */
static void retire(struct ferry_sockmap *sm, struct sm_inst *in)
{
	json_t *j;

	if (!in)
		return;
	j = inst_json(in);
	if (j) {
		json_object_set_new(j, "services", services_json(sm, in));
		json_decref(sm->last);
		sm->last = j;
	}
	inst_free(in);
}

/*
 * A socket can go back to TCP at once unless its peer has redirected to
 * it: then its psock may still queue data the reader has not read (the
 * kernel frees that queue with the psock), and the peer may hold the
 * redirect for the rest of its window (a send to a socket without psock
 * fails with EPIPE). Such sockets stay in the map until they close.
 */
int ferry_sockmap_detach(struct ferry_sockmap *sm, json_t **data,
			 struct ferry_err *msg)
{
	struct ferry_sock_key k, next, peer, last_kept;
	struct ferry_sm_flow fl;
	struct sm_inst *in = sm->cur;
	int socks, flows, moved, kept = 0, n_moved = 0;
	uint32_t one = 1;
	void *prev = NULL;

	if (!in)
		return ferry_fail(msg, -ENOENT, "sockmap is not attached");
	bpf_link__destroy(in->sockops_link);
	in->sockops_link = NULL;
	/* From here a verdict that runs chooses TCP; one already running
	 * when the flag flips is done well within the pause. */
	__atomic_store_n(&in->skel->bss->draining, 1, __ATOMIC_RELEASE);
	usleep(10000);
	socks = bpf_map__fd(in->skel->maps.ferry_sm_socks);
	flows = bpf_map__fd(in->skel->maps.ferry_sm_flows);
	moved = bpf_map__fd(in->skel->maps.ferry_sm_moved);
	while (!bpf_map_get_next_key(socks, prev, &next)) {
		k = next;
		key_swap(&k, &peer);
		if (!bpf_map_lookup_elem(flows, &peer, &fl) && fl.redirects) {
			last_kept = k;
			prev = &last_kept;
			kept++;
			continue;
		}
		bpf_map_update_elem(moved, &k, &one, BPF_ANY);
		/* Deleted or not, the walk goes on after the last key kept. */
		if (!bpf_map_delete_elem(socks, &k)) {
			n_moved++;
		} else {
			last_kept = k;
			prev = &last_kept;
		}
	}
	sm->cur = NULL;
	if (kept) {
		retire(sm, sm->draining);
		sm->draining = in;
	} else {
		retire(sm, in);
	}
	log_info("sockmap: detached; %d socket(s) back on TCP, %d draining",
		 n_moved, kept);
	*data = json_pack("{s:i, s:i}", "sockets_to_tcp", n_moved,
			  "sockets_draining", kept);
	return 0;
}

void ferry_sockmap_tick(struct ferry_sockmap *sm)
{
	if (sm->cur)
		quiet_tick(sm, sm->cur);
	if (sm->draining && !sock_count(sm->draining)) {
		log_info("sockmap: the last draining socket closed");
		retire(sm, sm->draining);
		sm->draining = NULL;
	}
}

static json_t *flows_json(const struct sm_inst *in)
{
	struct ferry_sock_key k, next;
	struct ferry_sm_flow fl;
	int fd = bpf_map__fd(in->skel->maps.ferry_sm_flows);
	int moved = bpf_map__fd(in->skel->maps.ferry_sm_moved);
	json_t *arr = json_array();
	uint32_t v;
	void *prev = NULL;
	char src[64], dst[64];

	while (arr && !bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &fl))
			continue;
		if (!bpf_map_lookup_elem(moved, &k, &v))
			fl.state = FERRY_SM_DIR_TCP;
		key_text(&k, true, src, sizeof(src));
		key_text(&k, false, dst, sizeof(dst));
		json_array_append_new(
			arr,
			json_pack(
				"{s:s, s:s, s:i, s:I, s:s, s:b, s:b, s:I, s:I, "
				"s:I, s:I, s:I}",
				"src", src, "dst", dst, "family", k.family,
				"netns", (json_int_t)k.netns, "path",
				fl.state == FERRY_SM_DIR_TCP ? "tcp"
							     : "redirect",
				"closed", fl.closed, "lagged", fl.lagged,
				"verdict_runs", (json_int_t)fl.verdict_runs,
				"redirects", (json_int_t)fl.redirects,
				"bytes_redirected",
				(json_int_t)fl.bytes_redirected, "bytes_tcp",
				(json_int_t)fl.bytes_tcp, "bytes_read",
				(json_int_t)fl.bytes_read));
	}
	return arr;
}

/* The thresholds the attachment's sockops program was loaded with. */
static struct ferry_sm_rule sm_rule(const struct sm_inst *in)
{
	struct ferry_sm_rule r;

	memcpy(&r, (const void *)&in->skel->rodata->rule, sizeof(r));
	return r;
}

/*
 * What a new connection of the service gets and why: the same order as the
 * BPF side's decide() (policy, attach's default, the learned decision).
 */
static json_t *service_json(const struct ferry_sockmap *sm,
			    const struct sm_inst *in,
			    const struct ferry_sm_svc_key *k,
			    const struct ferry_sm_svc *v)
{
	const struct ferry_sockmap_policy *pol = policy_of(sm, k);
	struct ferry_sm_policy_key pk = {.port = k->port, .family = k->family};
	const struct ferry_sm_rule rule = sm_rule(in);
	uint32_t d = v->decision, reason = v->reason;
	double mean = 0, turns_kb = 0;
	json_t *counters, *o;
	const char *cg;
	char svc[64];

	memcpy(pk.addr, k->addr, sizeof(pk.addr));
	ferry_sockmap_service_text(&pk, svc, sizeof(svc));
	if (pol && pol->decision != FERRY_SM_D_LEARN) {
		d = (uint32_t)pol->decision;
		reason = FERRY_SM_R_POLICY;
	} else if (!pol && in->dflt != FERRY_SM_D_LEARN) {
		d = (uint32_t)in->dflt;
		reason = FERRY_SM_R_DEFAULT;
	}
	/* Learning and learned-plain both mean plain for the connection. */
	if (v->ev_writes)
		mean = (double)v->ev_bytes / (double)v->ev_writes;
	if (v->ev_bytes)
		turns_kb = (double)v->ev_turns * 1024.0 / (double)v->ev_bytes;
	counters = json_object();
#define FERRY_SM_SVC_JSON(name)                                                \
	if (counters && strncmp(#name, "ev_", 3) && strcmp(#name, "samples"))  \
		json_object_set_new(counters, #name,                           \
				    json_integer((json_int_t)v->name));
	FERRY_SM_SVC_COUNTERS(FERRY_SM_SVC_JSON)
#undef FERRY_SM_SVC_JSON
	o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:b, s:{s:I, s:I, s:s, "
		      "s:I, s:f, s:f}, s:o*}",
		      "service", svc, "netns", (json_int_t)k->netns, "decision",
		      ferry_sockmap_decision_name((int)d), "reason",
		      reason_name(reason), "learned",
		      ferry_sockmap_decision_name((int)v->decision), "pinned",
		      pol && pol->decision != FERRY_SM_D_LEARN, "evidence",
		      "samples", (json_int_t)v->samples, "writes",
		      (json_int_t)v->ev_writes, "shape",
		      shape_names[ferry_sm_shape_of(v, &rule)], "learn_samples",
		      (json_int_t)rule.learn_samples, "mean_write",
		      (double)(int64_t)(mean + 0.5), "turns_per_kb",
		      (double)(int64_t)(turns_kb * 100 + 0.5) / 100, "counters",
		      counters);
	/* Kept apart from the same port in other cgroups: say which. The
	 * path is the policy's; the id alone once no policy names it. */
	if (o && k->cgroup) {
		cg = cgroup_path(sm, k->cgroup);
		json_object_set_new(o, "cgroup",
				    cg ? json_string(cg) : json_null());
		json_object_set_new(o, "cgroup_id",
				    json_integer((json_int_t)k->cgroup));
	}
	return o;
}

static json_t *services_json(const struct ferry_sockmap *sm,
			     const struct sm_inst *in)
{
	struct ferry_sm_svc_key k, next;
	struct ferry_sm_svc v;
	int fd = bpf_map__fd(in->skel->maps.ferry_sm_svcs);
	json_t *arr = json_array();
	void *prev = NULL;

	while (arr && !bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		json_array_append_new(arr, service_json(sm, in, &k, &v));
	}
	return arr;
}

static json_t *inst_json(const struct sm_inst *in)
{
	const struct ferry_sockmap_bpf__bss *b = in->skel->bss;
	const struct ferry_sm_rule rule = sm_rule(in);

	return json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:{s:I, s:I, s:I}, s:I, s:b, s:i, "
		"s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:o}",
		"cgroup", in->cgroup, "ports", in->ports[0] ? in->ports : "any",
		"verdict", ferry_sockmap_mode_name(in->mode_asked), "mechanism",
		mode_names[in->mode], "default", decision_names[in->dflt],
		"rule", "warmup", (json_int_t)rule.learn_samples, "rr_max",
		(json_int_t)rule.rr_max_bytes_per_turn, "min_write",
		(json_int_t)rule.min_mean_write, "lag_max",
		(json_int_t)in->skel->rodata->lag_max, "measuring", !b->quiet,
		"sockets", sock_count(in), "counters", "sockets_added",
		(json_int_t)b->added, "add_failed", (json_int_t)b->add_failed,
		"not_local", (json_int_t)b->not_local, "no_flow_slot",
		(json_int_t)b->no_flow_slot, "no_svc_slot",
		(json_int_t)b->no_svc_slot, "decided_redirect",
		(json_int_t)b->decided_redirect, "decided_plain",
		(json_int_t)b->decided_plain, "quiet_plain",
		(json_int_t)b->quiet_plain, "cg_missed",
		(json_int_t)b->cg_missed, "lag_moves", (json_int_t)b->lag_moves,
		"flows", flows_json(in));
}

json_t *ferry_sockmap_show(struct ferry_sockmap *sm)
{
	json_t *o;

	ferry_sockmap_tick(sm);
	probe_once(sm);
	o = json_pack("{s:b, s:{s:b, s:s}}", "attached", sm->cur != NULL,
		      "permanent", "supported", sm->probe == SM_PROBE_SUPPORTED,
		      "probe", sm->probe_msg);
	if (!o)
		return NULL;
	json_object_set_new(o, "policies", policies_json(sm));
	if (sm->cur) {
		json_object_update_new(o, inst_json(sm->cur));
		json_object_set_new(o, "services", services_json(sm, sm->cur));
	}
	if (sm->draining)
		json_object_set_new(o, "draining", inst_json(sm->draining));
	if (sm->last)
		json_object_set(o, "last_detached", sm->last);
	return o;
}

int ferry_sockmap_get(const struct ferry_sockmap *sm,
		      struct ferry_sockmap_params *p)
{
	const struct sm_inst *in = sm->cur;
	struct ferry_err msg;

	if (!in)
		return -ENOENT;
	memset(p, 0, sizeof(*p));
	p->cgroup = in->cgroup;
	p->mode = in->mode_asked;
	p->dflt = in->dflt;
	p->rule = sm_rule(in);
	p->lag_max = in->skel->rodata->lag_max;
	/* The ports as given parsed again: they were accepted then. */
	if (in->ports[0] &&
	    ferry_sockmap_parse_ports(in->ports, p->ranges, &p->n_ranges, &msg))
		return -EINVAL;
	return 0;
}
