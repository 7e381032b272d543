// SPDX-License-Identifier: GPL-2.0
/*
 * Differential route fuzzing of the PCI P2PDMA API (black box).
 *
 * Like p2pdma-blackbox.c, an object of its own that calls only the
 * exported API, so that "make test-upstream" runs it against our core and
 * against Linux 6.12's and compares what each printed. From fixed seeds it
 * builds random fake PCI hierarchies (fake-pci.h): one to three host
 * bridges, each identified by nothing, by a root port first, or by a
 * function at 00.0 with an ID drawn from the Intel host bridges and root
 * ports the routing rules name, an Intel or AMD ID they do not name, or an
 * unknown vendor; one to three root ports each; below every port an
 * endpoint, a multi-function device or a switch, switches nested four
 * deep; SR-IOV virtual functions where CONFIG_PCI_IOV is set; an ACS
 * capability on a third of the ports and functions, with random
 * P2P Request Redirect, Completion Redirect, Egress Control and Upstream
 * Forwarding control bits. One to three endpoints register their BAR as
 * P2P memory, some of them published. Then, for every provider:
 *
 *   pci_p2pdma_distance() to every function of the hierarchy,
 *   pci_p2pdma_distance_many() for three random sets of 1-16 clients
 *     (duplicates included),
 *   pci_p2pdma_map_segment() of one page for every function,
 *
 * and pci_p2pmem_find_many() for three random client sets. Client sets
 * leave the providers out. The CPU rule (AMD Zen or not) is the boot's:
 * run it on both kinds of guest.
 *
 * Each seed prints one line: the number of calls and a CRC32 of their
 * results in a normalised text; seeds named in p2pdma_fuzz.dump= print
 * that text too, so that two kernels' lines for a seed can be compared.
 * The normalisation applies, call by call, the differences from Linux 6.12
 * that the series' cover letter lists (scripts/cover-letter.txt of the
 * project), and nothing else; 7.3's own core differs from ours in the same
 * ways (scripts/cover-letter-7.3.txt), so the same normalisation serves it.
 * p2pdma_fuzz.core= says which core runs ("ours", the default, or the
 * kernel's own, "6.12" or "7.3"):
 *
 * - a route through the root complex (map type THRU_HOST_BRIDGE): 6.12
 *   counts the links to the lowest common bridge (to the root complex if
 *   there is none); ours counts the links up to the root complex from
 *   both ends plus 1024 for each host bridge the route crosses. On our
 *   core such a distance that follows our rule is printed as 6.12 would
 *   give it, one that does not as "!" and the value; on 6.12 every
 *   distance is printed as it is. Other distances are printed as they
 *   are on both;
 * - a distance_many() result is checked against the sum of the clients'
 *   own distances on the same kernel (-1 if one is refused); printed as
 *   the sum of their printed values, or "!" and the value if it is not
 *   that sum;
 * - a provider's route to itself, when its own ACS Control has P2P
 *   Request Redirect, Completion Redirect or Egress Control set, is
 *   printed as "s" (6.12 refuses it, ours gives distance 0 and bus
 *   addresses; fixed cases of the black-box suite cover it); without
 *   those bits the map type and distance are printed as they are;
 * - pci_p2pmem_find_many() prints whether it found a provider and "!"
 *   unless its choice is one of the published providers at the smallest
 *   distance_many() (6.12 picks at random among equals, so not which);
 * - one host bridge in eight is identified by an ID that upstream added to
 *   its list after 6.12 (Intel DSA, Google, Zhaoxin, NVIDIA Vera Rubin):
 *   6.12 refuses routes through it that our core allows. A result that
 *   involves such a host bridge (the provider's or a client's) and is a
 *   refusal or a route through the root complex is printed as "L"
 *   (find_many(): whether it found one, when a published provider or a
 *   client is below one; its "!" stays); bus-address results are printed
 *   as they are. The route suite's fixed cases check those host bridges.
 *   7.3 knows them too, so against 7.3 those results are compared as "L"
 *   only: a weaker comparison there, not a difference.
 *
 * A "!" on our core also fails the case, with the seed's text: our core
 * broke a rule of its own. On 6.12 it is a difference the comparison of
 * the two kernels' lines shows.
 */

#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/device.h>
#include <linux/dma-map-ops.h>
#include <linux/ioport.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci-p2pdma.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/seq_buf.h>
#include <linux/sizes.h>

#include "fake-pci.h"
#include "map-page.h"

#define FZ_BAR_SIZE	SZ_2M
#define FZ_WINDOW	SZ_128M
#define FZ_MAX_EPS	40	/* functions that can be clients */
#define FZ_MAX_BARS	(FZ_WINDOW / FZ_BAR_SIZE)
#define FZ_MAX_PROV	3
#define FZ_MAX_FNS	48	/* functions and bridges per host bridge */

static unsigned int fz_seeds = 10000;
module_param_named(seeds, fz_seeds, uint, 0444);
MODULE_PARM_DESC(seeds, "number of random hierarchies (seeds 1..N)");

static char *fz_dump = "";
module_param_named(dump, fz_dump, charp, 0444);
MODULE_PARM_DESC(dump, "comma-separated seeds whose normalised results are printed");

static char *fz_core = "ours";
module_param_named(core, fz_core, charp, 0444);
MODULE_PARM_DESC(core, "the P2PDMA core under test: ours, 6.12 or 7.3 (see the top)");

static struct resource fz_window = {
	.name = "p2pdma-fuzz fake BARs",
	.flags = IORESOURCE_MEM,
};

struct fz {
	struct rnd_state rnd;
	struct fake_pci *fp;
	struct fake_fn *ep[FZ_MAX_EPS];
	bool vf[FZ_MAX_EPS];
	unsigned int nep, host_fns, nbar, nacs;
	struct fake_fn *acs_fn[FZ_MAX_FNS * 3];
	u16 acs_ctrl[FZ_MAX_FNS * 3];
	struct fake_host *later[3];	/* host bridges of fz_later_ids[] */
	unsigned int nlater;
	struct pci_dev *prov[FZ_MAX_PROV];
	bool pub[FZ_MAX_PROV];
	void *grp[FZ_MAX_PROV];
	unsigned int nprov, calls;
	unsigned int broken;	/* "!" results: see fz_broken() */
	int err;
	struct seq_buf sb;
	char text[8192];
};

static u32 fz_rand(struct fz *z, u32 n)
{
	return prandom_u32_state(&z->rnd) % n;
}

/*
 * What identifies a host bridge: the function at 00.0 of its root bus
 * (vendor, device), a root port with that ID as the first device (rp),
 * or nothing at all (vendor 0).
 */
static const struct {
	u16 vendor, device;
	bool rp;
} fz_ids[] = {
	{ 0, 0, false },
	{ FAKE_VENDOR, 0x0001, false },
	{ PCI_VENDOR_ID_INTEL, 0x2020, false },
	{ PCI_VENDOR_ID_INTEL, 0x09a2, false },
	{ PCI_VENDOR_ID_INTEL, 0x3c00, false },
	{ PCI_VENDOR_ID_INTEL, 0x2f01, false },
	{ PCI_VENDOR_ID_INTEL, 0x2030, true },
	{ PCI_VENDOR_ID_INTEL, 0x2033, true },
	{ PCI_VENDOR_ID_INTEL, 0x1237, false },
	{ PCI_VENDOR_ID_AMD, 0x1480, false },
};

/* IDs that upstream added to its host bridge list after 6.12. */
static const struct {
	u16 vendor, device;
} fz_later_ids[] = {
	{ PCI_VENDOR_ID_INTEL, 0x0b25 },	/* DSA, alone on its root bus */
	{ 0x1ae0, 0x0123 },			/* Google: any device ID */
	{ PCI_VENDOR_ID_ZHAOXIN, 0x1003 },	/* routes only within itself */
	{ PCI_VENDOR_ID_ZHAOXIN, 0x1008 },
	{ PCI_VENDOR_ID_NVIDIA, 0x2f96 },	/* Vera Rubin */
};

/*
 * An ACS capability on a third of the functions, with random control
 * bits, which fz_seed() sets once the scan is done (fake_pci_scan()
 * clears them, whatever pci_enable_acs() did).
 */
static void fz_acs(struct fz *z, struct fake_fn *fn)
{
	static const u16 bits[] = { PCI_ACS_RR, PCI_ACS_CR, PCI_ACS_EC,
				    PCI_ACS_UF };
	u16 ctrl = 0;
	int i;

	if (!fn || fz_rand(z, 3) || z->nacs == ARRAY_SIZE(z->acs_fn))
		return;
	fake_add_acs(fn);
	for (i = 0; i < ARRAY_SIZE(bits); i++)
		if (fz_rand(z, 2))
			ctrl |= bits[i];
	z->acs_fn[z->nacs] = fn;
	z->acs_ctrl[z->nacs++] = ctrl;
}

static void fz_add_ep(struct fz *z, struct fake_fn *fn, bool vf)
{
	if (!fn) {
		z->err = -ENOMEM;
		return;
	}
	z->vf[z->nep] = vf;
	z->ep[z->nep++] = fn;
	z->host_fns++;
}

/* What hangs below the port @up, @depth switches down. */
static void fz_below(struct fz *z, struct fake_fn *up, int depth)
{
	struct fake_fn *fns[4], *fn;
	int kind, n, i;

	if (z->err || z->nep + 5 > FZ_MAX_EPS || z->host_fns + 6 > FZ_MAX_FNS)
		return;
	kind = fz_rand(z, depth < 4 ? 3 : 2);
	if (kind == 2) {				/* a switch */
		n = 1 + fz_rand(z, 3);
		if (!fake_switch(up, n, fns)) {
			z->err = -ENOMEM;
			return;
		}
		z->host_fns += n + 1;
		for (i = 0; i < n; i++) {
			fz_acs(z, fns[i]);
			fz_below(z, fns[i], depth + 1);
		}
	} else if (kind == 1) {				/* multi-function */
		n = 2 + fz_rand(z, 3);
		if (!fake_endpoint(up, n, fns)) {
			z->err = -ENOMEM;
			return;
		}
		for (i = 0; i < n; i++) {
			fz_acs(z, fns[i]);
			fz_add_ep(z, fns[i], false);
		}
	} else {					/* one function */
		fn = fake_endpoint(up, 1, NULL);
		fz_add_ep(z, fn, false);
		if (IS_ENABLED(CONFIG_PCI_IOV) && fn && !fz_rand(z, 4))
			fz_add_ep(z, fake_add_sriov(fn), true);
	}
}

static void fz_build(struct fz *z)
{
	unsigned int nhb = 1 + fz_rand(z, 3), h, r, nrp, id;
	struct fake_host *host;
	struct fake_fn *rp;
	u32 class;

	for (h = 0; h < nhb && !z->err; h++) {
		class = fz_rand(z, 2) ? PCI_CLASS_BRIDGE_HOST << 8 :
					PCI_CLASS_SYSTEM_OTHER << 8;
		if (!fz_rand(z, 8)) {
			id = fz_rand(z, ARRAY_SIZE(fz_later_ids));
			host = fake_host_add(z->fp, h * 0x40,
					     fz_later_ids[id].vendor,
					     fz_later_ids[id].device, class);
			if (host)
				z->later[z->nlater++] = host;
			id = 0;		/* no root port names it */
		} else {
			id = fz_rand(z, ARRAY_SIZE(fz_ids));
			host = fake_host_add(z->fp, h * 0x40,
					     fz_ids[id].rp ? 0 : fz_ids[id].vendor,
					     fz_ids[id].device, class);
		}
		if (!host) {
			z->err = -ENOMEM;
			return;
		}
		z->host_fns = 1;
		nrp = 1 + fz_rand(z, 3);
		for (r = 0; r < nrp && !z->err; r++) {
			rp = r == 0 && fz_ids[id].rp ?
				fake_root_port_id(host, fz_ids[id].vendor,
						  fz_ids[id].device) :
				fake_root_port(host);
			if (!rp) {
				z->err = -ENOMEM;
				return;
			}
			z->host_fns++;
			fz_acs(z, rp);
			fz_below(z, rp, 0);
		}
	}
	for (h = 0; h < z->nep && z->nbar < FZ_MAX_BARS; h++)
		if (!z->vf[h])
			fake_bar64(z->ep[h], fz_window.start +
				   (u64)z->nbar++ * FZ_BAR_SIZE, FZ_BAR_SIZE);
}

static __printf(2, 3) void fz_out(struct fz *z, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	seq_buf_vprintf(&z->sb, fmt, args);
	va_end(args);
	z->calls++;
}

/*
 * A result that breaks a rule p2pdma.rst states, printed as "!" and its
 * value: on our core a failure of the case as well, on 6.12 a difference
 * that the comparison of the two kernels shows.
 */
static void fz_broken(struct fz *z, int v)
{
	fz_out(z, " !%d", v);
	z->broken++;
}

/* Links from @pdev up to its root port and on to the root complex. */
static int fz_depth(struct pci_dev *pdev)
{
	int n = 0;

	for (; pdev; pdev = pci_upstream_bridge(pdev))
		n++;
	return n;
}

/*
 * The distance 6.12 gives a route through the root complex: the links
 * from both ends to their lowest common bridge, or to the root complex
 * if they have none (a difference from Linux 6.12).
 */
static int fz_dist_612(struct pci_dev *a, struct pci_dev *b)
{
	struct pci_dev *x, *y;
	int i, j;

	for (i = 1, x = pci_upstream_bridge(a); x;
	     i++, x = pci_upstream_bridge(x))
		for (j = 1, y = pci_upstream_bridge(b); y;
		     j++, y = pci_upstream_bridge(y))
			if (x == y)
				return i + j;
	return fz_depth(a) + fz_depth(b);
}

/* Ours for the same route: up to the root complex and 1024 per host bridge. */
static int fz_dist_ours(struct pci_dev *a, struct pci_dev *b)
{
	int hb = pci_find_host_bridge(a->bus) == pci_find_host_bridge(b->bus) ?
		 1 : 2;

	return fz_depth(a) + fz_depth(b) + 1024 * hb;
}

/*
 * The normalised distance of a route from @p to @c of map type @type (see
 * the top): -1 for a refusal, the value to compare, or INT_MIN when our
 * core did not follow its own rule (printed as "!").
 */
static int fz_norm(struct pci_dev *p, struct pci_dev *c, int type, int d)
{
	if (d < 0 || type != PCI_P2PDMA_MAP_THRU_HOST_BRIDGE ||
	    strcmp(fz_core, "ours"))
		return d < 0 ? -1 : d;
	return d == fz_dist_ours(p, c) ? fz_dist_612(p, c) : INT_MIN;
}

static void fz_dist(struct fz *z, int norm, int raw)
{
	if (norm == INT_MIN)
		fz_broken(z, raw);
	else if (norm < 0)
		fz_out(z, " x");
	else
		fz_out(z, " %d", norm);
}

/* Whether @p's own ACS Control redirects or blocks peer requests. */
static bool fz_self_redirects(struct pci_dev *p)
{
	int pos = pci_find_ext_capability(p, PCI_EXT_CAP_ID_ACS);
	u16 ctrl = 0;

	if (pos)
		pci_read_config_word(p, pos + PCI_ACS_CTRL, &ctrl);
	return ctrl & (PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC);
}

/* Whether @pdev is below a host bridge of fz_later_ids[]. */
static bool fz_later(struct fz *z, struct pci_dev *pdev)
{
	unsigned int i, j;

	for (j = 0; j < z->nep; j++) {
		if (z->ep[j]->pdev != pdev)
			continue;
		for (i = 0; i < z->nlater; i++)
			if (z->ep[j]->host == z->later[i])
				return true;
	}
	return false;
}

static bool fz_later_set(struct fz *z, struct pci_dev *p,
			 struct device **clients, unsigned int n)
{
	unsigned int j;
	bool later = p && fz_later(z, p);

	for (j = 0; j < n && !later; j++)
		later = fz_later(z, to_pci_dev(clients[j]));
	return later;
}

static bool fz_is_provider(struct fz *z, struct pci_dev *pdev)
{
	unsigned int i;

	for (i = 0; i < z->nprov; i++)
		if (z->prov[i] == pdev)
			return true;
	return false;
}

/*
 * @n clients for a set, drawn with repeats from the functions that are
 * not providers (a provider as its own client is left to fixed cases: see
 * the top); returns how many it found, 0 if there is none.
 */
static unsigned int fz_clients(struct fz *z, struct device **clients,
			       unsigned int n)
{
	unsigned int i, j, tries;

	for (i = 0; i < n; i++) {
		for (tries = 0; tries < 16; tries++) {
			j = fz_rand(z, z->nep);
			if (!fz_is_provider(z, z->ep[j]->pdev))
				break;
		}
		if (tries == 16)
			return 0;
		clients[i] = &z->ep[j]->pdev->dev;
	}
	return n;
}

/* The map type of @p's memory for each function, as DMA mapping asks. */
static int fz_map_types(struct fz *z, struct pci_dev *p, int *types)
{
	unsigned int j;
	dma_addr_t dma;
	void *addr;

	addr = pci_alloc_p2pmem(p, PAGE_SIZE);
	if (!addr)
		return -ENOMEM;
	for (j = 0; j < z->nep; j++)
		types[j] = p2pt_map_page(&z->ep[j]->pdev->dev,
					 virt_to_page(addr), 0, PAGE_SIZE, &dma);
	pci_free_p2pmem(p, addr, PAGE_SIZE);
	return 0;
}

static unsigned int fz_index(struct fz *z, struct device *dev)
{
	unsigned int j;

	for (j = 0; j < z->nep && &z->ep[j]->pdev->dev != dev; j++)
		;
	return j;
}

/*
 * distance_many(@p, @clients) against the clients' own distances @dist
 * (raw) and @norm (normalised) on this kernel: see the top.
 */
static void fz_many(struct fz *z, struct pci_dev *p, const int *types,
		    const int *dist, const int *norm, struct device **clients,
		    unsigned int n)
{
	int d = pci_p2pdma_distance_many(p, clients, n, false);
	int sum = 0, nsum = 0;
	unsigned int i, j;
	bool thru = false;

	for (i = 0; i < n; i++) {
		j = fz_index(z, clients[i]);
		thru |= types[j] == PCI_P2PDMA_MAP_THRU_HOST_BRIDGE;
		if (dist[j] < 0 || sum < 0) {
			sum = -1;
			nsum = -1;
			continue;
		}
		sum += dist[j];
		nsum = norm[j] == INT_MIN || nsum == INT_MIN ? INT_MIN :
		       nsum + norm[j];
	}
	if (d != sum)
		fz_broken(z, d);
	else if ((d < 0 || thru) && fz_later_set(z, p, clients, n))
		fz_out(z, " L");
	else
		fz_dist(z, nsum, d);
}

/*
 * find_many(@clients): found or not, and "!" unless the choice is a
 * published provider at the smallest distance_many() (see the top).
 */
static void fz_find(struct fz *z, struct device **clients, unsigned int n)
{
	struct pci_dev *found = pci_p2pmem_find_many(clients, n);
	int d, best = -1, mine = -1;
	bool later;
	unsigned int i;

	later = fz_later_set(z, NULL, clients, n);
	for (i = 0; i < z->nprov; i++) {
		if (!z->pub[i])
			continue;
		later |= fz_later(z, z->prov[i]);
		d = pci_p2pdma_distance_many(z->prov[i], clients, n, false);
		if (d >= 0 && (best < 0 || d < best))
			best = d;
		if (z->prov[i] == found)
			mine = d;
	}
	if (later)
		fz_out(z, " L");
	else
		fz_out(z, " %d", !!found);
	if (found ? mine < 0 || mine != best : best >= 0) {
		seq_buf_putc(&z->sb, '!');
		z->broken++;
	}
	pci_dev_put(found);
}

static void fz_calls(struct fz *z)
{
	int types[FZ_MAX_EPS], dist[FZ_MAX_EPS], norm[FZ_MAX_EPS];
	struct device *clients[16];
	struct pci_dev *p, *c;
	unsigned int i, j, k, n;
	bool self;

	for (i = 0; i < z->nprov; i++) {
		p = z->prov[i];
		self = fz_self_redirects(p);
		seq_buf_printf(&z->sb, "|P%s t", pci_name(p));
		if (fz_map_types(z, p, types)) {
			fz_out(z, " nomem");
			continue;
		}
		for (j = 0; j < z->nep; j++) {
			c = z->ep[j]->pdev;
			if (c == p && self)
				fz_out(z, " s");
			else if (types[j] != PCI_P2PDMA_MAP_BUS_ADDR &&
				 (fz_later(z, p) || fz_later(z, c)))
				fz_out(z, " L");
			else
				fz_out(z, " %d", types[j]);
		}
		seq_buf_puts(&z->sb, " d");
		for (j = 0; j < z->nep; j++) {
			c = z->ep[j]->pdev;
			dist[j] = pci_p2pdma_distance(p, &c->dev, false);
			norm[j] = fz_norm(p, c, types[j], dist[j]);
			if (c == p && self)
				fz_out(z, " s");
			else if ((dist[j] < 0 ||
				  types[j] != PCI_P2PDMA_MAP_BUS_ADDR) &&
				 (fz_later(z, p) || fz_later(z, c)))
				fz_out(z, " L");
			else
				fz_dist(z, norm[j], dist[j]);
		}
		seq_buf_puts(&z->sb, " m");
		for (k = 0; k < 3; k++) {
			n = fz_clients(z, clients, 1 + fz_rand(z, 16));
			if (!n)
				break;
			fz_many(z, p, types, dist, norm, clients, n);
		}
	}
	seq_buf_puts(&z->sb, "|f");
	for (k = 0; k < 3; k++) {
		n = fz_clients(z, clients, 1 + fz_rand(z, 16));
		if (!n)
			break;
		fz_find(z, clients, n);
	}
}

/* Register one to three endpoints' BARs; some are published. */
static void fz_provide(struct kunit *test, struct fz *z)
{
	unsigned int want = 1 + fz_rand(z, FZ_MAX_PROV), tries, j;
	struct pci_dev *p;
	int ret;

	for (tries = 0; z->nprov < want && tries < 8; tries++) {
		j = fz_rand(z, z->nep);
		p = z->ep[j]->pdev;
		if (z->vf[j] || !pci_resource_len(p, 0))
			continue;
		for (ret = 0; ret < z->nprov && z->prov[ret] != p; ret++)
			;
		if (ret < z->nprov)
			continue;
		z->grp[z->nprov] = devres_open_group(&p->dev, NULL, GFP_KERNEL);
		if (!z->grp[z->nprov]) {
			z->err = -ENOMEM;
			return;
		}
		ret = pci_p2pdma_add_resource(p, 0, 0, 0);
		if (ret) {
			kunit_info(test, "add_resource(%s): %d\n", pci_name(p), ret);
			devres_release_group(&p->dev, z->grp[z->nprov]);
			z->err = ret;
			return;
		}
		z->pub[z->nprov] = fz_rand(z, 3);
		if (z->pub[z->nprov])
			pci_p2pmem_publish(p, true);
		z->prov[z->nprov++] = p;
	}
}

static void fz_teardown(struct fz *z)
{
	while (z->nprov--)
		devres_release_group(&z->prov[z->nprov]->dev,
				     z->grp[z->nprov]);
	fake_pci_destroy(z->fp);
}

static bool fz_dumped(u32 seed)
{
	const char *s = fz_dump, *comma;
	unsigned int v;
	char buf[16];
	size_t n;

	while (*s) {
		comma = strchrnul(s, ',');
		n = min_t(size_t, comma - s, sizeof(buf) - 1);
		memcpy(buf, s, n);
		buf[n] = 0;
		if (!kstrtouint(buf, 10, &v) && v == seed)
			return true;
		s = *comma ? comma + 1 : comma;
	}
	return false;
}

/*
 * One seed: build, register, call, print "seed S calls N crc X"; returns
 * the number of calls, or a negative errno if the hierarchy could not be
 * built.
 */
static int fz_seed(struct kunit *test, struct fz *z, u32 seed)
{
	int ret;

	memset(z, 0, offsetof(struct fz, text));
	prandom_seed_state(&z->rnd, seed);
	seq_buf_init(&z->sb, z->text, sizeof(z->text));
	z->fp = fake_pci_create();
	if (!z->fp)
		return -ENOMEM;
	fz_build(z);
	if (!z->err)
		z->err = fake_pci_scan(z->fp);
	while (!z->err && z->nacs--)
		fake_set_acs_ctrl(z->acs_fn[z->nacs], z->acs_ctrl[z->nacs]);
	if (!z->err)
		fz_provide(test, z);
	if (!z->err)
		fz_calls(z);
	ret = z->err ?: z->calls;
	fz_teardown(z);
	if (ret < 0) {
		kunit_info(test, "seed %u: hierarchy not built: %d\n", seed, ret);
		return ret;
	}
	if (seq_buf_has_overflowed(&z->sb))
		return -EOVERFLOW;
	kunit_info(test, "fuzz: seed %u calls %u crc %08x\n", seed, z->calls,
		   crc32_le(0, z->text, seq_buf_used(&z->sb)));
	if (fz_dumped(seed) || (z->broken && !strcmp(fz_core, "ours")))
		kunit_info(test, "fuzz: seed %u text %s\n", seed,
			   seq_buf_str(&z->sb));
	/* Only our core is held to its own rules here; see fz_broken(). */
	if (!strcmp(fz_core, "ours"))
		KUNIT_EXPECT_EQ_MSG(test, z->broken, 0,
				    "seed %u: a result breaks a rule of p2pdma.rst (\"!\" in its text)",
				    seed);
	return ret;
}

/*
 * 25 cases of a 25th of the seeds each. Each case must stay within
 * KUnit's timeout, and within the debug kernel's hung-task limit (45 s)
 * on one TCG vCPU: at make test's 100 seeds, a case of 10 seeds took up
 * to 56 s there on 7.3 (kunit.py), one of 4 takes about half of the limit.
 */
#define FZ_PARTS	25

static const unsigned int fz_parts[FZ_PARTS] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
	13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
};

static void fz_part_desc(const unsigned int *part, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "part %u", *part);
}

KUNIT_ARRAY_PARAM(fz_part, fz_parts, fz_part_desc);

static void fz_routes(struct kunit *test)
{
	unsigned int part = *(const unsigned int *)test->param_value;
	u32 first = part * fz_seeds / FZ_PARTS + 1;
	u32 last = (part + 1) * fz_seeds / FZ_PARTS, seed;
	unsigned long calls = 0;
	struct fz *z;
	int ret;

	z = kunit_kzalloc(test, sizeof(*z), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, z);
	for (seed = first; seed <= last; seed++) {
		ret = fz_seed(test, z, seed);
		KUNIT_ASSERT_GE_MSG(test, ret, 0, "seed %u", seed);
		calls += ret;
		cond_resched();
	}
	kunit_info(test, "fuzz: seeds %u-%u, %lu calls\n", first, last, calls);
}

static int fz_suite_init(struct kunit_suite *suite)
{
	return allocate_resource(&iomem_resource, &fz_window, FZ_WINDOW,
				 SZ_4G, iomem_resource.end, FZ_WINDOW,
				 NULL, NULL);
}

static void fz_suite_exit(struct kunit_suite *suite)
{
	if (fz_window.parent)
		release_resource(&fz_window);
}

static struct kunit_case p2pdma_fuzz_cases[] = {
	KUNIT_CASE_PARAM_ATTR(fz_routes, fz_part_gen_params, { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite p2pdma_fuzz_suite = {
	.name = "p2pdma_fuzz",
	.suite_init = fz_suite_init,
	.suite_exit = fz_suite_exit,
	.test_cases = p2pdma_fuzz_cases,
};

kunit_test_suite(p2pdma_fuzz_suite);

MODULE_DESCRIPTION("Differential route fuzzing of the PCI P2PDMA API");
MODULE_LICENSE("GPL");
