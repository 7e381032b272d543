/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the HMM P2P test's mirror client (hmm-p2p-mirror.c, which owns the
 * debugfs file) asks of its test owner (hmm-p2p-owner.c).
 */
#ifndef _HMM_P2P_H
#define _HMM_P2P_H

#include <linux/mm_types.h>

struct hmmp2p_stats;

int hmm_p2p_owner_migrate(struct mm_struct *mm, unsigned long addr,
			  unsigned long npages);
void hmm_p2p_owner_stats(struct hmmp2p_stats *stats);

#endif /* _HMM_P2P_H */
