// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: the mapping of p2pmem/allocate.
 *
 * Owns the memory that an mmap() of /sys/bus/pci/devices/.../p2pmem/allocate
 * (Documentation/ABI/testing/sysfs-bus-pci) hands userspace. Each mmap()
 * gets a struct p2p_mapping: fresh P2P memory for the whole length, cleared
 * to zero first, held for as long as a VMA covers it. Its VMAs map a file
 * of the mapping's own (an anonymous inode), so that they, and fork()'s
 * and mremap()'s copies of them, hold the mapping by that file's
 * reference, not by kernfs's. A fault maps the memory around the address,
 * P2P_MAP_BATCH pages at a time; an munmap() gives back what it leaves
 * covered by no VMA; the provider's unbind revokes the mapping: it zaps
 * every VMA and gives all of the memory back.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/anon_inodes.h>
#include <linux/bitmap.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "../pci.h"
#include "p2pdma.h"

struct p2p_mapping {
	struct mutex lock;	/* guards the rest against faults and unmaps */
	struct pci_dev *provider;	/* referenced */
	struct file *file;	/* ours: its VMAs hold it, and it holds us */
	void *kaddr;		/* the memory: @npages pages */
	unsigned long npages;
	unsigned long *handed;	/* pages given a reference and to the mm */
	unsigned long *returned;	/* pages given back to the pool */
	struct page **batch;	/* a fault's pages, P2P_MAP_BATCH at most */
	bool revoked;		/* by the unbind: everything was given back */
	struct list_head node;	/* in p2p_mappings, until released */
};

/* Every mapping of every provider, for the unbind's revocation. */
static LIST_HEAD(p2p_mappings);
static DEFINE_MUTEX(p2p_mappings_lock);

static struct page *p2p_mapping_page(struct p2p_mapping *map, unsigned long i)
{
	return virt_to_page(map->kaddr + (i << PAGE_SHIFT));
}

/*
 * Give back pages [@first, @end) that are still ours. A page the mm never
 * had goes back to the pool as it is, clean, with the others of its run
 * (p2p_free_untouched()); a page that was faulted in loses our reference,
 * and returns through the pgmap's folio_free (p2p_page_free(), dirty if
 * it was written) once no mapping or pin holds it any more.
 */
static void p2p_mapping_give_back(struct p2p_mapping *map, unsigned long first,
				  unsigned long end)
{
	unsigned long i, next, from;

	lockdep_assert_held(&map->lock);
	for (i = find_next_zero_bit(map->returned, end, first); i < end;
	     i = find_next_zero_bit(map->returned, end, next)) {
		next = find_next_bit(map->returned, end, i);
		bitmap_set(map->returned, i, next - i);
		while (i < next) {
			if (test_bit(i, map->handed)) {
				put_page(p2p_mapping_page(map, i++));
				continue;
			}
			from = i;
			i = find_next_bit(map->handed, next, i);
			p2p_free_untouched(map->kaddr + (from << PAGE_SHIFT),
					   i - from);
		}
	}
}

/* Whether a VMA of @as maps page @i of the file. */
static bool p2p_mapping_covered(struct address_space *as, unsigned long i)
{
	return mapping_rmap_tree_iter_first(as, i, i);
}

/*
 * A VMA went (munmap(), exit, the end of an mremap() move): give back
 * what no other VMA of the mapping covers. The closing VMA is out of the
 * file's interval tree by now (the mm unlinks it when it frees its page
 * tables), and a VMA that fork() or mremap() makes is linked there while
 * the one it copies still is, so a page that is still mapped somewhere is
 * always covered.
 */
static void p2p_mapping_close(struct vm_area_struct *vma)
{
	struct p2p_mapping *map = vma->vm_private_data;
	struct address_space *as = map->file->f_mapping;
	unsigned long i = vma->vm_pgoff, end = i + vma_pages(vma), run;

	guard(mutex)(&map->lock);
	if (map->revoked)
		return;
	i_mmap_lock_read(as);
	if (!mapping_mapped(as)) {
		p2p_mapping_give_back(map, i, end);
		i = end;
	}
	while (i < end) {
		if (p2p_mapping_covered(as, i)) {
			i++;
			continue;
		}
		for (run = i + 1; run < end; run++)
			if (p2p_mapping_covered(as, run))
				break;
		p2p_mapping_give_back(map, i, run);
		i = run;
	}
	i_mmap_unlock_read(as);
}

/*
 * Map the P2P_MAP_BATCH-aligned batch of the mapping's pages around the
 * faulting one, as far as the VMA reaches: one fault instead of 512 for
 * a mapping that is touched page by page. Each page gets our reference
 * first (p2p_pages_hand_out()); vm_insert_pages() takes the mapping's.
 */
static vm_fault_t p2p_mapping_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct p2p_mapping *map = vma->vm_private_data;
	unsigned long first, end, i, n, left;
	int ret = 0;

	first = max(ALIGN_DOWN(vmf->pgoff, P2P_MAP_BATCH), vma->vm_pgoff);
	end = min3(first + P2P_MAP_BATCH, vma->vm_pgoff + vma_pages(vma),
		   map->npages);

	guard(mutex)(&map->lock);
	/* Revoked, or given back: a VMA never covers what was returned. */
	if (map->revoked || vmf->pgoff >= end ||
	    WARN_ON_ONCE(find_next_bit(map->returned, end, first) < end))
		return VM_FAULT_SIGBUS;
	for (i = first; i < end; i++) {
		if (!test_bit(i, map->handed)) {
			p2p_pages_hand_out(map->kaddr + (i << PAGE_SHIFT), 1);
			__set_bit(i, map->handed);
		}
		map->batch[i - first] = p2p_mapping_page(map, i);
	}
	/* A page already mapped stops the batch (-EBUSY): skip it. */
	for (i = 0, n = end - first; i < n; i++) {
		left = n - i;
		ret = vm_insert_pages(vma, vma->vm_start +
				      ((first + i - vma->vm_pgoff) << PAGE_SHIFT),
				      map->batch + i, &left);
		i = n - left;
		if (ret != -EBUSY)
			break;
		ret = 0;
	}
	return ret == -ENOMEM ? VM_FAULT_OOM :
	       ret ? VM_FAULT_SIGBUS : VM_FAULT_NOPAGE;
}

static const struct vm_operations_struct p2p_mapping_vm_ops = {
	.close = p2p_mapping_close,
	.fault = p2p_mapping_fault,
};

/* The last VMA and the last other holder of the file went. */
static int p2p_mapping_release(struct inode *inode, struct file *file)
{
	struct p2p_mapping *map = file->private_data;

	scoped_guard(mutex, &p2p_mappings_lock)
		list_del(&map->node);
	scoped_guard(mutex, &map->lock)
		if (!map->revoked)
			p2p_mapping_give_back(map, 0, map->npages);
	pci_dev_put(map->provider);
	kfree(map->batch);
	kvfree(map->returned);
	kvfree(map->handed);
	mutex_destroy(&map->lock);
	kfree(map);
	return 0;
}

/*
 * No mmap: the file is reachable by /proc/PID/map_files, and a mapping
 * made there would not be one of ours.
 */
static const struct file_operations p2p_mapping_fops = {
	.owner = THIS_MODULE,
	.release = p2p_mapping_release,
};

/* Clear the memory, batch by batch: see p2p_clean_batch(). */
static int p2p_mapping_clean(struct p2p_mapping *map)
{
	unsigned long done;
	long n;

	for (done = 0; done < map->npages; done += n) {
		n = p2p_clean_batch(map->kaddr, map->npages, done);
		if (n < 0)
			return n;
		cond_resched();
	}
	return 0;
}

static struct p2p_mapping *p2p_mapping_create(struct pci_dev *pdev,
					      unsigned long npages)
{
	struct p2p_mapping *map;
	struct pci_p2pdma *p2p;
	int ret = -ENOMEM;

	map = kzalloc_obj(*map, GFP_KERNEL);
	if (!map)
		return ERR_PTR(-ENOMEM);
	mutex_init(&map->lock);
	map->npages = npages;

	/*
	 * The memory first: a length beyond the pool fails here, before
	 * bitmaps of its size are allocated.
	 * The open sysfs file keeps the provider's state alive.
	 */
	p2p = rcu_dereference_protected(pdev->p2pdma, 1);
	if (p2p) {
		/* What earlier munmap()s returned is in the pool for first-fit. */
		p2p_runs_flush(p2p);
		/* A pgmap reference for each page. */
		map->kaddr = p2p_alloc(pdev, npages << PAGE_SHIFT, npages,
				       false);
	}
	if (!map->kaddr) {
		pci_info_ratelimited(pdev, "P2PDMA: %s: no %lu bytes of P2P memory free\n",
				     current->comm, npages << PAGE_SHIFT);
		goto out_free;
	}
	map->handed = kvcalloc(BITS_TO_LONGS(npages), sizeof(long), GFP_KERNEL);
	map->returned = kvcalloc(BITS_TO_LONGS(npages), sizeof(long),
				 GFP_KERNEL);
	map->batch = kmalloc_array(min(npages, P2P_MAP_BATCH),
				   sizeof(*map->batch), GFP_KERNEL);
	if (!map->handed || !map->returned || !map->batch)
		goto out_return;
	ret = p2p_mapping_clean(map);
	if (ret)
		goto out_return;
	map->file = anon_inode_create_getfile("[p2pmem]", &p2p_mapping_fops,
					      map, O_RDWR, NULL);
	if (IS_ERR(map->file)) {
		ret = PTR_ERR(map->file);
		goto out_return;
	}
	map->provider = pci_dev_get(pdev);
	scoped_guard(mutex, &p2p_mappings_lock)
		list_add_tail(&map->node, &p2p_mappings);
	return map;

out_return:
	p2p_free_untouched(map->kaddr, npages);
out_free:
	kfree(map->batch);
	kvfree(map->returned);
	kvfree(map->handed);
	mutex_destroy(&map->lock);
	kfree(map);
	return ERR_PTR(ret);
}

/**
 * p2p_mapping_mmap() - map fresh P2P memory for an mmap() of allocate
 * @pdev: the provider, whose p2pmem/allocate file is being mapped
 * @vma: the new VMA, from kernfs's mmap with its file open
 *
 * Allocates P2P memory of @vma's length from @pdev's pool, clean memory
 * first, clears what is dirty (clear.c) and makes @vma a mapping of it
 * through a file of its own; nothing is mapped until a fault
 * (Documentation/ABI/testing/sysfs-bus-pci, p2pmem/allocate).
 *
 * Context: process context, mmap_lock held for write; sleeps. A fatal
 * signal stops the clearing of a long mapping.
 * Return: 0; -EINVAL if @vma is not MAP_SHARED or its offset is not 0;
 * -ENOMEM if the pool has no run of that length free (or no memory for
 * the mapping's state); -EIO if the clearing did not reach the device;
 * -EINTR on a fatal signal.
 */
int p2p_mapping_mmap(struct pci_dev *pdev, struct vm_area_struct *vma)
{
	struct p2p_mapping *map;

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
	map = p2p_mapping_create(pdev, vma_pages(vma));
	if (IS_ERR(map))
		return PTR_ERR(map);
	/* kernfs leaves a VMA whose file was replaced alone. */
	vma_set_file(vma, map->file);
	fput(map->file);
	vma->vm_private_data = map;
	vma->vm_ops = &p2p_mapping_vm_ops;
	/* VM_MIXEDMAP: a fault inserts pages (vm_insert_pages()). */
	vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP);
	/* Same memory type as the kernel's mapping of the BAR (uncached). */
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	return 0;
}

/**
 * p2p_mappings_revoke() - revoke every mmap() of a provider's allocate
 * @pdev: the provider being unbound
 *
 * Faults of @pdev's mappings fail with SIGBUS from here on; every VMA of
 * them is zapped, then their memory goes back: what no pin holds at once,
 * the rest when the pin goes (the unbind waits for that by the pgmap
 * references). The mappings themselves stay until their VMAs go.
 *
 * Context: process context, after the p2pmem group was removed (no mmap()
 * of allocate is running or can start); sleeps.
 */
void p2p_mappings_revoke(struct pci_dev *pdev)
{
	struct p2p_mapping *map;

	guard(mutex)(&p2p_mappings_lock);
	list_for_each_entry(map, &p2p_mappings, node) {
		if (map->provider != pdev)
			continue;
		scoped_guard(mutex, &map->lock)
			map->revoked = true;
		unmap_mapping_range(map->file->f_mapping, 0, 0, 1);
		scoped_guard(mutex, &map->lock)
			p2p_mapping_give_back(map, 0, map->npages);
	}
}

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/map-kunit.h"
#endif
