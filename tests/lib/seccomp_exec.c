// SPDX-License-Identifier: BSD-2-Clause
/*
 * seccomp_exec - runs a command under a system call allow list, the way
 * systemd applies a unit's SystemCallFilter= with SystemCallErrorNumber=EPERM
 * and SystemCallArchitectures=native: listed calls run, any other returns
 * EPERM, a call of another architecture kills the process.
 *
 *   seccomp_exec [--mdwe] LIST -- COMMAND [ARGS...]
 *
 * --mdwe adds what MemoryDenyWriteExecute=yes adds, a second filter as
 * systemd's: no mapping both writable and executable, no mprotect to
 * executable, no executable System V shared memory (EPERM).
 *
 * LIST has one system call name per line ('#' comments, blank lines). The
 * system tests write it from the unit file itself (tests/lib/testbed.sh,
 * tb_unit_syscalls), so the unit and what the tests run under cannot drift.
 * A name this libseccomp does not know is reported and skipped (the kernel
 * cannot be asked for it either). With SECCOMP_EXEC_LOG=1 a refused call is
 * also logged by the kernel (SCMP_ACT_LOG is not EPERM, so only for finding
 * what a list lacks).
 */
#include <errno.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int allow_list(scmp_filter_ctx ctx, const char *path)
{
	char line[128], unknown[512] = "", *s, *e;
	int n = 0, nr, rc;
	size_t u = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "seccomp_exec: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		for (s = line; *s == ' ' || *s == '\t'; s++)
			;
		for (e = s; *e && *e != '\n' && *e != ' ' && *e != '#'; e++)
			;
		*e = 0;
		if (!*s)
			continue;
		nr = seccomp_syscall_resolve_name(s);
		if (nr == __NR_SCMP_ERROR) {
			if (u < sizeof(unknown))
				u += (size_t)snprintf(unknown + u,
						      sizeof(unknown) - u,
						      " %s", s);
			continue;
		}
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (rc) {
			fprintf(stderr, "seccomp_exec: %s: %s\n", s,
				strerror(-rc));
			continue;
		}
		n++;
	}
	fclose(f);
	if (u)
		fprintf(stderr,
			"seccomp_exec: not known to this libseccomp, "
			"skipped:%s\n",
			unknown);
	return n;
}

/* MemoryDenyWriteExecute=yes: default allow, these four refused. */
static int mdwe_load(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
			      SCMP_A2(SCMP_CMP_MASKED_EQ,
				      PROT_WRITE | PROT_EXEC,
				      PROT_WRITE | PROT_EXEC));
	if (!rc)
		rc = seccomp_rule_add(
			ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mprotect), 1,
			SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
	if (!rc)
		rc = seccomp_rule_add(
			ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pkey_mprotect), 1,
			SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
	if (!rc)
		rc = seccomp_rule_add(
			ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(shmat), 1,
			SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC));
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

int main(int argc, char **argv)
{
	const char *log = getenv("SECCOMP_EXEC_LOG");
	scmp_filter_ctx ctx;
	int n, rc;

	if (argc > 1 && !strcmp(argv[1], "--mdwe")) {
		rc = mdwe_load();
		if (rc) {
			fprintf(stderr, "seccomp_exec: --mdwe: %s\n",
				strerror(-rc));
			return 1;
		}
		argv++;
		argc--;
	}
	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: seccomp_exec [--mdwe] LIST -- COMMAND "
				"[ARGS...]\n");
		return 2;
	}
	ctx = seccomp_init(log && *log == '1' ? SCMP_ACT_LOG
					      : SCMP_ACT_ERRNO(EPERM));
	if (!ctx) {
		fprintf(stderr, "seccomp_exec: seccomp_init failed\n");
		return 1;
	}
	/* Only the native architecture, as SystemCallArchitectures=native. */
	seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	n = allow_list(ctx, argv[1]);
	if (n <= 0) {
		fprintf(stderr, "seccomp_exec: %s allows nothing\n", argv[1]);
		seccomp_release(ctx);
		return 1;
	}
	rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc) {
		fprintf(stderr, "seccomp_exec: seccomp_load: %s\n",
			strerror(-rc));
		return 1;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "seccomp_exec: %s: %s\n", argv[3], strerror(errno));
	return 127;
}
