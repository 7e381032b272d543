// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: the revocation of exported dma-bufs.
 *
 * Owns p2p_dmabuf_revoke(), which p2p_provider_close() calls when a
 * provider unbinds, once nothing more is handed out: it takes the
 * provider's buffers off the exporter's list (dmabuf.c) and revokes each.
 * Under the buffer's reservation lock the buffer is marked revoked and
 * dma_buf_move_notify() tells every importer; then the unbind waits, for
 * as long as it takes, for the fences in the reservation object and for
 * every importer to unmap, zaps the user mappings, waits for every pin of
 * the pages to go, and only then gives the memory back to the pool. No
 * timer frees anything: an importer that never unmaps keeps the unbind
 * waiting, and is named in the log while it does.
 *
 * p2p_dmabuf_lock is never held across a wait: the unbind takes its
 * provider's buffers off the list, each with a reference on its file,
 * and revokes them outside the lock.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/wait.h>

#include "../pci.h"
#include "p2pdma.h"

MODULE_IMPORT_NS(DMA_BUF);

/*
 * A revocation waiting for fences or for importers to unmap names what it
 * waits for after the first period, then after every later one.
 */
#define P2P_DMABUF_FIRST_REPORT	(5 * HZ)
#define P2P_DMABUF_REPORT	(30 * HZ)

/* The importers of @buf that hold mappings, by device and driver. */
static void p2p_dmabuf_report_mapped(struct p2p_dmabuf *buf,
				     unsigned long waited)
{
	struct dma_buf_attachment *attach;

	dma_resv_lock(buf->dmabuf->resv, NULL);
	list_for_each_entry(attach, &buf->dmabuf->attachments, node)
		if (attach->priv)
			pci_warn(buf->provider, "P2PDMA: unbind waits %lu s for %s (%s) to unmap %lu mapping(s) of a revoked dma-buf of %zu bytes\n",
				 waited / HZ, dev_name(attach->dev),
				 dev_driver_string(attach->dev),
				 (unsigned long)attach->priv, buf->size);
	dma_resv_unlock(buf->dmabuf->resv);
}

/*
 * Wait until no page of @buf has a reference beyond the one it always
 * has (its idle reference): the zap dropped those of the user mappings,
 * what is left is a pin, by I/O that will end. Polled: nothing wakes us
 * when a page reference is dropped.
 */
static void p2p_dmabuf_wait_pages(struct p2p_dmabuf *buf, unsigned long start)
{
	unsigned long npages = buf->size >> PAGE_SHIFT, i;
	unsigned long next = jiffies + P2P_DMABUF_FIRST_REPORT;
	struct page *page;

	for (i = 0; i < npages; i++) {
		page = virt_to_page(buf->kaddr + (i << PAGE_SHIFT));
		while (page_ref_count(page) > 1) {
			if (time_after(jiffies, next)) {
				pci_warn(buf->provider, "P2PDMA: unbind waits %lu s for %d pins of page %lu of a revoked dma-buf of %zu bytes\n",
					 (jiffies - start) / HZ,
					 page_ref_count(page) - 1, i,
					 buf->size);
				next = jiffies + P2P_DMABUF_REPORT;
			}
			schedule_timeout_uninterruptible(1);
		}
		cond_resched();
	}
}

/*
 * Revoke @buf: tell its importers, then wait for them for as long as it
 * takes, naming what it waits for now and then. Returns when nothing can
 * reach the memory any more.
 */
static void p2p_dmabuf_revoke_one(struct p2p_dmabuf *buf)
{
	struct dma_resv *resv = buf->dmabuf->resv;
	long period = P2P_DMABUF_FIRST_REPORT;
	unsigned long start = jiffies;

	dma_resv_lock(resv, NULL);
	WRITE_ONCE(buf->revoked, true);
	dma_buf_move_notify(buf->dmabuf);
	dma_resv_unlock(resv);

	/* DMA the importers queued before they were told. */
	while (!dma_resv_wait_timeout(resv, DMA_RESV_USAGE_BOOKKEEP, false,
				      period)) {
		pci_warn(buf->provider, "P2PDMA: unbind waits %lu s for the fences of a revoked dma-buf of %zu bytes\n",
			 (jiffies - start) / HZ, buf->size);
		period = P2P_DMABUF_REPORT;
	}
	/*
	 * Userspace: every page inserted before revoked was set goes, and
	 * the fault inserts no more. After the unlock: the fault takes the
	 * reservation lock under mmap_lock, the zap takes i_mmap_rwsem. No
	 * file reference, no file: no mapping can exist.
	 */
	if (buf->held)
		unmap_mapping_range(buf->held->f_mapping, 0, 0, 1);

	/* Importers that unmap after move_notify returned. */
	while (!wait_event_timeout(p2p_dmabuf_unmapped,
				   !atomic_read(&buf->mapped), period)) {
		p2p_dmabuf_report_mapped(buf, jiffies - start);
		period = P2P_DMABUF_REPORT;
	}
	p2p_dmabuf_wait_pages(buf, start);
}

/*
 * Revoke every dma-buf exported from @pdev and give its memory back to the
 * pool, without waiting for the dma-bufs to be released. Called by
 * p2p_provider_close() once nothing more is handed out. A buffer whose
 * file is already on its way out is left on the list: nothing can reach
 * it any more, and its release gives the memory back.
 */
void p2p_dmabuf_revoke(struct pci_dev *pdev)
{
	struct p2p_dmabuf *buf, *tmp;
	LIST_HEAD(taken);

	/*
	 * The file cannot be freed under get_file_active() here: its last
	 * fput() runs our release, which takes the buffer off the list under
	 * the lock, before the file is freed. A count already at zero fails.
	 */
	mutex_lock(&p2p_dmabuf_lock);
	list_for_each_entry_safe(buf, tmp, &p2p_dmabufs, node) {
		if (buf->provider != pdev)
			continue;
		buf->held = get_file_active(&buf->dmabuf->file);
		if (buf->held)
			list_move_tail(&buf->node, &taken);
	}
	mutex_unlock(&p2p_dmabuf_lock);

	list_for_each_entry_safe(buf, tmp, &taken, node) {
		p2p_dmabuf_revoke_one(buf);
		mutex_lock(&p2p_dmabuf_lock);
		list_del(&buf->node);
		pci_free_p2pmem(pdev, buf->kaddr, buf->size);
		buf->kaddr = NULL;
		mutex_unlock(&p2p_dmabuf_lock);
		/* May be the last reference: release runs, and frees buf. */
		fput(buf->held);
	}
}
