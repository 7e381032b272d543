/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the white-box KUnit suites of the P2PDMA core share. Each suite
 * (*-kunit.h) is included at the end of the file it tests under
 * CONFIG_PCI_P2PDMA_KUNIT_TEST and includes this header; it reaches that
 * file's static functions, and the other files' internals that p2pdma.h
 * declares (VISIBLE_IF_KUNIT). Every PCI device they use is fake: see
 * fake-pci.h. Each suite builds its hierarchy in suite_init and removes
 * it in suite_exit. The helpers below are static: each file that
 * includes a suite has its own copy of those it uses.
 */
#ifndef _P2PDMA_KUNIT_H
#define _P2PDMA_KUNIT_H

#include <kunit/device.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/genalloc.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/completion.h>
#include <linux/debug_locks.h>
#include <linux/hrtimer.h>
#include <linux/kmsg_dump.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>
#include <linux/unaligned.h>
#include <linux/percpu-refcount.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>

#include "fake-pci.h"

#define BUS	PCI_P2PDMA_MAP_BUS_ADDR
#define THRU	PCI_P2PDMA_MAP_THRU_HOST_BRIDGE
#define REFUSED	PCI_P2PDMA_MAP_NOT_SUPPORTED
/*
 * What a route adds for each host bridge it goes through: 1024, the
 * contract's value (6.12's), written out rather than taken from our own
 * P2P_HOST_BRIDGE_COST, so that a change of that constant fails the
 * route suite. The guest suites expect the same: 2051 on the hostbridge
 * topology, 3 links and 1024 for each of its two host bridges.
 */
#define HB	1024

/* Intel host bridge IDs from p2p_routing_host_bridges[]. */
#define HB_ANY_ROOT_PORT	0x2020	/* Skylake-SP: across host bridges */
#define HB_SAME_ONLY		0x3c00	/* Sandy Bridge-EP: within itself */
#define HB_SAME_ONLY2		0x2f00	/* Haswell-EP: within itself */
#define HB_SKYLAKE_RP		0x2030	/* Skylake-SP root port */
#define HB_ICELAKE		0x09a2	/* Ice Lake-SP, class 0880 */
#define HB_SAME_ONLY_RP		0x3c01	/* Sandy Bridge-EP: within itself */
#define HB_SAME_ONLY_RP2	0x2f01	/* Haswell-EP: within itself */
#define HB_CLASS		(PCI_CLASS_BRIDGE_HOST << 8)

/* ------------------------------------------------------------------ */
/* Capturing what the core logs                                        */
/* ------------------------------------------------------------------ */

/* Sequence number the next printk record will get. */
static __maybe_unused u64 kunit_kmsg_mark(void)
{
	struct kmsg_dump_iter iter;

	kmsg_dump_rewind(&iter);
	return iter.next_seq;
}

/*
 * Count the records logged since @mark that contain every one of the
 * non-NULL strings @a, @b and @c.
 */
static __maybe_unused int
kunit_kmsg_count(struct kunit *test, u64 mark, const char *a,
		 const char *b, const char *c)
{
	struct kmsg_dump_iter iter;
	size_t len;
	char *line;
	int n = 0;

	line = kunit_kmalloc(test, 1024, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, line);
	kmsg_dump_rewind(&iter);
	iter.cur_seq = max(iter.cur_seq, mark);
	while (kmsg_dump_get_line(&iter, false, line, 1023, &len)) {
		line[len] = '\0';
		if (strstr(line, a) && (!b || strstr(line, b)) &&
		    (!c || strstr(line, c)))
			n++;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* The route rules a case wants, whatever the machine and command line */
/* ------------------------------------------------------------------ */

static __maybe_unused bool cpu_rule_off(void)
{
	return false;
}

static __maybe_unused bool cpu_rule_on(void)
{
	return true;
}

/*
 * The CPU rule (AMD Zen routes P2P through any host bridge) as a case
 * wants it, whatever CPU the tests run on; a static stub of the case's,
 * undone by KUnit when the case ends.
 */
static __maybe_unused void set_cpu_rule(struct kunit *test, bool on)
{
	if (on)
		kunit_activate_static_stub(test, p2p_cpu_routes_p2p, cpu_rule_on);
	else
		kunit_activate_static_stub(test, p2p_cpu_routes_p2p, cpu_rule_off);
}

/* The host bridge policy as printed by the parameter, without "\n". */
static __maybe_unused void policy_now(char *buf)
{
	int n = p2p_policy_get(buf, NULL);

	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
}

static __maybe_unused void policy_restore(void *saved)
{
	char *now = kmalloc(PAGE_SIZE, GFP_KERNEL);

	if (now)
		policy_now(now);
	if (!now || strcmp(now, saved))
		p2p_policy_set(saved, NULL);
	kfree(now);
}

/*
 * Give the case the host bridge policy @rules (pci_p2pdma.host_bridges),
 * whatever the command line set; the previous one comes back when the
 * case ends. Nothing is changed (nor logged) when it is already @rules.
 */
static __maybe_unused void set_policy(struct kunit *test, const char *rules)
{
	char *saved = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, saved);
	policy_now(saved);
	if (!strcmp(saved, rules))
		return;
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, policy_restore, saved),
			0);
	KUNIT_ASSERT_EQ(test, p2p_policy_set(rules, NULL), 0);
}

/* ------------------------------------------------------------------ */
/* A provider's P2P state without a BAR (alloc, configfs, pool model)   */
/* ------------------------------------------------------------------ */

/* P2P state for @pdev, and @range on its list unless NULL. */
static __maybe_unused int
pv_setup_provider(struct pci_dev *pdev, struct p2p_region *range)
{
	struct pci_p2pdma *p2p;

	mutex_lock(&p2p_setup_lock);
	p2p = p2p_provider_setup(pdev);
	if (!IS_ERR(p2p) && range) {
		range->provider = pdev;
		list_add_tail_rcu(&range->node, &p2p->regions);
	}
	mutex_unlock(&p2p_setup_lock);
	return PTR_ERR_OR_ZERO(p2p);
}

/* ------------------------------------------------------------------ */
/* The bus address hierarchy (translate-kunit.h, dmabuf-fixture.h)      */
/* ------------------------------------------------------------------ */

#define XL_WINDOW	SZ_16M
#define XL_BUS_BASE	0x80000000ull	/* below 4 GiB, the window above */
#define XL_BAR_AT	SZ_4M		/* P's BAR 0, from the window start */
#define XL_BAR_SIZE	SZ_4M
#define XL_OFFSET	SZ_2M		/* what P registers, within BAR 0 */
#define XL_SIZE		SZ_2M
#define XL_UNSET	((dma_addr_t)0xdeadbeef000ull)

enum { XL_RP1, XL_USP, XL_DSP0, XL_DSP1, XL_P, XL_Q, XL_RP2, XL_R, XL_FNS };

/* The hierarchy drawn above, but for the BARs; the dma-buf suite's too. */
static __maybe_unused const struct fake_line xl_hierarchy[] = {
	FAKE_HOST_LINE(0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	FAKE_WINDOW_LINE,
	FAKE_RP_LINE(XL_RP1),
	FAKE_SWITCH_LINE(XL_USP, XL_RP1, 2),
	FAKE_EP_LINE(XL_P, XL_DSP0, 1),
	FAKE_EP_LINE(XL_Q, XL_DSP1, 1),
	FAKE_RP_LINE(XL_RP2),
	FAKE_EP_LINE(XL_R, XL_RP2, 1),
};

/* That hierarchy with the @n (at most 2) BARs of @bars, scanned, in *@fp. */
static __maybe_unused int xl_build(struct fake_pci **fp, struct fake_fn **fn,
				   const struct fake_line *bars, int n)
{
	struct fake_line t[ARRAY_SIZE(xl_hierarchy) + 2];

	if (n > 2)
		return -EINVAL;
	memcpy(t, xl_hierarchy, sizeof(xl_hierarchy));
	memcpy(&t[ARRAY_SIZE(xl_hierarchy)], bars, n * sizeof(*bars));
	return fake_pci_table(fp, t, ARRAY_SIZE(xl_hierarchy) + n, fn,
			      XL_WINDOW, XL_BUS_BASE);
}

#endif /* _P2PDMA_KUNIT_H */
