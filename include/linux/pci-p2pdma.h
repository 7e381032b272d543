/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PCI peer-to-peer DMA: one PCI device moves data straight into BAR memory
 * of another. See Documentation/driver-api/pci/p2pdma.rst for the roles
 * (provider, orchestrator, client) and the rules that decide which devices
 * may talk to each other.
 */
#ifndef _LINUX_PCI_P2PDMA_H
#define _LINUX_PCI_P2PDMA_H

#include <linux/memremap.h>
#include <linux/pci.h>

struct dma_buf;
struct scatterlist;

/**
 * enum pci_p2pdma_map_type - the way a device gets to some memory
 * @PCI_P2PDMA_MAP_UNKNOWN: zero, so a zeroed &struct pci_p2pdma_map_state
 *	says nothing is known yet
 * @PCI_P2PDMA_MAP_BUS_ADDR: the device and the memory meet below a bridge
 *	that routes by address (PCIe r6.0 sec 1.3.3): the device is given the
 *	bus address, pci_p2pdma_bus_addr_map(), and nothing is unmapped
 * @PCI_P2PDMA_MAP_THRU_HOST_BRIDGE: the request goes up through a root
 *	complex known or allowed to forward it: the DMA API maps the CPU
 *	physical address (to an IOVA where an IOMMU translates)
 * @PCI_P2PDMA_MAP_NOT_SUPPORTED: no way: a mapping of it fails
 * @PCI_P2PDMA_MAP_NONE: the memory is ordinary memory, not P2P memory
 *
 * Each value is written out: they are the numbers callers were built with
 * before this core, so a map type printed or stored reads the same on
 * either core.
 */
enum pci_p2pdma_map_type {
	PCI_P2PDMA_MAP_UNKNOWN		= 0,
	PCI_P2PDMA_MAP_BUS_ADDR		= 3,
	PCI_P2PDMA_MAP_THRU_HOST_BRIDGE	= 4,
	PCI_P2PDMA_MAP_NOT_SUPPORTED	= 2,
	PCI_P2PDMA_MAP_NONE		= 1,
};

/*
 * A memory BAR of a PCI function seen as P2P memory: what
 * pcim_p2pdma_provider() returns, valid while the function's driver
 * stays bound. Both fields are read by callers.
 */
struct p2pdma_provider {
	/** @owner: the PCI function's struct device */
	struct device *owner;
	/**
	 * @bus_offset: PCI bus address minus CPU physical address inside the
	 * BAR; not zero where the host bridge translates
	 * (pci_add_resource_offset())
	 */
	u64 bus_offset;
};

#ifdef CONFIG_PCI_P2PDMA
/* Provider: a BAR for P2P access without pages (an MMIO dma-buf) */
int pcim_p2pdma_init(struct pci_dev *pdev);
struct p2pdma_provider *pcim_p2pdma_provider(struct pci_dev *pdev, int bar);
enum pci_p2pdma_map_type pci_p2pdma_map_type(struct p2pdma_provider *provider,
					     struct device *dev);

/* Orchestrator: choose memory that every client can reach */
int pci_p2pdma_distance_many(struct pci_dev *provider, struct device **clients,
			     int num_clients, bool verbose);
struct pci_dev *pci_p2pmem_find_many(struct device **clients, int num_clients);

/* configfs helpers (the nvmet namespace "p2pmem" attribute) */
int pci_p2pdma_enable_store(const char *page, struct pci_dev **p2p_dev,
			    bool *use_p2pdma);
ssize_t pci_p2pdma_enable_show(char *page, struct pci_dev *p2p_dev,
			       bool use_p2pdma);

/* Allocation from a provider's pool */
void *pci_alloc_p2pmem(struct pci_dev *pdev, size_t size);
void pci_free_p2pmem(struct pci_dev *pdev, void *addr, size_t size);
struct scatterlist *pci_p2pmem_alloc_sgl(struct pci_dev *pdev,
					 unsigned int *nents, u32 length);
void pci_p2pmem_free_sgl(struct pci_dev *pdev, struct scatterlist *sgl);
pci_bus_addr_t pci_p2pmem_virt_to_bus(struct pci_dev *pdev, void *addr);

/* Provider: register and offer BAR memory */
int pci_p2pdma_add_resource(struct pci_dev *pdev, int bar, size_t size,
			    u64 offset);
void pci_p2pmem_publish(struct pci_dev *pdev, bool publish);
#else /* !CONFIG_PCI_P2PDMA */
/*
 * Without P2PDMA support every request fails the way a caller would see it
 * on a system with no usable provider: nothing registers, nothing is
 * found, nothing is allocated, and configfs reads "none".
 */
static inline int pci_p2pdma_enable_store(const char *page,
					  struct pci_dev **p2p_dev,
					  bool *use_p2pdma)
{
	*use_p2pdma = false;
	return 0;
}

static inline int pci_p2pdma_add_resource(struct pci_dev *pdev, int bar,
					  size_t size, u64 offset)
{
	return -EOPNOTSUPP;
}

static inline int pcim_p2pdma_init(struct pci_dev *pdev)
{
	return -EOPNOTSUPP;
}

static inline struct p2pdma_provider *pcim_p2pdma_provider(struct pci_dev *pdev,
							   int bar)
{
	return NULL;
}

static inline enum pci_p2pdma_map_type
pci_p2pdma_map_type(struct p2pdma_provider *provider, struct device *dev)
{
	return PCI_P2PDMA_MAP_NOT_SUPPORTED;
}

static inline void pci_p2pmem_publish(struct pci_dev *pdev, bool publish)
{
}

static inline struct pci_dev *pci_p2pmem_find_many(struct device **clients,
						   int num_clients)
{
	return NULL;
}

static inline void pci_free_p2pmem(struct pci_dev *pdev, void *addr,
				   size_t size)
{
}

static inline int pci_p2pdma_distance_many(struct pci_dev *provider,
					   struct device **clients,
					   int num_clients, bool verbose)
{
	return -1;
}

static inline void pci_p2pmem_free_sgl(struct pci_dev *pdev,
				       struct scatterlist *sgl)
{
}

static inline void *pci_alloc_p2pmem(struct pci_dev *pdev, size_t size)
{
	return NULL;
}

static inline pci_bus_addr_t pci_p2pmem_virt_to_bus(struct pci_dev *pdev,
						    void *addr)
{
	return 0;
}

static inline struct scatterlist *pci_p2pmem_alloc_sgl(struct pci_dev *pdev,
						       unsigned int *nents,
						       u32 length)
{
	return NULL;
}

static inline ssize_t pci_p2pdma_enable_show(char *page,
					     struct pci_dev *p2p_dev,
					     bool use_p2pdma)
{
	return sprintf(page, "none\n");
}
#endif /* CONFIG_PCI_P2PDMA */

#ifdef CONFIG_PCI_P2PDMA_DMABUF
/* Exporter: P2P memory as a revocable dma-buf (for kernel importers) */
struct dma_buf *pci_p2pmem_export(struct pci_dev *provider, size_t size,
				  int flags);
#else
static inline struct dma_buf *pci_p2pmem_export(struct pci_dev *provider,
						size_t size, int flags)
{
	return ERR_PTR(-EOPNOTSUPP);
}
#endif

/**
 * pci_p2pdma_bus_addr_map() - the PCI bus address of a CPU physical address
 * @provider: the BAR's provider (pcim_p2pdma_provider())
 * @paddr: a CPU physical address inside that BAR
 *
 * For a client that pci_p2pdma_map_type() gave %PCI_P2PDMA_MAP_BUS_ADDR:
 * the address to program it with (PCIe r6.0 sec 1.3.3: a switch routes the
 * request by this address). No check that @paddr lies in the BAR.
 *
 * Context: any.
 *
 * Return: the bus address.
 */
static inline dma_addr_t pci_p2pdma_bus_addr_map(struct p2pdma_provider *provider,
						 phys_addr_t paddr)
{
	return paddr + provider->bus_offset;
}

struct pci_p2pdma_map_state;
enum pci_p2pdma_map_type
__pci_p2pdma_update_state(struct pci_p2pdma_map_state *state,
			  struct device *dev, struct page *page);

/**
 * struct pci_p2pdma_map_state - a mapping loop's memory of the last P2P page
 * @map: the map type found for that page's provider and the mapping device
 * @mem: that provider, which pci_p2pdma_bus_addr_map() takes
 *
 * Start each mapping with a zeroed one: %PCI_P2PDMA_MAP_UNKNOWN in @map
 * makes the first P2P page look its provider up; later pages of the same
 * provider reuse @map.
 */
struct pci_p2pdma_map_state {
	enum pci_p2pdma_map_type map;
	struct p2pdma_provider *mem;
};

/**
 * pci_p2pdma_state() - the map type of one page of a DMA mapping
 * @state: kept by the caller across the pages of the mapping
 * @dev: the device that will be given the page's DMA address
 * @page: the page
 *
 * Asked page by page by the DMA mapping code (dma-direct, dma-iommu, the
 * block layer, hmm). For %PCI_P2PDMA_MAP_BUS_ADDR the caller programs
 * @dev with pci_p2pdma_bus_addr_map(@state->mem, the page's address).
 *
 * Context: any, including atomic; does not sleep.
 *
 * Return: %PCI_P2PDMA_MAP_NONE for a page that is not P2P memory; for P2P
 * memory its map type for @dev, %PCI_P2PDMA_MAP_NOT_SUPPORTED also when
 * @dev is not a PCI function.
 */
static inline enum pci_p2pdma_map_type
pci_p2pdma_state(struct pci_p2pdma_map_state *state, struct device *dev,
		 struct page *page)
{
	/* RAM and other ZONE_DEVICE memory: the caller's own business. */
	return IS_ENABLED(CONFIG_PCI_P2PDMA) && is_pci_p2pdma_page(page) ?
	       __pci_p2pdma_update_state(state, dev, page) :
	       PCI_P2PDMA_MAP_NONE;
}

/*
 * Single-client forms of the two orchestrator queries, used by drivers
 * that only ever pair one client with a provider (nvmet, amdgpu, xe,
 * habanalabs).
 */

/**
 * pci_p2pdma_distance() - how far a single client is from a provider
 * @provider: PCI device that owns the P2P memory
 * @client: device that would DMA to or from that memory (NULL reaches
 *	nothing)
 * @verbose: log one line naming both devices if the pair is refused
 *
 * See pci_p2pdma_distance_many() for the meaning of the result and the
 * calling context.
 *
 * Return: the distance (>= 0), or -1 if @client is NULL or cannot reach
 * @provider.
 */
static inline int pci_p2pdma_distance(struct pci_dev *provider,
				      struct device *client, bool verbose)
{
	struct device *only[] = { client };

	return pci_p2pdma_distance_many(provider, only, ARRAY_SIZE(only),
					verbose);
}

/**
 * pci_p2pmem_find() - find published P2P memory that a client can reach
 * @client: device that will DMA to or from the memory
 *
 * See pci_p2pmem_find_many() for how the provider is chosen.
 *
 * Return: a referenced provider (release it with pci_dev_put()), or NULL.
 */
static inline struct pci_dev *pci_p2pmem_find(struct device *client)
{
	struct device *only[] = { client };

	return pci_p2pmem_find_many(only, ARRAY_SIZE(only));
}

#endif /* _LINUX_PCI_P2PDMA_H */
