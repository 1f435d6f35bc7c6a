/*
 * diskemu: a drive in software, for diskq's tests and benchmarks.
 *
 * A FUSE filesystem with two files: `disk`, the emulated drive's medium (a sparse image kept in
 * memory), and `stats`, its counters as text. A loop device over `disk` turns it into a block
 * device: every write fio makes reaches this daemon as a FUSE write, every flush (fdatasync on
 * the loop device) as a FUSE fsync of `disk`. The daemon answers each one after the time the
 * modelled drive would take:
 *
 *   write   lands in the drive's volatile cache (when it has one) through one of `channels`
 *           parallel units; costs write_us (slow_write_us once the SLC cache is full), plus
 *           `contention` of that per request queued beyond the channels; every gc_every bytes
 *           the units stall for gc_pause_us (garbage collection);
 *   flush   drains what is dirty: flush_us plus the dirty bytes at drain_mbps, one drain at a
 *           time; a flush that finds nothing dirty waits only for a drain in progress (its data
 *           may be in it) and costs empty_flush_us; a liar (honest=0) answers at once.
 *
 * The drive's volatile cache can be switched off: once the file `ctl` is given the loop device's
 * knob ("knob /sys/block/loopN/queue/write_cache"), "write through" there means the cache is off:
 * every write is durable at once and costs off_write_us (by default a write plus a flush of it).
 *
 * The emulator's own path (fio to the loop device to FUSE to this daemon and back) costs more than
 * a drive's host interface. path_us of it is counted as part of each request's modelled cost: a
 * request is taken to have arrived path_us before it reached the daemon, so a modelled cost longer
 * than the path is served in its own time, not in its own time plus the path's.
 *
 * The SLC cache (slc_mib) fills with every byte written and empties at slc_recover_mbps while
 * the drive is idle. Time is kept per request against the monotonic clock; the daemon sleeps
 * until each request's modelled end, spinning the last spin_us for precision.
 *
 * It models the cost of writes and flushes, not a drive's firmware: no wear, no read path
 * timing, no power loss. Data written is kept (reads return it) up to the image size.
 *
 * Build: cc -O2 -Wall -o diskemu diskemu.c $(pkg-config --cflags --libs fuse3)
 * Run:   diskemu MOUNTPOINT --size-mib 256 --write-us 40 --flush-us 2000 ... (-f: foreground)
 */
#define FUSE_USE_VERSION 312
#define _GNU_SOURCE
#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DISK_INO 2
#define STATS_INO 3
#define CTL_INO 4
#define MAX_CHANNELS 256

struct model {
	uint64_t size;           /* bytes */
	double write_us;         /* one write into the cache (or the medium) */
	double write_mbps;       /* transfer rate of a write's bytes; 0 = included in write_us */
	int channels;            /* writes served at once */
	double contention;       /* extra share of write_us per request queued beyond the channels */
	int volatile_cache;      /* writes wait in a volatile cache that flushes drain */
	int honest;              /* 0: flushes acknowledged at once, nothing drained */
	double flush_us;         /* fixed cost of a flush with something to drain */
	double drain_mbps;       /* drain rate of dirty bytes; 0 = free */
	double empty_flush_us;   /* a flush with nothing to drain */
	double slc_mib;          /* SLC cache size; 0 = none */
	double slow_write_us;    /* write cost once the SLC cache is full */
	double slc_recover_mbps; /* SLC emptied while idle */
	double gc_every_mib;     /* bytes between garbage-collection pauses; 0 = none */
	double gc_pause_us;
	double off_write_us;     /* a write with the volatile cache switched off (durable at once) */
	double path_us;          /* the emulator's own path per request, counted in the modelled cost */
	double spin_us;          /* spin (rather than sleep) this close to a deadline */
	int threads;             /* FUSE worker threads */
};

static struct model M = {
	.size = 256ull << 20, .write_us = 20, .channels = 1, .volatile_cache = 1, .honest = 1,
	.flush_us = 0, .empty_flush_us = 2, .slow_write_us = 0, .off_write_us = -1, .spin_us = 60, .threads = 64,
};

static struct {
	pthread_mutex_t lock;
	double chan_free[MAX_CHANNELS]; /* when each channel is next free, µs */
	double flush_free;              /* when the drain in progress ends */
	double last_end;                /* the last modelled end of any request */
	double write_done;              /* the modelled end of the latest write answered */
	uint64_t dirty;                 /* bytes in the volatile cache */
	double slc_used;                /* bytes in the SLC cache */
	double since_gc;                /* bytes since the last GC pause */
	int inflight;
	int cache_off;                  /* the drive's volatile cache is switched off (see watch_knob) */
	char knob[256];                 /* the loop device's queue/write_cache, once named in ctl */
	/* counters */
	uint64_t writes, write_bytes, reads, read_bytes, fsyncs, drains, empty_flushes, gc_pauses;
	uint64_t slow_writes;
	double busy_us;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned char *image;

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void sleep_until(double end)
{
	for (;;) {
		double left = end - now_us();
		if (left <= 0)
			return;
		if (left > M.spin_us) {
			double nap = left - M.spin_us;
			struct timespec ts = {.tv_sec = (time_t)(nap / 1e6),
					      .tv_nsec = (long)((nap - (time_t)(nap / 1e6) * 1e6) * 1e3)};
			nanosleep(&ts, NULL);
		}
	}
}

/* The SLC cache empties while nothing is in flight (called with the lock held). */
static void recover_slc(double now)
{
	if (M.slc_mib <= 0 || S.inflight > 0 || now <= S.last_end)
		return;
	S.slc_used -= (now - S.last_end) * M.slc_recover_mbps; /* MB/s == bytes/µs */
	if (S.slc_used < 0)
		S.slc_used = 0;
}

static double model_write(size_t size)
{
	double now = now_us(), end;
	pthread_mutex_lock(&S.lock);
	recover_slc(now);
	S.inflight++;
	int slow = M.slc_mib > 0 && S.slc_used >= M.slc_mib * 1048576.0;
	double cost = slow ? M.slow_write_us : M.write_us;
	if (S.cache_off && M.volatile_cache)
		cost = M.off_write_us + (slow ? M.slow_write_us - M.write_us : 0);
	if (M.write_mbps > 0)
		cost += size / M.write_mbps;
	if (S.inflight > M.channels)
		cost *= 1.0 + M.contention * (S.inflight - M.channels);
	int best = 0;
	for (int i = 1; i < M.channels; i++)
		if (S.chan_free[i] < S.chan_free[best])
			best = i;
	double arrived = now - M.path_us; /* when the request left the host, about */
	double start = S.chan_free[best] > arrived ? S.chan_free[best] : arrived;
	end = start + cost;
	S.chan_free[best] = end;
	if (M.gc_every_mib > 0) {
		S.since_gc += size;
		if (S.since_gc >= M.gc_every_mib * 1048576.0) {
			S.since_gc = 0;
			end += M.gc_pause_us;
			for (int i = 0; i < M.channels; i++)
				if (S.chan_free[i] < end)
					S.chan_free[i] = end;
			S.gc_pauses++;
		}
	}
	if (M.slc_mib > 0)
		S.slc_used += size;
	if (M.volatile_cache && !S.cache_off)
		S.dirty += size;
	S.writes++;
	S.write_bytes += size;
	S.slow_writes += slow;
	S.busy_us += cost;
	if (end > S.last_end)
		S.last_end = end;
	pthread_mutex_unlock(&S.lock);
	return end;
}

static double model_flush(void)
{
	double now = now_us(), end;
	pthread_mutex_lock(&S.lock);
	recover_slc(now);
	S.inflight++;
	S.fsyncs++;
	if (!M.honest || !M.volatile_cache) {
		end = now + M.empty_flush_us;
		S.empty_flushes++;
	} else if (S.dirty > 0) {
		double arrived = now - M.path_us;
		if (arrived < S.write_done) /* a flush cannot start before the writes it covers ended */
			arrived = S.write_done;
		double start = S.flush_free > arrived ? S.flush_free : arrived;
		double cost = M.flush_us + (M.drain_mbps > 0 ? S.dirty / M.drain_mbps : 0);
		end = start + cost;
		S.flush_free = end;
		S.dirty = 0;
		S.drains++;
		S.busy_us += cost;
	} else {
		end = now + M.empty_flush_us;
		if (S.flush_free > end)
			end = S.flush_free;
		S.empty_flushes++;
	}
	if (end > S.last_end)
		S.last_end = end;
	pthread_mutex_unlock(&S.lock);
	return end;
}

static void done(double write_end)
{
	pthread_mutex_lock(&S.lock);
	S.inflight--;
	if (write_end > S.write_done)
		S.write_done = write_end;
	pthread_mutex_unlock(&S.lock);
}

static int stats_text(char *buf, size_t len)
{
	pthread_mutex_lock(&S.lock);
	int n = snprintf(buf, len,
			 "writes %llu\nwrite_bytes %llu\nreads %llu\nread_bytes %llu\nfsyncs %llu\n"
			 "drains %llu\nempty_flushes %llu\ngc_pauses %llu\nslow_writes %llu\n"
			 "dirty_bytes %llu\nslc_used_bytes %.0f\nbusy_us %.0f\ncache_off %d\n",
			 (unsigned long long)S.writes, (unsigned long long)S.write_bytes,
			 (unsigned long long)S.reads, (unsigned long long)S.read_bytes,
			 (unsigned long long)S.fsyncs, (unsigned long long)S.drains,
			 (unsigned long long)S.empty_flushes, (unsigned long long)S.gc_pauses,
			 (unsigned long long)S.slow_writes, (unsigned long long)S.dirty, S.slc_used,
			 S.busy_us, S.cache_off);
	pthread_mutex_unlock(&S.lock);
	return n < 0 ? 0 : (n >= (int)len ? (int)len - 1 : n);
}

/* The drive's cache switch is the loop device's knob: once ctl names it, this thread follows it. */
static void *watch_knob(void *arg)
{
	(void)arg;
	for (;;) {
		char path[256], text[32] = "";
		pthread_mutex_lock(&S.lock);
		memcpy(path, S.knob, sizeof(path));
		pthread_mutex_unlock(&S.lock);
		if (path[0]) {
			FILE *f = fopen(path, "r");
			if (f) {
				if (!fgets(text, sizeof(text), f))
					text[0] = '\0';
				fclose(f);
			}
			int off = strncmp(text, "write through", 13) == 0;
			pthread_mutex_lock(&S.lock);
			S.cache_off = off;
			pthread_mutex_unlock(&S.lock);
		}
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 2000000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void fill_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == DISK_INO) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = M.size;
		st->st_blksize = 4096;
		st->st_blocks = M.size / 512;
	} else if (ino == CTL_INO) {
		st->st_mode = S_IFREG | 0200;
		st->st_nlink = 1;
	} else {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = 4096;
	}
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (strcmp(name, "disk") == 0)
		e.ino = DISK_INO;
	else if (strcmp(name, "stats") == 0)
		e.ino = STATS_INO;
	else if (strcmp(name, "ctl") == 0)
		e.ino = CTL_INO;
	else {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.attr_timeout = e.entry_timeout = 3600.0;
	fill_stat(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct stat st;
	if (ino != FUSE_ROOT_ID && ino != DISK_INO && ino != STATS_INO && ino != CTL_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_stat(ino, &st);
	fuse_reply_attr(req, &st, ino == STATS_INO ? 0.0 : 3600.0);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	(void)attr;
	(void)fi;
	if (ino == DISK_INO && (to_set & FUSE_SET_ATTR_SIZE) && (uint64_t)attr->st_size != M.size) {
		fuse_reply_err(req, EPERM); /* a drive's size is fixed */
		return;
	}
	op_getattr(req, ino, NULL);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == STATS_INO) {
		if ((fi->flags & O_ACCMODE) != O_RDONLY) {
			fuse_reply_err(req, EACCES);
			return;
		}
		fi->direct_io = 1; /* always read fresh counters */
	} else if (ino == CTL_INO) {
		fi->direct_io = 1;
	} else if (ino != DISK_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (ino == STATS_INO) {
		char buf[1024];
		int n = stats_text(buf, sizeof(buf));
		if (off >= n)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, buf + off, (size_t)(n - off) < size ? (size_t)(n - off) : size);
		return;
	}
	if ((uint64_t)off >= M.size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (off + size > M.size)
		size = M.size - off;
	pthread_mutex_lock(&S.lock);
	S.reads++;
	S.read_bytes += size;
	pthread_mutex_unlock(&S.lock);
	fuse_reply_buf(req, (const char *)image + off, size);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)fi;
	if (ino == CTL_INO) { /* "knob /sys/block/loopN/queue/write_cache" */
		char line[300];
		size_t n = size < sizeof(line) - 1 ? size : sizeof(line) - 1;
		memcpy(line, buf, n);
		line[n] = '\0';
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "knob ", 5) != 0 || strlen(line + 5) >= sizeof(S.knob)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		pthread_mutex_lock(&S.lock);
		strcpy(S.knob, line + 5);
		pthread_mutex_unlock(&S.lock);
		fuse_reply_write(req, size);
		return;
	}
	if (ino != DISK_INO) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if ((uint64_t)off >= M.size) {
		fuse_reply_err(req, ENOSPC);
		return;
	}
	if (off + size > M.size)
		size = M.size - off;
	double end = model_write(size);
	memcpy(image + off, buf, size);
	sleep_until(end);
	done(end);
	fuse_reply_write(req, size);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	(void)fi;
	if (ino != DISK_INO) {
		fuse_reply_err(req, 0);
		return;
	}
	double end = model_flush();
	sleep_until(end);
	done(0);
	fuse_reply_err(req, 0);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0); /* close(2): not a cache flush */
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	char buf[512];
	size_t used = 0;
	const char *names[] = {".", "..", "disk", "stats", "ctl"};
	fuse_ino_t inos[] = {FUSE_ROOT_ID, FUSE_ROOT_ID, DISK_INO, STATS_INO, CTL_INO};
	for (int i = (int)off; i < 5; i++) {
		struct stat st;
		fill_stat(inos[i], &st);
		size_t n = fuse_add_direntry(req, buf + used, sizeof(buf) - used, names[i], &st, i + 1);
		if (used + n > size || used + n > sizeof(buf))
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct statvfs sv;
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_blocks = M.size / 4096;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = op_lookup, .getattr = op_getattr, .setattr = op_setattr, .open = op_open,
	.read = op_read, .write = op_write, .fsync = op_fsync, .flush = op_flush,
	.readdir = op_readdir, .statfs = op_statfs,
};

static int number(const char *name, const char *text, double *out)
{
	char *end;
	double v = strtod(text, &end);
	if (*text == '\0' || *end != '\0' || !(v >= 0) || v > 1e12) {
		fprintf(stderr, "diskemu: %s takes a number >= 0, got %s\n", name, text);
		return -1;
	}
	*out = v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: diskemu MOUNTPOINT [-f] [--size-mib N] [--write-us N] [--write-mbps N]\n"
		"       [--channels N] [--contention X] [--volatile-cache 0|1] [--honest 0|1]\n"
		"       [--flush-us N] [--drain-mbps N] [--empty-flush-us N] [--slc-mib N]\n"
		"       [--slow-write-us N] [--slc-recover-mbps N] [--gc-every-mib N] [--gc-pause-us N]\n"
		"       [--off-write-us N] [--path-us N] [--spin-us N] [--threads N]\n"
		"The file ctl takes \"knob PATH\": the loop device's queue/write_cache, the drive's cache switch.\n");
}

int main(int argc, char *argv[])
{
	const char *mountpoint = NULL;
	int foreground = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-f") == 0) {
			foreground = 1;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage();
			return 0;
		}
		if (strncmp(a, "--", 2) != 0) {
			if (mountpoint) {
				usage();
				return 2;
			}
			mountpoint = a;
			continue;
		}
		if (i + 1 >= argc) {
			usage();
			return 2;
		}
		double v;
		if (number(a, argv[++i], &v) < 0)
			return 2;
		if (!strcmp(a, "--size-mib")) M.size = (uint64_t)v << 20;
		else if (!strcmp(a, "--write-us")) M.write_us = v;
		else if (!strcmp(a, "--write-mbps")) M.write_mbps = v;
		else if (!strcmp(a, "--channels")) M.channels = (int)v;
		else if (!strcmp(a, "--contention")) M.contention = v;
		else if (!strcmp(a, "--volatile-cache")) M.volatile_cache = v != 0;
		else if (!strcmp(a, "--honest")) M.honest = v != 0;
		else if (!strcmp(a, "--flush-us")) M.flush_us = v;
		else if (!strcmp(a, "--drain-mbps")) M.drain_mbps = v;
		else if (!strcmp(a, "--empty-flush-us")) M.empty_flush_us = v;
		else if (!strcmp(a, "--slc-mib")) M.slc_mib = v;
		else if (!strcmp(a, "--slow-write-us")) M.slow_write_us = v;
		else if (!strcmp(a, "--slc-recover-mbps")) M.slc_recover_mbps = v;
		else if (!strcmp(a, "--gc-every-mib")) M.gc_every_mib = v;
		else if (!strcmp(a, "--gc-pause-us")) M.gc_pause_us = v;
		else if (!strcmp(a, "--off-write-us")) M.off_write_us = v;
		else if (!strcmp(a, "--path-us")) M.path_us = v;
		else if (!strcmp(a, "--spin-us")) M.spin_us = v;
		else if (!strcmp(a, "--threads")) M.threads = (int)v;
		else {
			fprintf(stderr, "diskemu: unknown option %s\n", a);
			usage();
			return 2;
		}
	}
	if (!mountpoint || M.size == 0 || M.channels < 1 || M.channels > MAX_CHANNELS || M.threads < 1) {
		usage();
		return 2;
	}
	if (M.slc_mib > 0 && M.slow_write_us <= 0)
		M.slow_write_us = M.write_us;
	if (M.off_write_us < 0) /* cache off: each write made durable as a flush would */
		M.off_write_us = M.write_us + M.flush_us + (M.drain_mbps > 0 ? 4096 / M.drain_mbps : 0);

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	image = mmap(NULL, M.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (image == MAP_FAILED) {
		perror("diskemu: mmap");
		return 1;
	}

	char *fargv[] = {argv[0], "-o", "fsname=diskemu,subtype=diskemu,allow_other", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		return 1;
	if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, mountpoint) != 0) {
		fuse_session_destroy(se);
		return 1;
	}
	if (fuse_daemonize(foreground) != 0)
		return 1;
	pthread_t watcher; /* after daemonizing: a fork keeps no thread */
	if (pthread_create(&watcher, NULL, watch_knob, NULL) != 0 || pthread_detach(watcher) != 0)
		return 1;
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, M.threads);
	fuse_loop_cfg_set_idle_threads(cfg, M.threads);
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	int rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return rc ? 1 : 0;
}
