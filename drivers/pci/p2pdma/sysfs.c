// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: sysfs.
 *
 * Owns /sys/bus/pci/devices/.../p2pmem/ (Documentation/ABI/testing/
 * sysfs-bus-pci): size, available and published, and the mmap of
 * "allocate", which hands userspace fresh P2P memory, cleared, for
 * O_DIRECT I/O, and which an unbind revokes.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/task_work.h>

#include "../pci.h"
#include "p2pdma.h"

static size_t p2p_size(struct pci_p2pdma *p2p)
{
	return gen_pool_size(p2p->pool);
}

static ssize_t p2p_pool_show(struct device *dev, char *buf,
			     size_t (*measure)(struct pci_p2pdma *))
{
	struct pci_p2pdma *p2p;

	guard(rcu)();
	p2p = rcu_dereference(to_pci_dev(dev)->p2pdma);
	return sysfs_emit(buf, "%zu\n", p2p ? measure(p2p) : 0);
}

static ssize_t size_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return p2p_pool_show(dev, buf, p2p_size);
}
static DEVICE_ATTR_RO(size);

static ssize_t available_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return p2p_pool_show(dev, buf, p2p_available);
}
static DEVICE_ATTR_RO(available);

static ssize_t published_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", pci_has_p2pmem(to_pci_dev(dev)));
}
static DEVICE_ATTR_RO(published);

/*
 * mmap of "allocate": each call gets fresh P2P memory for the whole
 * mapping, cleared to zero first (p2p_map_pages()). Every page is inserted
 * with the mapping as its only reference, so the page returns to the pool
 * (p2p_page_free()) once it is unmapped and no I/O pins it any more;
 * partial munmap frees just those pages. fork() shares the mapping with
 * the child: copying the page table takes a page reference and a mapcount
 * for each page, so a page returns only once every process has unmapped
 * it. The mapping cannot grow (VM_DONTEXPAND).
 */
/*
 * Every page is inserted at mmap time, so a fault means the mapping was
 * revoked by an unbind (or never filled): never hand out other memory.
 */
static vm_fault_t p2pmem_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

/*
 * A write to a present page whose PTE is read-only: the mapping was made
 * writable by mprotect() after the page was mapped without write access
 * (PROT_NONE or PROT_READ; kernfs's page_mkwrite asks for write notify).
 * BAR memory has nothing to write back, so the write may go ahead. The
 * fault path wants the folio locked; left unlocked, it would look for a
 * page cache mapping that P2P pages never have and retry the fault forever.
 */
static vm_fault_t p2pmem_page_mkwrite(struct vm_fault *vmf)
{
	folio_lock(page_folio(vmf->page));
	return VM_FAULT_LOCKED;
}

static const struct vm_operations_struct p2pmem_vm_ops = {
	.fault = p2pmem_fault,
	.page_mkwrite = p2pmem_page_mkwrite,
};

/*
 * Zero what is dirty of @npages pages of fresh P2P memory at @kaddr and
 * insert them into @vma from its start, P2P_MAP_BATCH at a time:
 * vm_insert_pages() takes the page table lock once for a run of pages,
 * and the caller, who holds mmap_lock for write, may reschedule between
 * batches of a mapping that can be gigabytes long.
 *
 * Dirty memory holds what its last user left: another process, nvmet's
 * data buffers, NVMe queue entries, a previous boot or the BAR's owner.
 * It is cleared here, when it is handed out, and nowhere else; each batch
 * is read back before it counts as clean (p2p_clean_batch()). A fatal signal
 * stops a long mapping between batches.
 *
 * Each page of a batch gets a reference of ours (p2p_pages_hand_out()),
 * which is dropped once vm_insert_pages() is done with the batch: an
 * inserted page is left with the mapping's, and unmapping it returns it
 * (p2p_page_free()); one it did not insert goes back to the pool at once,
 * by the same way. Returns 0, -EIO if the clearing did not reach the
 * device, -EINTR on a fatal signal, or vm_insert_pages()'s error, and sets
 * *@done to the number of pages given to the mm (the batches tried); the
 * caller returns the others.
 */
static int p2p_map_pages(struct vm_area_struct *vma, void *kaddr,
			 unsigned long npages, unsigned long *done)
{
	unsigned long n, left, i;
	struct page **pages;
	void *chunk;
	long cleaned;
	int ret = 0;

	*done = 0;
	pages = kmalloc_array(min(npages, P2P_MAP_BATCH), sizeof(*pages),
			      GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (; *done < npages; *done += n) {
		chunk = kaddr + (*done << PAGE_SHIFT);
		cleaned = p2p_clean_batch(kaddr, npages, *done);
		if (cleaned < 0) {
			ret = cleaned;
			break;
		}
		n = cleaned;
		p2p_pages_hand_out(chunk, n);
		for (i = 0; i < n; i++)
			pages[i] = virt_to_page(chunk + (i << PAGE_SHIFT));
		left = n;
		ret = vm_insert_pages(vma, vma->vm_start + (*done << PAGE_SHIFT),
				      pages, &left);
		for (i = 0; i < n; i++)
			put_page(pages[i]);
		if (ret) {
			*done += n;
			break;
		}
		cond_resched();
	}
	kfree(pages);
	return ret;
}

/*
 * kernfs revokes every mapping of "allocate" when the unbind removes the
 * p2pmem group, but it finds them through the file's address_space, and
 * mmap() links a new mapping there only after p2pmem_allocate_mmap() has
 * returned and kernfs has let go of the file. An unbind can revoke in
 * between, miss the new mapping and then wait forever for its pages. So
 * each mmap() looks again on its way back to userspace, once the mapping
 * is linked (or was torn down), and revokes it if the unbind has started.
 */
static void p2p_mmap_check_fn(struct callback_head *work)
{
	struct p2p_mmap_check *mc = container_of(work, struct p2p_mmap_check,
						 work);
	struct pci_p2pdma *p2p;
	bool closing;

	/*
	 * Seeing closing clear means this RCU section started before the end
	 * of the grace period in p2p_provider_close(), so the mapping, linked
	 * before it, is one that the revocation after that grace period finds.
	 */
	rcu_read_lock();
	p2p = rcu_dereference(mc->pdev->p2pdma);
	closing = !p2p || READ_ONCE(p2p->closing);
	rcu_read_unlock();
	if (closing)
		unmap_mapping_range(file_inode(mc->file)->i_mapping, 0, 0, 1);
	percpu_ref_put(mc->ref);
	fput(mc->file);
	kfree(mc);
}

/*
 * Memory for an mmap() of "allocate". The open sysfs file keeps the
 * provider's state alive.
 */
static void *p2p_alloc_mapping(struct pci_dev *pdev, size_t len,
			       unsigned long refs)
{
	struct pci_p2pdma *p2p = rcu_dereference_protected(pdev->p2pdma, 1);

	if (!p2p)
		return NULL;
	/* What earlier munmap()s returned is in the pool for first-fit. */
	p2p_runs_flush(p2p);
	return p2p_alloc(pdev, len, refs, false);
}

static int p2pmem_allocate_mmap(struct file *filp,
				struct kobject *kobj,
				const struct bin_attribute *attr,
				struct vm_area_struct *vma)
{
	struct pci_dev *pdev = to_pci_dev(kobj_to_dev(kobj));
	size_t len = vma->vm_end - vma->vm_start;
	unsigned long npages = len >> PAGE_SHIFT, i;
	struct p2p_mmap_check *mc;
	struct percpu_ref *ref;
	void *kaddr;
	int ret;

	/*
	 * VM_MAYSHARE, not VM_SHARED: a MAP_SHARED mapping of a file opened
	 * read-only lacks VM_SHARED but is shared all the same.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE)) {
		pci_info_ratelimited(pdev, "P2PDMA: %s: allocate must be mapped MAP_SHARED\n",
				     current->comm);
		return -EINVAL;
	}
	if (vma->vm_pgoff) {
		pci_info_ratelimited(pdev, "P2PDMA: %s: allocate must be mapped at offset 0\n",
				     current->comm);
		return -EINVAL;
	}

	mc = kmalloc(sizeof(*mc), GFP_KERNEL);
	if (!mc)
		return -ENOMEM;
	/* One reference for each page, and one for the check. */
	kaddr = p2p_alloc_mapping(pdev, len, npages + 1);
	if (!kaddr) {
		kfree(mc);
		pci_info_ratelimited(pdev, "P2PDMA: %s: no %zu bytes of P2P memory free\n",
				     current->comm, len);
		return -ENOMEM;
	}
	mc->pdev = pdev;
	mc->file = get_file(filp);
	ref = &p2p_page_region(virt_to_page(kaddr))->pgmap.ref;
	mc->ref = ref;
	init_task_work(&mc->work, p2p_mmap_check_fn);
	if (task_work_add(current, &mc->work, TWA_RESUME)) {
		/* Only an exiting task refuses: it maps nothing any more. */
		fput(mc->file);
		kfree(mc);
		for (i = 0; i < npages; i++)
			p2p_page_free(virt_to_page(kaddr + (i << PAGE_SHIFT)));
		percpu_ref_put(ref);
		return -EINTR;
	}

	vma->vm_ops = &p2pmem_vm_ops;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/* Same memory type as the kernel's mapping of the BAR (uncached). */
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	ret = p2p_map_pages(vma, kaddr, npages, &i);
	if (!ret)
		return 0;
	/*
	 * Pages already given to the mm go back through p2p_page_free():
	 * those inserted when the failed mapping is torn down, the others
	 * already did. Return the rest directly.
	 */
	for (; i < npages; i++) {
		struct page *page = virt_to_page(kaddr + (i << PAGE_SHIFT));

		p2p_page_free(page);
	}
	return ret;
}

/*
 * Mode 0660, owner root, 1 TiB long: the 6.12 ABI of p2pmem/allocate. The
 * size means nothing (there is no read or write), but stat() reports it,
 * and some mmap() wrappers refuse a length beyond it (Python's mmap).
 */
static const struct bin_attribute p2pmem_allocate_attr = {
	.attr = { .name = "allocate", .mode = 0660 },
	.size = SZ_1T,
	.mmap = p2pmem_allocate_mmap,
};

const struct attribute_group p2pmem_group = {
	.name = "p2pmem",
	.attrs = (struct attribute *[]) {
		&dev_attr_size.attr, &dev_attr_available.attr,
		&dev_attr_published.attr, NULL
	},
	.bin_attrs = (const struct bin_attribute *const []) {
		&p2pmem_allocate_attr, NULL
	},
};

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/map-kunit.h"
#endif
