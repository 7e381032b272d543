#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutants of the dma-buf exporter (drivers/pci/p2pdma/dmabuf.c).

Each mutant removes one guard of the revocation and names the KUnit case
of p2pdma-dmabuf that must fail without it (or KASAN, where the guard
prevents a use-after-free). scripts/mutants.sh applies one at a time to
a scratch worktree, builds the debug kernel and boots the suite.

Usage: dmabuf.py --list | dmabuf.py NAME FILE  (rewrites FILE in place)
"""
import sys

# name: (guard, what must fail, [(text, replacement), ...])
MUTANTS = {
    'timer': (
        'no memory freed while an importer still maps it: no timer',
        'db_revoke_waits_for_unmap_test',
        [('''	while (!wait_event_timeout(p2p_dmabuf_unmapped,
				   !atomic_read(&buf->mapped), period)) {
		p2p_dmabuf_report_mapped(buf, jiffies - start);
		period = P2P_DMABUF_REPORT;
	}''', '''	if (!wait_event_timeout(p2p_dmabuf_unmapped,
				!atomic_read(&buf->mapped), 10 * HZ))
		p2p_dmabuf_report_mapped(buf, jiffies - start);''')]),
    'fence': (
        'the revocation waits for the reservation object\'s fences',
        'db_revoke_waits_for_fence_test',
        [('''	while (!dma_resv_wait_timeout(resv, DMA_RESV_USAGE_BOOKKEEP, false,
				      period)) {''', '''	while (0) {''')]),
    'fileref': (
        'the revocation holds a file reference on each buffer it takes',
        'KASAN use-after-free in db_release_during_revoke_test',
        [('''		buf->held = get_file_active(&buf->dmabuf->file);
		if (buf->held)
			list_move_tail(&buf->node, &taken);''',
          '''		list_move_tail(&buf->node, &taken);'''),
         ('''	if (buf->held)
		unmap_mapping_range(buf->held->f_mapping, 0, 0, 1);''',
          '''	unmap_mapping_range(buf->dmabuf->file->f_mapping, 0, 0, 1);'''),
         ('''		fput(buf->held);''', '')]),
    'lock': (
        'no global lock held across the revocation\'s waits',
        'db_other_provider_not_stalled_test',
        [('''	mutex_unlock(&p2p_dmabuf_lock);

	list_for_each_entry_safe(buf, tmp, &taken, node) {
		p2p_dmabuf_revoke_one(buf);
		mutex_lock(&p2p_dmabuf_lock);
		list_del(&buf->node);
		pci_free_p2pmem(pdev, buf->kaddr, buf->size);
		buf->kaddr = NULL;
		mutex_unlock(&p2p_dmabuf_lock);''', '''	list_for_each_entry_safe(buf, tmp, &taken, node) {
		p2p_dmabuf_revoke_one(buf);
		list_del(&buf->node);
		pci_free_p2pmem(pdev, buf->kaddr, buf->size);
		buf->kaddr = NULL;'''),
         ('''		fput(buf->held);
	}
}''', '''		fput(buf->held);
	}
	mutex_unlock(&p2p_dmabuf_lock);
}''')]),
    'vmap': (
        'no vmap (the dma-buf core caches it past a revocation)',
        'db_vmap_refused_test',
        [('''static void p2p_dmabuf_release(struct dma_buf *dmabuf)''',
          '''static int p2p_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	if (buf->revoked)
		return -ENODEV;
	iosys_map_set_vaddr_iomem(map, (void __iomem __force *)buf->kaddr);
	return 0;
}

static void p2p_dmabuf_release(struct dma_buf *dmabuf)'''),
         ('''	.mmap = p2p_dmabuf_mmap,
};''', '''	.mmap = p2p_dmabuf_mmap,
	.vmap = p2p_dmabuf_vmap,
};''')]),
    'pin': (
        'a dynamic importer may pin (DMABUF_MOVE_NOTIFY off pins on map)',
        'db_pin_revoked_test (and every map with DMABUF_MOVE_NOTIFY off)',
        [('''static int p2p_dmabuf_pin(struct dma_buf_attachment *attach)
{
	return 0;''', '''static int p2p_dmabuf_pin(struct dma_buf_attachment *attach)
{
	return -EOPNOTSUPP;''')]),
    'pfnmap': (
        'user mappings hold page references (no VM_PFNMAP for VFIO)',
        'db_mmap_page_refs_test',
        [('''		err = vm_insert_page(vma, vmf->address,
				     virt_to_page(buf->kaddr +
						  (vmf->pgoff << PAGE_SHIFT)));''',
          '''		err = vmf_insert_pfn(vma, vmf->address,
				     PHYS_PFN(virt_to_phys(buf->kaddr)) +
				     vmf->pgoff) == VM_FAULT_NOPAGE ? 0 : -EFAULT;'''),
         ('VM_MIXEDMAP | VM_IO | VM_DONTEXPAND',
          'VM_PFNMAP | VM_IO | VM_DONTEXPAND')]),
    'pageref': (
        'the revocation waits for page references past the zap',
        'db_revoke_waits_for_page_ref_test',
        [('''	p2p_dmabuf_wait_pages(buf, start);
}''', '''}'''),
         ('static void p2p_dmabuf_wait_pages(',
          'static void __maybe_unused p2p_dmabuf_wait_pages(')]),
    'sg32': (
        'a mapping of 4 GiB or more is split at 32-bit entry lengths',
        'db_sg_over_4g_test',
        [('''	unsigned int len, i;
	size_t off = 0;''', '''	unsigned int len, i;
	unsigned int off = 0;''')]),
    'recheck': (
        'an export rechecks the provider under the lock the revocation takes',
        'db_export_racing_unbind_test',
        [('''	mutex_lock(&p2p_dmabuf_lock);
	ret = -ENODEV;
	if (!p2p_dmabuf_provider_open(provider))
		goto out_unlock;
''', '''	mutex_lock(&p2p_dmabuf_lock);
''')]),
    'ratelimit': (
        'refusals at attach are logged rate-limited',
        'db_refusals_ratelimited_test',
        [('''		if (__ratelimit(&p2p_dmabuf_refusals))
			pci_p2pdma_distance(buf->provider, attach->dev, true);''',
          '''		if (1 || __ratelimit(&p2p_dmabuf_refusals))
			pci_p2pdma_distance(buf->provider, attach->dev, true);''')]),
    'nonpci': (
        'an importer that is not a PCI function is refused at attach',
        'db_non_pci_importer_test',
        [('''	if (!dev_is_pci(attach->dev)) {''', '''	if (0) {''')]),
}


def main():
    if sys.argv[1:] == ['--list']:
        for name, (guard, fails, _) in MUTANTS.items():
            print(f'{name}\t{guard}\t{fails}')
        return 0
    if len(sys.argv) != 3 or sys.argv[1] not in MUTANTS:
        sys.exit('usage: dmabuf.py --list | dmabuf.py NAME FILE')
    path = sys.argv[2]
    text = open(path).read()
    for old, new in MUTANTS[sys.argv[1]][2]:
        if old not in text:
            sys.exit(f'dmabuf.py: {sys.argv[1]}: text not found in {path}:\n{old}')
        text = text.replace(old, new)
    open(path, 'w').write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
