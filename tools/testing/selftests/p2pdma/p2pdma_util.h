/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the P2PDMA kselftests share: sysfs files, the NVMe controller
 * a topology names by serial, a provider's p2pmem directory, binding and
 * unbinding the provider's driver in bounded time, the byte patterns the
 * tests write and compare, and touching a mapping that may fault.
 *
 * Their code is p2pdma_util.c, linked into every program (Makefile).
 */
#ifndef P2PDMA_UTIL_H
#define P2PDMA_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

struct nvme_dev {
	char bdf[32];		/* PCI address, e.g. 0000:03:00.0 */
	char blk[300];		/* /dev/nvmeXnY */
};

int read_file(const char *path, char *buf, size_t len);

int write_file(const char *path, const char *val);

long long read_ull(const char *fmt, const char *bdf);

#define P2PMEM		"/sys/bus/pci/devices/%s/p2pmem/"
#define available(bdf)	read_ull(P2PMEM "available", bdf)

/* Find the NVMe controller with serial @serial; 0 on success. */
int find_nvme(const char *serial, struct nvme_dev *nd);

/*
 * The first PCI function whose vendor and device, as sysfs gives them
 * ("0x1234 0x11e8": both files, a space between), are @id, into @bdf; 0 on
 * success, -1 if there is none.
 */
int find_pci(const char *id, char *bdf, size_t len);

/* Wait up to 20 s for the provider's p2pmem directory to (re)appear. */
int wait_p2pmem(const char *bdf);

/* "0000:03:00.0" -> domain, bus, devfn; 0 on success. */
int parse_bdf(const char *bdf, __u32 *domain, __u32 *bus, __u32 *devfn);

/* Seconds since an arbitrary point, CLOCK_MONOTONIC. */
double now(void);

/*
 * The errno of an O_DIRECT I/O whose P2P memory the disk cannot reach:
 * the block layer's choice, not the P2PDMA core's (6.12: EREMOTEIO, 7.3:
 * EINVAL). qemu/run.sh names it in P2P_REFUSED_ERRNO; EREMOTEIO without.
 */
int refused_errno(void);

#define BIND_TIMEOUT_S	60

/* The driver the provider was bound to when the case began. */
extern char provider_drv[64];

/* Remember the driver @bdf is bound to, for set_bound(); 0 on success. */
int remember_driver(const char *bdf);

/*
 * Bind or unbind @bdf to or from provider_drv (remember_driver()). The
 * write happens in a child process, waited for at most BIND_TIMEOUT_S
 * seconds, polled every 10 ms (callers time the unbind): an unbind that
 * never ends (a leaked page reference keeps memunmap_pages() waiting) then
 * fails the case that did it, by name, instead of hanging the whole run.
 * The stuck child is left behind; nothing can kill it.
 * Returns 0, -1 if the write failed, or -ETIMEDOUT.
 */
int set_bound(const char *bdf, bool bind);

/* A byte of a hash of page index @page (multiply and xorshift). */
unsigned char pat_page(size_t page);

/*
 * The byte at offset @i of pattern @seed. Within a page the byte follows
 * the offset; a hash of the page index is mixed in, so that bytes that
 * landed a whole number of pages (or 2 MiB batches) away from where they
 * belong do not compare equal: without it the pattern repeated every
 * 128 KiB.
 */
unsigned char pat(size_t i, unsigned int seed);

/* Write pattern @seed into @len bytes at @p (the page's hash once a page). */
void fill(unsigned char *p, size_t len, unsigned int seed);

/* Offset of the first byte of @p that is not pattern @seed, or -1. */
long mismatch(const unsigned char *p, size_t len, unsigned int seed);

/*
 * Offset of the first non-zero byte of @p, or -1 if all @len (a multiple
 * of 8) are zero. Reads 8 bytes at a time: each load from an emulated CMB
 * is a call into the device model.
 */
long first_nonzero(const unsigned char *p, size_t len);

/*
 * Read the byte at @p (into *@v unless NULL) or write 0x5a there, an access
 * the compiler cannot drop; return the signal it raised (SIGBUS, SIGSEGV),
 * or 0.
 */
int access_byte(unsigned char *p, bool write, unsigned char *v);

/* Read or write (0x5a) the byte at @p: access_byte(). */
int touch(unsigned char *p, bool write);

/*
 * How many records holding @a (and @b, unless NULL) has the kernel logged
 * since the last read of @kmsg, /dev/kmsg opened O_NONBLOCK and sought to
 * its end? Reads every record there is.
 */
int kmsg_count(int kmsg, const char *a, const char *b);

/* Has the kernel logged such a record since (kmsg_count())? */
int kmsg_logged(int kmsg, const char *a, const char *b);

#endif /* P2PDMA_UTIL_H */
