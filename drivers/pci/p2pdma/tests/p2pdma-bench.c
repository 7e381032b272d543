// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark of the PCI P2PDMA public API, to compare two kernels (two
 * P2PDMA implementations) on one machine.
 *
 * Uses only <linux/pci-p2pdma.h>, the DMA API and page counters, so the
 * same file builds against any P2PDMA implementation with the 6.12 API and
 * the numbers of two kernels can be compared.
 *
 * Every ivshmem-plain device (1af4:1110) binds to this driver and becomes a
 * provider: its BAR 2 is registered as P2P memory when a run is triggered,
 * the largest one serving as "the pool". Every pci-testdev (1b36:0005) is a
 * client for distance queries; they need no driver. A run is started by a
 * write to /sys/kernel/debug/p2pdma-bench/run (once per boot: first-call
 * distances need routes nobody asked for before) and its results, one
 * "key value" line each (times in ns, memory in bytes), are read from
 * .../results; lines starting with '#' are information.
 */
#define pr_fmt(fmt) "p2pdma-bench: " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/seq_buf.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmstat.h>

#define BENCH_MAX_PROVIDERS	8
#define BENCH_MAX_CLIENTS	16
#define BENCH_SG_ENTS		256
#define BENCH_MAX_SAMPLES	15
#define BENCH_TESTDEV_ID	0x0005	/* QEMU pci-testdev */

static unsigned int samples = 7;
module_param(samples, uint, 0644);
MODULE_PARM_DESC(samples, "timed samples per metric; their median is reported");

static unsigned int iters = 1000;
module_param(iters, uint, 0644);
MODULE_PARM_DESC(iters, "calls per timed sample of the fast operations");

static DEFINE_MUTEX(bench_lock);
static struct pci_dev *providers[BENCH_MAX_PROVIDERS];
static unsigned int nr_providers;
static struct device *clients[BENCH_MAX_CLIENTS];
static unsigned int nr_clients;
static bool bench_done;

static char results_buf[8192];
static struct seq_buf results;

static void out(const char *key, s64 val)
{
	seq_buf_printf(&results, "%s %lld\n", key, val);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The median; the lower of the middle two for an even count. Every timed
 * row of a boot is the median of its samples, not the fastest: the fastest
 * sample rewards whichever code has the lower floor (a cache hit every
 * time), the median is what a caller sees. The report takes the median of
 * these over boots.
 */
static u64 median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), cmp_u64, NULL);
	return v[(n - 1) / 2];
}

static unsigned int nr_samples(void)
{
	return clamp(samples, 1U, BENCH_MAX_SAMPLES);
}

/*
 * Free pages right now, counting those on the per-CPU page lists too (a
 * free page sits there before it reaches the buddy lists). Mainline keeps
 * drain_all_pages() to mm, so the lists are read, not emptied; the counts
 * are read without their locks, which a benchmark can afford.
 */
static long free_pages_now(void)
{
	long n = global_zone_page_state(NR_FREE_PAGES);
	struct zone *zone;
	int cpu;

	for_each_populated_zone(zone)
		for_each_possible_cpu(cpu)
			n += READ_ONCE(per_cpu_ptr(zone->per_cpu_pageset, cpu)->count);
	return n;
}

/* ---- metric 1: alloc + free, one CPU or all ---- */

/* ns for @n pci_alloc_p2pmem() + pci_free_p2pmem() pairs of @size. */
static s64 alloc_free_loop(struct pci_dev *p, size_t size, unsigned int n)
{
	u64 t0 = ktime_get_ns();
	unsigned int i;
	void *a;

	for (i = 0; i < n; i++) {
		a = pci_alloc_p2pmem(p, size);
		if (!a)
			return -ENOMEM;
		pci_free_p2pmem(p, a, size);
	}
	return ktime_get_ns() - t0;
}

struct af_worker {
	struct pci_dev *p;
	size_t size;
	struct completion *go;
	struct completion done;
	s64 ns;
};

static int af_thread(void *data)
{
	struct af_worker *w = data;

	wait_for_completion(w->go);
	w->ns = alloc_free_loop(w->p, w->size, iters);
	complete(&w->done);
	return 0;
}

/* All online CPUs at once: ns of the slowest CPU's loop. */
static s64 alloc_free_all_cpus(struct pci_dev *p, size_t size)
{
	struct completion go;
	struct af_worker *w;
	struct task_struct *t;
	unsigned int cpu, n = 0, i;
	s64 worst = 0;

	w = kcalloc(nr_cpu_ids, sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	init_completion(&go);
	for_each_online_cpu(cpu) {
		w[n].p = p;
		w[n].size = size;
		w[n].go = &go;
		init_completion(&w[n].done);
		t = kthread_run_on_cpu(af_thread, &w[n], cpu, "p2pbench/%u");
		if (IS_ERR(t)) {
			worst = PTR_ERR(t);
			break;
		}
		n++;
	}
	complete_all(&go);
	for (i = 0; i < n; i++) {
		wait_for_completion(&w[i].done);
		if (w[i].ns < 0 && worst >= 0)
			worst = w[i].ns;
		else if (worst >= 0)
			worst = max(worst, w[i].ns);
	}
	kfree(w);
	return worst;
}

/*
 * One CPU or all of them, 4 KiB and 64 KiB. (How full the pool is does
 * not matter to ours: a loop of one size is served by the per-CPU cache
 * and never reaches the pool, so the bench has no fullness columns.)
 */
static int bench_alloc_free(struct pci_dev *p)
{
	static const size_t sizes[] = { SZ_4K, SZ_64K };
	u64 v[BENCH_MAX_SAMPLES];
	unsigned int s, c, i;
	char key[64];
	s64 ns;

	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (c = 0; c < 2; c++) {
			for (i = 0; i < nr_samples(); i++) {
				ns = c ? alloc_free_all_cpus(p, sizes[s]) :
					 alloc_free_loop(p, sizes[s], iters);
				if (ns < 0) {
					pr_err("alloc+free failed (%lld)\n", ns);
					return ns;
				}
				v[i] = ns;
				cond_resched();
			}
			snprintf(key, sizeof(key), "alloc_free_%zuk_%s",
				 sizes[s] >> 10, c ? "allcpus" : "1cpu");
			out(key, median(v, nr_samples()) / iters);
		}
	}
	return 0;
}

/*
 * Sizes no one-size loop has: powers of two the per-CPU cache keeps and
 * sizes it does not (not a power of two of pages, or above 1 MiB), 16 of
 * them outstanding at any time, each freed 16 allocations after its own.
 */
#define BENCH_MIXED_LIVE	16

static const size_t mixed_sizes[] = {
	SZ_4K, 3 * SZ_4K, SZ_64K, 5 * SZ_4K, SZ_256K, SZ_8K, SZ_1M + SZ_256K,
	SZ_16K, 40 * SZ_4K, SZ_4K, SZ_128K, 7 * SZ_4K, SZ_1M, SZ_32K,
	9 * SZ_4K, SZ_512K, 2 * SZ_1M, SZ_4K, 3 * SZ_64K, SZ_8K,
};

/* ns for @n alloc+free pairs of mixed sizes, 16 live allocations. */
static s64 alloc_free_mixed(struct pci_dev *p, unsigned int n)
{
	void *live[BENCH_MIXED_LIVE] = { };
	size_t size[BENCH_MIXED_LIVE] = { };
	unsigned int i, slot;
	s64 ret = 0;
	u64 t0;

	t0 = ktime_get_ns();
	for (i = 0; i < n + BENCH_MIXED_LIVE; i++) {
		slot = i % BENCH_MIXED_LIVE;
		if (live[slot])
			pci_free_p2pmem(p, live[slot], size[slot]);
		live[slot] = NULL;
		if (i >= n)
			continue;
		size[slot] = mixed_sizes[i % ARRAY_SIZE(mixed_sizes)];
		live[slot] = pci_alloc_p2pmem(p, size[slot]);
		if (!live[slot])
			ret = -ENOMEM;
		if (ret)
			break;
	}
	if (ret) {
		for (slot = 0; slot < BENCH_MIXED_LIVE; slot++)
			if (live[slot])
				pci_free_p2pmem(p, live[slot], size[slot]);
		return ret;
	}
	return ktime_get_ns() - t0;
}

/*
 * Allocated on one CPU, freed on another, as a completion handler on
 * another CPU than the submitter does: the allocating CPU never gets back
 * what it gave out. Batches of BENCH_REMOTE_BATCH, two in flight, so that
 * the two CPUs overlap.
 */
#define BENCH_REMOTE_BATCH	64

struct remote_bench {
	struct pci_dev *p;
	unsigned int batches;
	void *buf[2][BENCH_REMOTE_BATCH];
	struct completion filled[2], emptied[2], go, done;
	bool failed;
};

/* One run at a time (bench_lock): no allocation of its own. */
static struct remote_bench remote;

static int remote_alloc_thread(void *data)
{
	struct remote_bench *rb = data;
	unsigned int b, i, batches = rb->batches;
	void **buf;

	/* After its last complete() the next run may reuse rb: no read then. */
	wait_for_completion(&rb->go);
	for (b = 0; b < batches; b++) {
		buf = rb->buf[b & 1];
		if (b >= 2)
			wait_for_completion(&rb->emptied[b & 1]);
		for (i = 0; i < BENCH_REMOTE_BATCH; i++) {
			buf[i] = rb->failed ? NULL : pci_alloc_p2pmem(rb->p, SZ_4K);
			if (!buf[i])
				rb->failed = true;
		}
		complete(&rb->filled[b & 1]);
	}
	return 0;
}

static int remote_free_thread(void *data)
{
	struct remote_bench *rb = data;
	unsigned int b, i;
	void **buf;

	for (b = 0; b < rb->batches; b++) {
		buf = rb->buf[b & 1];
		wait_for_completion(&rb->filled[b & 1]);
		for (i = 0; i < BENCH_REMOTE_BATCH; i++)
			if (buf[i])
				pci_free_p2pmem(rb->p, buf[i], SZ_4K);
		complete(&rb->emptied[b & 1]);
	}
	complete(&rb->done);
	return 0;
}

/* ns per pair, over about @n pairs; -ENODEV with only one CPU online. */
static s64 alloc_free_remote(struct pci_dev *p, unsigned int n)
{
	unsigned int cpu_a = cpumask_first(cpu_online_mask);
	unsigned int cpu_b = cpumask_next(cpu_a, cpu_online_mask);
	struct remote_bench *rb = &remote;
	struct task_struct *t;
	u64 t0;

	lockdep_assert_held(&bench_lock);
	if (cpu_b >= nr_cpu_ids)
		return -ENODEV;
	memset(rb, 0, sizeof(*rb));
	rb->p = p;
	rb->batches = max(n / BENCH_REMOTE_BATCH, 2U);
	init_completion(&rb->filled[0]);
	init_completion(&rb->filled[1]);
	init_completion(&rb->emptied[0]);
	init_completion(&rb->emptied[1]);
	init_completion(&rb->go);
	init_completion(&rb->done);
	t = kthread_run_on_cpu(remote_free_thread, rb, cpu_b, "p2pbench-free/%u");
	if (IS_ERR(t))
		return PTR_ERR(t);
	t = kthread_run_on_cpu(remote_alloc_thread, rb, cpu_a, "p2pbench-alloc/%u");
	if (IS_ERR(t)) {
		/* The freeing thread frees empty batches (zeroed) and ends. */
		complete_all(&rb->filled[0]);
		complete_all(&rb->filled[1]);
		wait_for_completion(&rb->done);
		return PTR_ERR(t);
	}
	t0 = ktime_get_ns();
	complete(&rb->go);
	wait_for_completion(&rb->done);
	if (rb->failed)
		return -ENOMEM;
	return div_u64(ktime_get_ns() - t0, rb->batches * BENCH_REMOTE_BATCH);
}

/* Rows the per-CPU cache cannot flatter: mixed sizes, remote frees. */
static int bench_alloc_free_uncached(struct pci_dev *p)
{
	u64 v[BENCH_MAX_SAMPLES];
	unsigned int i;
	s64 ns;

	for (i = 0; i < nr_samples(); i++) {
		ns = alloc_free_mixed(p, iters);
		if (ns < 0) {
			pr_err("mixed alloc+free failed (%lld)\n", ns);
			return ns;
		}
		v[i] = ns;
		cond_resched();
	}
	out("alloc_free_mixed_1cpu", median(v, nr_samples()) / iters);
	for (i = 0; i < nr_samples(); i++) {
		ns = alloc_free_remote(p, iters);
		if (ns == -ENODEV)
			return 0;	/* one CPU: no row, which the report says */
		if (ns < 0) {
			pr_err("remote alloc+free failed (%lld)\n", ns);
			return ns;
		}
		v[i] = ns;
		cond_resched();
	}
	out("alloc_free_4k_remote", median(v, nr_samples()));
	return 0;
}

/* ---- metric 2: alloc_sgl + free_sgl of 1 MiB ---- */

static int bench_sgl(struct pci_dev *p)
{
	u64 v[BENCH_MAX_SAMPLES], t0;
	struct scatterlist *sgl;
	unsigned int i, j, nents;

	for (i = 0; i < nr_samples(); i++) {
		t0 = ktime_get_ns();
		for (j = 0; j < iters; j++) {
			sgl = pci_p2pmem_alloc_sgl(p, &nents, SZ_1M);
			if (!sgl)
				return -ENOMEM;
			pci_p2pmem_free_sgl(p, sgl);
		}
		v[i] = ktime_get_ns() - t0;
		cond_resched();
	}
	out("sgl_1m", median(v, nr_samples()) / iters);
	return 0;
}

/* ---- metric 3: dma_map_sg + dma_unmap_sg of 256 P2P or RAM pages ---- */

static s64 time_map_sg(struct device *client, struct scatterlist *sgl)
{
	u64 v[BENCH_MAX_SAMPLES], t0;
	unsigned int i, j, n = max(iters / 10, 1U);

	for (i = 0; i < nr_samples(); i++) {
		t0 = ktime_get_ns();
		for (j = 0; j < n; j++) {
			if (dma_map_sg(client, sgl, BENCH_SG_ENTS,
				       DMA_BIDIRECTIONAL) <= 0)
				return -EIO;
			dma_unmap_sg(client, sgl, BENCH_SG_ENTS,
				     DMA_BIDIRECTIONAL);
		}
		v[i] = ktime_get_ns() - t0;
		cond_resched();
	}
	return median(v, nr_samples()) / n;
}

static int bench_map_sg(struct pci_dev *p, struct device *client)
{
	struct scatterlist *sgl;
	int i, ret = -ENOMEM;
	struct page **ram;
	void *mem;
	s64 ns;

	sgl = kmalloc_array(BENCH_SG_ENTS, sizeof(*sgl), GFP_KERNEL);
	ram = kcalloc(BENCH_SG_ENTS, sizeof(*ram), GFP_KERNEL);
	mem = pci_alloc_p2pmem(p, BENCH_SG_ENTS * PAGE_SIZE);
	if (!sgl || !ram || !mem)
		goto out;

	sg_init_table(sgl, BENCH_SG_ENTS);
	for (i = 0; i < BENCH_SG_ENTS; i++)
		sg_set_page(&sgl[i], virt_to_page(mem + i * PAGE_SIZE),
			    PAGE_SIZE, 0);
	ns = time_map_sg(client, sgl);
	if (ns < 0) {
		ret = ns;
		pr_err("dma_map_sg of P2P pages for %s failed\n",
		       dev_name(client));
		goto out;
	}
	out("map_sg_p2p_256", ns);

	sg_init_table(sgl, BENCH_SG_ENTS);
	for (i = 0; i < BENCH_SG_ENTS; i++) {
		ram[i] = alloc_page(GFP_KERNEL);
		if (!ram[i])
			goto out;
		sg_set_page(&sgl[i], ram[i], PAGE_SIZE, 0);
	}
	ns = time_map_sg(client, sgl);
	if (ns < 0) {
		ret = ns;
		goto out;
	}
	out("map_sg_ram_256", ns);
	ret = 0;
out:
	for (i = 0; ram && i < BENCH_SG_ENTS; i++)
		if (ram[i])
			__free_page(ram[i]);
	kfree(ram);
	if (mem)
		pci_free_p2pmem(p, mem, BENCH_SG_ENTS * PAGE_SIZE);
	kfree(sgl);
	return ret;
}

/* ---- metric 4: distance_many, first call and cached ---- */

/* One call, timed; a refusal (-1) is an error for this topology. */
static s64 time_distance(struct pci_dev *p, struct device **c, int n)
{
	u64 t0 = ktime_get_ns();
	int d = pci_p2pdma_distance_many(p, c, n, false);
	u64 t = ktime_get_ns() - t0;

	if (d < 0) {
		pr_err("%s refused for %d clients from %s\n", pci_name(p), n,
		       dev_name(c[0]));
		return -EREMOTEIO;
	}
	return t;
}

/*
 * First calls need (provider, client) pairs never asked about before, so
 * each client-set size gets its own providers: 16 clients providers 0-3,
 * 4 clients providers 4-5 (four disjoint sets each), 1 client providers
 * 6-7 (every client). Every pair is asked exactly once.
 *
 * Each provider is first asked about another provider, a client outside
 * the measured set: the code has run once (under TCG the first run of any
 * code pays for its translation) and no provider starts with an empty
 * cache.
 */
static int bench_distance_first(void)
{
	static const struct { int n, first, last; } plan[] = {
		{ 16, 0, 3 }, { 4, 4, 5 }, { 1, 6, 7 },
	};
	u64 v[2 * BENCH_MAX_CLIENTS * 2];
	unsigned int k, p, c, nv;
	struct device *other;
	char key[48];
	s64 ns;

	for (p = 0; p < BENCH_MAX_PROVIDERS; p++) {
		other = &providers[(p + 1) % BENCH_MAX_PROVIDERS]->dev;
		ns = time_distance(providers[p], &other, 1);
		if (ns < 0)
			return ns;
	}
	for (k = 0; k < ARRAY_SIZE(plan); k++) {
		nv = 0;
		for (p = plan[k].first; p <= plan[k].last; p++) {
			for (c = 0; c + plan[k].n <= BENCH_MAX_CLIENTS;
			     c += plan[k].n) {
				ns = time_distance(providers[p], &clients[c],
						   plan[k].n);
				if (ns < 0)
					return ns;
				v[nv++] = ns;
			}
		}
		snprintf(key, sizeof(key), "distance_%d_first", plan[k].n);
		out(key, median(v, nv));
	}
	return 0;
}

static int bench_distance_cached(struct pci_dev *p)
{
	static const int sizes[] = { 1, 4, 16 };
	u64 v[BENCH_MAX_SAMPLES], t0;
	unsigned int k, i, j;
	char key[48];

	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		for (i = 0; i < nr_samples(); i++) {
			t0 = ktime_get_ns();
			for (j = 0; j < iters; j++)
				if (pci_p2pdma_distance_many(p, clients,
							     sizes[k], false) < 0)
					return -EREMOTEIO;
			v[i] = ktime_get_ns() - t0;
			cond_resched();
		}
		snprintf(key, sizeof(key), "distance_%d_cached", sizes[k]);
		out(key, median(v, nr_samples()) / iters);
		snprintf(key, sizeof(key), "# distance_%d_value", sizes[k]);
		out(key, pci_p2pdma_distance_many(p, clients, sizes[k], false));
	}
	return 0;
}

/* ---- metric 5: find_many among the providers ---- */

static int bench_find_many(void)
{
	u64 v[BENCH_MAX_SAMPLES], t0;
	unsigned int i, j, n = max(iters / 10, 1U);
	struct pci_dev *found;

	for (i = 0; i < nr_samples(); i++) {
		t0 = ktime_get_ns();
		for (j = 0; j < n; j++) {
			found = pci_p2pmem_find_many(clients, 4);
			if (!found)
				return -ENODEV;
			pci_dev_put(found);
		}
		v[i] = ktime_get_ns() - t0;
		cond_resched();
	}
	out("find_many_8", median(v, nr_samples()) / n);
	return 0;
}

/* ---- the run ---- */

static int provider_size_cmp(const void *a, const void *b)
{
	resource_size_t x = pci_resource_len(*(struct pci_dev **)a, 2);
	resource_size_t y = pci_resource_len(*(struct pci_dev **)b, 2);

	return x > y ? -1 : x < y;
}

static int collect_clients(void)
{
	struct pci_dev *pdev = NULL;

	while (nr_clients < BENCH_MAX_CLIENTS &&
	       (pdev = pci_get_device(PCI_VENDOR_ID_REDHAT,
				      BENCH_TESTDEV_ID, pdev)))
		clients[nr_clients++] = &pdev->dev;	/* reference kept */
	pci_dev_put(pdev);
	return nr_clients == BENCH_MAX_CLIENTS ? 0 : -ENODEV;
}

/*
 * Register every provider's BAR 2 and publish it. The largest goes first,
 * with the page counters read around it: metric 8.
 */
static int register_providers(void)
{
	long before, after;
	size_t size;
	unsigned int i;
	int ret;

	sort(providers, nr_providers, sizeof(providers[0]), provider_size_cmp,
	     NULL);
	for (i = 0; i < nr_providers; i++) {
		size = pci_resource_len(providers[i], 2);
		before = free_pages_now();
		ret = pci_p2pdma_add_resource(providers[i], 2, 0, 0);
		after = free_pages_now();
		if (ret) {
			pci_err(providers[i], "p2pdma-bench: add_resource: %d\n",
				ret);
			return ret;
		}
		if (i == 0) {
			out("meta_bytes_per_mib", (s64)(before - after) *
			    (s64)PAGE_SIZE / (s64)(size >> 20));
			seq_buf_printf(&results, "# big_provider %s %zu\n",
				       pci_name(providers[0]), size);
		}
		pci_p2pmem_publish(providers[i], true);
	}
	return 0;
}

static int bench_run(void)
{
	struct pci_dev *big;
	int ret;

	if (nr_providers != BENCH_MAX_PROVIDERS) {
		pr_err("need %d ivshmem providers, found %u\n",
		       BENCH_MAX_PROVIDERS, nr_providers);
		return -ENODEV;
	}
	ret = collect_clients();
	if (ret) {
		pr_err("need %d pci-testdev clients, found %u\n",
		       BENCH_MAX_CLIENTS, nr_clients);
		return ret;
	}
	ret = register_providers();
	if (ret)
		return ret;
	big = providers[0];
	seq_buf_printf(&results, "# cpus %u samples %u iters %u\n",
		       num_online_cpus(), nr_samples(), iters);

	/* Metric 4 first: nothing may have asked for these routes yet. */
	ret = bench_distance_first();
	if (ret)
		return ret;
	ret = bench_distance_cached(big);
	if (!ret)
		ret = bench_find_many();
	if (!ret)
		ret = bench_alloc_free(big);
	if (!ret)
		ret = bench_alloc_free_uncached(big);
	if (!ret)
		ret = bench_sgl(big);
	if (!ret)	/* the second provider is the DMA client */
		ret = bench_map_sg(big, &providers[1]->dev);
	return ret;
}

static ssize_t run_write(struct file *file, const char __user *buf,
			 size_t count, loff_t *ppos)
{
	int ret;

	mutex_lock(&bench_lock);
	if (bench_done) {
		ret = -EALREADY;
	} else {
		bench_done = true;
		ret = bench_run();
		seq_buf_printf(&results, "# status %d\n", ret);
	}
	mutex_unlock(&bench_lock);
	return ret ? ret : count;
}

static const struct file_operations run_fops = {
	.write = run_write,
};

static int results_show(struct seq_file *m, void *unused)
{
	mutex_lock(&bench_lock);
	seq_write(m, results_buf, seq_buf_used(&results));
	mutex_unlock(&bench_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(results);

static int bench_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	mutex_lock(&bench_lock);
	if (nr_providers < BENCH_MAX_PROVIDERS)
		providers[nr_providers++] = pdev;
	else
		ret = -ENOSPC;
	mutex_unlock(&bench_lock);
	return ret;
}

static const struct pci_device_id bench_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },	/* ivshmem */
	{ }
};

static struct pci_driver bench_driver = {
	.name = "p2pdma-bench",
	.id_table = bench_ids,
	.probe = bench_probe,
	.driver.suppress_bind_attrs = true,	/* providers stay bound */
};

static int __init bench_init(void)
{
	struct dentry *dir;

	seq_buf_init(&results, results_buf, sizeof(results_buf));
	dir = debugfs_create_dir("p2pdma-bench", NULL);
	debugfs_create_file("run", 0200, dir, NULL, &run_fops);
	debugfs_create_file("results", 0444, dir, NULL, &results_fops);
	return pci_register_driver(&bench_driver);
}
device_initcall(bench_init);
