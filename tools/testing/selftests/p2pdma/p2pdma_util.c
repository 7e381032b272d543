// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers of p2pdma_util.h, which says what each does: sysfs files, the
 * NVMe controller a topology names by serial, a provider's p2pmem
 * directory, binding and unbinding the provider's driver in bounded time,
 * the byte patterns the tests write and compare, touching a mapping that
 * may fault, and the kernel log.
 */
#include "p2pdma_util.h"

int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

long long read_ull(const char *fmt, const char *bdf)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), fmt, bdf);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 0);
}

int find_nvme(const char *serial, struct nvme_dev *nd)
{
	char path[PATH_MAX], buf[PATH_MAX], *base;
	struct dirent *ctl, *ns;
	DIR *d, *cd;
	int found = -1;

	if (!serial)
		return -1;
	d = opendir("/sys/class/nvme");
	if (!d)
		return -1;
	while (found && (ctl = readdir(d))) {
		if (ctl->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/serial", ctl->d_name);
		if (read_file(path, buf, sizeof(buf)) || strcmp(buf, serial))
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/device", ctl->d_name);
		if (!realpath(path, buf))
			continue;
		base = strrchr(buf, '/');
		snprintf(nd->bdf, sizeof(nd->bdf), "%s", base + 1);
		nd->blk[0] = '\0';
		snprintf(path, sizeof(path), "/sys/class/nvme/%s", ctl->d_name);
		cd = opendir(path);
		while (cd && (ns = readdir(cd))) {
			if (!strncmp(ns->d_name, "nvme", 4) && strchr(ns->d_name + 4, 'n')) {
				snprintf(nd->blk, sizeof(nd->blk), "/dev/%s", ns->d_name);
				break;
			}
		}
		if (cd)
			closedir(cd);
		found = nd->blk[0] ? 0 : -1;
	}
	closedir(d);
	return found;
}

int find_pci(const char *id, char *bdf, size_t len)
{
	char path[512], v[16], d[16], got[40];
	struct dirent *e;
	DIR *dir = opendir("/sys/bus/pci/devices");
	int ret = -1;

	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if (read_file(path, v, sizeof(v)))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", e->d_name);
		if (read_file(path, d, sizeof(d)))
			continue;
		snprintf(got, sizeof(got), "%s %s", v, d);
		if (!strcmp(got, id)) {
			snprintf(bdf, len, "%s", e->d_name);
			ret = 0;
			break;
		}
	}
	closedir(dir);
	return ret;
}

int wait_p2pmem(const char *bdf)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (available(bdf) >= 0)
			return 0;
		usleep(100000);
	}
	return -1;
}

int parse_bdf(const char *bdf, __u32 *domain, __u32 *bus, __u32 *devfn)
{
	unsigned int d, b, s, f;

	if (sscanf(bdf, "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
		return -1;
	*domain = d;
	*bus = b;
	*devfn = s << 3 | f;
	return 0;
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

char provider_drv[64];

int remember_driver(const char *bdf)
{
	char path[PATH_MAX], buf[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", bdf);
	if (!realpath(path, buf))
		return -1;
	snprintf(provider_drv, sizeof(provider_drv), "%s", strrchr(buf, '/') + 1);
	return 0;
}

int set_bound(const char *bdf, bool bind)
{
	char path[256];
	int status, i;
	pid_t pid;

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/%s", provider_drv,
		 bind ? "bind" : "unbind");
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(write_file(path, bdf) ? 1 : 0);
	for (i = 0; i < BIND_TIMEOUT_S * 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
		usleep(10000);
	}
	fprintf(stderr, "# %s of %s still blocked after %d s\n",
		bind ? "bind" : "unbind", bdf, BIND_TIMEOUT_S);
	return -ETIMEDOUT;
}

unsigned char pat_page(size_t page)
{
	uint32_t h = (uint32_t)page * 0x9e3779b1u;

	h ^= h >> 15;
	h *= 0x85ebca77u;
	h ^= h >> 13;
	return (unsigned char)h;
}

unsigned char pat(size_t i, unsigned int seed)
{
	return (unsigned char)(((i * 131 + seed) ^ (i >> 9)) ^ pat_page(i >> 12));
}

void fill(unsigned char *p, size_t len, unsigned int seed)
{
	unsigned char h = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!i || !(i & 4095))
			h = pat_page(i >> 12);
		p[i] = (unsigned char)(((i * 131 + seed) ^ (i >> 9)) ^ h);
	}
}

long mismatch(const unsigned char *p, size_t len, unsigned int seed)
{
	unsigned char h = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!i || !(i & 4095))
			h = pat_page(i >> 12);
		if (p[i] != (unsigned char)(((i * 131 + seed) ^ (i >> 9)) ^ h))
			return i;
	}
	return -1;
}

long first_nonzero(const unsigned char *p, size_t len)
{
	const uint64_t *q = (const uint64_t *)p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (q[i])
			return i * 8 + __builtin_ctzll(q[i]) / 8;
	return -1;
}

/* Per thread, so that several threads may touch() at once. */
static __thread sigjmp_buf fault_jmp;
static __thread int fault_armed;	/* with __atomic: the handler reads it */
/*
 * The signal number travels back as sigsetjmp()'s return value. A fault
 * outside touch() gets the default action when the access is retried.
 */
static void on_fault(int sig)
{
	if (!__atomic_load_n(&fault_armed, __ATOMIC_SEQ_CST)) {
		signal(sig, SIG_DFL);
		return;
	}
	__atomic_store_n(&fault_armed, 0, __ATOMIC_SEQ_CST);
	siglongjmp(fault_jmp, sig);
}

int access_byte(unsigned char *p, bool write, unsigned char *v)
{
	struct sigaction sa = { .sa_handler = on_fault };
	unsigned char b;
	int sig;

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sig = sigsetjmp(fault_jmp, 1);
	if (!sig) {
		__atomic_store_n(&fault_armed, 1, __ATOMIC_SEQ_CST);
		if (write) {
			__atomic_store_n(p, 0x5a, __ATOMIC_RELAXED);
		} else {
			b = __atomic_load_n(p, __ATOMIC_RELAXED);
			if (v)
				*v = b;
		}
		__atomic_store_n(&fault_armed, 0, __ATOMIC_SEQ_CST);
	}
	return sig;
}

int touch(unsigned char *p, bool write)
{
	return access_byte(p, write, NULL);
}

int kmsg_count(int kmsg, const char *a, const char *b)
{
	char rec[2048];
	int count = 0;
	ssize_t n;

	while ((n = read(kmsg, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0) {
			if (errno == EPIPE)
				continue;
			break;
		}
		rec[n] = '\0';
		count += strstr(rec, a) && (!b || strstr(rec, b));
	}
	return count;
}

int kmsg_logged(int kmsg, const char *a, const char *b)
{
	return kmsg_count(kmsg, a, b) > 0;
}

int refused_errno(void)
{
	const char *name = getenv("P2P_REFUSED_ERRNO");

	/* A positive errno: it is compared with errno. */
	return name && !strcmp(name, "EINVAL") ? EINVAL : EREMOTEIO;
}
