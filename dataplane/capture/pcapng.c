// SPDX-License-Identifier: BSD-2-Clause
/*
 * pcapng.c - the pcapng blocks ferry writes (see pcapng.h for why not
 * libpcap's dumper). Host byte order: the Section Header's byte-order magic
 * tells readers which, as the format intends.
 *
 * Every block is built in the output buffer in place; a block that does not
 * fit in what is left of the buffer first flushes it, and one larger than
 * the whole buffer (never, with ferry's snaplen cap) is built in a heap
 * buffer of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcapng.h"

#define PCAPNG_SHB	  0x0A0D0D0Au
#define PCAPNG_IDB	  0x00000001u
#define PCAPNG_EPB	  0x00000006u
#define PCAPNG_BOM	  0x1A2B3C4Du
#define LINKTYPE_ETHERNET 1

/* Option codes (pcapng draft, section 4). */
#define OPT_ENDOFOPT	 0
#define OPT_COMMENT	 1
#define OPT_SHB_USERAPPL 4
#define OPT_IF_NAME	 2
#define OPT_IF_DESCR	 3
#define OPT_IF_TSRESOL	 9
#define OPT_EPB_FLAGS	 2

/* 64 KiB: a few dozen full-size frames per write(2). */
#define PCAPNG_BUF_SIZE (64u * 1024)
/* A poll() step while a non-blocking fd is full: bounds how long cancel waits. */
#define PCAPNG_POLL_MS 100
/* Comments longer than this are cut: a verdict name, not a story. */
#define PCAPNG_COMMENT_MAX 256

struct ferry_pcapng {
	int fd;
	bool own_fd;
	bool is_sock;
	bool packets_started;
	int err;    /* first write error, sticky */
	int cancel; /* set from any thread, read with atomics */
	uint32_t n_if;
	uint64_t bytes;
	size_t len; /* bytes buffered */
	uint8_t buf[PCAPNG_BUF_SIZE];
};

static inline uint32_t pad4(uint32_t n)
{
	return (n + 3u) & ~3u;
}

/* Size of one option on the wire: code, length, value padded to 32 bits. */
static inline uint32_t opt_size(uint32_t len)
{
	return 4 + pad4(len);
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
	return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *put_opt(uint8_t *p, uint16_t code, const void *val,
			uint16_t len)
{
	p = put16(p, code);
	p = put16(p, len);
	memcpy(p, val, len);
	memset(p + len, 0, pad4(len) - len);
	return p + pad4(len);
}

static int write_all(struct ferry_pcapng *w, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r;

		if (w->is_sock)
			r = send(w->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		else
			r = write(w->fd, p, n);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
			__atomic_store_n(&w->bytes, w->bytes + (uint64_t)r,
					 __ATOMIC_RELAXED);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = {.fd = w->fd, .events = POLLOUT};

			if (__atomic_load_n(&w->cancel, __ATOMIC_ACQUIRE))
				return -ECANCELED;
			(void)poll(&pfd, 1, PCAPNG_POLL_MS);
			continue;
		}
		return r < 0 ? -errno : -EIO;
	}
	return 0;
}

int ferry_pcapng_flush(struct ferry_pcapng *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->len)
		return 0;
	err = write_all(w, w->buf, w->len);
	w->len = 0;
	if (err)
		w->err = err;
	return err;
}

/*
 * Room for a block of n bytes: a pointer into the buffer, or a heap block
 * (*heap set, the caller writes it out and frees it) when n exceeds the
 * buffer. NULL + *err on failure.
 */
static uint8_t *block_begin(struct ferry_pcapng *w, uint32_t n, uint8_t **heap,
			    int *err)
{
	*heap = NULL;
	if (w->err) {
		*err = w->err;
		return NULL;
	}
	if (n > sizeof(w->buf) - w->len) {
		*err = ferry_pcapng_flush(w);
		if (*err)
			return NULL;
	}
	if (n <= sizeof(w->buf))
		return w->buf + w->len;
	*heap = malloc(n);
	if (!*heap)
		*err = -ENOMEM;
	return *heap;
}

static int block_end(struct ferry_pcapng *w, uint8_t *start, uint8_t *end,
		     uint32_t n, uint8_t *heap)
{
	int err = 0;

	/* The trailing length lets readers walk blocks backwards. */
	end = put32(end, n);
	if (end - start != (ptrdiff_t)n)
		abort(); /* a size computed wrong is a bug, not a runtime error */
	if (!heap) {
		w->len += n;
		return 0;
	}
	err = write_all(w, heap, n);
	free(heap);
	if (err)
		w->err = err;
	return err;
}

static int write_shb(struct ferry_pcapng *w)
{
	static const char app[] = "ferry " FERRY_VERSION;
	uint32_t n = 28 + opt_size(sizeof(app) - 1) + 4;
	uint8_t *heap, *b, *p;
	uint64_t section_len = UINT64_MAX; /* -1: not given, we stream */
	int err;

	b = block_begin(w, n, &heap, &err);
	if (!b)
		return err;
	p = put32(b, PCAPNG_SHB);
	p = put32(p, n);
	p = put32(p, PCAPNG_BOM);
	p = put16(p, 1); /* version 1.0 */
	p = put16(p, 0);
	memcpy(p, &section_len, 8);
	p += 8;
	p = put_opt(p, OPT_SHB_USERAPPL, app, sizeof(app) - 1);
	p = put32(p, OPT_ENDOFOPT);
	return block_end(w, b, p, n, heap);
}

struct ferry_pcapng *ferry_pcapng_open_fd(int fd, bool own_fd)
{
	struct ferry_pcapng *w;
	struct stat st;
	int err;

	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = fd;
	w->own_fd = own_fd;
	w->is_sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
	err = write_shb(w);
	if (err) {
		free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

struct ferry_pcapng *ferry_pcapng_open_path(const char *path)
{
	struct ferry_pcapng *w;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	w = ferry_pcapng_open_fd(fd, true);
	if (!w) {
		err = errno;
		close(fd);
		errno = err;
	}
	return w;
}

int ferry_pcapng_add_if(struct ferry_pcapng *w, const char *name,
			const char *description, uint32_t snaplen)
{
	size_t nl = name ? strnlen(name, 255) : 0;
	size_t dl = description ? strnlen(description, 255) : 0;
	const uint8_t tsresol = 9; /* 10^-9 s: timestamps in ns */
	uint8_t *heap, *b, *p;
	uint32_t n;
	int err;

	if (w->packets_started)
		return -EBUSY;
	n = 20 + opt_size(1) + 4;
	if (nl)
		n += opt_size((uint32_t)nl);
	if (dl)
		n += opt_size((uint32_t)dl);
	b = block_begin(w, n, &heap, &err);
	if (!b)
		return err;
	p = put32(b, PCAPNG_IDB);
	p = put32(p, n);
	p = put16(p, LINKTYPE_ETHERNET);
	p = put16(p, 0);
	p = put32(p, snaplen);
	if (nl)
		p = put_opt(p, OPT_IF_NAME, name, (uint16_t)nl);
	if (dl)
		p = put_opt(p, OPT_IF_DESCR, description, (uint16_t)dl);
	p = put_opt(p, OPT_IF_TSRESOL, &tsresol, 1);
	p = put32(p, OPT_ENDOFOPT);
	err = block_end(w, b, p, n, heap);
	return err ? err : (int)w->n_if++;
}

int ferry_pcapng_packet(struct ferry_pcapng *w, uint32_t if_id, uint64_t ts_ns,
			const void *data, uint32_t caplen, uint32_t orig_len,
			enum ferry_pcapng_dir dir, const char *comment)
{
	size_t cl = comment ? strnlen(comment, PCAPNG_COMMENT_MAX) : 0;
	uint32_t flags = (uint32_t)dir & 3u, n;
	uint8_t *heap, *b, *p;
	int err;

	if (if_id >= w->n_if || caplen > orig_len)
		return -EINVAL;
	w->packets_started = true;
	n = 28 + pad4(caplen) + 4;
	if (flags)
		n += opt_size(4);
	if (cl)
		n += opt_size((uint32_t)cl);
	if (flags || cl)
		n += 4; /* opt_endofopt */
	b = block_begin(w, n, &heap, &err);
	if (!b)
		return err;
	p = put32(b, PCAPNG_EPB);
	p = put32(p, n);
	p = put32(p, if_id);
	p = put32(p, (uint32_t)(ts_ns >> 32));
	p = put32(p, (uint32_t)ts_ns);
	p = put32(p, caplen);
	p = put32(p, orig_len);
	memcpy(p, data, caplen);
	memset(p + caplen, 0, pad4(caplen) - caplen);
	p += pad4(caplen);
	if (flags)
		p = put_opt(p, OPT_EPB_FLAGS, &flags, 4);
	if (cl)
		p = put_opt(p, OPT_COMMENT, comment, (uint16_t)cl);
	if (flags || cl)
		p = put32(p, OPT_ENDOFOPT);
	return block_end(w, b, p, n, heap);
}

void ferry_pcapng_cancel(struct ferry_pcapng *w)
{
	__atomic_store_n(&w->cancel, 1, __ATOMIC_RELEASE);
}

uint64_t ferry_pcapng_bytes(const struct ferry_pcapng *w)
{
	return __atomic_load_n(&w->bytes, __ATOMIC_RELAXED);
}

int ferry_pcapng_close(struct ferry_pcapng *w)
{
	int err;

	if (!w)
		return 0;
	err = ferry_pcapng_flush(w);
	if (w->own_fd && close(w->fd) && !err)
		err = -errno;
	free(w);
	return err;
}
