/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PCI peer-to-peer DMA: what the files of the core share.
 *
 * The core is one file per role:
 *  host-bridge.c  which host bridges forward P2P (the built-in table, kept
 *                 current by a bus notifier), and the verdict for a route
 *                 through them
 *  host-bridge-policy.c
 *                 the administrator's pci_p2pdma.host_bridges= rules
 *  route.c        how a client reaches a provider: ACS, distance, the
 *                 per-provider route cache, the map type of a page
 *  provider.c     registering BAR ranges, publishing, finding a provider,
 *                 and the unbind that revokes and waits
 *  pool.c         the genalloc pool, the per-CPU cache, the allocation API
 *  clear.c        which pages may hold data (dirty), and their verified
 *                 clearing: the only writes to device memory
 *  sysfs.c        /sys/bus/pci/devices/.../p2pmem/
 *  mmap.c         the mmap of p2pmem/allocate: its memory, faults, revocation
 *  configfs.c     the helpers for nvmet's configfs "p2pmem" attribute
 *  debugfs.c      /sys/kernel/debug/p2pdma/routes
 *  dmabuf.c       P2P memory exported as a dma-buf
 *  dmabuf-revoke.c
 *                 revoking those buffers when their provider unbinds
 *  chardev.c      /dev/p2pmem: the uAPI that exports it to userspace
 * Nothing here is exported; include/linux/pci-p2pdma.h is the public API.
 *
 * Which file may call which: a file calls only files below it, so no two
 * files call each other, directly or around a circle (make check's
 * "layers" step, scripts/check-layers.py, fails on one):
 *  chardev.c, configfs.c, debugfs.c
 *  sysfs.c             calls mmap.c
 *  provider.c          calls route.c, mmap.c, dmabuf-revoke.c, pool.c
 *  mmap.c              calls pool.c, clear.c
 *  dmabuf.c            calls dmabuf-revoke.c, pool.c, clear.c
 *  dmabuf-revoke.c     calls pool.c
 *  pool.c              calls clear.c
 *  route.c             calls host-bridge.c, host-bridge-policy.c
 *  host-bridge.c       calls host-bridge-policy.c
 *  host-bridge-policy.c, clear.c  call no other file
 * route.c owns the verdict for a pair and asks the other two; it also
 * registers pci_p2pdma.host_bridges=, so that a change of the rules can
 * drop its cached verdicts and have host-bridge.c name what they risk
 * without the rules' file calling up.
 */
#ifndef _DRIVERS_PCI_P2PDMA_P2PDMA_H
#define _DRIVERS_PCI_P2PDMA_P2PDMA_H

#include <kunit/visibility.h>
#include <linux/completion.h>
#include <linux/dma-map-ops.h>
#include <linux/genalloc.h>
#include <linux/kref.h>
#include <linux/memremap.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/percpu.h>
#include <linux/seqlock.h>
#include <linux/workqueue.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

/*
 * Sizes of the per-CPU allocation cache: 1 to 256 pages in powers of two
 * (4 KiB to 1 MiB with 4 KiB pages). Every CPU keeps up to P2P_CACHE_DEPTH
 * allocations of each size up to 16 pages, and one of each larger size:
 * at most 1.9 MiB per CPU of the larger ones.
 */
#define P2P_CACHE_CLASSES	9
#define P2P_CACHE_DEPTH		8
#define P2P_CACHE_SMALL		5	/* classes with P2P_CACHE_DEPTH entries */
/* Pages back from userspace that a CPU gathers before the pool sees them. */
#define P2P_RUN_PAGES		512

/*
 * Memory recently freed by kernel users on one CPU, handed to the next
 * allocation of the same size on that CPU without touching the pool. It
 * counts as available. The lock is only ever contended by a drain.
 */
struct p2p_cpu_cache {
	spinlock_t lock;		/* this CPU, and a drain */
	unsigned long bytes;		/* held here, counted as available */
	unsigned int count[P2P_CACHE_CLASSES];
	unsigned long addr[P2P_CACHE_CLASSES][P2P_CACHE_DEPTH];
	/* Pages back from userspace, not yet in the pool: p2p_run_add(). */
	unsigned long run_start;
	unsigned long run_pages;
};

/* Per-provider state, reached through pdev->p2pdma under RCU. */
struct pci_p2pdma {
	/*
	 * The providers of the memory BARs (pcim_p2pdma_provider()), set
	 * with the state and unchanged after; owner NULL for other BARs.
	 */
	struct p2pdma_provider mem[PCI_STD_NUM_BARS];
	struct gen_pool *pool;	/* free P2P memory; chunk owner = p2p_region */
	/*
	 * p2p_region, added at the tail under p2p_setup_lock and never
	 * unlinked: devres frees a region while it is still linked. That is
	 * safe by devres's LIFO order alone: regions go in the reverse of
	 * their registration, each only after memunmap_pages() saw its last
	 * page, so every freed region lies after every live one, and a walk
	 * looking up a live page's address stops before reaching it. The
	 * list goes with this state, released after all of them.
	 */
	struct list_head regions;
	struct p2p_cpu_cache __percpu *cache;
	struct xarray routes;	/* client key -> packed route verdict */
	struct pci_dev *pdev;	/* the provider; not referenced */
	/* In the published list (provider.c) iff @published; under its lock. */
	struct list_head published_node;
	bool published;		/* offered to orchestrators and nvmet */
	bool closing;		/* unbind started: hand out nothing more */
	bool sysfs_added;	/* the p2pmem attribute group exists */
};

/*
 * One range of a BAR registered with pci_p2pdma_add_resource(). A set bit
 * in @dirty says the page may hold someone's data; a page that is free in
 * the pool with its bit clear reads as zero. Bits change only for pages
 * their changer holds (allocated, or being freed), one word at a time
 * with an atomic operation, since a word covers pages of other owners.
 */
struct p2p_region {
	struct dev_pagemap pgmap;
	struct pci_dev *provider;
	u64 bus_offset;		/* PCI bus address minus CPU physical address */
	struct p2pdma_provider *mem;	/* its BAR's, in the provider's state */
	struct list_head node;	/* in pci_p2pdma.regions */
	unsigned long kaddr;	/* kernel address of the first page */
	unsigned long npages;
	unsigned long *dirty;
};

static inline struct p2p_region *to_p2p_region(struct dev_pagemap *pgmap)
{
	return container_of(pgmap, struct p2p_region, pgmap);
}

/* The range a P2P page belongs to: the one place that reads its pgmap. */
static inline struct p2p_region *p2p_page_region(const struct page *page)
{
	return to_p2p_region(page_pgmap(page));
}

/* Why a client cannot use a provider's memory; P2P_REACHABLE if it can. */
enum p2p_refusal {
	P2P_REACHABLE,
	P2P_NOT_PCI,			/* no PCI function at or above the client */
	P2P_HOST_BRIDGE_UNKNOWN,	/* host bridge not known to route P2P */
	P2P_HOST_BRIDGES_DIFFER,	/* host bridge routes P2P only within itself */
	P2P_HOST_BRIDGE_DENIED,		/* a pci_p2pdma.host_bridges rule denies it */
};

struct p2p_route {
	enum pci_p2pdma_map_type map;
	unsigned int distance;
	enum p2p_refusal why;
	bool unsure;		/* a config read gave all ones: do not cache */
	bool override;		/* a pci_p2pdma.host_bridges rule decided */
	struct pci_dev *acs_dev;	/* redirecting function; not referenced */
	struct pci_host_bridge *host_bridge;	/* the one refusing, if any */
};

/*
 * A route verdict packed into an xarray value entry. The map type's field
 * holds every value of enum pci_p2pdma_map_type (p2p_route_get_pci()
 * checks at build time).
 */
#define P2P_PACK_MAP		GENMASK(2, 0)
#define P2P_PACK_WHY		GENMASK(5, 3)
#define P2P_PACK_OVERRIDE	BIT(6)
#define P2P_PACK_DIST_SHIFT	7

/*
 * Extra distance for each host bridge a route goes through, so that every
 * direct route is preferred over every route through the root complex.
 */
#define P2P_HOST_BRIDGE_COST	1024

/*
 * A walk needs no lock of its own: regions are added under p2p_setup_lock
 * and never unlinked (see pci_p2pdma.regions). A walk over every region
 * may run only before the unbind's close action; one that looks up the
 * region of a page its caller holds may run until that page is freed.
 */
#define for_each_p2p_region(region, p2p) \
	list_for_each_entry_rcu(region, &(p2p)->regions, node, true)

/*
 * The administrator's rules, first match wins: "allow:SEL" or "deny:SEL",
 * comma-separated, where SEL is "all", DDDD:BB (PCI domain and root bus
 * number of the host bridge) or VVVV:DDDD (vendor and device ID of the
 * function that identifies it). A host bridge no rule matches gets the
 * built-in policy. Parsed into fixed storage: the command line is parsed
 * before the slab allocator exists. Read in any context under the
 * seqlock; every write also bumps its sequence, which the route caches
 * use to drop verdicts worked out under an older policy.
 */
#define P2P_POLICY_MAX_RULES	16

enum p2p_rule_sel {
	P2P_SEL_ALL,
	P2P_SEL_ROOT_BUS,	/* a = domain, b = bus */
	P2P_SEL_ID,		/* a = vendor, b = device */
};

struct p2p_hb_rule {
	bool allow;
	u8 sel;
	u32 a, b;
};

struct p2p_hb_policy {
	unsigned int n;
	struct p2p_hb_rule rule[P2P_POLICY_MAX_RULES];
};

/* A root complex known to route P2P: see p2p_routing_host_bridges[]. */
struct p2p_known_host_bridge {
	u16 vendor;
	u16 device;
	u8 flags;
};

#define P2P_HB_WITHIN_ITSELF	BIT(0)	/* not to another host bridge */
#define P2P_HB_ANY_DEVICE	BIT(1)	/* every device ID of the vendor */
#define P2P_HB_AFTER_612	BIT(2)	/* added upstream after Linux 6.12 */

/* host-bridge.c */
enum p2p_refusal p2p_host_bridge_verdict(struct pci_host_bridge *a,
					 struct pci_host_bridge *b,
					 struct p2p_route *r);
u32 p2p_host_bridge_id(struct pci_host_bridge *hb);
void p2p_check_risks(void);

/* host-bridge-policy.c */
bool p2p_policy_match(struct pci_host_bridge *hb, u32 id,
		      struct p2p_hb_rule *rule);
int p2p_policy_install(const char *val);
int p2p_policy_get(char *buf, const struct kernel_param *kp);
int p2p_policy_print(const struct p2p_hb_policy *pol, char *buf, size_t size);
unsigned int p2p_policy_seq_begin(void);
bool p2p_policy_seq_retry(unsigned int seq);
bool p2p_policy_booted(void);
void p2p_policy_boot(void);

/* route.c */
void p2p_route_get_pci(struct pci_dev *provider, struct pci_dev *cdev,
		       struct p2p_route *r, bool fresh);
void p2p_routes_forget_all(void);
void p2p_route_explain(const struct p2p_route *r, char *buf, size_t len);
const char *p2p_map_type_name(enum pci_p2pdma_map_type map);

/* provider.c */
extern struct mutex p2p_setup_lock;
void p2p_page_free(struct page *page);
bool pci_has_p2pmem(struct pci_dev *pdev);

/* clear.c */
struct p2p_region *p2p_region_of(struct pci_p2pdma *p2p, unsigned long addr);
unsigned long p2p_page_index(struct p2p_region *region, unsigned long addr);
void p2p_mark(struct p2p_region *region, unsigned long first,
	      unsigned long n, bool dirty);
int p2p_clean(struct p2p_region *region, unsigned long first,
	      unsigned long n);
long p2p_clean_batch(void *kaddr, unsigned long npages, unsigned long done);

/* pool.c */
void p2p_run_add(struct pci_p2pdma *p2p, struct p2p_region *region,
		 unsigned long addr, bool dirty);
void p2p_runs_flush(struct pci_p2pdma *p2p);
bool p2p_cache_drain(struct pci_p2pdma *p2p);
size_t p2p_available(struct pci_p2pdma *p2p);
void *p2p_alloc(struct pci_dev *pdev, size_t size, unsigned long refs,
		bool cached);
void *p2p_alloc_folded(struct pci_dev *pdev, size_t size);
void p2p_pages_hand_out(void *kaddr, unsigned long npages);
void p2p_pages_take_back(void *kaddr, unsigned long npages);
void p2p_free_untouched(void *kaddr, unsigned long npages);
/*
 * The order of the folios a holder that keeps its pages (a dma-buf) gets
 * its memory in where the memory is aligned to it: PMD order, so that a
 * user mapping maps 2 MiB at a time (vmf_insert_folio_pmd()); 0 (a page
 * at a time) without transparent huge pages, which nothing would map.
 */
#define P2P_FOLD_ORDER	\
	(IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) ? PMD_ORDER : 0)
void p2p_folios_hand_out(void *kaddr, unsigned long npages);
void p2p_folios_take_back(void *kaddr, unsigned long npages);

/*
 * An exported buffer (dmabuf.c), listed while it holds memory
 * (dmabuf-revoke.c). The buffer lives by its own reference count, not by the dma-buf's file
 * (a dentry can outlive its file): the dma-buf holds one reference until
 * its release, a revocation one while it revokes, a release that waits
 * for its memory one until it gave it back (dmabuf-revoke.c).
 */
#ifdef CONFIG_PCI_P2PDMA_DMABUF
struct p2p_dmabuf {
	struct kref ref;
	struct mutex lock;	/* guards @dmabuf and @fence against release */
	struct dma_buf *dmabuf;	/* NULL once released */
	struct dma_fence *fence;	/* queued when it was released, or NULL */
	/* The dma-buf's inode, held: its i_mapping has the user mappings. */
	struct inode *inode;
	struct pci_dev *provider;	/* referenced until the last put */
	void *kaddr;		/* NULL once the memory went back to the pool */
	size_t size;
	/* In p2p_dmabufs while it holds memory (under p2p_dmabuf_lock). */
	struct list_head node;
	/*
	 * Whoever claims it first gives the memory back: its release, or a
	 * revocation (under p2p_dmabuf_lock). @gone completes when it did.
	 */
	bool claimed;
	struct completion gone;
	struct list_head revoke_node;	/* on a revocation's list */
	bool revoked;		/* set under the reservation lock */
	atomic_t mapped;	/* sg_tables given out and not yet unmapped */
	struct work_struct retire;	/* a release's wait for its memory */
};

/* dmabuf-revoke.c */
struct dma_buf_export_info;
struct dma_resv;
bool p2p_dmabuf_provider_open(struct pci_dev *pdev);
struct dma_buf *p2p_dmabuf_publish(struct p2p_dmabuf *buf,
				   const struct dma_buf_export_info *exp_info);
void p2p_dmabuf_unmapped_one(struct p2p_dmabuf *buf);
void p2p_dmabuf_revoke(struct pci_dev *pdev);
struct dma_fence *p2p_dmabuf_resv_fences(struct dma_resv *resv);
void p2p_dmabuf_retire(struct p2p_dmabuf *buf);
void p2p_dmabuf_put(struct p2p_dmabuf *buf);
#else
static inline void p2p_dmabuf_revoke(struct pci_dev *pdev)
{
}
#endif

/* sysfs.c */
extern const struct attribute_group p2pmem_group;

/* mmap.c */
/*
 * Pages cleared at a time (p2p_clean_batch()), and mapped at a time by a
 * fault of an mmap() of "allocate": 2 MiB.
 */
#define P2P_MAP_BATCH	(SZ_2M / PAGE_SIZE)
int p2p_mapping_mmap(struct pci_dev *pdev, struct vm_area_struct *vma);
void p2p_mappings_revoke(struct pci_dev *pdev);

#if IS_ENABLED(CONFIG_KUNIT)
/* Reached only by the KUnit suites (VISIBLE_IF_KUNIT). */
extern const struct p2p_known_host_bridge p2p_routing_host_bridges[];
bool p2p_cpu_routes_p2p(void);
int p2p_known_host_bridge(struct pci_host_bridge *hb);
int p2p_host_bridge_index(struct pci_dev *dev);
int p2p_policy_set(const char *val, const struct kernel_param *kp);
void p2p_route_compute(struct pci_dev *provider, struct pci_dev *client,
		       struct p2p_route *r);
unsigned long p2p_client_key(struct pci_dev *client);
void p2p_route_lookup(struct pci_dev *provider, struct device *client,
		      struct p2p_route *r);
void p2p_route_reason(struct pci_dev *provider, struct device *client,
		      char *buf, size_t len);
void p2p_close_start(struct pci_p2pdma *p2p);
void p2p_provider_close(void *data);
struct pci_p2pdma *p2p_provider_setup(struct pci_dev *pdev);
int p2p_region_bitmap(struct device *dev, struct p2p_region *region,
		      size_t size);
int p2p_region_add(struct pci_p2pdma *p2p, struct p2p_region *region,
		   void *kaddr, u64 bus, int nid);
u64 p2p_read_back(const u64 *last);
struct p2pmem_export;
struct dma_buf *p2pmem_export_req(const struct p2pmem_export *req);
#endif

#endif /* _DRIVERS_PCI_P2PDMA_P2PDMA_H */
