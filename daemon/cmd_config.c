// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_config.c - `show config` and `save FILE`: the running configuration,
 * every module's lines printed from its own rows (ferryd_config_text).
 */
#include <errno.h>
#include <linux/capability.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "privs.h"

static int cmd_show_config(void *ctx, int argc, char **argv, json_t **data,
			   struct ferry_err *err)
{
	char *text;

	if (argc)
		return ferry_fail(err, -EINVAL, "usage: show config");
	text = ferryd_config_text(CMD_CTX(ctx), NULL);
	if (!text)
		return -ENOMEM;
	*data = json_string(text);
	free(text);
	return 0;
}

struct save_params {
	const char *file;
};

static const struct ctl_opt save_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .size = sizeof(const char *),
	 .metavar = "FILE",
	 .values = CTL_VAL_FILE,
	 .help = "where to write"},
};

static const struct ctl_syntax save_syntax = {
	CTL_OPTS(save_rows),
	.size = sizeof(struct save_params),
	.command = "save",
};

static int cmd_save(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	struct save_params p;
	char tmp[4096];
	char *text;
	size_t n;
	FILE *fp;
	int rc = cmd_parse(&save_syntax, argc, argv, &p, err), fd;

	if (rc)
		return rc;
	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", p.file) >=
	    (int)sizeof(tmp))
		return ferry_fail(err, -ENAMETOOLONG, "path too long");
	text = ferryd_config_text(CMD_CTX(ctx), NULL);
	if (!text)
		return -ENOMEM;
	/* Write beside the target and rename: a crash leaves the old file. */
	fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;

		/* Root without CAP_DAC_OVERRIDE: say why root may not. */
		if ((e == EACCES || e == EPERM) &&
		    !ferry_privs_have(CAP_DAC_OVERRIDE))
			rc = ferry_fail(err, -e,
					"save %s: %s (ferryd dropped "
					"CAP_DAC_OVERRIDE after setup; save "
					"where its user may write)",
					p.file, strerror(e));
		else
			rc = ferry_fail(err, -e, "save %s: %s", p.file,
					strerror(e));
		goto out_text;
	}
	fp = fdopen(fd, "w");
	n = strlen(text);
	if (!fp || fwrite(text, 1, n, fp) != n || fflush(fp) ||
	    fsync(fileno(fp))) {
		rc = ferry_fail(err, -(errno ? errno : EIO), "save %s: %s",
				p.file, strerror(errno ? errno : EIO));
		if (fp)
			fclose(fp);
		else
			close(fd);
		unlink(tmp);
		goto out_text;
	}
	fclose(fp);
	if (rename(tmp, p.file)) {
		rc = ferry_fail(err, -errno, "save %s: %s", p.file,
				strerror(errno));
		unlink(tmp);
		goto out_text;
	}
	*data = json_pack("{s:s}", "saved", p.file);
out_text:
	free(text);
	return rc;
}

static const struct ctl_cmd config_cmds[] = {
	{"show config", "", "the running configuration as commands",
	 cmd_show_config},
	{"save", NULL, "write the running configuration to FILE", cmd_save,
	 &save_syntax},
};

const struct cmd_module cmd_config_module = {
	.name = "config",
	.cmds = config_cmds,
	.n = CMD_N(config_cmds),
};
