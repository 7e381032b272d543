// SPDX-License-Identifier: GPL-2.0
/*
 * p2pdma list: every P2P memory provider, its size, available and in-use
 * bytes, and whether /dev/p2pmem can export its memory as a dma-buf (the
 * export state of sysfs.c, which "route" prints too).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2pdma.h"

static const struct {
	const char *word;	/* list -l */
	const char *text;	/* list */
} export_names[] = {
	[EXPORT_YES]		= { "yes", "yes" },
	[EXPORT_UNPUBLISHED]	= { "unpublished", "no (unpublished)" },
	[EXPORT_NO_DEV]		= { "no-dev", "no (no /dev/p2pmem)" },
	[EXPORT_NO_MEM]		= { "no-memory", "no (no P2P memory)" },
};

static int filter_dots(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int cmd_list(bool opt_list)
{
	struct dirent **names;
	char path[PATH_MAX], drv[NAME_MAX + 1];
	char size[32], avail[32], used[32], pub[16], ven[16], dev[16];
	int i, n, found = 0, status = EXIT_OK;

	sys_path(path, sizeof(path), DEVICES);
	n = scandir(path, &names, filter_dots, alphasort);
	if (n < 0)
		return report_errno("cannot list", path, errno);
	for (i = 0; i < n; i++) {
		const char *bdf = names[i]->d_name;
		enum export_state exp;
		char human[3][64];
		int err = 0;

		sys_path(path, sizeof(path), DEVICES "/%s/p2pmem", bdf);
		if (!is_dir(path))
			continue;
		if (!found++ && !opt_list)
			printf("%-12s  %-23s  %-23s  %-23s  %-9s  %-19s  %-12s  %s\n",
			       "provider", "size", "available", "in use", "published",
			       "export", "driver", "vendor:device");
		sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/size", bdf);
		err = read_str(path, size, sizeof(size));
		if (!err) {
			sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/available", bdf);
			err = read_str(path, avail, sizeof(avail));
		}
		if (!err) {
			sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/published", bdf);
			err = read_str(path, pub, sizeof(pub));
		}
		if (err == ENOENT)	/* unbound while we looked */
			continue;
		if (err) {
			status = report_errno("cannot read", path, err);
			continue;
		}
		read_dev_attr(bdf, "vendor", ven, sizeof(ven));
		read_dev_attr(bdf, "device", dev, sizeof(dev));
		driver_of(bdf, drv, sizeof(drv));
		if (!drv[0])
			snprintf(drv, sizeof(drv), "-");
		/* available is never above size; a kernel that broke that shows 0. */
		snprintf(used, sizeof(used), "%llu", to_ull(size) > to_ull(avail) ?
			 to_ull(size) - to_ull(avail) : 0);
		human_bytes(human[0], sizeof(human[0]), size);
		human_bytes(human[1], sizeof(human[1]), avail);
		human_bytes(human[2], sizeof(human[2]), used);
		exp = export_state(bdf, pub);
		/*
		 * -l: the in-use bytes (1.1), then export (1.2), after the
		 * fields of version 1.0.
		 */
		if (opt_list)
			printf("%s %s %s %s %s %s:%s %s %s\n", bdf, size, avail,
			       strcmp(pub, "0") ? "yes" : "no", drv,
			       strncmp(ven, "0x", 2) ? ven : ven + 2,
			       strncmp(dev, "0x", 2) ? dev : dev + 2, used,
			       export_names[exp].word);
		else
			printf("%-12s  %-23s  %-23s  %-23s  %-9s  %-19s  %-12s  %s:%s\n",
			       bdf, human[0], human[1], human[2],
			       strcmp(pub, "0") ? "yes" : "no", export_names[exp].text,
			       drv, strncmp(ven, "0x", 2) ? ven : ven + 2,
			       strncmp(dev, "0x", 2) ? dev : dev + 2);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (!found && !opt_list)
		printf("(no P2P memory providers: no %s/" DEVICES "/*/p2pmem)\n", sysfs);
	return status;
}
