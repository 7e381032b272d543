// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: dirty pages and their clearing.
 *
 * Owns which pages of a registered range may hold someone's data (the
 * range's dirty bitmap: set when a kernel user or a process had a page,
 * clear when it reads as zero), the lookup of the range and page of an
 * address, and the clearing of dirty pages that an mmap() of
 * p2pmem/allocate or a dma-buf export hands out, verified to have reached
 * the device.
 *
 * Nothing here writes device memory on its own: the only writes are that
 * clearing, which its caller asks for, of the pages it hands out that may
 * hold someone's data. Calls no other file of the core.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <kunit/static_stub.h>
#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "../pci.h"
#include "p2pdma.h"

struct p2p_region *p2p_region_of(struct pci_p2pdma *p2p,
				 unsigned long addr)
{
	struct p2p_region *region;

	for_each_p2p_region(region, p2p)
		if (addr - region->kaddr < region->npages << PAGE_SHIFT)
			return region;
	return NULL;
}

unsigned long p2p_page_index(struct p2p_region *region,
			     unsigned long addr)
{
	return (addr - region->kaddr) >> PAGE_SHIFT;
}

/*
 * Mark pages [@first, @first + @n) of @region dirty or clean. The caller
 * holds them; neighbours in the same word may change at the same time, so
 * a word shared with them takes an atomic update, and only if our bits in
 * it are not already as wanted. A word of only our pages has no other
 * writer, and a plain store does: a free of 1 MiB marks four or five
 * words, with at most two atomic updates instead of five. Whoever takes
 * the pages next takes them from the pool with an atomic operation that
 * orders this store before it.
 */
void p2p_mark(struct p2p_region *region, unsigned long first,
	      unsigned long n, bool dirty)
{
	unsigned long end = first + n, lo, hi, mask, want, *word;

	while (first < end) {
		lo = first % BITS_PER_LONG;
		hi = min_t(unsigned long, BITS_PER_LONG, lo + end - first);
		mask = GENMASK(hi - 1, lo);
		want = dirty ? mask : 0;
		word = &region->dirty[BIT_WORD(first)];
		if (mask == ~0UL)
			WRITE_ONCE(*word, want);
		else if ((READ_ONCE(*word) & mask) != want)
			set_mask_bits(word, mask, want);
		first += hi - lo;
	}
}

/*
 * Read back the last 8 bytes that a clearing wrote. A read is not passed
 * by the posted writes before it (PCIe r6.0 sec 2.4.1), so its completion
 * also says that they reached the device. A device that is gone, in D3hot
 * or in reset drops the writes and answers all ones (or the read faults
 * in the platform's way, which also is not zero). A function of its own,
 * so that KUnit can stand in for a device that dropped the writes.
 */
VISIBLE_IF_KUNIT u64 p2p_read_back(const u64 *last)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_read_back, last);
	return READ_ONCE(*last);
}

/*
 * Does @pdev answer memory requests at its BARs: present, Memory Space
 * Enable set, and in D0 if it has the PCI Power Management capability? A
 * function in D3hot answers configuration requests only (PCIe r6.0 sec
 * 5.3.1.4.1): the writes of a clearing are dropped, and what a read
 * returns is the platform's choice (all ones on most hosts, zeros on
 * QEMU's q35), so the read-back alone cannot tell. A function of its own,
 * for KUnit's fake devices.
 */
static bool p2p_provider_decodes(struct pci_dev *pdev)
{
	u16 cmd, pmcsr;

	KUNIT_STATIC_STUB_REDIRECT(p2p_provider_decodes, pdev);
	if (pci_dev_is_disconnected(pdev) ||
	    pci_read_config_word(pdev, PCI_COMMAND, &cmd) ||
	    PCI_POSSIBLE_ERROR(cmd) || !(cmd & PCI_COMMAND_MEMORY))
		return false;
	if (!pdev->pm_cap)
		return true;
	if (pci_read_config_word(pdev, pdev->pm_cap + PCI_PM_CTRL, &pmcsr) ||
	    PCI_POSSIBLE_ERROR(pmcsr))
		return false;
	/* PowerState 0 is D0 (pci_power_t is a sparse-restricted type). */
	return !(pmcsr & PCI_PM_CTRL_STATE_MASK);
}

/*
 * Zero the dirty pages among [@first, @first + @n) of @region, which the
 * caller holds, and mark them clean once the zeros are known to have
 * reached the device: it decoded memory in D0 before and after the writes
 * (p2p_provider_decodes()), and a read-back of the last word is zero. The
 * kernel maps BAR memory uncached, where a store of 8 bytes is the most one
 * instruction writes (memset64()).
 *
 * The dirty bits of the pages held are stable (only a page's holder marks
 * it), but their words also hold the bits of neighbouring pages, which
 * other CPUs mark at the same time (p2p_mark()'s cmpxchg). find_*_bit()
 * read whole words plainly; whatever a word holds then, the bits of our
 * pages in it are right, hence data_race().
 *
 * Return: 0, or -EIO if the device was not in D0 or not decoding memory,
 * or a read-back was not zero; the pages of that run and those after it
 * stay dirty.
 */
int p2p_clean(struct p2p_region *region, unsigned long first,
	      unsigned long n)
{
	struct pci_dev *pdev = region->provider;
	unsigned long end = first + n, i = first, j;
	size_t words;
	u64 *start;
	u64 back;

	/* KUnit's mmap() suite stands in for the clearing of a fake BAR. */
	KUNIT_STATIC_STUB_REDIRECT(p2p_clean, region, first, n);
	/* Our bits are stable, their neighbours' are not: see above. */
	if (data_race(find_next_bit(region->dirty, end, i)) < end &&
	    !p2p_provider_decodes(pdev))
		goto not_decoding;
	/* As above. */
	while ((i = data_race(find_next_bit(region->dirty, end, i))) < end) {
		/* As above. */
		j = data_race(find_next_zero_bit(region->dirty, end, i));
		start = (u64 *)(region->kaddr + (i << PAGE_SHIFT));
		words = ((j - i) << PAGE_SHIFT) / sizeof(u64);
		memset64(start, 0, words);
		back = p2p_read_back(start + words - 1);
		if (!p2p_provider_decodes(pdev))
			goto not_decoding;
		if (back) {
			pci_info_ratelimited(pdev, "P2PDMA: %s: clearing P2P memory did not reach the device (read back %#llx)\n",
					     current->comm, back);
			return -EIO;
		}
		p2p_mark(region, i, j - i, false);
		i = j;
	}
	return 0;

not_decoding:
	pci_info_ratelimited(pdev, "P2PDMA: %s: cannot clear P2P memory: the device is not in D0 or does not decode memory\n",
			     current->comm);
	return -EIO;
}

/*
 * Clean the next batch, P2P_MAP_BATCH pages at most, of the @npages pages
 * of fresh P2P memory at @kaddr that follow the first @done: the one
 * clearing loop of an mmap() of "allocate" (sysfs.c, which inserts each
 * batch before it cleans the next) and of a dma-buf export (dmabuf.c).
 * The caller may reschedule between batches of a run that can be
 * gigabytes long; a fatal signal stops it before a batch.
 *
 * Context: process context (a fatal signal of the current task stops it);
 * does not sleep itself: the caller reschedules between batches.
 * Return: the number of pages cleaned, -EINTR on a fatal signal, or
 * p2p_clean()'s -EIO.
 */
long p2p_clean_batch(void *kaddr, unsigned long npages, unsigned long done)
{
	struct p2p_region *region = p2p_page_region(virt_to_page(kaddr));
	unsigned long n = min(npages - done, P2P_MAP_BATCH);
	int ret;

	if (fatal_signal_pending(current))
		return -EINTR;
	ret = p2p_clean(region, p2p_page_index(region, (unsigned long)kaddr) + done, n);
	return ret ? ret : n;
}
