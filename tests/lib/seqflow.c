// SPDX-License-Identifier: BSD-2-Clause
/*
 * seqflow - numbered UDP datagrams, to check that a path delivers every one
 * exactly once and in order per flow, and to measure its longest silence
 * (hot restart tests and bench/takeover.sh).
 *
 *   seqflow send -d ADDR:PORT -r PPS -t SECS [-f FLOWS] [-s SIZE]
 *   seqflow recv -l ADDR:PORT [-f FLOWS] [-i IDLE_SECS] [-T MAX_SECS]
 *                [-s SIZE] [--ready FILE]
 *
 * The sender sends from FLOWS sockets (one source port each) in turn, each
 * datagram carrying its flow and its number in that flow, paced in batches
 * of sendmmsg() to PPS in all; it prints {"sent":N,"flows":F}. The receiver
 * stops IDLE_SECS after the last datagram (or after MAX_SECS) and prints, as
 * one JSON line: received, unique, duplicates, late (arrived after a later
 * one of its flow), missing (numbers below the highest seen that never
 * came), rcvbuf_drops (the socket's own overflow, SO_RXQ_OVFL: the
 * receiving host's loss, not the path's), and max_gap_us, the longest time
 * between two consecutive datagrams after the first, and when it began
 * (max_gap_at_ns, CLOCK_MONOTONIC).
 *
 * SIZE is up to 8972 bytes (a UDP datagram at MTU 9000); after the header
 * every byte is a function of its offset, flow and number, so a receiver
 * given -s SIZE counts as "bad" (and not otherwise) each datagram whose
 * length is not SIZE or whose bytes differ: a jumbo frame delivered cut,
 * or with a piece of another one, is seen (hot restart with multi-buffer
 * chains in flight).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAGIC	  0x73657166u /* "seqf" */
#define MAX_FLOWS 64
#define BATCH	  16
#define MAX_SEQ	  (1u << 26)
#define MAX_SIZE  8972 /* UDP payload at MTU 9000 */

struct hdr {
	uint32_t magic;
	uint32_t flow;
	uint64_t seq;
};

/* Payload byte at offset i (past the header) of datagram seq of flow. */
static uint8_t fill_byte(size_t i, uint32_t flow, uint64_t seq)
{
	return (uint8_t)(i * 7u + flow * 13u + (unsigned)seq);
}

static void fill(uint8_t *b, size_t len, uint32_t flow, uint64_t seq)
{
	size_t i;

	for (i = sizeof(struct hdr); i < len; i++)
		b[i] = fill_byte(i, flow, seq);
}

static bool whole(const uint8_t *b, size_t len, const struct hdr *h)
{
	size_t i;

	for (i = sizeof(struct hdr); i < len; i++)
		if (b[i] != fill_byte(i, h->flow, h->seq))
			return false;
	return true;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static int do_send(const struct sockaddr_in *dst, double pps, double secs,
		   int flows, int size)
{
	int fd[MAX_FLOWS], f, i;
	uint64_t seq[MAX_FLOWS] = {0}, sent = 0, total = (uint64_t)(pps * secs);
	uint64_t start, interval = (uint64_t)(1e9 * BATCH / pps);
	uint8_t buf[BATCH][MAX_SIZE];
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];

	if (size < (int)sizeof(struct hdr) || size > MAX_SIZE)
		return fprintf(stderr, "seqflow: size out of range\n"), 2;
	for (f = 0; f < flows; f++) {
		fd[f] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd[f] < 0 ||
		    connect(fd[f], (const struct sockaddr *)dst, sizeof(*dst)))
			return perror("seqflow: socket"), 1;
	}
	memset(buf, 0, sizeof(buf));
	memset(mm, 0, sizeof(mm));
	for (i = 0; i < BATCH; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = (size_t)size;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	start = now_ns();
	for (uint64_t b = 0; sent < total; b++) {
		uint64_t due = start + b * interval, t;
		int n = total - sent < BATCH ? (int)(total - sent) : BATCH;

		f = (int)(b % (uint64_t)flows);
		for (i = 0; i < n; i++) {
			struct hdr h = {MAGIC, (uint32_t)f, seq[f]++};

			memcpy(buf[i], &h, sizeof(h));
			fill(buf[i], (size_t)size, h.flow, h.seq);
		}
		while ((t = now_ns()) < due)
			if (due - t > 200000)
				usleep(100);
		for (i = 0; i < n;) {
			int k = sendmmsg(fd[f], mm + i, (unsigned)(n - i), 0);

			if (k < 0 && (errno == ENOBUFS || errno == EAGAIN ||
				      errno == EINTR)) {
				usleep(50);
				continue;
			}
			if (k < 0)
				return perror("seqflow: sendmmsg"), 1;
			i += k;
		}
		sent += (uint64_t)n;
	}
	printf("{\"sent\":%llu,\"flows\":%d,\"secs\":%.3f}\n",
	       (unsigned long long)sent, flows,
	       (double)(now_ns() - start) / 1e9);
	return 0;
}

struct flow {
	uint8_t *seen; /* bitmap */
	uint64_t next; /* one past the highest seen */
};

static int do_recv(const struct sockaddr_in *at, int flows, double idle,
		   double max_secs, int size, const char *ready)
{
	uint64_t received = 0, unique = 0, dups = 0, late = 0, missing = 0,
		 bad = 0;
	uint64_t first = 0, last = 0, max_gap = 0, gap_at = 0, ovfl = 0,
		 deadline;
	struct flow fl[MAX_FLOWS] = {{0}};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1, rcv = 64 << 20, f;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
	/* One byte more than the largest: a longer datagram is seen. */
	uint8_t buf[BATCH][MAX_SIZE + 1];
	char ctl[BATCH][CMSG_SPACE(sizeof(uint32_t))];
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	int i;

	if (fd < 0 || bind(fd, (const struct sockaddr *)at, sizeof(*at)))
		return perror("seqflow: bind"), 1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (f = 0; f < flows; f++) {
		fl[f].seen = calloc(MAX_SEQ / 8, 1);
		if (!fl[f].seen)
			return fprintf(stderr, "seqflow: out of memory\n"), 1;
	}
	if (ready) {
		FILE *r = fopen(ready, "w");

		if (r)
			fclose(r);
	}
	deadline = now_ns() + (uint64_t)(max_secs * 1e9);
	for (;;) {
		uint64_t t = now_ns();
		int n;

		if (t > deadline || (last && t - last > (uint64_t)(idle * 1e9)))
			break;
		for (i = 0; i < BATCH; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = sizeof(buf[i]);
			memset(&mm[i], 0, sizeof(mm[i]));
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			mm[i].msg_hdr.msg_control = ctl[i];
			mm[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
		}
		n = recvmmsg(fd, mm, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		t = now_ns();
		if (last && t - last > max_gap && first) {
			max_gap = t - last;
			gap_at = last;
		}
		if (!first)
			first = t;
		last = t;
		for (i = 0; i < n; i++) {
			struct hdr h;
			struct cmsghdr *c;
			struct flow *x;

			for (c = CMSG_FIRSTHDR(&mm[i].msg_hdr); c;
			     c = CMSG_NXTHDR(&mm[i].msg_hdr, c))
				if (c->cmsg_level == SOL_SOCKET &&
				    c->cmsg_type == SO_RXQ_OVFL)
					memcpy(&ovfl, CMSG_DATA(c),
					       sizeof(uint32_t));
			if (mm[i].msg_len < sizeof(h))
				continue;
			memcpy(&h, buf[i], sizeof(h));
			if (h.magic != MAGIC || h.flow >= (uint32_t)flows ||
			    h.seq >= MAX_SEQ)
				continue;
			received++;
			if (size && (mm[i].msg_len != (unsigned)size ||
				     !whole(buf[i], (size_t)size, &h)))
				bad++;
			x = &fl[h.flow];
			if (x->seen[h.seq / 8] & (1u << (h.seq % 8))) {
				dups++;
				continue;
			}
			x->seen[h.seq / 8] |= (uint8_t)(1u << (h.seq % 8));
			unique++;
			if (h.seq + 1 < x->next)
				late++;
			else
				x->next = h.seq + 1;
		}
	}
	for (f = 0; f < flows; f++) {
		for (uint64_t s = 0; s < fl[f].next; s++)
			missing += !(fl[f].seen[s / 8] & (1u << (s % 8)));
		free(fl[f].seen);
	}
	printf("{\"received\":%llu,\"unique\":%llu,\"duplicates\":%llu,"
	       "\"late\":%llu,\"missing\":%llu,\"bad\":%llu,"
	       "\"rcvbuf_drops\":%llu,"
	       "\"max_gap_us\":%.1f,\"max_gap_at_ns\":%llu}\n",
	       (unsigned long long)received, (unsigned long long)unique,
	       (unsigned long long)dups, (unsigned long long)late,
	       (unsigned long long)missing, (unsigned long long)bad,
	       (unsigned long long)ovfl, (double)max_gap / 1e3,
	       (unsigned long long)gap_at);
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: seqflow send -d ADDR:PORT -r PPS -t SECS [-f FLOWS] "
		"[-s SIZE]\n"
		"       seqflow recv -l ADDR:PORT [-f FLOWS] [-i IDLE_SECS] "
		"[-T MAX_SECS] [-s SIZE] [--ready FILE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"ready", required_argument, 0, 'R'},
					   {0, 0, 0, 0}};
	struct sockaddr_in sa;
	const char *addr = NULL, *ready = NULL;
	double pps = 10000, secs = 1, idle = 2, max_secs = 60;
	int flows = 1, size = 0, c;

	if (argc < 2)
		return usage();
	optind = 2;
	while ((c = getopt_long(argc, argv, "d:l:r:t:f:s:i:T:", lo, NULL)) !=
	       -1) {
		switch (c) {
		case 'd':
		case 'l':
			addr = optarg;
			break;
		case 'r':
			pps = atof(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'f':
			flows = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'i':
			idle = atof(optarg);
			break;
		case 'T':
			max_secs = atof(optarg);
			break;
		case 'R':
			ready = optarg;
			break;
		default:
			return usage();
		}
	}
	if (!addr || parse_addr(addr, &sa) || flows < 1 || flows > MAX_FLOWS ||
	    pps <= 0)
		return usage();
	if (!strcmp(argv[1], "send"))
		return do_send(&sa, pps, secs, flows, size ? size : 64);
	if (!strcmp(argv[1], "recv"))
		return do_recv(&sa, flows, idle, max_secs, size, ready);
	return usage();
}
