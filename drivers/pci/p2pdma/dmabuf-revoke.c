// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: when an exported dma-buf's memory goes back.
 *
 * Owns every buffer of dmabuf.c from the moment it is handed out: the
 * list of buffers that hold memory (p2p_dmabuf_publish() adds one as it
 * is exported, refusing it if its provider is unbinding), the wait for
 * their mappings, the two ways a buffer ends, and the one place its
 * memory goes back to the pool (p2p_dmabuf_give_back()):
 *
 * - p2p_dmabuf_revoke(), which p2p_provider_close() calls when a provider
 *   unbinds, once nothing more is handed out. Each of the provider's
 *   buffers is marked revoked under its reservation lock and
 *   dma_buf_invalidate_mappings() tells every importer; the user
 *   mappings are zapped; then the unbind waits, for as long as it
 *   takes, for every importer to unmap, then for every fence in the
 *   reservation object (of every usage, read after the last unmap), then
 *   for every pin of the pages, and only then gives the memory back. No
 *   timer frees anything: what it waits for is named in the log while it
 *   waits.
 * - p2p_dmabuf_retire(), which the dma-buf's release calls: no importer
 *   and no user mapping is left, but DMA queued on the buffer and pins of
 *   its pages may still reach the memory. Then the memory goes back at
 *   once, or from a work item after the same waits, so that the last
 *   close() does not wait for a fence.
 *
 * Whichever of the two claims a buffer first (under p2p_dmabuf_lock)
 * gives its memory back; a revocation that finds a buffer claimed by its
 * release waits for it. Nothing here relies on the dma-buf's file, which
 * is gone while its dentry may still hold the dma-buf: a revocation holds
 * the buffer by its own reference, zaps through the inode the buffer
 * holds, and uses the dma-buf only under the buffer's lock, until the
 * release clears it.
 *
 * p2p_dmabuf_lock guards the list and the claims; it is never held
 * across a wait.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "../pci.h"
#include "p2pdma.h"

/*
 * A wait for fences, importers or pins names what it waits for after the
 * first period, then after every later one.
 */
#define P2P_DMABUF_FIRST_REPORT	(5 * HZ)
#define P2P_DMABUF_REPORT	(30 * HZ)

/* Buffers holding memory that no revocation took yet. */
static DEFINE_MUTEX(p2p_dmabuf_lock);
static LIST_HEAD(p2p_dmabufs);
/* Woken when a buffer's last mapping is unmapped. */
static DECLARE_WAIT_QUEUE_HEAD(p2p_dmabuf_unmapped);

/**
 * p2p_dmabuf_provider_open() - may @pdev's memory be exported now?
 * @pdev: the provider
 *
 * Return: true if @pdev has P2P memory and its driver is not unbinding.
 * Context: any; an RCU read section of its own.
 */
bool p2p_dmabuf_provider_open(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	return p2p && !list_empty(&p2p->regions) && !READ_ONCE(p2p->closing);
}

/**
 * p2p_dmabuf_publish() - export @buf's dma-buf and list it for revocation
 * @buf: a buffer holding its memory, cleared, not yet exported
 * @exp_info: the export's description, @buf its priv
 *
 * An unbind sets closing before it takes the list's lock to revoke: a
 * buffer is either refused here or on the list the unbind walks. Until
 * then the allocation's pgmap reference holds the unbind off. On success
 * @buf holds the dma-buf's inode, for the zap of a revocation whether or
 * not the file is still there.
 *
 * Context: process context, may sleep; takes p2p_dmabuf_lock.
 * Return: the dma-buf; ERR_PTR(-ENODEV) if @buf's provider is unbinding;
 * or the error of dma_buf_export(). On error @buf is not listed and its
 * memory is still the caller's.
 */
struct dma_buf *p2p_dmabuf_publish(struct p2p_dmabuf *buf,
				   const struct dma_buf_export_info *exp_info)
{
	struct dma_buf *dmabuf;

	guard(mutex)(&p2p_dmabuf_lock);
	if (!p2p_dmabuf_provider_open(buf->provider))
		return ERR_PTR(-ENODEV);
	dmabuf = dma_buf_export(exp_info);
	if (IS_ERR(dmabuf))
		return dmabuf;
	buf->dmabuf = dmabuf;
	buf->inode = file_inode(dmabuf->file);
	ihold(buf->inode);
	list_add_tail(&buf->node, &p2p_dmabufs);
	return dmabuf;
}

/**
 * p2p_dmabuf_unmapped_one() - one mapping of @buf was unmapped
 * @buf: the buffer
 *
 * Wakes a revocation or a release that waits for @buf's last mapping.
 * Context: any; the unmap holds the dma-buf's reservation lock.
 */
void p2p_dmabuf_unmapped_one(struct p2p_dmabuf *buf)
{
	if (atomic_dec_and_test(&buf->mapped))
		wake_up_all(&p2p_dmabuf_unmapped);
}

static void p2p_dmabuf_free(struct kref *ref)
{
	struct p2p_dmabuf *buf = container_of(ref, struct p2p_dmabuf, ref);

	WARN_ON(buf->kaddr);
	dma_fence_put(buf->fence);
	iput(buf->inode);
	pci_dev_put(buf->provider);
	mutex_destroy(&buf->lock);
	kfree(buf);
}

/* Drop a reference of @buf; the last one frees it. May sleep. */
void p2p_dmabuf_put(struct p2p_dmabuf *buf)
{
	kref_put(&buf->ref, p2p_dmabuf_free);
}

/*
 * The memory of @buf goes back to the pool: only by whoever claimed it,
 * once nothing can reach it.
 */
static void p2p_dmabuf_give_back(struct p2p_dmabuf *buf)
{
	mutex_lock(&p2p_dmabuf_lock);
	list_del(&buf->node);
	p2p_folios_take_back(buf->kaddr, buf->size >> PAGE_SHIFT);
	pci_free_p2pmem(buf->provider, buf->kaddr, buf->size);
	buf->kaddr = NULL;
	mutex_unlock(&p2p_dmabuf_lock);
	complete_all(&buf->gone);
}

/* The importers of @buf that hold mappings, by device and driver. */
static void p2p_dmabuf_report_mapped(struct p2p_dmabuf *buf,
				     unsigned long waited)
{
	struct dma_buf_attachment *attach;

	guard(mutex)(&buf->lock);
	if (!buf->dmabuf) {
		pci_warn(buf->provider, "P2PDMA: waits %lu s for %d mapping(s) of a released dma-buf of %zu bytes\n",
			 waited / HZ, atomic_read(&buf->mapped), buf->size);
		return;
	}
	dma_resv_lock(buf->dmabuf->resv, NULL);
	list_for_each_entry(attach, &buf->dmabuf->attachments, node)
		if (attach->priv)
			pci_warn(buf->provider, "P2PDMA: unbind waits %lu s for %s (%s) to unmap %lu mapping(s) of a revoked dma-buf of %zu bytes\n",
				 waited / HZ, dev_name(attach->dev),
				 dev_driver_string(attach->dev),
				 (unsigned long)attach->priv, buf->size);
	dma_resv_unlock(buf->dmabuf->resv);
}

/* Until every sg_table of @buf is unmapped. */
static void p2p_dmabuf_wait_unmapped(struct p2p_dmabuf *buf,
				     unsigned long start)
{
	long period = P2P_DMABUF_FIRST_REPORT;

	while (!wait_event_timeout(p2p_dmabuf_unmapped,
				   !atomic_read(&buf->mapped), period)) {
		p2p_dmabuf_report_mapped(buf, jiffies - start);
		period = P2P_DMABUF_REPORT;
	}
}

/**
 * p2p_dmabuf_resv_fences() - the fences of every usage on a dma-buf
 * @resv: its reservation object
 *
 * Return: one fence for all of them (a fence array if more than one), with
 * a reference of the caller's, or NULL if there is none. With no memory
 * for an array, waits until they all signalled and returns NULL. Context:
 * process context, may sleep; takes @resv's lock, and the caller holds
 * the buffer's lock so that the dma-buf is not released meanwhile.
 */
struct dma_fence *p2p_dmabuf_resv_fences(struct dma_resv *resv)
{
	struct dma_fence *fence = NULL;
	int ret;

	dma_resv_lock(resv, NULL);
	ret = dma_resv_get_singleton(resv, DMA_RESV_USAGE_BOOKKEEP, &fence);
	dma_resv_unlock(resv);
	if (!ret)
		return fence;
	dma_resv_wait_timeout(resv, DMA_RESV_USAGE_BOOKKEEP, false,
			      MAX_SCHEDULE_TIMEOUT);
	return NULL;
}

/*
 * The fences of every usage queued on @buf, with a reference of the
 * caller's: read from the reservation object while the dma-buf lives,
 * else what its release found there.
 */
static struct dma_fence *p2p_dmabuf_fences(struct p2p_dmabuf *buf)
{
	guard(mutex)(&buf->lock);
	if (!buf->dmabuf)
		return dma_fence_get(buf->fence);
	return p2p_dmabuf_resv_fences(buf->dmabuf->resv);
}

/* Until @fence (may be NULL) signals. */
static void p2p_dmabuf_wait_fence(struct p2p_dmabuf *buf,
				  struct dma_fence *fence, unsigned long start)
{
	long period = P2P_DMABUF_FIRST_REPORT;

	if (!fence)
		return;
	while (!dma_fence_wait_timeout(fence, false, period)) {
		pci_warn(buf->provider, "P2PDMA: waits %lu s for the fences of a %s dma-buf of %zu bytes\n",
			 (jiffies - start) / HZ,
			 buf->revoked ? "revoked" : "released", buf->size);
		period = P2P_DMABUF_REPORT;
	}
}

/* The folio of @buf that holds its page @i (p2p_folios_hand_out()). */
static struct folio *p2p_dmabuf_folio(struct p2p_dmabuf *buf, unsigned long i)
{
	return page_folio(virt_to_page(buf->kaddr + (i << PAGE_SHIFT)));
}

/*
 * Does no folio of @buf have a reference beyond the buffer's own
 * (p2p_folios_hand_out())? Another is a user mapping's or a pin's. A
 * folio's count is its head page's: a tail page's own count stays 0.
 */
static bool p2p_dmabuf_pages_idle(struct p2p_dmabuf *buf)
{
	unsigned long i;
	struct folio *folio;

	for (i = 0; i < buf->size >> PAGE_SHIFT; i += folio_nr_pages(folio)) {
		folio = p2p_dmabuf_folio(buf, i);
		if (folio_ref_count(folio) > 1)
			return false;
	}
	return true;
}

/*
 * Until no folio of @buf has a reference beyond the buffer's: the user
 * mappings are gone (zapped, or with the file), what is left is a pin, by
 * I/O that will end. Polled: nothing wakes us when a page reference is
 * dropped. Only the claimant of @buf calls this: the pages are its own.
 */
static void p2p_dmabuf_wait_pages(struct p2p_dmabuf *buf, unsigned long start)
{
	unsigned long npages = buf->size >> PAGE_SHIFT, i;
	unsigned long next = jiffies + P2P_DMABUF_FIRST_REPORT;
	struct folio *folio;

	for (i = 0; i < npages; i += folio_nr_pages(folio)) {
		folio = p2p_dmabuf_folio(buf, i);
		while (folio_ref_count(folio) > 1) {
			if (time_after(jiffies, next)) {
				pci_warn(buf->provider, "P2PDMA: waits %lu s for %d pins of page %lu of a %s dma-buf of %zu bytes\n",
					 (jiffies - start) / HZ,
					 folio_ref_count(folio) - 1, i,
					 buf->revoked ? "revoked" : "released",
					 buf->size);
				next = jiffies + P2P_DMABUF_REPORT;
			}
			schedule_timeout_uninterruptible(1);
		}
		cond_resched();
	}
}

/* Everything that may reach @buf's memory after its release, then none. */
static void p2p_dmabuf_settle(struct p2p_dmabuf *buf, unsigned long start)
{
	struct dma_fence *fence;

	/* Importers that unmap after they were told. */
	p2p_dmabuf_wait_unmapped(buf, start);
	/* Then every fence: one added before the last unmap counts too. */
	fence = p2p_dmabuf_fences(buf);
	p2p_dmabuf_wait_fence(buf, fence, start);
	dma_fence_put(fence);
	p2p_dmabuf_wait_pages(buf, start);
}

static void p2p_dmabuf_retire_fn(struct work_struct *work)
{
	struct p2p_dmabuf *buf = container_of(work, struct p2p_dmabuf, retire);

	p2p_dmabuf_settle(buf, jiffies);
	p2p_dmabuf_give_back(buf);
	p2p_dmabuf_put(buf);
}

/*
 * Is @buf's memory the caller's to give back? True for the first of its
 * release and a revocation to ask, false for the other.
 */
static bool p2p_dmabuf_claim(struct p2p_dmabuf *buf)
{
	bool mine;

	guard(mutex)(&p2p_dmabuf_lock);
	mine = !buf->claimed;
	buf->claimed = true;
	return mine;
}

/**
 * p2p_dmabuf_retire() - the dma-buf of @buf was released
 * @buf: the buffer; the dma-buf's reference passes to this function
 *
 * Unless a revocation claimed @buf first, gives its memory back: at once
 * if nothing can reach it (no fence pending, no pin), else from a work
 * item once the fences signalled and the pins are gone, so that the
 * release does not wait. Called by the release with @buf->dmabuf cleared
 * and @buf->fence set. Context: process context, may sleep.
 */
void p2p_dmabuf_retire(struct p2p_dmabuf *buf)
{
	if (!p2p_dmabuf_claim(buf)) {
		p2p_dmabuf_put(buf);
		return;
	}
	if (atomic_read(&buf->mapped) ||
	    (buf->fence && !dma_fence_is_signaled(buf->fence)) ||
	    !p2p_dmabuf_pages_idle(buf)) {
		INIT_WORK(&buf->retire, p2p_dmabuf_retire_fn);
		queue_work(system_unbound_wq, &buf->retire);
		return;
	}
	p2p_dmabuf_give_back(buf);
	p2p_dmabuf_put(buf);
}

/*
 * Revoke @buf, which this revocation claimed: tell its importers, zap the
 * user mappings, and wait for everything that may still reach the memory,
 * naming what it waits for now and then.
 */
static void p2p_dmabuf_revoke_one(struct p2p_dmabuf *buf)
{
	scoped_guard(mutex, &buf->lock) {
		if (!buf->dmabuf) {
			WRITE_ONCE(buf->revoked, true);
			break;
		}
		dma_resv_lock(buf->dmabuf->resv, NULL);
		WRITE_ONCE(buf->revoked, true);
		dma_buf_invalidate_mappings(buf->dmabuf);
		dma_resv_unlock(buf->dmabuf->resv);
	}
	/*
	 * Userspace: every page inserted before revoked was set goes, and
	 * the fault inserts no more. After the unlock: the fault takes the
	 * reservation lock under mmap_lock, the zap takes i_mmap_rwsem.
	 */
	unmap_mapping_range(buf->inode->i_mapping, 0, 0, 1);
	p2p_dmabuf_settle(buf, jiffies);
}

/* A buffer its release claimed first: until its memory went back. */
static void p2p_dmabuf_wait_gone(struct p2p_dmabuf *buf)
{
	unsigned long start = jiffies;
	long period = P2P_DMABUF_FIRST_REPORT;

	while (!wait_for_completion_timeout(&buf->gone, period)) {
		pci_warn(buf->provider, "P2PDMA: unbind waits %lu s for the fences or pins of a released dma-buf of %zu bytes\n",
			 (jiffies - start) / HZ, buf->size);
		period = P2P_DMABUF_REPORT;
	}
}

/*
 * Revoke every dma-buf exported from @pdev, and wait until each one's
 * memory is back in the pool, without waiting for the dma-bufs to be
 * released. Called by p2p_provider_close() once nothing more is handed
 * out, so no buffer joins the list meanwhile.
 */
void p2p_dmabuf_revoke(struct pci_dev *pdev)
{
	struct p2p_dmabuf *buf, *tmp;
	LIST_HEAD(taken);

	mutex_lock(&p2p_dmabuf_lock);
	list_for_each_entry(buf, &p2p_dmabufs, node) {
		if (buf->provider != pdev)
			continue;
		kref_get(&buf->ref);
		list_add_tail(&buf->revoke_node, &taken);
	}
	mutex_unlock(&p2p_dmabuf_lock);

	list_for_each_entry_safe(buf, tmp, &taken, revoke_node) {
		list_del(&buf->revoke_node);
		if (p2p_dmabuf_claim(buf)) {
			p2p_dmabuf_revoke_one(buf);
			p2p_dmabuf_give_back(buf);
		} else {
			p2p_dmabuf_wait_gone(buf);
		}
		p2p_dmabuf_put(buf);
	}
}

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/dmabuf-revoke-kunit.h"
#endif
