/*
 * r4handle - file handles on a mount, as fstests' open_by_handle uses them
 * (generic/426, 467, 477, 756, 777), for tests/bats/r4fuse_fstests.bats.
 *
 *   r4handle save HANDLES PATH...   name_to_handle_at(2) of each PATH,
 *                                   written to HANDLES, one per line
 *   r4handle open [-w] MNT HANDLES  open_by_handle_at(2) of each, on the
 *                                   mount at MNT (needs CAP_DAC_READ_SEARCH)
 *
 * open prints one line per handle, named by the path it was saved from:
 *   PATH: file, same inode, nlink N: CONTENTS   (its first 64 bytes, as they are)
 *   PATH: dir, same inode, nlink N: NAME NAME   (sorted, no . and ..)
 *   PATH: ERROR                                 (strerror)
 * ("other inode" when st_ino is not the one saved).  -w writes "+" at a
 * file's end through the handle's descriptor, after reading it.
 * Exit status: 0, or 2 for a usage or I/O error of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: r4handle save HANDLES PATH...\n"
		"       r4handle open [-w] MNT HANDLES\n");
	return 2;
}

static int save(const char *out, char **paths, int n)
{
	FILE *f = fopen(out, "w");

	if (!f) {
		perror(out);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
		struct stat st;
		int mount_id;

		h->handle_bytes = MAX_HANDLE_SZ;
		if (stat(paths[i], &st) || name_to_handle_at(AT_FDCWD, paths[i], h, &mount_id, 0)) {
			perror(paths[i]);
			return 2;
		}
		fprintf(f, "%d %llu ", h->handle_type, (unsigned long long)st.st_ino);
		for (unsigned j = 0; j < h->handle_bytes; j++)
			fprintf(f, "%02x", h->f_handle[j]);
		fprintf(f, " %s\n", paths[i]);
		free(h);
	}
	return fclose(f) ? 2 : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory fd (taken), sorted, after ": ". */
static void list(int fd)
{
	DIR *d = fdopendir(fd);
	char *names[256];
	size_t n = 0;
	struct dirent *e;

	if (!d) {
		printf(": %s\n", strerror(errno));
		close(fd);
		return;
	}
	while (n < 256 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			names[n++] = strdup(e->d_name);
	qsort(names, n, sizeof(*names), by_name);
	printf(":");
	for (size_t i = 0; i < n; i++) {
		printf(" %s", names[i]);
		free(names[i]);
	}
	printf("\n");
	closedir(d);
}

/* One handle opened: its line. */
static void open_one(int mfd, struct file_handle *h, unsigned long long ino, const char *path,
		     int wr)
{
	int fd = open_by_handle_at(mfd, h, O_RDONLY);
	struct stat st;
	char buf[65];
	ssize_t got;

	if (fd >= 0 && !fstat(fd, &st) && !S_ISDIR(st.st_mode) && wr) {
		close(fd);
		fd = open_by_handle_at(mfd, h, O_RDWR);
	}
	if (fd < 0 || fstat(fd, &st)) {
		printf("%s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	printf("%s: %s, %s inode, nlink %lu", path, S_ISDIR(st.st_mode) ? "dir" : "file",
	       st.st_ino == ino ? "same" : "other", (unsigned long)st.st_nlink);
	if (S_ISDIR(st.st_mode)) {
		list(fd);
		return;
	}
	if ((got = pread(fd, buf, 64, 0)) < 0)
		got = snprintf(buf, sizeof(buf), "(read: %s)", strerror(errno));
	printf(": %.*s\n", (int)got, buf);
	if (wr && pwrite(fd, "+", 1, st.st_size) != 1)
		printf("%s: write: %s\n", path, strerror(errno));
	close(fd);
}

static int open_all(const char *mnt, const char *in, int wr)
{
	int mfd = open(mnt, O_RDONLY | O_DIRECTORY);
	FILE *f = fopen(in, "r");
	char hex[2 * MAX_HANDLE_SZ + 1], path[4096];
	unsigned long long ino;
	int type;

	if (mfd < 0 || !f) {
		perror(mfd < 0 ? mnt : in);
		return 2;
	}
	while (fscanf(f, "%d %llu %256s %4095s", &type, &ino, hex, path) == 4) {
		struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);

		h->handle_type = type;
		h->handle_bytes = (unsigned)strlen(hex) / 2;
		for (unsigned j = 0; j < h->handle_bytes; j++)
			sscanf(hex + 2 * j, "%2hhx", &h->f_handle[j]);
		open_one(mfd, h, ino, path, wr);
		free(h);
	}
	fclose(f);
	close(mfd);
	return 0;
}

int main(int argc, char **argv)
{
	int wr = argc > 2 && !strcmp(argv[2], "-w");

	if (argc >= 4 && !strcmp(argv[1], "save"))
		return save(argv[2], argv + 3, argc - 3);
	if (argc == 4 + wr && !strcmp(argv[1], "open"))
		return open_all(argv[2 + wr], argv[3 + wr], wr);
	return usage();
}
