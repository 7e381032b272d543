// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: the white-box KUnit suites.
 *
 * Built into the core under CONFIG_PCI_P2PDMA_KUNIT_TEST. The suites live
 * in tests/ and reach the functions that p2pdma.h declares for them
 * (VISIBLE_IF_KUNIT).
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <kunit/static_stub.h>
#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/genalloc.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/task_work.h>

#include "../pci.h"
#include "p2pdma.h"

#include "tests/p2pdma-kunit.h"
