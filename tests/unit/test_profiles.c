// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_profiles - the driver profile table: every driver family ferry
 * knows is found by its ETHTOOL_GDRVINFO name with sane values, anything
 * else gets the generic profile, and the NUMA placement decision with
 * made-up topologies (this machine has one node, so the "other node"
 * path is only reachable here).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "numaplace.h"
#include "profiles.h"

/* What each known family must say (from the drivers, see profiles.c). */
static const struct {
	const char *driver;
	bool zerocopy;
	bool ntuple;
	/* the busy-polled NAPI sends TX: `busy-poll on` prefers it */
	bool busy_poll_tx;
} known[] = {
	{"veth", false, false, false},	 {"virtio_net", true, false, false},
	{"mlx5_core", true, true, true}, {"ice", true, true, true},
	{"i40e", true, true, true},	 {"ixgbe", true, true, true},
	{"igc", true, true, true},	 {"ena", false, false, false},
	{"bnxt_en", false, true, false},
};

static void test_known_drivers(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct ferry_driver_profile *p =
			ferry_profile_lookup(known[i].driver);

		print_message("%s\n", known[i].driver);
		assert_string_equal(p->driver, known[i].driver);
		assert_true(p->native_xdp);
		assert_int_equal(p->zerocopy, known[i].zerocopy);
		assert_int_equal(p->ntuple, known[i].ntuple);
		assert_int_equal(p->busy_poll_tx, known[i].busy_poll_tx);
		/* only a zero-copy socket busy-polls */
		assert_true(!p->busy_poll_tx || p->zerocopy);
		/* need_wakeup: zero-copy drivers flag the fill ring, copy
		 * mode always flags TX; never both, never neither. */
		assert_int_equal(p->wakeup_fill, p->zerocopy);
		assert_int_equal(p->wakeup_tx_always, !p->zerocopy);
		assert_int_equal(p->headroom, 256);
		assert_true(p->ring_default > 0);
		assert_true(p->ring_default <= p->ring_max);
		assert_true(p->xdp_mtu_max >= 1500);
		assert_non_null(strstr(p->queues_cmd, "ethtool -L"));
		assert_true(strlen(p->quirk) > 0);
		assert_true(strlen(p->ref) > 0);
	}
}

static void test_unknown_is_generic(void **state)
{
	const char *names[] = {"e1000", "", "VETH", "veth ", "mlx5", NULL};
	const struct ferry_driver_profile *g = ferry_profile_lookup(NULL);
	size_t i, n;
	const struct ferry_driver_profile *all = ferry_profiles(&n);

	(void)state;
	assert_string_equal(g->driver, "generic");
	assert_false(g->native_xdp);
	assert_false(g->zerocopy);
	assert_ptr_equal(g, &all[n - 1]);
	for (i = 0; names[i]; i++)
		assert_ptr_equal(ferry_profile_lookup(names[i]), g);
}

static void test_table_complete(void **state)
{
	size_t i, j, n;
	const struct ferry_driver_profile *all = ferry_profiles(&n);

	(void)state;
	/* Every known family plus the generic default, no duplicates. */
	assert_int_equal(n, sizeof(known) / sizeof(known[0]) + 1);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			assert_string_not_equal(all[i].driver, all[j].driver);
}

/* ------------------------------------------------------------- NUMA */

static void topo(int cpu_node[FERRY_NUMA_MAX_CPUS], int n_cpus, int per_node)
{
	int c;

	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++)
		cpu_node[c] = c < n_cpus ? c / per_node : -1;
}

static void test_numa_one_node(void **state)
{
	int cpu_node[FERRY_NUMA_MAX_CPUS];
	struct ferry_numa_plan plan;
	char msg[256];

	(void)state;
	topo(cpu_node, 2, 2); /* this machine: CPUs 0-1 on node 0 */
	ferry_numa_plan(0, 0x3, cpu_node, &plan);
	assert_int_equal(plan.umem_node, 0);
	assert_int_equal(plan.off_node, 0);
	assert_int_equal(plan.nic_cpus, 0x3);
	assert_int_equal(ferry_numa_warning(&plan, "eth0", 0, cpu_node, msg,
					    sizeof(msg)),
			 0);
	assert_string_equal(msg, "");
	/* veth: no node, so nothing is remote. */
	ferry_numa_plan(-1, 0x3, cpu_node, &plan);
	assert_int_equal(plan.umem_node, -1);
	assert_int_equal(plan.off_node, 0);
}

static void test_numa_other_node_warns(void **state)
{
	int cpu_node[FERRY_NUMA_MAX_CPUS];
	struct ferry_numa_plan plan;
	char msg[256];

	(void)state;
	topo(cpu_node, 8, 4); /* node 0: 0-3, node 1: 4-7 */
	/* NIC on node 0, workers on 2 (local) and 5-6 (remote). */
	ferry_numa_plan(0, (1u << 2) | (1u << 5) | (1u << 6), cpu_node, &plan);
	assert_int_equal(plan.umem_node, 0);
	assert_int_equal(plan.off_node, (1u << 5) | (1u << 6));
	assert_int_equal(plan.nic_cpus, 0xf);
	assert_true(ferry_numa_warning(&plan, "ens1f0", 0, cpu_node, msg,
				       sizeof(msg)) > 0);
	print_message("%s\n", msg);
	assert_non_null(strstr(msg, "5-6 on node 1"));
	assert_non_null(strstr(msg, "ens1f0 is on node 0"));
	assert_non_null(strstr(msg, "use CPUs 0-3"));
	/* NIC on node 1 with all workers there: quiet. */
	ferry_numa_plan(1, 0xf0, cpu_node, &plan);
	assert_int_equal(plan.off_node, 0);
	assert_int_equal(plan.umem_node, 1);
}

static void test_numa_many_nodes(void **state)
{
	int cpu_node[FERRY_NUMA_MAX_CPUS];
	struct ferry_numa_plan plan;
	char msg[256];

	(void)state;
	topo(cpu_node, 12, 4); /* nodes 0, 1, 2 */
	ferry_numa_plan(2, (1u << 1) | (1u << 5) | (1u << 9), cpu_node, &plan);
	assert_int_equal(plan.off_node, (1u << 1) | (1u << 5));
	ferry_numa_warning(&plan, "x", 2, cpu_node, msg, sizeof(msg));
	assert_non_null(strstr(msg, "1,5 on other nodes"));
	assert_non_null(strstr(msg, "use CPUs 8-11"));
	/* A CPU whose node is unknown is not called remote. */
	cpu_node[5] = -1;
	ferry_numa_plan(2, 1u << 5, cpu_node, &plan);
	assert_int_equal(plan.off_node, 0);
}

static void test_numa_default_worker_cpu(void **state)
{
	int cpu_node[FERRY_NUMA_MAX_CPUS];

	(void)state;
	topo(cpu_node, 8, 4); /* node 0: 0-3, node 1: 4-7 */
	/* the last allowed CPU on the NIC's node */
	assert_int_equal(ferry_numa_pick_cpu(0, 0xff, cpu_node), 3);
	assert_int_equal(ferry_numa_pick_cpu(1, 0xff, cpu_node), 7);
	assert_int_equal(ferry_numa_pick_cpu(0, 0xf5, cpu_node), 2);
	/* none allowed there: the last allowed anywhere */
	assert_int_equal(ferry_numa_pick_cpu(0, 0xf0, cpu_node), 7);
	/* no node (veth, this machine): the last allowed */
	assert_int_equal(ferry_numa_pick_cpu(-1, 0x3, cpu_node), 1);
	assert_int_equal(ferry_numa_pick_cpu(0, 0, cpu_node), -1);
}

static void test_cpulist_fmt(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(ferry_cpulist_fmt(0, buf, sizeof(buf)), "");
	assert_string_equal(ferry_cpulist_fmt(1, buf, sizeof(buf)), "0");
	assert_string_equal(ferry_cpulist_fmt(0x2d, buf, sizeof(buf)),
			    "0,2-3,5");
	assert_string_equal(ferry_cpulist_fmt(1ull << 63, buf, sizeof(buf)),
			    "63");
	assert_string_equal(ferry_cpulist_fmt(~0ull, buf, sizeof(buf)), "0-63");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_drivers),
		cmocka_unit_test(test_unknown_is_generic),
		cmocka_unit_test(test_table_complete),
		cmocka_unit_test(test_numa_one_node),
		cmocka_unit_test(test_numa_other_node_warns),
		cmocka_unit_test(test_numa_many_nodes),
		cmocka_unit_test(test_numa_default_worker_cpu),
		cmocka_unit_test(test_cpulist_fmt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
