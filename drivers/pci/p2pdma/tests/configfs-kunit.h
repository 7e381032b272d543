/* SPDX-License-Identifier: GPL-2.0 */
/*
 * configfs helpers suite: pci_p2pdma_enable_store() and
 * pci_p2pdma_enable_show() against a fake provider that published its
 * (empty) range, one with P2P state that did not publish, and a fake
 * device without P2P memory. Included at the end of configfs.c.
 */

#include "p2pdma-kunit.h"

/* One host bridge, one root port, one device of three functions. */
enum { CF_RP, CF_FN0, CF_FN1, CF_FN2, CF_FNS };

static const struct fake_line cf_topology[] = {
	FAKE_HOST_LINE(0x00, FAKE_VENDOR, 0x0001, HB_CLASS),
	FAKE_RP_LINE(CF_RP),
	FAKE_EP_LINE(CF_FN0, CF_RP, 3),
};

static struct fake_pci *cf_fp;
static struct fake_fn *cf_fn[CF_FNS];
static struct fake_fn *cf_prov, *cf_plain, *cf_unpub;
/* The published provider's range: see pv_ranges. */
static struct p2p_region cf_range;

static void cf_suite_exit(struct kunit_suite *suite)
{
	fake_pci_destroy(cf_fp);
	cf_fp = NULL;
}

static int cf_suite_init(struct kunit_suite *suite)
{
	int ret;

	memset(&cf_range, 0, sizeof(cf_range));
	ret = fake_pci_table(&cf_fp, cf_topology, ARRAY_SIZE(cf_topology),
			     cf_fn, 0, 0);
	if (ret)
		return ret;
	cf_prov = cf_fn[CF_FN0];
	cf_plain = cf_fn[CF_FN1];
	cf_unpub = cf_fn[CF_FN2];
	ret = pv_setup_provider(cf_prov->pdev, &cf_range);
	if (!ret)
		ret = pv_setup_provider(cf_unpub->pdev, NULL);
	if (!ret) {
		pci_p2pmem_publish(cf_prov->pdev, true);
		return 0;
	}
	cf_suite_exit(suite);
	return ret;
}

/* What to put in place of %s in an input. */
enum cf_name { CF_NONE, CF_PROV, CF_PLAIN, CF_PROV_UPPER, CF_UNPUB };

/* What *p2p_dev must hold afterwards. */
enum cf_dev { CF_UNTOUCHED, CF_PROVIDER };

struct store_case {
	const char *desc;
	const char *fmt;	/* input, with %s for a device name */
	size_t len;		/* bytes of @fmt when it holds a NUL; else 0 */
	enum cf_name name;
	int ret;
	bool use;		/* meaningful when ret == 0; else untouched */
	enum cf_dev dev;
};

#define YES(d, s)	{ d, s, 0, CF_NONE, 0, true, CF_UNTOUCHED }
#define NO(d, s)	{ d, s, 0, CF_NONE, 0, false, CF_UNTOUCHED }
#define BAD(d, s, e)	{ d, s, 0, CF_NONE, e, false, CF_UNTOUCHED }

/*
 * The input is first looked up as a PCI device name (one trailing newline
 * is ignored, as by sysfs_streq()); anything else goes to kstrtobool(),
 * which decides on the first one or two characters alone, except that a
 * leading digit must be followed by a control character (as Linux 6.12
 * does, seen with make test-upstream). What fails is -ENODEV. A boolean
 * leaves *p2p_dev as it was.
 */
static const struct store_case store_cases[] = {
	YES("1", "1"), NO("0", "0"),
	YES("y", "y"), YES("Y", "Y"), NO("n", "n"), NO("N", "N"),
	YES("yes", "yes"), YES("YES", "YES"), YES("Yes", "Yes"),
	NO("no", "no"), NO("NO", "NO"), NO("No", "No"),
	YES("t", "t"), YES("T", "T"), NO("f", "f"), NO("F", "F"),
	YES("true", "true"), YES("TRUE", "TRUE"), YES("True", "True"),
	NO("false", "false"), NO("FALSE", "FALSE"),
	YES("on", "on"), YES("ON", "ON"), YES("oN", "oN"),
	NO("off", "off"), NO("OFF", "OFF"), NO("Off", "Off"), NO("of", "of"),
	YES("1-newline", "1\n"), NO("0-newline", "0\n"),
	YES("on-crlf", "on\r\n"),
	/* Only the first characters count. */
	YES("yess", "yess"), YES("yes-please", "yes please"),
	YES("long-true", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"),
	YES("tomorrow", "tomorrow"), NO("nope", "nope"),
	/* A letter first: a boolean, even if it looks like an address. */
	NO("no-such-domain-f", "ffff:00:00.0\n"), NO("face", "face"),
	/* A digit: only if a control character follows. */
	YES("1-tab", "1\t"), YES("1-cr", "1\r"), YES("1-crlf", "1\r\n"),
	YES("1-soh", "1\x01"), YES("1-del", "1\x7f"), NO("0-us", "0\x1f"),
	YES("1-newline-0", "1\n0"), NO("0-newline-1", "0\n1"),
	YES("1-newlines", "1\n\n"),
	BAD("10", "10", -ENODEV), BAD("01", "01", -ENODEV),
	BAD("00", "00", -ENODEV), BAD("11", "11", -ENODEV),
	BAD("1-space", "1 ", -ENODEV), BAD("1-colon", "1:", -ENODEV),
	BAD("0-dot", "0.", -ENODEV), BAD("1-high-byte", "1\x81", -ENODEV),
	BAD("1000", "1000", -ENODEV), BAD("0x1", "0x1", -ENODEV),
	BAD("no-such-device-0", "0000:ff:1f.7", -ENODEV),
	BAD("no-such-device-9", "9999:ff:1f.7", -ENODEV),
	BAD("short-address", "00:00.0", -ENODEV),
	BAD("device-then-garbage", "0000:00:00.0-abcdefghijklmnopqrs",
	    -ENODEV),
	{ "nul-inside", "on\0garbage", 10, CF_NONE, 0, true, CF_UNTOUCHED },
	{ "provider", "%s", 0, CF_PROV, 0, true, CF_PROVIDER },
	{ "provider-newline", "%s\n", 0, CF_PROV, 0, true, CF_PROVIDER },
	{ "provider-spaces", " \t%s\t\n", 0, CF_PROV, -ENODEV, false,
	  CF_UNTOUCHED },
	{ "provider-upper-case", "%s", 0, CF_PROV_UPPER, -ENODEV, false,
	  CF_UNTOUCHED },
	{ "no-p2p-memory", "%s", 0, CF_PLAIN, -ENODEV, false, CF_UNTOUCHED },
	{ "no-p2p-memory-newline", "%s\n", 0, CF_PLAIN, -ENODEV, false,
	  CF_UNTOUCHED },
	{ "unpublished", "%s", 0, CF_UNPUB, -ENODEV, false, CF_UNTOUCHED },
	{ "unpublished-newline", "%s\n", 0, CF_UNPUB, -ENODEV, false,
	  CF_UNTOUCHED },
	BAD("no-such-device", "7e57:1f:00.0", -ENODEV),
	BAD("colon-garbage", "a:b", -ENODEV),
	BAD("bogus", "bogus", -ENODEV),
	BAD("empty", "", -ENODEV),
	BAD("spaces-only", "   ", -ENODEV),
	BAD("newline-only", "\n", -ENODEV),
	BAD("yes-spaces", "  yes  ", -ENODEV),
	BAD("off-tabs-newline", "\toff\t\n", -ENODEV),
	BAD("n-leading-newline", "\nn", -ENODEV),
	BAD("31-chars", "abcdefghijklmnopqrstuvwxyz01234", -ENODEV),
	BAD("32-chars", "abcdefghijklmnopqrstuvwxyz012345", -ENODEV),
	BAD("2", "2", -ENODEV),
	BAD("minus-1", "-1", -ENODEV),
	BAD("o", "o", -ENODEV),
	BAD("ox", "ox", -ENODEV),
	BAD("binary", "\x01\x02\xff\xfe", -ENODEV),
	BAD("high-bit", "\xe9t\xe9", -ENODEV),
};

static void store_case_desc(const struct store_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(store, store_cases, store_case_desc);

static unsigned int cf_refs(struct fake_fn *fn)
{
	return kref_read(&fn->pdev->dev.kobj.kref);
}

/* Exact return value, outputs, and no leaked device reference. */
static void store_test(struct kunit *test)
{
	const struct store_case *c = test->param_value;
	struct pci_dev *sentinel = ERR_PTR(-EFAULT), *dev = sentinel;
	unsigned int prov_refs = cf_refs(cf_prov);
	unsigned int plain_refs = cf_refs(cf_plain);
	unsigned int unpub_refs = cf_refs(cf_unpub);
	char name[32], *in;
	bool use, init;
	int ret, i;

	in = kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	strscpy(name, pci_name(c->name == CF_PLAIN ? cf_plain->pdev :
			       c->name == CF_UNPUB ? cf_unpub->pdev :
						     cf_prov->pdev), sizeof(name));
	if (c->name == CF_PROV_UPPER)
		for (i = 0; name[i]; i++)
			name[i] = toupper(name[i]);
	if (c->len)
		memcpy(in, c->fmt, c->len);
	else if (c->name != CF_NONE)
		snprintf(in, 256, c->fmt, name);
	else
		strscpy(in, c->fmt, 256);

	/* Run twice, so that "untouched" shows with either initial value. */
	for (init = false; ; init = true) {
		use = init;
		dev = sentinel;
		ret = pci_p2pdma_enable_store(in, &dev, &use);
		KUNIT_EXPECT_EQ(test, ret, c->ret);
		KUNIT_EXPECT_EQ(test, use, c->ret ? init : c->use);
		KUNIT_EXPECT_PTR_EQ(test, dev, c->dev == CF_PROVIDER ?
				    cf_prov->pdev : sentinel);
		if (c->dev == CF_PROVIDER && dev == cf_prov->pdev) {
			KUNIT_EXPECT_EQ(test, cf_refs(cf_prov), prov_refs + 1);
			pci_dev_put(dev);
		}
		KUNIT_EXPECT_EQ(test, cf_refs(cf_prov), prov_refs);
		KUNIT_EXPECT_EQ(test, cf_refs(cf_plain), plain_refs);
		KUNIT_EXPECT_EQ(test, cf_refs(cf_unpub), unpub_refs);
		if (init)
			break;
	}
}

/* Output for each state, and that it reads back as the same state. */
static void show_test(struct kunit *test)
{
	char *page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct pci_dev *dev;
	bool use;
	char want[32];

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_enable_show(page, NULL, false), 2);
	KUNIT_EXPECT_STREQ(test, page, "0\n");
	KUNIT_EXPECT_EQ(test, pci_p2pdma_enable_show(page, cf_prov->pdev,
						     false), 2);
	KUNIT_EXPECT_STREQ(test, page, "0\n");
	KUNIT_EXPECT_EQ(test, pci_p2pdma_enable_show(page, NULL, true), 2);
	KUNIT_EXPECT_STREQ(test, page, "1\n");
	dev = NULL;
	KUNIT_EXPECT_EQ(test, pci_p2pdma_enable_store(page, &dev, &use), 0);
	KUNIT_EXPECT_TRUE(test, use);
	KUNIT_EXPECT_NULL(test, dev);

	snprintf(want, sizeof(want), "%s\n", pci_name(cf_prov->pdev));
	KUNIT_EXPECT_EQ(test, pci_p2pdma_enable_show(page, cf_prov->pdev, true),
			strlen(want));
	KUNIT_EXPECT_STREQ(test, page, want);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_enable_store(page, &dev, &use), 0);
	KUNIT_EXPECT_TRUE(test, use);
	KUNIT_EXPECT_PTR_EQ(test, dev, cf_prov->pdev);
	if (!IS_ERR_OR_NULL(dev))
		pci_dev_put(dev);
}

/* Each failure says why in one line. */
static void store_logs_test(struct kunit *test)
{
	struct pci_dev *dev;
	bool use;
	u64 mark;

	mark = kunit_kmsg_mark();
	pci_p2pdma_enable_store("", &dev, &use);
	pci_p2pdma_enable_store("bogus", &dev, &use);
	pci_p2pdma_enable_store("7e57:1f:00.0", &dev, &use);
	pci_p2pdma_enable_store("10\n", &dev, &use);
	pci_p2pdma_enable_store(pci_name(cf_plain->pdev), &dev, &use);
	pci_p2pdma_enable_store(pci_name(cf_unpub->pdev), &dev, &use);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "p2pmem: ", NULL,
					       NULL), 6);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "p2pmem: ",
					       "'bogus'", NULL), 1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "p2pmem: ",
					       "7e57:1f:00.0", NULL), 1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "p2pmem: ",
					       "'10'", "stand alone"), 1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "no published",
					       pci_name(cf_plain->pdev), NULL),
			1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "no published",
					       pci_name(cf_unpub->pdev), NULL),
			1);
}

static struct kunit_case p2pdma_configfs_cases[] = {
	KUNIT_CASE_PARAM(store_test, store_gen_params),
	KUNIT_CASE(show_test),
	KUNIT_CASE(store_logs_test),
	{}
};

static struct kunit_suite p2pdma_configfs_suite = {
	.name = "p2pdma-configfs",
	.suite_init = cf_suite_init,
	.suite_exit = cf_suite_exit,
	.test_cases = p2pdma_configfs_cases,
};

kunit_test_suite(p2pdma_configfs_suite);
