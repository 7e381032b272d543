// SPDX-License-Identifier: GPL-2.0
/*
 * Fake PCI hierarchies for the P2PDMA KUnit suites: the builder and the
 * config space that fake_pci_ops serves (see fake-pci.h).
 */

#include <linux/bitmap.h>
#include <linux/list.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include "fake-pci.h"

/* The hierarchy that fake_pci_ops serves; tests run one at a time. */
static struct fake_pci *fake_pci_live;

static struct fake_fn *fake_pci_find(struct pci_bus *bus, unsigned int devfn)
{
	struct fake_pci *fp = fake_pci_live;
	struct fake_fn *fn;

	if (!fp)
		return NULL;
	list_for_each_entry(fn, &fp->fns, node) {
		if (fn->bus == bus->number && fn->devfn == devfn &&
		    (!IS_ENABLED(CONFIG_X86) ||
		     fn->host->domain == pci_domain_nr(bus)))
			return fn;
	}
	return NULL;
}

static int fake_pci_read(struct pci_bus *bus, unsigned int devfn, int where,
			 int size, u32 *val)
{
	struct fake_fn *fn = fake_pci_find(bus, devfn);
	u32 v = 0;
	int i;

	if (where < 0 || where + size > PCI_CFG_SPACE_EXP_SIZE) {
		*val = ~0u;
		return PCIBIOS_BAD_REGISTER_NUMBER;
	}
	if (!fn) {
		*val = size == 4 ? ~0u : (1u << (size * 8)) - 1;
		return PCIBIOS_DEVICE_NOT_FOUND;
	}
	atomic_inc(&fake_pci_live->reads);
	if (READ_ONCE(fn->gone)) {
		*val = size == 4 ? ~0u : (1u << (size * 8)) - 1;
		return PCIBIOS_SUCCESSFUL;
	}
	for (i = size - 1; i >= 0; i--)
		v = (v << 8) | fn->cfg[where + i];
	*val = v;
	return PCIBIOS_SUCCESSFUL;
}

static int fake_pci_write(struct pci_bus *bus, unsigned int devfn, int where,
			  int size, u32 val)
{
	struct fake_fn *fn = fake_pci_find(bus, devfn);
	int i;

	if (!fn)
		return PCIBIOS_DEVICE_NOT_FOUND;
	if (where < 0 || where + size > PCI_CFG_SPACE_EXP_SIZE)
		return PCIBIOS_BAD_REGISTER_NUMBER;

	/* BAR 0 of an endpoint decodes fn->bar0_size bytes of memory. */
	if (!fn->bridge && where == PCI_BASE_ADDRESS_0 && size == 4) {
		val &= ~(fn->bar0_size - 1) & PCI_BASE_ADDRESS_MEM_MASK;
		if (!fn->bar0_size)
			val = 0;
		/* The memory type and prefetch bits are read-only. */
		val |= fn->cfg[where] & ~PCI_BASE_ADDRESS_MEM_MASK;
		put_unaligned_le32(val, &fn->cfg[where]);
		return PCIBIOS_SUCCESSFUL;
	}
	for (i = 0; i < size; i++, val >>= 8)
		if (test_bit(where + i, fn->wmask))
			fn->cfg[where + i] = val & 0xff;
	return PCIBIOS_SUCCESSFUL;
}

static struct pci_ops fake_pci_ops = {
	.read = fake_pci_read,
	.write = fake_pci_write,
};

static void fake_cfg_w8(struct fake_fn *fn, int off, u8 v)
{
	fn->cfg[off] = v;
}

static void fake_cfg_w16(struct fake_fn *fn, int off, u16 v)
{
	put_unaligned_le16(v, &fn->cfg[off]);
}

static void fake_cfg_w32(struct fake_fn *fn, int off, u32 v)
{
	put_unaligned_le32(v, &fn->cfg[off]);
}

static void fake_writable(struct fake_fn *fn, int off, int len)
{
	bitmap_set(fn->wmask, off, len);
}

struct fake_pci *fake_pci_create(void)
{
	struct fake_pci *fp;

	if (WARN_ON(fake_pci_live))
		return NULL;
	fp = kzalloc_obj(*fp, GFP_KERNEL);
	if (!fp)
		return NULL;
	INIT_LIST_HEAD(&fp->hosts);
	INIT_LIST_HEAD(&fp->fns);
	fp->next_bar = FAKE_BAR_BASE;
	fake_pci_live = fp;
	return fp;
}

/* The PCIe port types of fake_fn_add(); -1 for a conventional function. */
static struct fake_fn *fake_fn_add(struct fake_host *h, struct fake_fn *up,
				   u8 devfn, bool bridge, int pcie_type,
				   u16 vendor, u16 device, u32 class)
{
	struct fake_fn *fn = kzalloc(sizeof(*fn), GFP_KERNEL);

	if (!fn)
		return NULL;
	fn->host = h;
	fn->up = up;
	fn->devfn = devfn;
	fn->bridge = bridge;
	fn->next_ext = FAKE_EXT_CAP;

	fake_cfg_w16(fn, PCI_VENDOR_ID, vendor);
	fake_cfg_w16(fn, PCI_DEVICE_ID, device);
	fake_cfg_w32(fn, PCI_CLASS_REVISION, class << 8 | 0x01);
	fake_cfg_w8(fn, PCI_HEADER_TYPE, bridge ? PCI_HEADER_TYPE_BRIDGE :
						  PCI_HEADER_TYPE_NORMAL);
	fake_writable(fn, PCI_COMMAND, 2);
	fake_writable(fn, PCI_CACHE_LINE_SIZE, 2);
	fake_writable(fn, PCI_BIST, 1);
	fake_writable(fn, PCI_INTERRUPT_LINE, 1);

	if (bridge) {
		/* Bus numbers are writable; no I/O or prefetchable window. */
		fake_writable(fn, PCI_PRIMARY_BUS, 4);
		fake_writable(fn, PCI_MEMORY_BASE, 4);
		fake_writable(fn, PCI_BRIDGE_CONTROL, 2);
		fake_cfg_w16(fn, PCI_MEMORY_BASE, 0xfff0);	/* disabled */
	} else if (vendor) {
		fn->bar0_size = FAKE_BAR_SIZE;
		fake_cfg_w32(fn, PCI_BASE_ADDRESS_0, h->fp->next_bar);
		h->fp->next_bar += FAKE_BAR_SIZE;
	}

	if (pcie_type >= 0) {
		int cap = FAKE_EXP_CAP;

		fake_cfg_w16(fn, PCI_STATUS, PCI_STATUS_CAP_LIST);
		fake_cfg_w8(fn, PCI_CAPABILITY_LIST, cap);
		fake_cfg_w8(fn, cap + PCI_CAP_LIST_ID, PCI_CAP_ID_EXP);
		fake_cfg_w16(fn, cap + PCI_EXP_FLAGS,
			     2 | (pcie_type << 4));	/* version 2 */
		fake_writable(fn, cap + PCI_EXP_DEVCTL, 2);
		fake_writable(fn, cap + PCI_EXP_LNKCTL, 2);
		fake_writable(fn, cap + PCI_EXP_SLTCTL, 2);
		fake_writable(fn, cap + PCI_EXP_RTCTL, 2);
		fake_writable(fn, cap + PCI_EXP_DEVCTL2, 2);
		fake_writable(fn, cap + PCI_EXP_LNKCTL2, 2);
	}
	list_add_tail(&fn->node, &h->fp->fns);
	return fn;
}

/*
 * A host bridge whose root bus is @busnr. @vendor/@device, when @vendor is
 * not 0, describe the function at devfn 0 of the root bus, of class
 * @class: what identifies the root complex.
 */
struct fake_host *fake_host_add(struct fake_pci *fp, u8 busnr,
				u16 vendor, u16 device, u32 class)
{
	struct fake_host *h = kzalloc(sizeof(*h), GFP_KERNEL);

	if (!h)
		return NULL;
	h->fp = fp;
	h->domain = FAKE_PCI_DOMAIN;
	h->busnr = busnr;
	h->next_slot = 1;
	list_add_tail(&h->node, &fp->hosts);
	if (vendor && !fake_fn_add(h, NULL, PCI_DEVFN(0, 0), false, -1,
				   vendor, device, class))
		return NULL;
	return h;
}

/*
 * Give @h a memory window of @size bytes at CPU address @cpu that the host
 * bridge translates to bus address @bus, the way a platform describes an
 * offset window with pci_add_resource_offset(): pci_bus_address() of a BAR
 * in it is its resource start minus the offset.
 */
static void fake_host_mem_window(struct fake_host *h,
				 resource_size_t cpu,
				 resource_size_t size,
				 pci_bus_addr_t bus)
{
	h->mem.name = "fake PCI memory window";
	h->mem.start = cpu;
	h->mem.end = cpu + size - 1;
	h->mem.flags = IORESOURCE_MEM;
	h->mem_offset = cpu - bus;
}

/* Where the next device goes: below @up, or on @h's root bus. */
static u8 fake_next_devfn(struct fake_host *h, struct fake_fn *up)
{
	u8 *slot = up ? &up->next_slot : &h->next_slot;

	return PCI_DEVFN((*slot)++, 0);
}

/* A PCIe bridge of @type (root port, upstream or downstream port). */
static struct fake_fn *fake_bridge_add(struct fake_host *h,
				       struct fake_fn *up, int type)
{
	return fake_fn_add(h, up, fake_next_devfn(h, up), true, type,
			   FAKE_VENDOR, 0x1000 + type, PCI_CLASS_BRIDGE_PCI << 8);
}

struct fake_fn *fake_root_port(struct fake_host *h)
{
	return fake_bridge_add(h, NULL, PCI_EXP_TYPE_ROOT_PORT);
}

/* A root port with the vendor and device ID of a real one. */
struct fake_fn *
fake_root_port_id(struct fake_host *h, u16 vendor, u16 device)
{
	return fake_fn_add(h, NULL, fake_next_devfn(h, NULL), true,
			   PCI_EXP_TYPE_ROOT_PORT, vendor, device,
			   PCI_CLASS_BRIDGE_PCI << 8);
}

/*
 * A switch below @up: its upstream port, and @n downstream ports stored
 * in @dsp.
 */
struct fake_fn *fake_switch(struct fake_fn *up, int n,
			    struct fake_fn **dsp)
{
	struct fake_fn *usp = fake_bridge_add(up->host, up,
					      PCI_EXP_TYPE_UPSTREAM);
	int i;

	for (i = 0; usp && i < n; i++) {
		dsp[i] = fake_bridge_add(up->host, usp,
					 PCI_EXP_TYPE_DOWNSTREAM);
		if (!dsp[i])
			return NULL;
	}
	return usp;
}

/*
 * An endpoint device below @up with @nfn functions, stored in @fns (fns[0]
 * when @nfn is 1 may be NULL: the function is returned).
 */
struct fake_fn *fake_endpoint(struct fake_fn *up, int nfn,
			      struct fake_fn **fns)
{
	u8 devfn = fake_next_devfn(up->host, up);
	struct fake_fn *fn = NULL;
	int i;

	for (i = 0; i < nfn; i++) {
		fn = fake_fn_add(up->host, up, devfn + i, false,
				 PCI_EXP_TYPE_ENDPOINT, FAKE_VENDOR, 0x2000,
				 PCI_CLASS_MEMORY_OTHER << 8);
		if (!fn)
			return NULL;
		if (nfn > 1 && i == 0)
			fn->cfg[PCI_HEADER_TYPE] |= PCI_HEADER_TYPE_MFD;
		if (fns)
			fns[i] = fn;
	}
	return fns ? fns[0] : fn;
}

/*
 * Make BAR 0 of the endpoint @fn a 64-bit memory BAR of @size bytes (a
 * power of two) at bus address @bus.
 */
void fake_bar64(struct fake_fn *fn, u64 bus, u32 size)
{
	fn->bar0_size = size;
	fake_cfg_w32(fn, PCI_BASE_ADDRESS_0,
		     lower_32_bits(bus) | PCI_BASE_ADDRESS_MEM_TYPE_64);
	fake_cfg_w32(fn, PCI_BASE_ADDRESS_1, upper_32_bits(bus));
	fake_writable(fn, PCI_BASE_ADDRESS_1, 4);
}

/* Start a new extended capability of @size bytes; returns its offset. */
static u16 fake_ext_cap(struct fake_fn *fn, u16 id, u8 ver, u16 size)
{
	u16 pos = fn->next_ext;

	if (fn->last_ext)
		fake_cfg_w32(fn, fn->last_ext,
			     get_unaligned_le32(&fn->cfg[fn->last_ext]) |
			     pos << 20);
	fake_cfg_w32(fn, pos, id | ver << 16);
	fn->last_ext = pos;
	fn->next_ext = pos + size;
	return pos;
}

/* An ACS capability with every feature; control starts out all off. */
void fake_add_acs(struct fake_fn *fn)
{
	fn->acs = fake_ext_cap(fn, PCI_EXT_CAP_ID_ACS, 1, 8);
	fake_cfg_w16(fn, fn->acs + PCI_ACS_CAP, FAKE_ACS_CAP_ALL);
	fake_writable(fn, fn->acs + PCI_ACS_CTRL, 2);
}

/* Set the ACS control register the way firmware or an admin would. */
void fake_set_acs_ctrl(struct fake_fn *fn, u16 ctrl)
{
	if (fn->acs)
		fake_cfg_w16(fn, fn->acs + PCI_ACS_CTRL, ctrl);
}

/*
 * Make @pf an SR-IOV physical function with one VF (offset 1, stride 1,
 * no VF BARs) and return the VF's config space. fake_pci_scan() creates
 * the VF with pci_iov_add_virtfn(); @pf must be the only function of its
 * device so that the bus scan does not find the VF as function 1.
 */
struct fake_fn *fake_add_sriov(struct fake_fn *pf)
{
	struct fake_fn *vf;
	u16 pos;

	pos = fake_ext_cap(pf, PCI_EXT_CAP_ID_SRIOV, 1, 0x40);
	pf->sriov = pos;
	fake_cfg_w16(pf, pos + PCI_SRIOV_INITIAL_VF, 1);
	fake_cfg_w16(pf, pos + PCI_SRIOV_TOTAL_VF, 1);
	fake_cfg_w16(pf, pos + PCI_SRIOV_VF_OFFSET, 1);
	fake_cfg_w16(pf, pos + PCI_SRIOV_VF_STRIDE, 1);
	fake_cfg_w16(pf, pos + PCI_SRIOV_VF_DID, 0x2001);
	fake_cfg_w32(pf, pos + PCI_SRIOV_SUP_PGSIZE, 1);	/* 4 KiB */
	fake_writable(pf, pos + PCI_SRIOV_CTRL, 2);
	fake_writable(pf, pos + PCI_SRIOV_NUM_VF, 2);
	fake_writable(pf, pos + PCI_SRIOV_SYS_PGSIZE, 4);

	vf = fake_fn_add(pf->host, pf->up, pf->devfn + 1, false,
			 PCI_EXP_TYPE_ENDPOINT, 0xffff, 0xffff,
			 PCI_CLASS_MEMORY_OTHER << 8);
	if (vf) {
		vf->pf = pf;
		vf->bar0_size = 0;
		fake_cfg_w32(vf, PCI_BASE_ADDRESS_0, 0);
	}
	return vf;
}

/* Build the @lines lines of @t into @fp, storing functions in @fn. */
int fake_build(struct fake_pci *fp,
	       const struct fake_line *t, int lines,
	       struct fake_fn **fn)
{
	struct fake_host *h = NULL;
	struct fake_fn *f = NULL;

	for (; lines--; t++) {
		if (t->kind != FAKE_HOST && !h)
			return -EINVAL;
		if ((t->kind == FAKE_SWITCH || t->kind == FAKE_EP ||
		     t->kind == FAKE_VF) && !fn[t->up])
			return -EINVAL;
		if ((t->kind == FAKE_ACS || t->kind == FAKE_BAR64) &&
		    !fn[t->id])
			return -EINVAL;
		if ((t->kind == FAKE_WINDOW || t->kind == FAKE_BAR64) &&
		    !fp->window.parent)
			return -EINVAL;
		switch (t->kind) {
		case FAKE_HOST:
			h = fake_host_add(fp, t->busnr, t->vendor, t->device,
					  t->class);
			if (!h)
				return -ENOMEM;
			h->domain += t->n;
			continue;
		case FAKE_RP00:
			h->next_slot = 0;
			fallthrough;
		case FAKE_RP:
			f = t->vendor ? fake_root_port_id(h, t->vendor, t->device) :
					fake_root_port(h);
			break;
		case FAKE_SWITCH:
			f = fake_switch(fn[t->up], t->n, &fn[t->id + 1]);
			break;
		case FAKE_EP:
			f = fake_endpoint(fn[t->up], t->n, &fn[t->id]);
			break;
		case FAKE_RCIEP:
			f = fake_fn_add(h, NULL, fake_next_devfn(h, NULL), false,
					PCI_EXP_TYPE_RC_END, t->vendor, t->device,
					t->class);
			break;
		case FAKE_VF:
			if (!IS_ENABLED(CONFIG_PCI_IOV))
				continue;
			f = fake_add_sriov(fn[t->up]);
			break;
		case FAKE_ACS:
			fake_add_acs(fn[t->id]);
			continue;
		case FAKE_WINDOW:
			fake_host_mem_window(h, fp->window.start,
					     resource_size(&fp->window),
					     fp->window_bus);
			continue;
		case FAKE_BAR64:
			fake_bar64(fn[t->id], fp->window_bus + t->at, t->size);
			continue;
		}
		if (!f)
			return -ENOMEM;
		fn[t->id] = f;
	}
	return 0;
}

/* Number the buses below @br depth first from @next; returns next free. */
static u8 fake_number_buses(struct fake_pci *fp, struct fake_fn *br, u8 next)
{
	struct fake_fn *fn;

	br->sec = next++;
	list_for_each_entry(fn, &fp->fns, node) {
		if (fn->up != br)
			continue;
		fn->bus = br->sec;
		if (fn->bridge)
			next = fake_number_buses(fp, fn, next);
	}
	br->sub = next - 1;
	fake_cfg_w8(br, PCI_PRIMARY_BUS, br->bus);
	fake_cfg_w8(br, PCI_SECONDARY_BUS, br->sec);
	fake_cfg_w8(br, PCI_SUBORDINATE_BUS, br->sub);
	return next;
}

/* Have the PCI core enumerate every fake host bridge. */
int fake_pci_scan(struct fake_pci *fp)
{
	struct fake_host *h;
	struct fake_fn *fn;
	int ret = 0;

	list_for_each_entry(h, &fp->hosts, node) {
		u8 next = h->busnr + 1;

		list_for_each_entry(fn, &fp->fns, node) {
			if (fn->host != h || fn->up)
				continue;
			fn->bus = h->busnr;
			if (fn->bridge)
				next = fake_number_buses(fp, fn, next);
		}
		h->busn.name = "fake PCI buses";
		h->busn.start = h->busnr;
		h->busn.end = next - 1;
		h->busn.flags = IORESOURCE_BUS;
	}

	pci_lock_rescan_remove();
	list_for_each_entry(h, &fp->hosts, node) {
		LIST_HEAD(resources);
		void *sysdata = NULL;

#ifdef CONFIG_X86
		h->sd.domain = h->domain;
		h->sd.node = NUMA_NO_NODE;
		sysdata = &h->sd;
#endif
		pci_add_resource(&resources, &h->busn);
		if (h->mem.flags)
			pci_add_resource_offset(&resources, &h->mem,
						h->mem_offset);
		h->bus = pci_scan_root_bus(NULL, h->busnr, &fake_pci_ops,
					   sysdata, &resources);
		if (!h->bus) {
			pci_free_resource_list(&resources);
			ret = -ENODEV;
			break;
		}
		h->bridge = to_pci_host_bridge(h->bus->bridge);
	}
	pci_unlock_rescan_remove();
	fp->scanned = true;
	if (ret)
		return ret;

	list_for_each_entry(fn, &fp->fns, node) {
		if (fn->pf)
			continue;
		fn->pdev = pci_get_slot(fn->up ? fn->up->pdev->subordinate :
					fn->host->bus, fn->devfn);
		if (!fn->pdev)
			return -ENODEV;
		pci_dev_put(fn->pdev);	/* it lives until fake_pci_destroy() */
		/* Whatever pci_enable_acs() did, the test decides. */
		fake_set_acs_ctrl(fn, 0);
	}
	list_for_each_entry(fn, &fp->fns, node) {
		if (!fn->pf)
			continue;
		if (!IS_ENABLED(CONFIG_PCI_IOV) || !fn->pf->pdev->is_physfn)
			return -EOPNOTSUPP;
		ret = pci_iov_add_virtfn(fn->pf->pdev, 0);
		if (ret)
			return ret;
		fn->pdev = pci_get_slot(fn->pf->pdev->bus, fn->devfn);
		if (!fn->pdev)
			return -ENODEV;
		pci_dev_put(fn->pdev);
	}
	return 0;
}

/* Remove every fake device and host bridge, and free the description. */
void fake_pci_destroy(struct fake_pci *fp)
{
	struct fake_host *h, *htmp;
	struct fake_fn *fn, *tmp;

	if (!fp)
		return;
	/* Removing a device takes the rescan lock (7.3 asserts it). */
	pci_lock_rescan_remove();
	list_for_each_entry(fn, &fp->fns, node)
		if (fn->pf && fn->pdev)
			pci_iov_remove_virtfn(fn->pf->pdev, 0);
	list_for_each_entry(h, &fp->hosts, node) {
		if (!h->bus)
			continue;
		pci_stop_root_bus(h->bus);
		pci_remove_root_bus(h->bus);
		put_device(&h->bridge->dev);
	}
	pci_unlock_rescan_remove();

	list_for_each_entry_safe(fn, tmp, &fp->fns, node) {
		list_del(&fn->node);
		kfree(fn);
	}
	list_for_each_entry_safe(h, htmp, &fp->hosts, node) {
		list_del(&h->node);
		kfree(h);
	}
	if (fp->window.parent)
		release_resource(&fp->window);
	fake_pci_live = NULL;
	kfree(fp);
}

/*
 * A new hierarchy built from the @lines lines of @t (functions stored in
 * @fn) and scanned. A @window of more than 0 bytes is first reserved from
 * iomem above 4 GiB, aligned to its size, for the FAKE_WINDOW and
 * FAKE_BAR64 lines; the bus sees it at @bus, or at its CPU address when
 * @bus is FAKE_BUS_IS_CPU. The hierarchy goes in *@fpp (NULL on failure);
 * fake_pci_destroy() releases it all.
 */
int fake_pci_table(struct fake_pci **fpp,
		   const struct fake_line *t, int lines,
		   struct fake_fn **fn,
		   resource_size_t window,
		   pci_bus_addr_t bus)
{
	struct fake_pci *fp = fake_pci_create();
	int ret = 0;

	*fpp = NULL;
	if (!fp)
		return -ENOMEM;
	if (window) {
		fp->window.name = "fake PCI BARs";
		fp->window.flags = IORESOURCE_MEM;
		ret = allocate_resource(&iomem_resource, &fp->window, window,
					SZ_4G, iomem_resource.end, window,
					NULL, NULL);
		fp->window_bus = bus == FAKE_BUS_IS_CPU ? fp->window.start :
							  bus;
	}
	if (!ret)
		ret = fake_build(fp, t, lines, fn);
	if (!ret)
		ret = fake_pci_scan(fp);
	if (ret)
		fake_pci_destroy(fp);
	else
		*fpp = fp;
	return ret;
}
