// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: the administrator's host bridge rules.
 *
 * Owns the rules of pci_p2pdma.host_bridges=, on the command line or in
 * /sys/module/pci_p2pdma/parameters/host_bridges: parsing them (a
 * malformed value is refused with a log line naming the rule), logging
 * each change, and telling host-bridge.c and route.c which rule, if any,
 * decides for a host bridge. It calls no other file of the core: route.c
 * registers the parameter and, after a change, drops the cached verdicts
 * and has host-bridge.c name what the rules risk.
 * No list of root complexes that forward peer-to-peer requests is
 * complete, and some platforms that claim P2P support corrupt the
 * traffic, so an operator may allow or deny P2P through named host bridges without
 * waiting for a new kernel. The rules replace the built-in policy only
 * for the host bridges they match (p2p_host_bridge_verdict()).
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/ctype.h>
#include <linux/kstrtox.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "p2pdma.h"

static struct p2p_hb_policy p2p_policy;
static DEFINE_SEQLOCK(p2p_policy_lock);

/* Set once the boot policy has been logged; later changes log themselves. */
static bool p2p_policy_is_booted;

/* Parse exactly @digits (or 1 to -@digits) hex digits of @s, up to @end. */
static int p2p_parse_hex(const char *s, const char *end, int digits, u32 *val)
{
	int len = end - s;
	char tmp[9];

	if (digits > 0 ? len != digits : len < 1 || len > -digits)
		return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (!isxdigit(tmp[0]))
		return -EINVAL;
	return kstrtou32(tmp, 16, val);
}

/* Parse one rule, @s of length @len; NULL or the reason it is malformed. */
static const char *p2p_parse_rule(const char *s, size_t len,
				  struct p2p_hb_rule *rule)
{
	const char *end = s + len, *colon;

	if (len > 6 && !strncmp(s, "allow:", 6)) {
		rule->allow = true;
		s += 6;
	} else if (len > 5 && !strncmp(s, "deny:", 5)) {
		rule->allow = false;
		s += 5;
	} else {
		return "a rule is allow:SEL or deny:SEL";
	}
	if (end - s == 3 && !strncmp(s, "all", 3)) {
		rule->sel = P2P_SEL_ALL;
		rule->a = 0;
		rule->b = 0;
		return NULL;
	}
	colon = memchr(s, ':', end - s);
	if (!colon)
		goto bad_sel;
	if (end - colon - 1 == 2) {
		rule->sel = P2P_SEL_ROOT_BUS;
		if (p2p_parse_hex(s, colon, -8, &rule->a) ||
		    p2p_parse_hex(colon + 1, end, 2, &rule->b))
			goto bad_sel;
		return NULL;
	}
	rule->sel = P2P_SEL_ID;
	if (!p2p_parse_hex(s, colon, 4, &rule->a) &&
	    !p2p_parse_hex(colon + 1, end, 4, &rule->b))
		return NULL;
bad_sel:
	return "SEL is all, DDDD:BB (PCI domain:root bus, hex) or VVVV:DDDD (vendor:device, hex)";
}

/*
 * Parse @val (one trailing newline allowed) into @pol. On a malformed
 * value, log which rule and why, and return -EINVAL.
 */
static int p2p_policy_parse(const char *val, struct p2p_hb_policy *pol)
{
	size_t len = val ? strlen(val) : 0, vlen;
	const char *s = val, *end = val, *why;

	memset(pol, 0, sizeof(*pol));
	if (!val) {
		pr_err("pci_p2pdma.host_bridges needs a value (rules, or empty for none)\n");
		return -EINVAL;
	}
	if (len && val[len - 1] == '\n')
		len--;
	vlen = len;
	while (len) {
		end = memchr(s, ',', len) ?: s + len;
		if (pol->n == P2P_POLICY_MAX_RULES) {
			why = "more than " __stringify(P2P_POLICY_MAX_RULES) " rules";
			goto bad;
		}
		why = p2p_parse_rule(s, end - s, &pol->rule[pol->n]);
		if (why)
			goto bad;
		pol->n++;
		len -= end - s;
		s = end;
		if (len) {	/* skip the comma; it must be followed by a rule */
			s++;
			if (!--len) {
				end = s;
				why = "empty rule after ','";
				goto bad;
			}
		}
	}
	return 0;
bad:
	pr_err("pci_p2pdma.host_bridges: '%.*s' rejected at '%.*s': %s; policy unchanged\n",
	       (int)min_t(size_t, vlen, 200), val,
	       (int)min_t(size_t, end - s, 40), s, why);
	return -EINVAL;
}

/* Print @pol as it would be written, without a newline. */
int p2p_policy_print(const struct p2p_hb_policy *pol, char *buf,
		     size_t size)
{
	const struct p2p_hb_rule *r;
	int i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < pol->n; i++) {
		r = &pol->rule[i];
		n += scnprintf(buf + n, size - n, "%s%s:", i ? "," : "",
			       r->allow ? "allow" : "deny");
		if (r->sel == P2P_SEL_ALL)
			n += scnprintf(buf + n, size - n, "all");
		else if (r->sel == P2P_SEL_ROOT_BUS)
			n += scnprintf(buf + n, size - n, "%04x:%02x", r->a, r->b);
		else
			n += scnprintf(buf + n, size - n, "%04x:%04x", r->a, r->b);
	}
	return n;
}

static void p2p_policy_snapshot(struct p2p_hb_policy *pol)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&p2p_policy_lock);
		*pol = p2p_policy;
	} while (read_seqretry(&p2p_policy_lock, seq));
}

/*
 * A route verdict worked out between p2p_policy_seq_begin() and a false
 * p2p_policy_seq_retry() rests on one policy; a true retry means the
 * policy changed meanwhile. Any context.
 */
unsigned int p2p_policy_seq_begin(void)
{
	return read_seqbegin(&p2p_policy_lock);
}

bool p2p_policy_seq_retry(unsigned int seq)
{
	return read_seqretry(&p2p_policy_lock, seq);
}

/* Whether p2p_policy_boot() has run: the buses may be scanned. */
bool p2p_policy_booted(void)
{
	return READ_ONCE(p2p_policy_is_booted);
}

/*
 * Log the rules the command line gave, if any; from now on every change
 * logs itself and drops the cached verdicts. Once, at arch_initcall.
 */
void __init p2p_policy_boot(void)
{
	struct p2p_hb_policy pol;
	char buf[256];

	p2p_policy_snapshot(&pol);
	if (pol.n) {
		p2p_policy_print(&pol, buf, sizeof(buf));
		pr_info("host bridge policy from the command line: %s\n", buf);
	}
	WRITE_ONCE(p2p_policy_is_booted, true);
}

/*
 * Parse @val and put it in force, and log the change once booted; a route
 * computed across the change sees it (p2p_policy_seq_retry()), and the
 * caller drops the verdicts cached before it. Does not sleep, so that a
 * KUnit case can change the policy in the middle of a route computation,
 * as another CPU would.
 */
int p2p_policy_install(const char *val)
{
	struct p2p_hb_policy pol, old;
	char was[256], now[256];
	unsigned long flags;
	int ret;

	ret = p2p_policy_parse(val, &pol);
	if (ret)
		return ret;
	write_seqlock_irqsave(&p2p_policy_lock, flags);
	old = p2p_policy;
	p2p_policy = pol;
	write_sequnlock_irqrestore(&p2p_policy_lock, flags);
	if (!READ_ONCE(p2p_policy_is_booted))
		return 0;	/* the command line: logged at arch_initcall */
	p2p_policy_print(&old, was, sizeof(was));
	p2p_policy_print(&pol, now, sizeof(now));
	if (strcmp(now, was))
		pr_info("host bridge policy changed to '%s' (was '%s')\n",
			now, was);
	return 0;
}

/* The parameter's get (route.c registers the parameter). */
int p2p_policy_get(char *buf, const struct kernel_param *kp)
{
	struct p2p_hb_policy pol;
	int n;

	p2p_policy_snapshot(&pol);
	n = p2p_policy_print(&pol, buf, PAGE_SIZE - 1);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

/*
 * The rule that decides for @hb, whose ID (p2p_host_bridge_id()) is @id,
 * copied to @rule; false if none matches. Any context.
 */
bool p2p_policy_match(struct pci_host_bridge *hb, u32 id,
		      struct p2p_hb_rule *rule)
{
	u32 domain = pci_domain_nr(hb->bus), bus = hb->bus->number;
	const struct p2p_hb_rule *r;
	unsigned int seq, i;
	bool found;

	do {
		seq = read_seqbegin(&p2p_policy_lock);
		found = false;
		for (i = 0; i < p2p_policy.n && !found; i++) {
			r = &p2p_policy.rule[i];
			found = r->sel == P2P_SEL_ALL ||
				(r->sel == P2P_SEL_ROOT_BUS && r->a == domain &&
				 r->b == bus) ||
				(r->sel == P2P_SEL_ID && id &&
				 r->a == id >> 16 && r->b == (id & 0xffff));
			if (found)
				*rule = *r;
		}
	} while (read_seqretry(&p2p_policy_lock, seq));
	return found;
}

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/host-bridge-policy-kunit.h"
#endif
