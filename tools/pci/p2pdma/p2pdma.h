/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the p2pdma route tool share: the exit statuses, the
 * paths below the sysfs root, the global state main() sets, the kernel's
 * route table (struct route, struct routes), the export state, the bind
 * options and the functions one file calls in another.
 */
#ifndef P2PDMA_TOOL_H
#define P2PDMA_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#define ROUTES_HEADER	"# p2pdma routes v2"
#define DRV_NAME	"p2pmem-bar"

#define EXIT_OK		0
#define EXIT_FAIL	1
#define EXIT_USAGE	2
#define EXIT_PERM	3
#define EXIT_NOKERNEL	4

/* Paths below the sysfs root, as the kernel names them. */
#define DEVICES		"bus/pci/devices"
#define DRIVERS_PROBE	"bus/pci/drivers_probe"
#define ROUTES		"kernel/debug/p2pdma/routes"
#define HB_PARAM	"module/pci_p2pdma/parameters/host_bridges"
#define DRV_PARAMS	"module/p2pmem_bar/parameters"
#define MISC_P2PMEM	"class/misc/p2pmem"

extern const char *sysfs;
extern const char *prog;

enum { F_PROVIDER, F_CLIENT, F_MAP, F_DIST, F_POLICY, F_ACS, F_HB, F_REASON, NR_FIELDS };

struct route {
	char *f[NR_FIELDS];
	int note;		/* footnote of a refusal in the matrix, or 0 */
};

struct routes {
	struct route *r;
	size_t nr;
};

#define RULES_LEN 4096

/* Whether /dev/p2pmem can export a provider's memory as a dma-buf. */
enum export_state { EXPORT_YES, EXPORT_UNPUBLISHED, EXPORT_NO_DEV, EXPORT_NO_MEM };

struct bind_opts {
	char bar[24];
	char offset[24];
	char size[24];
	bool publish;
	bool force;
};

/* sysfs.c */
void usage_error(const char *fmt, const char *arg);
int errno_status(int err);
int report_errno(const char *what, const char *path, int err);
void sys_path(char *buf, size_t len, const char *fmt, ...);
int read_str(const char *path, char *buf, size_t len);
void read_dev_attr(const char *bdf, const char *attr, char *buf, size_t len);
int write_str(const char *path, const char *s);
bool is_dir(const char *path);
bool hex_run(const char *s, size_t n);
bool is_pci_addr(const char *s);
char *parse_addr(const char *arg);
void driver_of(const char *bdf, char *buf, size_t len);
unsigned long long to_ull(const char *s);
void human_bytes(char *buf, size_t len, const char *bytes);
void *xrealloc(void *p, size_t size);
enum export_state export_state(const char *bdf, const char *pub);

/* list.c */
int cmd_list(bool opt_list);

/* routes.c */
struct route *find_route(struct routes *t, const char *p, const char *c);
bool by_override(const struct route *r);
void allow_value(const struct route *r, const char *rules, char *buf, size_t len);
const char *reason_of(const struct route *r);
int load_all(char *rules, struct routes *t, char **devs, int ndevs);

/* print.c */
int cmd_routes(char **devs, int ndevs, bool opt_list);
int cmd_route(char *provider, char *client, bool opt_list);

/* bind.c */
void parse_bytes(const char *arg, char *out, size_t len);
int cmd_bind(const char *bdf, const struct bind_opts *o);
int cmd_unbind(const char *bdf, bool force);

#endif /* P2PDMA_TOOL_H */
