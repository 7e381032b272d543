/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU's edu device (docs/specs/edu.rst) as a DMA engine, for the test
 * modules of the test kernels that make a device DMA with the addresses
 * they were handed: the dma-buf importer (p2pdma-importer.c) and the
 * HMM P2P mirror (hmm-p2p-mirror.c).
 */
#ifndef _P2PDMA_TEST_EDU_H
#define _P2PDMA_TEST_EDU_H

#include <linux/delay.h>
#include <linux/io.h>
#include <linux/jiffies.h>

#define EDU_VENDOR	0x1234
#define EDU_DEVICE	0x11e8
/* DMA registers in BAR 0. */
#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_CNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_CMD_START	0x1
#define EDU_CMD_TO_RAM	0x2		/* from edu's buffer to the address */
#define EDU_BUF		0x40000		/* edu's buffer, as DMA sees it */
#define EDU_BUF_LEN	4095		/* QEMU 7.2 aborts at 0x41000 */

/*
 * One transfer of @len bytes from @src to @dst (one of them EDU_BUF;
 * @to_ram: from the buffer), waited for, sleeping: 0 or -ETIMEDOUT.
 */
static inline int edu_dma(void __iomem *regs, u64 src, u64 dst, u32 len,
			  bool to_ram)
{
	unsigned long end = jiffies + 5 * HZ;

	writeq(src, regs + EDU_DMA_SRC);
	writeq(dst, regs + EDU_DMA_DST);
	writeq(len, regs + EDU_DMA_CNT);
	writeq(EDU_CMD_START | (to_ram ? EDU_CMD_TO_RAM : 0),
	       regs + EDU_DMA_CMD);
	/* edu finishes on a timer of its own (100 ms of virtual time). */
	while (readq(regs + EDU_DMA_CMD) & EDU_CMD_START) {
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(1000, 2000);
	}
	return 0;
}

#endif /* _P2PDMA_TEST_EDU_H */
