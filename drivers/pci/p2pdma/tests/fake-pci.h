/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fake PCI hierarchies for the P2PDMA KUnit suites.
 *
 * A test describes host bridges, root ports, switches (an upstream port
 * and its downstream ports), endpoints, multi-function devices and SR-IOV
 * physical functions; fake_pci_scan() numbers the buses depth first and
 * lets the PCI core scan each host bridge through fake_pci_ops, which
 * serves config space from memory. The result is ordinary struct pci_dev
 * objects on pci_bus_type (so lookups by name and for_each_pci_dev() find
 * them) that no driver binds to. fake_pci_destroy() removes and frees it
 * all. Only one fake hierarchy exists at a time.
 *
 * It uses only the PCI core, so that the suites compiled on their own
 * (the black-box suite and the route fuzzing) use it as well: fake-pci.c,
 * an object of its own whenever a KUnit suite of P2PDMA is built.
 */
#ifndef _P2PDMA_KUNIT_FAKE_PCI_H
#define _P2PDMA_KUNIT_FAKE_PCI_H

#include <linux/bitmap.h>
#include <linux/list.h>
#include <linux/pci.h>

/* PCI domain of every fake host bridge (x86; elsewhere the core picks). */
#define FAKE_PCI_DOMAIN		0x7e57
#define FAKE_VENDOR		0x1de5	/* endpoints, ports, unknown hosts */
#define FAKE_BAR_SIZE		SZ_1M
#define FAKE_BAR_BASE		0xd0000000u
#define FAKE_EXT_CAP		PCI_CFG_SPACE_SIZE
#define FAKE_EXP_CAP		0x40
/* Every ACS capability bit; the control register starts out 0. */
#define FAKE_ACS_CAP_ALL	(PCI_ACS_SV | PCI_ACS_TB | PCI_ACS_RR | \
				 PCI_ACS_CR | PCI_ACS_UF | PCI_ACS_EC | \
				 PCI_ACS_DT)

struct fake_pci;

struct fake_host {
	struct list_head node;
	struct fake_pci *fp;
#ifdef CONFIG_X86
	struct pci_sysdata sd;
#endif
	struct resource busn;
	struct resource mem;	/* memory window, if mem.flags is set */
	resource_size_t mem_offset;	/* CPU address minus bus address */
	struct pci_bus *bus;
	struct pci_host_bridge *bridge;
	int domain;	/* x86: FAKE_PCI_DOMAIN, or a second domain after it */
	u8 busnr;
	u8 next_slot;
};

struct fake_fn {
	struct list_head node;
	struct fake_host *host;
	struct fake_fn *up;	/* bridge above; NULL on the root bus */
	struct fake_fn *pf;	/* for a VF: its PF */
	struct pci_dev *pdev;	/* after fake_pci_scan(); not referenced */
	u8 devfn;
	u8 bus;			/* assigned by fake_pci_scan() */
	u8 sec, sub;		/* bridges: secondary and subordinate bus */
	u8 next_slot;		/* bridges: next device number below */
	u16 next_ext;		/* where the next extended capability goes */
	u16 last_ext;		/* the last one added, to link the next */
	u16 acs;		/* ACS capability offset, 0 if none */
	u16 sriov;		/* SR-IOV capability offset, 0 if none */
	bool bridge;
	bool gone;		/* reads all ones: removed, or in D3cold */
	u32 bar0_size;
	DECLARE_BITMAP(wmask, PCI_CFG_SPACE_EXP_SIZE);
	u8 cfg[PCI_CFG_SPACE_EXP_SIZE];
};

struct fake_pci {
	struct list_head hosts;
	struct list_head fns;
	atomic_t reads;		/* config reads served, for cache tests */
	u32 next_bar;
	bool scanned;
	struct resource window;	/* CPU range fake_pci_table() reserved */
	pci_bus_addr_t window_bus;	/* the bus address of its start */
};

/*
 * A hierarchy as a table. Each line adds what its kind says and stores
 * the function it adds at index @id of the caller's array; @up is the
 * index of the bridge above (of the PF, for a VF). Lines run in order,
 * and devices get their numbers in that order.
 */
enum fake_kind {
	FAKE_HOST,	/* root bus @busnr; 00.0 is @vendor:@device, @class;
			 * in PCI domain FAKE_PCI_DOMAIN + @n (x86)
			 */
	FAKE_RP,	/* root port of the last host (@vendor:@device if set) */
	FAKE_RP00,	/* the same, at 00.0 of its root bus */
	FAKE_SWITCH,	/* upstream port @id, downstream ports @id + 1.. @id + @n */
	FAKE_EP,	/* endpoint of @n functions, @id.. @id + @n - 1 */
	FAKE_RCIEP,	/* RC integrated endpoint @vendor:@device, @class */
	FAKE_VF,	/* the VF of PF @up (no line without CONFIG_PCI_IOV) */
	FAKE_ACS,	/* an ACS capability for @id, built before */
	FAKE_WINDOW,	/* the last host decodes the reserved window */
	FAKE_BAR64,	/* BAR 0 of @id: 64-bit, @size bytes, @at into the window */
};

struct fake_line {
	enum fake_kind kind;
	int id, up;
	u8 n, busnr;
	u16 vendor, device;
	u32 class;
	u64 at;
	u32 size;
};

#define FAKE_HOST_LINE(bus, v, d, c)	{ .kind = FAKE_HOST, .busnr = (bus), \
					  .vendor = (v), .device = (d), .class = (c) }
/* The same in the PCI domain after FAKE_PCI_DOMAIN: bus numbers may repeat. */
#define FAKE_HOST2_LINE(bus, v, d, c)	{ .kind = FAKE_HOST, .busnr = (bus), \
					  .vendor = (v), .device = (d), .class = (c), \
					  .n = 1 }
#define FAKE_RP_LINE(i)			{ .kind = FAKE_RP, .id = (i) }
#define FAKE_RP_ID_LINE(i, v, d)	{ .kind = FAKE_RP, .id = (i), \
					  .vendor = (v), .device = (d) }
#define FAKE_SWITCH_LINE(i, u, ndsp)	{ .kind = FAKE_SWITCH, .id = (i), .up = (u), \
					  .n = (ndsp) }
#define FAKE_EP_LINE(i, u, nfn)		{ .kind = FAKE_EP, .id = (i), .up = (u), \
					  .n = (nfn) }
#define FAKE_ACS_LINE(i)		{ .kind = FAKE_ACS, .id = (i) }
#define FAKE_WINDOW_LINE		{ .kind = FAKE_WINDOW }
#define FAKE_BAR64_LINE(i, a, s)	{ .kind = FAKE_BAR64, .id = (i), .at = (a), \
					  .size = (s) }

/* fake_pci_table()'s @bus for a window seen at its own CPU address. */
#define FAKE_BUS_IS_CPU		((pci_bus_addr_t)-1)

struct fake_pci *fake_pci_create(void);
struct fake_host *fake_host_add(struct fake_pci *fp, u8 busnr, u16 vendor,
				u16 device, u32 class);
struct fake_fn *fake_root_port(struct fake_host *h);
struct fake_fn *fake_root_port_id(struct fake_host *h, u16 vendor, u16 device);
struct fake_fn *fake_switch(struct fake_fn *up, int n, struct fake_fn **dsp);
struct fake_fn *fake_endpoint(struct fake_fn *up, int nfn,
			      struct fake_fn **fns);
void fake_bar64(struct fake_fn *fn, u64 bus, u32 size);
void fake_add_acs(struct fake_fn *fn);
void fake_set_acs_ctrl(struct fake_fn *fn, u16 ctrl);
struct fake_fn *fake_add_sriov(struct fake_fn *pf);
int fake_build(struct fake_pci *fp, const struct fake_line *t, int lines,
	       struct fake_fn **fn);
int fake_pci_scan(struct fake_pci *fp);
void fake_pci_destroy(struct fake_pci *fp);
int fake_pci_table(struct fake_pci **fpp, const struct fake_line *t, int lines,
		   struct fake_fn **fn, resource_size_t window,
		   pci_bus_addr_t bus);

#endif /* _P2PDMA_KUNIT_FAKE_PCI_H */
