// SPDX-License-Identifier: BSD-2-Clause
/*
 * netdev_feat.c - the netdev generic netlink family: resolving its id,
 * asking NETDEV_CMD_DEV_GET about one interface, and reading the answers
 * (pure functions over the received bytes), plus the names of the bits.
 * Called from the control thread (port add) and from host check; nothing
 * here keeps state between calls.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "netdev_feat.h"

/* ------------------------------------------------------------- names */

static const struct {
	enum ferry_netdev_set set;
	uint64_t bit;
	const char *name;
} feat_names[] = {
#define FEAT_ROW(set, bit, name) {FERRY_NDSET_##set, bit, name},
	FERRY_NETDEV_FEATURES(FEAT_ROW)
#undef FEAT_ROW
};

const char *ferry_netdev_feat_name(enum ferry_netdev_set set, uint64_t bit)
{
	size_t i;

	for (i = 0; i < sizeof(feat_names) / sizeof(feat_names[0]); i++)
		if (feat_names[i].set == set && feat_names[i].bit == bit)
			return feat_names[i].name;
	return NULL;
}

const char *ferry_netdev_feat_fmt(enum ferry_netdev_set set, uint64_t mask,
				  char *buf, size_t len)
{
	size_t off = 0;
	int b;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!mask)
		snprintf(buf, len, "none");
	for (b = 0; b < 64 && off < len; b++) {
		uint64_t bit = 1ull << b;
		const char *name = ferry_netdev_feat_name(set, bit);
		int n;

		if (!(mask & bit))
			continue;
		n = name ? snprintf(buf + off, len - off, "%s%s",
				    off ? "," : "", name)
			 : snprintf(buf + off, len - off, "%s0x%llx",
				    off ? "," : "", (unsigned long long)bit);
		off += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

/* ----------------------------------------------------------- parsing */

/* The first message of buf that needs reading, or NULL at the end: an
 * error (or ack) is returned through *err. */
static const struct nlmsghdr *next_msg(const struct nlmsghdr *nh, int *left,
				       int *err)
{
	for (; mnl_nlmsg_ok(nh, *left); nh = mnl_nlmsg_next(nh, left)) {
		if (nh->nlmsg_type == NLMSG_DONE)
			return NULL;
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nh);

			if (mnl_nlmsg_get_payload_len(nh) < sizeof(*e)) {
				*err = -EBADMSG;
				return NULL;
			}
			if (e->error) { /* 0 is an ack: read on */
				*err = e->error < 0 ? e->error : -EBADMSG;
				return NULL;
			}
			continue;
		}
		if (nh->nlmsg_type == NLMSG_NOOP)
			continue;
		/* Every generic netlink message starts with its genlmsghdr. */
		if (mnl_nlmsg_get_payload_len(nh) <
		    MNL_ALIGN(sizeof(struct genlmsghdr))) {
			*err = -EBADMSG;
			return NULL;
		}
		return nh;
	}
	/* Bytes left that are not a whole message: cut short. */
	if (*left > 0)
		*err = -EBADMSG;
	return NULL;
}

int ferry_genl_family_parse(const void *buf, size_t len, const char *name,
			    uint16_t *id)
{
	const struct nlmsghdr *nh = buf;
	int left = (int)len, err = 0;

	if (len > INT32_MAX)
		return -EINVAL;
	while ((nh = next_msg(nh, &left, &err))) {
		const struct nlattr *a;
		bool named = false, have_id = false;
		uint16_t fid = 0;

		if (nh->nlmsg_type != GENL_ID_CTRL)
			return -EBADMSG;
		mnl_attr_for_each(a, nh, sizeof(struct genlmsghdr)) {
			switch (mnl_attr_get_type(a)) {
			case CTRL_ATTR_FAMILY_ID:
				if (mnl_attr_validate(a, MNL_TYPE_U16) < 0)
					return -EBADMSG;
				fid = mnl_attr_get_u16(a);
				have_id = true;
				break;
			case CTRL_ATTR_FAMILY_NAME:
				named = mnl_attr_validate(
						a, MNL_TYPE_NUL_STRING) >= 0 &&
					!strcmp(mnl_attr_get_str(a), name);
				break;
			}
		}
		if (!named || !have_id)
			return -EBADMSG;
		*id = fid;
		return 0;
	}
	return err ? err : -EBADMSG;
}

/*
 * The u64 bit sets are "u64" in netdev.yaml; a later kernel may send them
 * as the variable-width "uint" (4 or 8 bytes), so both are taken.
 */
static int attr_uint(const struct nlattr *a, uint64_t *v)
{
	uint16_t n = mnl_attr_get_payload_len(a);

	if (n == sizeof(uint64_t))
		*v = mnl_attr_get_u64(a);
	else if (n == sizeof(uint32_t))
		*v = mnl_attr_get_u32(a);
	else
		return -EBADMSG;
	return 0;
}

/* One NETDEV_CMD_DEV_GET message's attributes into *f. */
static int dev_attrs(const struct nlmsghdr *nh, struct ferry_netdev_feat *f)
{
	const struct nlattr *a;
	uint64_t v;
	bool have_ifindex = false;

	memset(f, 0, sizeof(*f));
	mnl_attr_for_each(a, nh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case NETDEV_A_DEV_IFINDEX:
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				return -EBADMSG;
			f->ifindex = mnl_attr_get_u32(a);
			have_ifindex = true;
			break;
		case NETDEV_A_DEV_XDP_FEATURES:
			if (attr_uint(a, &f->xdp_features))
				return -EBADMSG;
			f->have |= FERRY_NDF_XDP_FEATURES;
			break;
		case NETDEV_A_DEV_XDP_ZC_MAX_SEGS:
			if (attr_uint(a, &v) || v > UINT32_MAX)
				return -EBADMSG;
			f->xdp_zc_max_segs = (uint32_t)v;
			f->have |= FERRY_NDF_ZC_MAX_SEGS;
			break;
		case NETDEV_A_DEV_XDP_RX_METADATA_FEATURES:
			if (attr_uint(a, &f->xdp_rx_metadata))
				return -EBADMSG;
			f->have |= FERRY_NDF_RX_METADATA;
			break;
		case NETDEV_A_DEV_XSK_FEATURES:
			if (attr_uint(a, &f->xsk_features))
				return -EBADMSG;
			f->have |= FERRY_NDF_XSK_FEATURES;
			break;
		default: /* NETDEV_A_DEV_PAD and what later kernels add */
			break;
		}
	}
	return have_ifindex ? 0 : -EBADMSG;
}

int ferry_netdev_dev_parse(const void *buf, size_t len, uint16_t family,
			   uint32_t ifindex, struct ferry_netdev_feat *out)
{
	const struct nlmsghdr *nh = buf;
	int left = (int)len, err = 0;

	if (len > INT32_MAX)
		return -EINVAL;
	for (; (nh = next_msg(nh, &left, &err));
	     nh = mnl_nlmsg_next(nh, &left)) {
		const struct genlmsghdr *g = mnl_nlmsg_get_payload(nh);
		struct ferry_netdev_feat f;
		int rc;

		if (nh->nlmsg_type != family || g->cmd != NETDEV_CMD_DEV_GET)
			return -EBADMSG;
		rc = dev_attrs(nh, &f);
		if (rc)
			return rc;
		if (!ifindex || f.ifindex == ifindex) {
			*out = f;
			return 0;
		}
	}
	return err ? err : -ENODEV;
}

/* ------------------------------------------------------------ asking */

/*
 * One request, its answer read into buf (a "do" request is answered by
 * one message, or an error). 0 with *got set, or -errno.
 */
static int genl_ask(struct mnl_socket *nl, struct nlmsghdr *req, char *buf,
		    size_t cap, size_t *got)
{
	ssize_t n;

	if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(nl, buf, cap);
	if (n < 0)
		return -errno;
	*got = (size_t)n;
	return 0;
}

static struct nlmsghdr *genl_req(char *buf, uint16_t type, uint8_t cmd,
				 uint8_t version)
{
	struct nlmsghdr *nh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nh->nlmsg_type = type;
	nh->nlmsg_flags = NLM_F_REQUEST;
	nh->nlmsg_seq = (uint32_t)time(NULL);
	g = mnl_nlmsg_put_extra_header(nh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nh;
}

/* An open socket and the netdev family's id: 0, -ENOENT, -errno. */
static int netdev_open(struct mnl_socket **nlp, uint16_t *family)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct mnl_socket *nl;
	struct nlmsghdr *nh;
	size_t got;
	int err;

	nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto err_sock;
	}
	nh = genl_req(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nh, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME);
	err = genl_ask(nl, nh, buf, sizeof(buf), &got);
	if (err)
		goto err_sock;
	err = ferry_genl_family_parse(buf, got, NETDEV_FAMILY_NAME, family);
	if (err)
		goto err_sock;
	*nlp = nl;
	return 0;

err_sock:
	mnl_socket_close(nl);
	return err;
}

int ferry_netdev_family_probe(void)
{
	struct mnl_socket *nl;
	uint16_t family;
	int err = netdev_open(&nl, &family);

	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	mnl_socket_close(nl);
	return 1;
}

int ferry_netdev_feat_get(int ifindex, struct ferry_netdev_feat *out)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct mnl_socket *nl;
	struct nlmsghdr *nh;
	uint16_t family;
	size_t got;
	int err;

	if (ifindex <= 0)
		return -ENODEV;
	err = netdev_open(&nl, &family);
	if (err)
		return err;
	nh = genl_req(buf, family, NETDEV_CMD_DEV_GET, NETDEV_FAMILY_VERSION);
	mnl_attr_put_u32(nh, NETDEV_A_DEV_IFINDEX, (uint32_t)ifindex);
	err = genl_ask(nl, nh, buf, sizeof(buf), &got);
	if (!err)
		err = ferry_netdev_dev_parse(buf, got, family,
					     (uint32_t)ifindex, out);
	mnl_socket_close(nl);
	return err;
}
