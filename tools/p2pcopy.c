// SPDX-License-Identifier: GPL-2.0
/*
 * p2pcopy - copy between block devices with O_DIRECT through a buffer of
 * P2P memory mmapped from /sys/bus/pci/devices/<bdf>/p2pmem/allocate, or
 * through host RAM for comparison, and report the throughput.
 *
 * Usage: p2pcopy (-m BDF | -r) -s SRC -d DST -n BYTES [-c CHUNK]
 *                [-S SRC_OFFSET] [-D DST_OFFSET] [-E EREMOTEIO|EINVAL]
 *
 * Exit status: 0 copied; 3 the read into the buffer was refused; 4 the
 * write from the buffer was refused; 1 any other failure; 2 bad usage.
 * Refused means failed with the errno the block layer gives an I/O whose
 * P2P memory the disk cannot reach: -E names it (EREMOTEIO, the default,
 * in Linux 6.12; EINVAL in 7.3, whose blk-mq-dma fails such a request
 * with BLK_STS_INVAL).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void print_usage(void)
{
	fputs("usage: p2pcopy (-m BDF | -r) -s SRC -d DST -n BYTES\n"
	      "               [-c CHUNK] [-S SRC_OFFSET] [-D DST_OFFSET]\n"
	      "               [-E EREMOTEIO|EINVAL]\n", stderr);
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *bdf = NULL, *src = NULL, *dst = NULL;
	unsigned long long bytes = 0, chunk = 1 << 20, soff = 0, doff = 0, done;
	int ram = 0, refused = EREMOTEIO, opt, sfd, dfd;
	char path[256];
	double t0, t;
	void *buf;

	while ((opt = getopt(argc, argv, "m:rs:d:n:c:S:D:E:")) != -1) {
		switch (opt) {
		case 'm':
			bdf = optarg;
			break;
		case 'r':
			ram = 1;
			break;
		case 's':
			src = optarg;
			break;
		case 'd':
			dst = optarg;
			break;
		case 'n':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			chunk = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			soff = strtoull(optarg, NULL, 0);
			break;
		case 'D':
			doff = strtoull(optarg, NULL, 0);
			break;
		case 'E':
			if (!strcmp(optarg, "EREMOTEIO"))
				refused = EREMOTEIO;
			else if (!strcmp(optarg, "EINVAL"))
				refused = EINVAL;
			else
				print_usage();
			break;
		default:
			print_usage();
		}
	}
	if (!src || !dst || !bytes || !chunk || (!bdf == !ram) || bytes % chunk)
		print_usage();

	if (ram) {
		if (posix_memalign(&buf, 4096, chunk)) {
			perror("p2pcopy: posix_memalign");
			return 1;
		}
	} else {
		int mfd;

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem/allocate", bdf);
		mfd = open(path, O_RDWR);
		if (mfd < 0) {
			fprintf(stderr, "p2pcopy: open %s: %s\n", path, strerror(errno));
			return 1;
		}
		buf = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
		if (buf == MAP_FAILED) {
			fprintf(stderr, "p2pcopy: mmap %llu bytes of %s: %s\n", chunk, path,
				strerror(errno));
			return 1;
		}
		close(mfd);
	}

	sfd = open(src, O_RDONLY | O_DIRECT);
	dfd = open(dst, O_WRONLY | O_DIRECT);
	if (sfd < 0 || dfd < 0) {
		fprintf(stderr, "p2pcopy: open %s: %s\n", sfd < 0 ? src : dst, strerror(errno));
		return 1;
	}

	t0 = now();
	for (done = 0; done < bytes; done += chunk) {
		ssize_t n = pread(sfd, buf, chunk, soff + done);

		if (n != (ssize_t)chunk) {
			fprintf(stderr, "p2pcopy: read %s at %llu into %s: %s (errno %d)\n", src,
				soff + done, ram ? "RAM" : bdf, n < 0 ? strerror(errno) : "short",
				n < 0 ? errno : 0);
			return n < 0 && errno == refused ? 3 : 1;
		}
		n = pwrite(dfd, buf, chunk, doff + done);
		if (n != (ssize_t)chunk) {
			fprintf(stderr, "p2pcopy: write %s at %llu from %s: %s (errno %d)\n", dst,
				doff + done, ram ? "RAM" : bdf, n < 0 ? strerror(errno) : "short",
				n < 0 ? errno : 0);
			return n < 0 && errno == refused ? 4 : 1;
		}
	}
	if (fdatasync(dfd)) {
		perror("p2pcopy: fdatasync");
		return 1;
	}
	t = now() - t0;
	printf("p2pcopy: %llu bytes via %s in %.3f s: %.1f MB/s\n", bytes,
	       ram ? "host RAM" : bdf, t, bytes / t / 1e6);
	return 0;
}
