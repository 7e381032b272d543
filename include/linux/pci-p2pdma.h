/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PCI peer-to-peer DMA: one PCI device moves data straight into BAR memory
 * of another. See Documentation/driver-api/pci/p2pdma.rst for the roles
 * (provider, orchestrator, client) and the rules that decide which devices
 * may talk to each other.
 */
#ifndef _LINUX_PCI_P2PDMA_H
#define _LINUX_PCI_P2PDMA_H

#include <linux/pci.h>

struct dma_buf;
struct scatterlist;

#ifdef CONFIG_PCI_P2PDMA
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
bool pci_has_p2pmem(struct pci_dev *pdev);
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

static inline bool pci_has_p2pmem(struct pci_dev *pdev)
{
	return false;
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
