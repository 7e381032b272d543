/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a client maps one P2P page, asked as the DMA mapping code asks
 * (dma-direct, dma-iommu, the block layer): pci_p2pdma_state(), then
 * pci_p2pdma_bus_addr_map() for a bus address. The one place where the
 * tests' mapping differs between kernels: backport/6.12.diff gives it
 * 6.12's pci_p2pdma_map_segment(). Public API only, so the black-box
 * suites compare two implementations through it.
 */
#ifndef _P2PDMA_TEST_MAP_PAGE_H
#define _P2PDMA_TEST_MAP_PAGE_H

#include <linux/io.h>
#include <linux/pci-p2pdma.h>

/*
 * The map type of @len bytes at byte @offset of @page, a P2P page, for
 * @client, through @state, which the caller keeps across the pages of one
 * mapping as the DMA mapping code does; for %PCI_P2PDMA_MAP_BUS_ADDR *@dma
 * is the address @client is given, otherwise *@dma is left alone.
 */
static inline enum pci_p2pdma_map_type
p2pt_map_page_state(struct pci_p2pdma_map_state *state, struct device *client,
		    struct page *page, unsigned int offset, unsigned int len,
		    dma_addr_t *dma)
{
	enum pci_p2pdma_map_type map;

	map = pci_p2pdma_state(state, client, page);
	if (map == PCI_P2PDMA_MAP_BUS_ADDR)
		*dma = pci_p2pdma_bus_addr_map(state->mem,
					       page_to_phys(page) + offset);
	return map;
}

/* The same, for a mapping of that one page alone. */
static inline enum pci_p2pdma_map_type
p2pt_map_page(struct device *client, struct page *page, unsigned int offset,
	      unsigned int len, dma_addr_t *dma)
{
	struct pci_p2pdma_map_state state = {};

	return p2pt_map_page_state(&state, client, page, offset, len, dma);
}

#endif
