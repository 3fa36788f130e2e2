// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture_filter.c - a threaded-code evaluator of classic BPF filter
 * programs, giving libpcap's bpf_filter() answers (see capture_filter.h).
 *
 * The semantics copied from libpcap 1.10's bpf_filter(), instruction by
 * instruction: A, X and scratch memory start at 0; a load that reads past
 * buflen ends the program with 0 (for `[x + k]` the sum is taken without
 * wrapping); `len` is wirelen; division or modulo by X == 0 returns 0;
 * a shift by X >= 32 gives 0; jumps are relative to the next instruction.
 * Loads from the Linux ancillary offsets (SKF_AD_OFF + n, k >= 0xfffff000)
 * return 0 there without aux data, as any load past the buffer does here.
 *
 * Decoding is the only place that looks at the program's structure; the
 * evaluator trusts what it was given: every jump target and fall-through
 * lies inside the program, every scratch index < BPF_MEMWORDS.
 */
#include <endian.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "capture_filter.h"
#include "util.h"

#ifndef unlikely
#endif

/*
 * The operations. A *_CHK twin is the same load with its bounds check,
 * for frames shorter than the program's absolute loads reach; the others
 * check what they must themselves. Fused operations (X_JEQ, X_JSET) do the
 * load or the `and`, then the jump of the instruction that follows.
 */
#define CF_OPS(X)                                                              \
	X(RET_K)                                                               \
	X(RET_A)                                                               \
	X(LD_W_ABS)                                                            \
	X(LD_H_ABS)                                                            \
	X(LD_B_ABS)                                                            \
	X(LDX_MSH)                                                             \
	X(LD_W_ABS_CHK)                                                        \
	X(LD_H_ABS_CHK)                                                        \
	X(LD_B_ABS_CHK)                                                        \
	X(LDX_MSH_CHK)                                                         \
	X(LD_W_IND)                                                            \
	X(LD_H_IND)                                                            \
	X(LD_B_IND)                                                            \
	X(LD_LEN)                                                              \
	X(LDX_LEN)                                                             \
	X(LD_IMM)                                                              \
	X(LDX_IMM)                                                             \
	X(LD_MEM)                                                              \
	X(LDX_MEM)                                                             \
	X(ST)                                                                  \
	X(STX)                                                                 \
	X(JA)                                                                  \
	X(JGT_K)                                                               \
	X(JGE_K)                                                               \
	X(JEQ_K)                                                               \
	X(JSET_K)                                                              \
	X(JGT_X)                                                               \
	X(JGE_X)                                                               \
	X(JEQ_X)                                                               \
	X(JSET_X)                                                              \
	X(ADD_K)                                                               \
	X(SUB_K)                                                               \
	X(MUL_K)                                                               \
	X(DIV_K)                                                               \
	X(MOD_K)                                                               \
	X(AND_K)                                                               \
	X(OR_K)                                                                \
	X(XOR_K)                                                               \
	X(LSH_K)                                                               \
	X(RSH_K)                                                               \
	X(ADD_X)                                                               \
	X(SUB_X)                                                               \
	X(MUL_X)                                                               \
	X(DIV_X)                                                               \
	X(MOD_X)                                                               \
	X(AND_X)                                                               \
	X(OR_X)                                                                \
	X(XOR_X)                                                               \
	X(LSH_X)                                                               \
	X(RSH_X)                                                               \
	X(NEG)                                                                 \
	X(TAX)                                                                 \
	X(TXA)                                                                 \
	X(LD_W_ABS_JEQ)                                                        \
	X(LD_H_ABS_JEQ)                                                        \
	X(LD_B_ABS_JEQ)                                                        \
	X(LD_H_ABS_JSET)                                                       \
	X(LD_W_ABS_JEQ_CHK)                                                    \
	X(LD_H_ABS_JEQ_CHK)                                                    \
	X(LD_B_ABS_JEQ_CHK)                                                    \
	X(LD_H_ABS_JSET_CHK)                                                   \
	X(LD_H_IND_JEQ)                                                        \
	X(LD_B_IND_JEQ)                                                        \
	X(AND_K_JEQ)

enum cf_op_kind {
	CF_NONE, /* not an operation: an opcode this file does not run */
#define CF_ENUM(id) CF_##id,
	CF_OPS(CF_ENUM)
#undef CF_ENUM
		CF__COUNT
};

/* Classic BPF opcode -> operation; 0 (CF_NONE) for the rest. */
static const uint8_t cf_of_code[256] = {
	[BPF_RET | BPF_K] = CF_RET_K,
	[BPF_RET | BPF_A] = CF_RET_A,
	[BPF_LD | BPF_W | BPF_ABS] = CF_LD_W_ABS,
	[BPF_LD | BPF_H | BPF_ABS] = CF_LD_H_ABS,
	[BPF_LD | BPF_B | BPF_ABS] = CF_LD_B_ABS,
	[BPF_LDX | BPF_MSH | BPF_B] = CF_LDX_MSH,
	[BPF_LD | BPF_W | BPF_IND] = CF_LD_W_IND,
	[BPF_LD | BPF_H | BPF_IND] = CF_LD_H_IND,
	[BPF_LD | BPF_B | BPF_IND] = CF_LD_B_IND,
	[BPF_LD | BPF_W | BPF_LEN] = CF_LD_LEN,
	[BPF_LDX | BPF_W | BPF_LEN] = CF_LDX_LEN,
	[BPF_LD | BPF_IMM] = CF_LD_IMM,
	[BPF_LDX | BPF_IMM] = CF_LDX_IMM,
	[BPF_LD | BPF_MEM] = CF_LD_MEM,
	[BPF_LDX | BPF_MEM] = CF_LDX_MEM,
	[BPF_ST] = CF_ST,
	[BPF_STX] = CF_STX,
	[BPF_JMP | BPF_JA] = CF_JA,
	[BPF_JMP | BPF_JGT | BPF_K] = CF_JGT_K,
	[BPF_JMP | BPF_JGE | BPF_K] = CF_JGE_K,
	[BPF_JMP | BPF_JEQ | BPF_K] = CF_JEQ_K,
	[BPF_JMP | BPF_JSET | BPF_K] = CF_JSET_K,
	[BPF_JMP | BPF_JGT | BPF_X] = CF_JGT_X,
	[BPF_JMP | BPF_JGE | BPF_X] = CF_JGE_X,
	[BPF_JMP | BPF_JEQ | BPF_X] = CF_JEQ_X,
	[BPF_JMP | BPF_JSET | BPF_X] = CF_JSET_X,
	[BPF_ALU | BPF_ADD | BPF_K] = CF_ADD_K,
	[BPF_ALU | BPF_SUB | BPF_K] = CF_SUB_K,
	[BPF_ALU | BPF_MUL | BPF_K] = CF_MUL_K,
	[BPF_ALU | BPF_DIV | BPF_K] = CF_DIV_K,
	[BPF_ALU | BPF_MOD | BPF_K] = CF_MOD_K,
	[BPF_ALU | BPF_AND | BPF_K] = CF_AND_K,
	[BPF_ALU | BPF_OR | BPF_K] = CF_OR_K,
	[BPF_ALU | BPF_XOR | BPF_K] = CF_XOR_K,
	[BPF_ALU | BPF_LSH | BPF_K] = CF_LSH_K,
	[BPF_ALU | BPF_RSH | BPF_K] = CF_RSH_K,
	[BPF_ALU | BPF_ADD | BPF_X] = CF_ADD_X,
	[BPF_ALU | BPF_SUB | BPF_X] = CF_SUB_X,
	[BPF_ALU | BPF_MUL | BPF_X] = CF_MUL_X,
	[BPF_ALU | BPF_DIV | BPF_X] = CF_DIV_X,
	[BPF_ALU | BPF_MOD | BPF_X] = CF_MOD_X,
	[BPF_ALU | BPF_AND | BPF_X] = CF_AND_X,
	[BPF_ALU | BPF_OR | BPF_X] = CF_OR_X,
	[BPF_ALU | BPF_XOR | BPF_X] = CF_XOR_X,
	[BPF_ALU | BPF_LSH | BPF_X] = CF_LSH_X,
	[BPF_ALU | BPF_RSH | BPF_X] = CF_RSH_X,
	[BPF_ALU | BPF_NEG] = CF_NEG,
	[BPF_MISC | BPF_TAX] = CF_TAX,
	[BPF_MISC | BPF_TXA] = CF_TXA,
};

/* The checked twin of each operation that has one (0: none). */
static const uint8_t cf_chk_twin[CF__COUNT] = {
	[CF_LD_W_ABS] = CF_LD_W_ABS_CHK,
	[CF_LD_H_ABS] = CF_LD_H_ABS_CHK,
	[CF_LD_B_ABS] = CF_LD_B_ABS_CHK,
	[CF_LDX_MSH] = CF_LDX_MSH_CHK,
	[CF_LD_W_ABS_JEQ] = CF_LD_W_ABS_JEQ_CHK,
	[CF_LD_H_ABS_JEQ] = CF_LD_H_ABS_JEQ_CHK,
	[CF_LD_B_ABS_JEQ] = CF_LD_B_ABS_JEQ_CHK,
	[CF_LD_H_ABS_JSET] = CF_LD_H_ABS_JSET_CHK,
};

/* (operation, the next instruction's opcode) -> the fused operation. */
static const struct cf_fusion {
	uint8_t first;
	uint16_t next_code;
	uint8_t fused;
} cf_fusions[] = {
	{CF_LD_W_ABS, BPF_JMP | BPF_JEQ | BPF_K, CF_LD_W_ABS_JEQ},
	{CF_LD_H_ABS, BPF_JMP | BPF_JEQ | BPF_K, CF_LD_H_ABS_JEQ},
	{CF_LD_B_ABS, BPF_JMP | BPF_JEQ | BPF_K, CF_LD_B_ABS_JEQ},
	{CF_LD_H_ABS, BPF_JMP | BPF_JSET | BPF_K, CF_LD_H_ABS_JSET},
	{CF_LD_H_IND, BPF_JMP | BPF_JEQ | BPF_K, CF_LD_H_IND_JEQ},
	{CF_LD_B_IND, BPF_JMP | BPF_JEQ | BPF_K, CF_LD_B_IND_JEQ},
	{CF_AND_K, BPF_JMP | BPF_JEQ | BPF_K, CF_AND_K_JEQ},
};

/* One decoded instruction: 32 bytes, two to a cache line. */
struct cf_op {
	const void *run; /* its handler, a label in ferry_cfilter_run() */
	const struct cf_op *jt; /* jumps (fused too): where true goes */
	const struct cf_op *jf; /* where false goes */
	uint32_t k;		/* the instruction's k (fused: the first's) */
	uint32_t k2;		/* fused: the jump's k */
};

struct ferry_cfilter {
	/* A frame of at least this many bytes runs `fast`: every absolute
	 * load fits (0: the program has none). Above UINT32_MAX (a load from
	 * the Linux ancillary offsets): no frame does. */
	uint64_t abs_end;
	const struct cf_op *fast, *chk;
	bool native;
	bool zero_mem; /* the program reads scratch memory */
	/* Decoding: not native yet, and the handlers' addresses go here. */
	const void *const **labels_out;
	unsigned n;
	struct cf_op *ops; /* [0, n): fast; [n, 2n): checked */
	struct bpf_insn insns[];
};

static inline uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint32_t ld16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

/* An indexed load of size bytes at X + k fits buflen: libpcap's three
 * comparisons, as one sum that cannot wrap. */
static inline bool ind_fits(uint32_t x, uint32_t k, uint32_t size,
			    uint32_t buflen)
{
	return (uint64_t)x + k + size <= buflen;
}

/*
 * The evaluator. While the filter is being decoded (f->labels_out set) it
 * only hands out its handlers' addresses: labels are local to this
 * function, and the decoder needs them.
 *
 * Each handler ends by jumping to the next operation's handler itself, so
 * the processor predicts each dispatch from where it is made.
 */
uint32_t ferry_cfilter_run(const struct ferry_cfilter *f, const uint8_t *p,
			   uint32_t wirelen, uint32_t buflen)
{
	static const void *const handlers[CF__COUNT] = {
#define CF_LABEL(id) [CF_##id] = &&op_##id,
		CF_OPS(CF_LABEL)
#undef CF_LABEL
	};
	uint32_t A = 0, X = 0, mem[BPF_MEMWORDS];
	const struct cf_op *pc;

	if (unlikely(!f->native)) {
		if (f->labels_out) {
			*f->labels_out = handlers;
			return 0;
		}
		return bpf_filter(f->insns, p, wirelen, buflen);
	}
	if (f->zero_mem)
		memset(mem, 0, sizeof(mem));
	pc = buflen >= f->abs_end ? f->fast : f->chk;
	goto * pc->run;

op_RET_K:
	return pc->k;
op_RET_A:
	return A;

	/* Absolute loads of `fast`: the frame holds abs_end bytes. */
op_LD_W_ABS:
	A = ld32(p + pc->k);
	goto *(++pc)->run;
op_LD_H_ABS:
	A = ld16(p + pc->k);
	goto *(++pc)->run;
op_LD_B_ABS:
	A = p[pc->k];
	goto *(++pc)->run;
op_LDX_MSH:
	X = (p[pc->k] & 0xfu) << 2;
	goto *(++pc)->run;

	/* Their checked twins: k + size > buflen in 64 bits, no wrap. */
op_LD_W_ABS_CHK:
	if ((uint64_t)pc->k + 4 > buflen)
		return 0;
	A = ld32(p + pc->k);
	goto *(++pc)->run;
op_LD_H_ABS_CHK:
	if ((uint64_t)pc->k + 2 > buflen)
		return 0;
	A = ld16(p + pc->k);
	goto *(++pc)->run;
op_LD_B_ABS_CHK:
	if (pc->k >= buflen)
		return 0;
	A = p[pc->k];
	goto *(++pc)->run;
op_LDX_MSH_CHK:
	if (pc->k >= buflen)
		return 0;
	X = (p[pc->k] & 0xfu) << 2;
	goto *(++pc)->run;

op_LD_W_IND:
	if (!ind_fits(X, pc->k, 4, buflen))
		return 0;
	A = ld32(p + X + pc->k);
	goto *(++pc)->run;
op_LD_H_IND:
	if (!ind_fits(X, pc->k, 2, buflen))
		return 0;
	A = ld16(p + X + pc->k);
	goto *(++pc)->run;
op_LD_B_IND:
	if (!ind_fits(X, pc->k, 1, buflen))
		return 0;
	A = p[X + pc->k];
	goto *(++pc)->run;

op_LD_LEN:
	A = wirelen;
	goto *(++pc)->run;
op_LDX_LEN:
	X = wirelen;
	goto *(++pc)->run;
op_LD_IMM:
	A = pc->k;
	goto *(++pc)->run;
op_LDX_IMM:
	X = pc->k;
	goto *(++pc)->run;
op_LD_MEM:
	A = mem[pc->k];
	goto *(++pc)->run;
op_LDX_MEM:
	X = mem[pc->k];
	goto *(++pc)->run;
op_ST:
	mem[pc->k] = A;
	goto *(++pc)->run;
op_STX:
	mem[pc->k] = X;
	goto *(++pc)->run;

op_JA:
	pc = pc->jt;
	goto * pc->run;
op_JGT_K:
	if (A > pc->k)
		goto take;
	goto skip;
op_JGE_K:
	if (A >= pc->k)
		goto take;
	goto skip;
op_JEQ_K:
	if (A == pc->k)
		goto take;
	goto skip;
op_JSET_K:
	if (A & pc->k)
		goto take;
	goto skip;
op_JGT_X:
	if (A > X)
		goto take;
	goto skip;
op_JGE_X:
	if (A >= X)
		goto take;
	goto skip;
op_JEQ_X:
	if (A == X)
		goto take;
	goto skip;
op_JSET_X:
	if (A & X)
		goto take;
	goto skip;

op_ADD_K:
	A += pc->k;
	goto *(++pc)->run;
op_SUB_K:
	A -= pc->k;
	goto *(++pc)->run;
op_MUL_K:
	A *= pc->k;
	goto *(++pc)->run;
op_DIV_K: /* k != 0: the decoder leaves k == 0 to libpcap */
	A /= pc->k;
	goto *(++pc)->run;
op_MOD_K:
	A %= pc->k;
	goto *(++pc)->run;
op_AND_K:
	A &= pc->k;
	goto *(++pc)->run;
op_OR_K:
	A |= pc->k;
	goto *(++pc)->run;
op_XOR_K:
	A ^= pc->k;
	goto *(++pc)->run;
op_LSH_K: /* k < 32: the decoder leaves larger shifts to libpcap */
	A <<= pc->k;
	goto *(++pc)->run;
op_RSH_K:
	A >>= pc->k;
	goto *(++pc)->run;
op_ADD_X:
	A += X;
	goto *(++pc)->run;
op_SUB_X:
	A -= X;
	goto *(++pc)->run;
op_MUL_X:
	A *= X;
	goto *(++pc)->run;
op_DIV_X:
	if (!X)
		return 0;
	A /= X;
	goto *(++pc)->run;
op_MOD_X:
	if (!X)
		return 0;
	A %= X;
	goto *(++pc)->run;
op_AND_X:
	A &= X;
	goto *(++pc)->run;
op_OR_X:
	A |= X;
	goto *(++pc)->run;
op_XOR_X:
	A ^= X;
	goto *(++pc)->run;
op_LSH_X:
	A = X < 32 ? A << X : 0;
	goto *(++pc)->run;
op_RSH_X:
	A = X < 32 ? A >> X : 0;
	goto *(++pc)->run;
op_NEG:
	A = 0u - A;
	goto *(++pc)->run;
op_TAX:
	X = A;
	goto *(++pc)->run;
op_TXA:
	A = X;
	goto *(++pc)->run;

	/* Fused: the load (or `and`), then the next instruction's jump. */
op_LD_W_ABS_JEQ:
	A = ld32(p + pc->k);
	if (A == pc->k2)
		goto take;
	goto skip;
op_LD_H_ABS_JEQ:
	A = ld16(p + pc->k);
	if (A == pc->k2)
		goto take;
	goto skip;
op_LD_B_ABS_JEQ:
	A = p[pc->k];
	if (A == pc->k2)
		goto take;
	goto skip;
op_LD_H_ABS_JSET:
	A = ld16(p + pc->k);
	if (A & pc->k2)
		goto take;
	goto skip;
op_LD_W_ABS_JEQ_CHK:
	if ((uint64_t)pc->k + 4 > buflen)
		return 0;
	A = ld32(p + pc->k);
	if (A == pc->k2)
		goto take;
	goto skip;
op_LD_H_ABS_JEQ_CHK:
	if ((uint64_t)pc->k + 2 > buflen)
		return 0;
	A = ld16(p + pc->k);
	if (A == pc->k2)
		goto take;
	goto skip;
op_LD_B_ABS_JEQ_CHK:
	if (pc->k >= buflen)
		return 0;
	A = p[pc->k];
	if (A == pc->k2)
		goto take;
	goto skip;
op_LD_H_ABS_JSET_CHK:
	if ((uint64_t)pc->k + 2 > buflen)
		return 0;
	A = ld16(p + pc->k);
	if (A & pc->k2)
		goto take;
	goto skip;
op_LD_H_IND_JEQ:
	if (!ind_fits(X, pc->k, 2, buflen))
		return 0;
	A = ld16(p + X + pc->k);
	if (A == pc->k2)
		goto take;
	goto skip;
op_LD_B_IND_JEQ:
	if (!ind_fits(X, pc->k, 1, buflen))
		return 0;
	A = p[X + pc->k];
	if (A == pc->k2)
		goto take;
	goto skip;
op_AND_K_JEQ:
	A &= pc->k;
	if (A == pc->k2)
		goto take;
	goto skip;

	/* Where conditional jumps go: a branch the processor predicts, not a
	 * conditional move, so that it runs on into the next operation
	 * without waiting for the comparison's operands (the frame's bytes). */
take:
	pc = pc->jt;
	goto * pc->run;
skip:
	pc = pc->jf;
	goto * pc->run;
}

/* ------------------------------------------------------------- decoding */

static bool is_jump(unsigned op)
{
	return op >= CF_JA && op <= CF_JSET_X;
}

/* Bytes an absolute load (or ldxb 4*([k]&0xf)) reads up to; 0: not one. */
static uint64_t abs_reach(unsigned op, uint32_t k)
{
	switch (op) {
	case CF_LD_W_ABS:
		return (uint64_t)k + 4;
	case CF_LD_H_ABS:
		return (uint64_t)k + 2;
	case CF_LD_B_ABS:
	case CF_LDX_MSH:
		return (uint64_t)k + 1;
	default:
		return 0;
	}
}

/*
 * Whether the evaluator runs instruction i exactly as libpcap does: the
 * operation is known, its operands in range, its successors inside the
 * program. Anything else (pcap_compile makes none of it) goes to libpcap.
 */
static bool insn_ok(const struct bpf_insn *in, unsigned i, unsigned n)
{
	unsigned op = in->code < 256 ? cf_of_code[in->code] : CF_NONE;
	uint64_t next = (uint64_t)i + 1;

	switch (op) {
	case CF_NONE:
		return false;
	case CF_RET_K:
	case CF_RET_A:
		return true;
	case CF_LD_MEM:
	case CF_LDX_MEM:
	case CF_ST:
	case CF_STX:
		if (in->k >= BPF_MEMWORDS)
			return false;
		break;
	case CF_DIV_K:
	case CF_MOD_K:
		if (!in->k)
			return false;
		break;
	case CF_LSH_K:
	case CF_RSH_K:
		if (in->k >= 32)
			return false;
		break;
	case CF_JA:
		/* Forward only: libpcap's backward jumps (protochain) go
		 * to libpcap with their loop guard. */
		return (int32_t)in->k >= 0 && next + in->k < n;
	default:
		if (is_jump(op))
			return next + in->jt < n && next + in->jf < n;
		break;
	}
	return next < n; /* falls through to the next instruction */
}

struct ferry_cfilter *ferry_cfilter_create(const struct bpf_insn *insns,
					   unsigned n, unsigned flags)
{
	const void *const *handlers = NULL;
	struct ferry_cfilter *f;
	uint64_t abs_end = 0;
	unsigned i, j, pass;
	bool native;

	if (!n) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f) + n * sizeof(*insns));
	if (!f)
		return NULL;
	memcpy(f->insns, insns, n * sizeof(*insns));
	f->n = n;
	f->abs_end = UINT64_MAX;
	native = !(flags & FERRY_CFILTER_LIBPCAP);
	for (i = 0; native && i < n; i++)
		native = insn_ok(&insns[i], i, n);
	if (!native)
		return f; /* f->native false: bpf_filter() runs it */

	f->ops = calloc(2 * (size_t)n, sizeof(*f->ops));
	if (!f->ops) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	f->labels_out = &handlers; /* with f->native still false */
	ferry_cfilter_run(f, NULL, 0, 0);
	f->labels_out = NULL;
	for (i = 0; i < n; i++) {
		unsigned op = cf_of_code[insns[i].code];
		uint64_t reach = abs_reach(op, insns[i].k);

		if (reach > abs_end)
			abs_end = reach;
		if (op == CF_LD_MEM || op == CF_LDX_MEM)
			f->zero_mem = true;
	}
	for (pass = 0; pass < 2; pass++) {
		struct cf_op *ops = f->ops + pass * n;

		for (i = 0; i < n; i++) {
			const struct bpf_insn *in = &insns[i], *nx;
			unsigned op = cf_of_code[in->code];
			struct cf_op *o = &ops[i];

			o->k = in->k;
			if (op == CF_JA) {
				o->jt = &ops[i + 1 + in->k];
			} else if (is_jump(op)) {
				o->jt = &ops[i + 1 + in->jt];
				o->jf = &ops[i + 1 + in->jf];
			} else if (op != CF_RET_K && op != CF_RET_A) {
				/* A fall-through: i + 1 < n (insn_ok).
				 * The jump it fuses with stays decoded
				 * at i + 1 for jumps landing there. */
				nx = &insns[i + 1];
				for (j = 0; j < ARRAY_LEN(cf_fusions); j++) {
					if (cf_fusions[j].first != op ||
					    cf_fusions[j].next_code != nx->code)
						continue;
					op = cf_fusions[j].fused;
					o->k2 = nx->k;
					o->jt = &ops[i + 2 + nx->jt];
					o->jf = &ops[i + 2 + nx->jf];
					break;
				}
			}
			if (pass == 1 && cf_chk_twin[op])
				op = cf_chk_twin[op];
			o->run = handlers[op];
		}
	}
	f->fast = f->ops;
	f->chk = f->ops + n;
	f->abs_end = abs_end;
	f->native = true;
	return f;
}

void ferry_cfilter_destroy(struct ferry_cfilter *f)
{
	if (!f)
		return;
	free(f->ops);
	free(f);
}

bool ferry_cfilter_native(const struct ferry_cfilter *f)
{
	return f->native;
}
