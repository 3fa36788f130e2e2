// SPDX-License-Identifier: BSD-2-Clause
/* gen_view.c - a generator's row of `stats` (gen.h). Control thread only. */
#include "gen.h"

json_t *ferry_gen_json(const struct ferry_gen *g, const char *port, double pps)
{
	const struct ferry_gen_params *gp = ferry_gen_params(g);
	json_t *o = json_object();

	json_object_set_new(o, "port", json_string(port));
	json_object_set_new(o, "running", json_boolean(ferry_gen_running(g)));
	json_object_set_new(o, "frames",
			    json_integer((json_int_t)ferry_gen_frames(g)));
	json_object_set_new(o, "pps", json_real(pps));
	json_object_set_new(o, "engine", json_string(ferry_gen_engine_name(g)));
	json_object_set_new(o, "rate", json_integer((json_int_t)gp->rate));
	json_object_set_new(o, "size", json_integer(gp->size));
	json_object_set_new(o, "flows", json_integer(gp->flows));
	json_object_set_new(o, "vlan", json_integer(gp->vid));
	json_object_set_new(o, "count", json_integer((json_int_t)gp->count));
	return o;
}
