/*
 * flannel: the jflannel CNI plugin as one self-contained file, needing nothing on the host (no shell,
 * no libc, no Java): this static launcher (musl, built by packaging/build-image.sh) with the plugin's
 * bundle appended as a payload (an ustar archive of jflannel-<id>/: the jlinked runtime, glibc's own
 * loader and the libraries the JVM needs, the plugin's jars and its AOT cache) and a trailer
 * naming the payload's offset, size and id.
 *
 * A run: find jflannel-<id>/ beside this file (install-cni-plugin puts it there, or a previous run
 * unpacked it); if missing, unpack the payload into a temporary directory beside it under the
 * installer's lock file, fsync every file and directory, rename it into place (so a directory of that
 * name is always whole), remove older bundles but the newest other one (an ADD may be running it);
 * then exec the bundle's glibc loader on the bundle's java: ld-linux-x86-64.so.2 --library-path ...
 * --argv0 java java OPTIONS org.jflannel.cni.Main. The loader lives in the runtime's bin/ so that the
 * java launcher, which finds its home from /proc/self/exe, finds the runtime. Where this file's
 * directory is read-only the bundle goes under /var/lib/cni/jflannel instead (the AOT cache maps there
 * too: JDK 25 accepts a runtime and jar moved together).
 *
 * stdin, stdout, the environment and the arguments pass through untouched (stdout is the CNI
 * result). A failure of the launcher itself is a CNI error on stdout (code 999) and one line on
 * stderr, exit 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "JFLNPAY1"
#define TRAILER_SIZE 48 /* magic[8], offset u64 LE, size u64 LE, id[24] NUL-padded */
#define ID_LEN 12
#define LOCK_NAME ".jflannel-install.lock" /* the same lock file as flanneld install-cni-plugin */
#define TMP_PREFIX ".jflannel-tmp-"
#define OLD_PREFIX ".jflannel-old-"
#define FALLBACK_DIR "/var/lib/cni/jflannel"
#define LOADER "ld-linux-x86-64.so.2"

/* the JVM's options (figures: docs/benchmarks.md, "The CNI plugin's weight, session 8"). A run is ~50 ms of
 * cold code, so: interpreter only (-Xint: a JIT thread only burns CPU); SerialGC and a fixed small heap
 * (an ADD allocates < 1 MB; G1 starts four threads and sizes itself from the node's memory); the AOT
 * cache (JDK 25, JEP 483/514) dumped at build time by packaging/build-image.sh with exactly these
 * options (it reads this list: keep it one string per option, one declaration), which holds the
 * plugin's classes loaded and linked; JVM messages to stderr only (stdout is the CNI result; a missing
 * or refused cache is reported there and the plugin runs without it). FORK: the delegate plugins are
 * started by fork+exec, not through jspawnhelper, an ELF whose interpreter is the host's loader; parsing
 * that property reflects (Enum.valueOf), and reflection through method handles would spin a class on
 * every run: the native accessor instead. */
static const char *const JVM_OPTS[] = {
    "-Xint", "-XX:-UsePerfData", "-Xss512k", "-XX:+UseSerialGC", "-Xms8m", "-Xmx64m",
    NULL /* -XX:AOTCache=<bundle>/flannel.aot */,
    "-Xlog:disable", "-Xlog:all=warning:stderr", "-Djdk.lang.Process.launchMechanism=FORK",
    "-Djdk.reflect.useNativeAccessorOnly=true",
};
#define N_JVM_OPTS (sizeof JVM_OPTS / sizeof JVM_OPTS[0])

static void fail(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "flannel: %s\n", msg);
    /* the message as a JSON string: only quotes, backslashes and control characters need escaping */
    fputs("{\"cniVersion\":\"0.4.0\",\"code\":999,\"msg\":\"flannel: ", stdout);
    for (const char *c = msg; *c; c++) {
        if (*c == '"' || *c == '\\') {
            printf("\\%c", *c);
        } else if ((unsigned char)*c < 0x20) {
            printf("\\u%04x", *c);
        } else {
            putchar(*c);
        }
    }
    fputs("\"}\n", stdout);
    fflush(stdout);
    exit(1);
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static int valid_id(const char *id) {
    if (strlen(id) != ID_LEN) {
        return 0;
    }
    for (const char *c = id; *c; c++) {
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) {
            return 0;
        }
    }
    return 1;
}

static int is_bundle_name(const char *name) {
    return strncmp(name, "jflannel-", 9) == 0 && valid_id(name + 9);
}

static int full_pread(int fd, void *buf, size_t n, off_t off) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, off + (off_t)done);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return -1;
        }
        done += (size_t)r;
    }
    return 0;
}

static int full_write(int fd, const void *buf, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

static int fsync_path(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    int r = fsync(fd);
    close(fd);
    return r;
}

/* an octal field of an ustar header */
static uint64_t octal(const char *f, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n && f[i]; i++) {
        if (f[i] == ' ') {
            continue;
        }
        if (f[i] < '0' || f[i] > '7') {
            break;
        }
        v = v * 8 + (uint64_t)(f[i] - '0');
    }
    return v;
}

/* a member's path: relative, no "..", no empty result; "./" stripped */
static int member_path(const unsigned char *h, char *out, size_t outsz) {
    char name[101], prefix[156];
    memcpy(name, h, 100);
    name[100] = 0;
    memcpy(prefix, h + 345, 155);
    prefix[155] = 0;
    int n = prefix[0] ? snprintf(out, outsz, "%s/%s", prefix, name) : snprintf(out, outsz, "%s", name);
    if (n < 0 || (size_t)n >= outsz) {
        return -1;
    }
    char *p = out;
    while (p[0] == '.' && p[1] == '/') {
        p += 2;
    }
    memmove(out, p, strlen(p) + 1);
    size_t len = strlen(out);
    while (len > 0 && out[len - 1] == '/') {
        out[--len] = 0;
    }
    if (out[0] == '/' || strcmp(out, "..") == 0 || strncmp(out, "../", 3) == 0 || strstr(out, "/../")
        || (len >= 3 && strcmp(out + len - 3, "/..") == 0)) {
        return -1;
    }
    return 0;
}

#define MAX_DIRS 512
static char *dirs[MAX_DIRS];
static int ndirs;

/* unpacks the payload (an ustar archive at [off, off+size) of fd) into dest; 0 or -1 with errno-ish message */
static int extract(int fd, off_t off, uint64_t size, const char *dest, char *err, size_t errsz) {
    static char buf[1 << 20];
    unsigned char h[512];
    char rel[300], path[PATH_MAX], target[PATH_MAX];
    off_t end = off + (off_t)size;
    ndirs = 0;
    dirs[ndirs++] = strdup(dest);
    while (off + 512 <= end) {
        if (full_pread(fd, h, 512, off) < 0) {
            snprintf(err, errsz, "payload: read failed at %lld", (long long)off);
            return -1;
        }
        off += 512;
        int zero = 1;
        for (int i = 0; i < 512; i++) {
            if (h[i]) {
                zero = 0;
                break;
            }
        }
        if (zero) {
            return 0; /* end of archive */
        }
        unsigned sum = 0;
        for (int i = 0; i < 512; i++) {
            sum += (i >= 148 && i < 156) ? ' ' : h[i];
        }
        if (sum != octal((const char *)h + 148, 8)) {
            snprintf(err, errsz, "payload: damaged header at %lld", (long long)off - 512);
            return -1;
        }
        if (member_path(h, rel, sizeof rel) < 0) {
            snprintf(err, errsz, "payload: bad member name");
            return -1;
        }
        mode_t mode = (mode_t)octal((const char *)h + 100, 8) & 07777;
        uint64_t len = octal((const char *)h + 124, 12);
        time_t mtime = (time_t)octal((const char *)h + 136, 12);
        char type = (char)h[156];
        char linkname[101];
        memcpy(linkname, h + 157, 100);
        linkname[100] = 0;
        if (rel[0] == 0) { /* the archive's root: dest itself */
            off += (off_t)((len + 511) / 512 * 512);
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dest, rel);
        struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
        if (type == '5') {
            if (mkdir(path, 0700) < 0 && errno != EEXIST) {
                snprintf(err, errsz, "mkdir %s: %s", path, strerror(errno));
                return -1;
            }
            chmod(path, mode);
            if (ndirs < MAX_DIRS) {
                dirs[ndirs++] = strdup(path);
            }
        } else if (type == '0' || type == 0) {
            int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (out < 0) {
                snprintf(err, errsz, "create %s: %s", path, strerror(errno));
                return -1;
            }
            uint64_t left = len;
            off_t at = off;
            while (left > 0) {
                size_t n = left > sizeof buf ? sizeof buf : (size_t)left;
                if (full_pread(fd, buf, n, at) < 0 || full_write(out, buf, n) < 0) {
                    snprintf(err, errsz, "write %s: %s", path, strerror(errno));
                    close(out);
                    return -1;
                }
                left -= n;
                at += (off_t)n;
            }
            /* the AOT cache checks its jar's size and time: the archive's times are kept */
            if (fchmod(out, mode) < 0 || fsync(out) < 0 || futimens(out, times) < 0 || close(out) < 0) {
                snprintf(err, errsz, "finish %s: %s", path, strerror(errno));
                return -1;
            }
        } else if (type == '2') {
            if (symlink(linkname, path) < 0) {
                snprintf(err, errsz, "symlink %s: %s", path, strerror(errno));
                return -1;
            }
            utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW);
        } else if (type == '1') {
            char lrel[300];
            unsigned char fake[512] = {0};
            memcpy(fake, linkname, 100);
            if (member_path(fake, lrel, sizeof lrel) < 0) {
                snprintf(err, errsz, "payload: bad link name");
                return -1;
            }
            snprintf(target, sizeof target, "%s/%s", dest, lrel);
            if (link(target, path) < 0) {
                snprintf(err, errsz, "link %s: %s", path, strerror(errno));
                return -1;
            }
        } else {
            snprintf(err, errsz, "payload: member %s of unsupported type '%c'", rel, type);
            return -1;
        }
        off += (off_t)((len + 511) / 512 * 512);
    }
    snprintf(err, errsz, "payload: truncated");
    return -1;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void remove_tree(const char *path) {
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* under the lock: older bundles but the newest other one (an ADD may be running it), and leftovers */
static void collect_garbage(const char *parent, const char *keep_name) {
    DIR *d = opendir(parent);
    if (!d) {
        return;
    }
    char newest[NAME_MAX + 1] = "";
    struct timespec newest_t = {0, 0};
    char path[PATH_MAX];
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        if (is_bundle_name(e->d_name) && strcmp(e->d_name, keep_name) != 0 && lstat(path, &st) == 0
            && S_ISDIR(st.st_mode)
            && (st.st_mtim.tv_sec > newest_t.tv_sec
                || (st.st_mtim.tv_sec == newest_t.tv_sec && st.st_mtim.tv_nsec > newest_t.tv_nsec))) {
            newest_t = st.st_mtim;
            snprintf(newest, sizeof newest, "%s", e->d_name);
        }
    }
    rewinddir(d);
    while ((e = readdir(d))) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        int old = is_bundle_name(e->d_name) && strcmp(e->d_name, keep_name) != 0 && strcmp(e->d_name, newest) != 0;
        int leftover = strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0
                       || strncmp(e->d_name, OLD_PREFIX, strlen(OLD_PREFIX)) == 0;
        if ((old || leftover) && lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            remove_tree(path);
        }
    }
    closedir(d);
}

/* unpacks the bundle into parent/jflannel-<id> unless it is there; 0, or -1 with err set */
static int unpack(int fd, off_t off, uint64_t size, const char *parent, const char *id, char *err, size_t errsz) {
    char lockpath[PATH_MAX], tmp[PATH_MAX], bundle[PATH_MAX], name[64];
    snprintf(name, sizeof name, "jflannel-%s", id);
    snprintf(bundle, sizeof bundle, "%s/%s", parent, name);
    snprintf(lockpath, sizeof lockpath, "%s/%s", parent, LOCK_NAME);
    int lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock < 0) {
        snprintf(err, errsz, "lock %s: %s", lockpath, strerror(errno));
        return -1;
    }
    /* a POSIX record lock, as Java's FileChannel.lock takes: installer and launchers exclude each other */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    while (fcntl(lock, F_SETLKW, &fl) < 0) {
        if (errno != EINTR) {
            snprintf(err, errsz, "lock %s: %s", lockpath, strerror(errno));
            close(lock);
            return -1;
        }
    }
    struct stat st;
    if (stat(bundle, &st) == 0 && S_ISDIR(st.st_mode)) { /* another run unpacked it meanwhile */
        close(lock);
        return 0;
    }
    snprintf(tmp, sizeof tmp, "%s/%s%s-%ld", parent, TMP_PREFIX, id, (long)getpid());
    remove_tree(tmp);
    if (mkdir(tmp, 0700) < 0) {
        snprintf(err, errsz, "mkdir %s: %s", tmp, strerror(errno));
        close(lock);
        return -1;
    }
    if (extract(fd, off, size, tmp, err, errsz) < 0) {
        remove_tree(tmp);
        close(lock);
        return -1;
    }
    chmod(tmp, 0755);
    for (int i = ndirs - 1; i >= 0; i--) {
        fsync_path(dirs[i]);
        free(dirs[i]);
    }
    if (rename(tmp, bundle) < 0) {
        snprintf(err, errsz, "rename %s: %s", bundle, strerror(errno));
        remove_tree(tmp);
        close(lock);
        return -1;
    }
    fsync_path(parent);
    collect_garbage(parent, name);
    fsync_path(parent);
    close(lock); /* releases the lock */
    return 0;
}

/* ---- the fast path (docs/cni-plugin.md, "The fast path") --------------------------------------------
 * Before starting a JVM, ask flanneld: connect to its unix socket (JFLANNEL_CNI_SOCKET, else
 * /run/flannel/cni.sock), send the request (the environment, stdin, and whether CNI_NETNS is this
 * process's own network namespace) and perform the steps the daemon answers with, until it sends the
 * result to print. The daemon's accepting thread answers "accepted" at once; after that the launcher
 * waits up to STEP_ANSWER_MS for each answer. The daemon decides everything; this side only acts, and only within bounds it sets
 * itself: it runs a delegate found by a plain name on its own CNI_PATH with its own environment
 * (CNI_COMMAND replaced), and reads, writes or removes the one scratch file <data dir>/<CNI_CONTAINERID>
 * (data dir JFLANNEL_CNI_DATA_DIR, else /var/lib/cni/flannel). No socket, a refused connection, a frame
 * of another version, no first answer within FIRST_ANSWER_MS (STEP_ANSWER_MS once accepted), anything
 * malformed: the plugin's own JVM runs, with stdin restored. JFLANNEL_CNI_FAST=0 skips the fast path. */
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#define WIRE_VERSION 2
#define DEFAULT_SOCKET "/run/flannel/cni.sock"
#define DEFAULT_DATA_DIR "/var/lib/cni/flannel"
#define FIRST_ANSWER_MS 1000 /* issue 37 suggested 250; in a 100-pod storm on 2 loaded cores 86 of 100 missed that */
#define STEP_ANSWER_MS 30000
#define MAX_REQUEST (1 << 20)  /* the daemon's bound (Wire.MAX_REQUEST) */
#define MAX_FRAME (16 << 20)   /* a daemon frame: a step's delegate stdin, a result */
#define MAX_OUTPUT (4 << 20)   /* a delegate's stdout, its stderr, a scratch file */

extern char **environ;

struct buf {
    unsigned char *p;
    size_t n, cap;
};

static int buf_add(struct buf *b, const void *d, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) {
            cap *= 2;
        }
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
    return 0;
}

static int buf_u8(struct buf *b, unsigned v) {
    unsigned char c = (unsigned char)v;
    return buf_add(b, &c, 1);
}

static int buf_u32(struct buf *b, uint32_t v) {
    unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
    return buf_add(b, c, 4);
}

static int buf_bytes(struct buf *b, const void *d, size_t n) {
    return buf_u32(b, (uint32_t)n) < 0 ? -1 : buf_add(b, d, n);
}

/* a frame being built: length placeholder, version, type */
static int frame_start(struct buf *b, char type) {
    b->n = 0;
    return buf_u32(b, 0) < 0 || buf_u8(b, WIRE_VERSION) < 0 || buf_u8(b, (unsigned char)type) < 0 ? -1 : 0;
}

/* a received frame's payload, consumed front to back */
struct rd {
    const unsigned char *p;
    size_t n;
    int bad;
};

static unsigned rd_u8(struct rd *r) {
    if (r->n < 1) {
        r->bad = 1;
        return 0;
    }
    r->n--;
    return *r->p++;
}

static uint32_t rd_u32(struct rd *r) {
    if (r->n < 4) {
        r->bad = 1;
        r->n = 0;
        return 0;
    }
    uint32_t v = ((uint32_t)r->p[0] << 24) | ((uint32_t)r->p[1] << 16) | ((uint32_t)r->p[2] << 8) | r->p[3];
    r->p += 4;
    r->n -= 4;
    return v;
}

static const unsigned char *rd_bytes(struct rd *r, size_t *len) {
    uint32_t n = rd_u32(r);
    if (r->bad || n > r->n) {
        r->bad = 1;
        *len = 0;
        return NULL;
    }
    const unsigned char *p = r->p;
    r->p += n;
    r->n -= n;
    *len = n;
    return p;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* waits for events on fd until deadline (ms, monotonic); 0 when ready */
static int wait_fd(int fd, short events, long long deadline) {
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)left);
        if (r > 0) {
            return 0;
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
    }
}

static int send_all(int fd, const unsigned char *d, size_t n, long long deadline) {
    while (n > 0) {
        ssize_t w = send(fd, d, n, MSG_NOSIGNAL);
        if (w > 0) {
            d += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            if (wait_fd(fd, POLLOUT, deadline) < 0) {
                return -1;
            }
        } else {
            return -1;
        }
    }
    return 0;
}

static int send_frame(int fd, struct buf *b) {
    uint32_t len = (uint32_t)(b->n - 4);
    b->p[0] = (unsigned char)(len >> 24);
    b->p[1] = (unsigned char)(len >> 16);
    b->p[2] = (unsigned char)(len >> 8);
    b->p[3] = (unsigned char)len;
    return send_all(fd, b->p, b->n, now_ms() + STEP_ANSWER_MS);
}

static int recv_all(int fd, unsigned char *d, size_t n, long long deadline) {
    while (n > 0) {
        ssize_t r = recv(fd, d, n, 0);
        if (r > 0) {
            d += r;
            n -= (size_t)r;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && errno == EAGAIN) {
            if (wait_fd(fd, POLLIN, deadline) < 0) {
                return -1;
            }
        } else {
            return -1;
        }
    }
    return 0;
}

/* one frame of our version: its type and payload (in *b); -1 on anything else */
static int recv_frame(int fd, struct buf *b, int timeout_ms, int *type, struct rd *r) {
    long long deadline = now_ms() + timeout_ms;
    unsigned char h[6];
    if (recv_all(fd, h, 6, deadline) < 0) {
        return -1;
    }
    uint32_t len = ((uint32_t)h[0] << 24) | ((uint32_t)h[1] << 16) | ((uint32_t)h[2] << 8) | h[3];
    /* "accepted" and "fall back" are framed as version 1 by every version (Wire.FIRST_VERSION) */
    int versionless = len == 2 && h[4] == 1 && (h[5] == 'A' || h[5] == 'F');
    if (len < 2 || len > MAX_FRAME || (h[4] != WIRE_VERSION && !versionless)) {
        return -1;
    }
    b->n = 0;
    if (len > 2) {
        if (b->cap < len - 2) {
            unsigned char *p = realloc(b->p, len - 2);
            if (!p) {
                return -1;
            }
            b->p = p;
            b->cap = len - 2;
        }
        if (recv_all(fd, b->p, len - 2, deadline) < 0) {
            return -1;
        }
        b->n = len - 2;
    }
    *type = h[5];
    r->p = b->p;
    r->n = b->n;
    r->bad = 0;
    return 0;
}

/* ^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$, the CNI pattern for container IDs: never '/', never a leading '.' */
static int valid_container_id(const char *s) {
    if (!s || !*s || strlen(s) > 255) {
        return 0;
    }
    for (const char *c = s; *c; c++) {
        int alnum = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
        if (!alnum && (c == s || (*c != '_' && *c != '.' && *c != '-'))) {
            return 0;
        }
    }
    return 1;
}

/* a string from the daemon as a C string: no NUL inside, at most max bytes */
static char *dup_plain(const unsigned char *p, size_t n, size_t max) {
    if (!p || n > max || memchr(p, 0, n)) {
        return NULL;
    }
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* a delegate's name: plain (no '/', not "." or ".."), as invoke.FindInPath wants it */
static int plain_name(const char *s) {
    return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* invoke.FindInPath over this process's own CNI_PATH: the first regular file; 0 when found */
static int find_plugin(const char *name, char *out, size_t outsz) {
    const char *cp = getenv("CNI_PATH");
    if (!plain_name(name) || !cp || !*cp) {
        return -1;
    }
    for (const char *d = cp;;) {
        const char *end = strchr(d, ':');
        size_t dl = end ? (size_t)(end - d) : strlen(d);
        int n = dl == 0 ? snprintf(out, outsz, "%s", name) : snprintf(out, outsz, "%.*s/%s", (int)dl, d, name);
        struct stat st;
        if (n > 0 && (size_t)n < outsz && stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            return 0;
        }
        if (!end) {
            return -1;
        }
        d = end + 1;
    }
}

static const char *data_dir(void) {
    const char *d = getenv("JFLANNEL_CNI_DATA_DIR");
    return d && d[0] == '/' ? d : DEFAULT_DATA_DIR;
}

/* <data dir>/<CNI_CONTAINERID>, named here from this process's own environment */
static int scratch_path(char *out, size_t outsz) {
    const char *id = getenv("CNI_CONTAINERID");
    if (!valid_container_id(id)) {
        return -1;
    }
    int n = snprintf(out, outsz, "%s/%s", data_dir(), id);
    return n > 0 && (size_t)n < outsz ? 0 : -1;
}

static int mkdir_p(const char *dir, mode_t mode) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *c = p + 1; *c; c++) {
        if (*c == '/') {
            *c = 0;
            if (mkdir(p, mode) < 0 && errno != EEXIST) {
                return -1;
            }
            *c = '/';
        }
    }
    return mkdir(p, mode) < 0 && errno != EEXIST ? -1 : 0;
}

/* WRITE_SCRATCH: temporary file beside it, fsync, rename (as ScratchStore.write); 1 when written */
static int step_write(struct buf *rep, const unsigned char *d, size_t n) {
    char path[PATH_MAX], tmp[PATH_MAX + 64], *failed = path;
    int err = 0;
    struct stat st;
    int have_dir = stat(data_dir(), &st) == 0;
    if (scratch_path(path, sizeof path) < 0) {
        err = EINVAL;
    } else if ((have_dir && !S_ISDIR(st.st_mode)) || (!have_dir && mkdir_p(data_dir(), 0700) < 0)) {
        err = have_dir ? ENOTDIR : errno; /* os.MkdirAll: the data directory is named when making it fails */
        snprintf(path, sizeof path, "%s", data_dir());
    } else {
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) {
            rnd = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
        }
        snprintf(tmp, sizeof tmp, "%s/.%s.%016llx.tmp", data_dir(), getenv("CNI_CONTAINERID"), (unsigned long long)rnd);
        failed = tmp;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || full_write(fd, d, n) < 0 || fsync(fd) < 0) {
            err = errno;
        }
        if (fd >= 0 && close(fd) < 0 && !err) {
            err = errno;
        }
        if (!err && rename(tmp, path) < 0) {
            err = errno;
        }
        if (err) {
            unlink(tmp);
        }
    }
    buf_u32(rep, (uint32_t)err);
    buf_bytes(rep, err ? failed : "", err ? strlen(failed) : 0);
    return err == 0;
}

/* READ_SCRATCH: status 0 data, 1 no file, 2 error (errno); 1 unless an error */
static int step_read(struct buf *rep) {
    char path[PATH_MAX];
    struct buf data = {0};
    int status = 0, err = 0;
    int fd = scratch_path(path, sizeof path) < 0 ? (errno = EINVAL, -1) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        err = errno;
        status = err == ENOENT || err == ENOTDIR ? 1 : 2;
    } else {
        unsigned char chunk[65536];
        for (;;) {
            ssize_t r = read(fd, chunk, sizeof chunk);
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r < 0 || data.n + (size_t)r > MAX_OUTPUT || (r > 0 && buf_add(&data, chunk, (size_t)r) < 0)) {
                status = 2;
                err = r < 0 ? errno : EFBIG;
                break;
            }
            if (r == 0) {
                break;
            }
        }
        close(fd);
    }
    buf_u8(rep, (unsigned)status);
    buf_u32(rep, (uint32_t)err);
    buf_bytes(rep, data.p, status == 0 ? data.n : 0);
    free(data.p);
    return status != 2;
}

/* REMOVE_SCRATCH: best effort (as ScratchStore.remove), so never a failure that stops a frame */
static int step_remove(struct buf *rep) {
    char path[PATH_MAX];
    int err = scratch_path(path, sizeof path) < 0 ? EINVAL : unlink(path) < 0 && errno != ENOENT ? errno : 0;
    buf_u32(rep, (uint32_t)err);
    return 1;
}

/* this process's environment with CNI_COMMAND replaced (the delegate sees the runtime's environment) */
static char **child_env(const char *command) {
    size_t n = 0;
    while (environ[n]) {
        n++;
    }
    char **e = calloc(n + 2, sizeof(char *));
    char *cmd = malloc(strlen(command) + 13);
    if (!e || !cmd) {
        return NULL;
    }
    sprintf(cmd, "CNI_COMMAND=%s", command);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(environ[i], "CNI_COMMAND=", 12) != 0) {
            e[k++] = environ[i];
        }
    }
    e[k++] = cmd;
    e[k] = NULL;
    return e;
}

static int valid_command(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 16) {
        return 0;
    }
    for (const char *c = s; *c; c++) {
        if (*c < 'A' || *c > 'Z') {
            return 0;
        }
    }
    return 1;
}

/* EXEC: kind 0 ran (exit status, 128 + signal), 1 not started (errno), 2 refused */
static int step_exec(struct buf *rep, const char *name, const char *command, const unsigned char *in, size_t in_n) {
    char path[PATH_MAX];
    struct buf out = {0}, err = {0};
    int kind = 0, status = 0;
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, pexec[2] = {-1, -1};
    char **env = NULL;
    if (!plain_name(name) || !valid_command(command)) {
        kind = 2;
        goto reply;
    }
    if (find_plugin(name, path, sizeof path) < 0) {
        kind = 1;
        status = ENOENT;
        goto reply;
    }
    env = child_env(command);
    if (!env || pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0
        || pipe2(pexec, O_CLOEXEC) < 0) {
        kind = 1;
        status = errno ? errno : ENOMEM;
        goto reply;
    }
    pid_t pid = fork();
    if (pid < 0) {
        kind = 1;
        status = errno;
        goto reply;
    }
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        char *argv[] = {path, NULL};
        execve(path, argv, env);
        int e = errno;
        if (write(pexec[1], &e, sizeof e) < 0) {
            _exit(127);
        }
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    close(pexec[1]);
    pin[0] = pout[1] = perr[1] = pexec[1] = -1;
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(pexec[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    fcntl(pin[1], F_SETFL, O_NONBLOCK);
    size_t written = 0;
    if (got == sizeof exec_errno || in_n == 0) {
        close(pin[1]);
        pin[1] = -1;
    }
    while (pout[0] >= 0 || perr[0] >= 0) {
        struct pollfd p[3] = {{.fd = pout[0], .events = POLLIN}, {.fd = perr[0], .events = POLLIN}, {.fd = pin[1], .events = POLLOUT}};
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (pin[1] >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(pin[1], in + written, in_n - written);
            if (w > 0) {
                written += (size_t)w;
            }
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == in_n) {
                close(pin[1]); /* the delegate may exit without reading stdin; its status tells the story */
                pin[1] = -1;
            }
        }
        int *fds[2] = {&pout[0], &perr[0]};
        struct buf *bufs[2] = {&out, &err};
        for (int i = 0; i < 2; i++) {
            if (*fds[i] >= 0 && (p[i].revents & (POLLIN | POLLERR | POLLHUP))) {
                unsigned char chunk[65536];
                ssize_t r = read(*fds[i], chunk, sizeof chunk);
                if (r < 0 && errno == EINTR) {
                    continue;
                }
                if (r <= 0) {
                    close(*fds[i]);
                    *fds[i] = -1;
                } else if (bufs[i]->n + (size_t)r <= MAX_OUTPUT) {
                    buf_add(bufs[i], chunk, (size_t)r);
                }
            }
        }
    }
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (got == sizeof exec_errno) {
        kind = 1;
        status = exec_errno;
    } else {
        status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
    }
reply:
    for (int i = 0; i < 2; i++) {
        int fds[4] = {pin[i], pout[i], perr[i], pexec[i]};
        for (int k = 0; k < 4; k++) {
            if (fds[k] >= 0) {
                close(fds[k]);
            }
        }
    }
    buf_u8(rep, (unsigned)kind);
    buf_u32(rep, (uint32_t)status);
    buf_bytes(rep, out.p, kind == 0 ? out.n : 0);
    buf_bytes(rep, err.p, kind == 0 ? err.n : 0);
    free(out.p);
    free(err.p);
    free(env);
    return kind == 0;
}

/* one step from the daemon, performed, its reply appended to *rep: 1 done, 0 failed (a frame's
 * later steps are then not performed), -1 malformed */
static int perform_one(struct rd *r, struct buf *rep) {
    unsigned op = rd_u8(r);
    size_t n1, n2, n3;
    const unsigned char *a, *b, *c;
    switch (op) {
    case 1: { /* FIND name */
        a = rd_bytes(r, &n1);
        char *name = dup_plain(a, n1, 255);
        if (r->bad) {
            free(name);
            return -1;
        }
        char path[PATH_MAX];
        int found = name && find_plugin(name, path, sizeof path) == 0;
        buf_u8(rep, (unsigned)found);
        buf_bytes(rep, found ? path : "", found ? strlen(path) : 0);
        free(name);
        return found;
    }
    case 2: { /* EXEC name command stdin */
        a = rd_bytes(r, &n1);
        b = rd_bytes(r, &n2);
        c = rd_bytes(r, &n3);
        if (r->bad) {
            return -1;
        }
        char *name = dup_plain(a, n1, 255), *command = dup_plain(b, n2, 16);
        int ok = step_exec(rep, name, command, c, n3);
        free(name);
        free(command);
        return ok;
    }
    case 3: /* WRITE_SCRATCH bytes */
        a = rd_bytes(r, &n1);
        if (r->bad || n1 > MAX_OUTPUT) {
            return -1;
        }
        return step_write(rep, a, n1);
    case 4: /* READ_SCRATCH */
        return step_read(rep);
    case 5: /* REMOVE_SCRATCH */
        return step_remove(rep);
    default:
        return -1;
    }
}

/* a frame's steps ("u8 n, n steps"), performed in order. A step frame ('S', rep not NULL): until one
 * fails (the later ones are neither performed nor read), the reply frame ("u8 performed, their
 * replies") in *rep, nothing may follow the steps. The done frame ('D', rep NULL): every step, best
 * effort, replies dropped, the result follows. -1 when malformed. */
static int perform(struct rd *r, struct buf *rep) {
    struct buf scratch = {0};
    struct buf *into = rep ? rep : &scratch;
    unsigned n = rd_u8(r), done = 0;
    int status = r->bad || frame_start(into, 'R') < 0 || buf_u8(into, 0) < 0 ? -1 : 1;
    while (done < n && (status == 1 || (status == 0 && !rep))) {
        status = perform_one(r, into);
        done++;
    }
    if (status >= 0 && rep) {
        into->p[6] = (unsigned char)done;
        if (done == n && status == 1 && r->n != 0) {
            status = -1; /* bytes after the last step */
        }
    }
    free(scratch.p);
    return status < 0 ? -1 : 0;
}

/* stdin as it was, for the JVM: what was read, then the rest, in a memory file */
static void restore_stdin(const struct buf *in, int consumed_all) {
    int fd = memfd_create("flannel-stdin", MFD_CLOEXEC);
    if (fd < 0) {
        fail("fast path: cannot keep stdin for the plugin: memfd_create: %s", strerror(errno));
    }
    if (in->n && full_write(fd, in->p, in->n) < 0) {
        fail("fast path: cannot keep stdin for the plugin: %s", strerror(errno));
    }
    if (!consumed_all) {
        unsigned char chunk[65536];
        ssize_t r;
        while ((r = read(0, chunk, sizeof chunk)) != 0) {
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r < 0 || full_write(fd, chunk, (size_t)r) < 0) {
                fail("fast path: cannot keep stdin for the plugin: %s", strerror(errno));
            }
        }
    }
    if (lseek(fd, 0, SEEK_SET) < 0 || dup2(fd, 0) < 0) {
        fail("fast path: cannot keep stdin for the plugin: %s", strerror(errno));
    }
    close(fd);
}

/* whether CNI_NETNS names this process's own network namespace (skel's check, made by the daemon) */
static int own_netns(void) {
    const char *ns = getenv("CNI_NETNS");
    struct stat a, b;
    return ns && *ns && stat(ns, &a) == 0 && stat("/proc/self/ns/net", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void print_and_exit(struct rd *r) {
    if (perform(r, NULL) < 0) {
        return; /* malformed: the JVM redoes the command */
    }
    unsigned code = rd_u8(r);
    size_t no, ne;
    const unsigned char *o = rd_bytes(r, &no), *e = rd_bytes(r, &ne);
    if (r->bad || r->n != 0) {
        return;
    }
    if ((ne && full_write(2, e, ne) < 0) || (no && full_write(1, o, no) < 0)) {
        exit(1);
    }
    exit((int)code);
}

/* returns only when the plugin's own JVM is to run, with stdin as the runtime gave it */
static void fast_path(void) {
    const char *off = getenv("JFLANNEL_CNI_FAST");
    if (off && strcmp(off, "0") == 0) {
        return;
    }
    const char *sock_path = getenv("JFLANNEL_CNI_SOCKET");
    if (!sock_path || !*sock_path) {
        sock_path = DEFAULT_SOCKET;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(sock_path) >= sizeof addr.sun_path) {
        return;
    }
    strcpy(addr.sun_path, sock_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return;
    }
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0
        && (errno != EINPROGRESS || wait_fd(fd, POLLOUT, now_ms() + FIRST_ANSWER_MS) < 0)) {
        close(fd);
        return; /* no daemon, a stale socket, a full backlog */
    }
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    struct buf in = {0}, fr = {0}, rep = {0};
    int consumed_all = 0;
    unsigned char chunk[65536];
    for (;;) {
        ssize_t r = read(0, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            consumed_all = 1; /* an unreadable stdin: the JVM reports it */
            break;
        }
        if (buf_add(&in, chunk, (size_t)r) < 0 || in.n > MAX_REQUEST) {
            goto fallback;
        }
    }
    if (frame_start(&fr, 'Q') < 0 || buf_u8(&fr, (unsigned)own_netns()) < 0) {
        goto fallback;
    }
    size_t nenv = 0;
    while (environ[nenv]) {
        nenv++;
    }
    buf_u32(&fr, (uint32_t)nenv);
    for (size_t i = 0; i < nenv; i++) {
        buf_bytes(&fr, environ[i], strlen(environ[i]));
    }
    /* and this request's scratch file, as READ_SCRATCH would answer: DEL reads it first thing */
    if (buf_bytes(&fr, in.p, in.n) < 0 || (step_read(&fr), fr.n > MAX_REQUEST + 4) || send_frame(fd, &fr) < 0) {
        goto fallback;
    }
    int timeout = FIRST_ANSWER_MS;
    for (;;) {
        int type;
        struct rd r;
        if (recv_frame(fd, &fr, timeout, &type, &r) < 0) {
            fprintf(stderr, "flannel: fast path: no valid answer from flanneld within %d ms: running the plugin itself\n", timeout);
            goto fallback;
        }
        if (type == 'A' && timeout == FIRST_ANSWER_MS && r.n == 0) {
            timeout = STEP_ANSWER_MS; /* admitted: the request may wait for the CPU in a storm */
            continue;
        }
        if (type == 'D') {
            print_and_exit(&r);
            goto fallback;
        }
        if (type != 'S' || perform(&r, &rep) < 0 || send_frame(fd, &rep) < 0) {
            goto fallback; /* 'F', or anything this version does not know */
        }
        timeout = STEP_ANSWER_MS;
    }
fallback:
    close(fd);
    signal(SIGPIPE, old_pipe);
    restore_stdin(&in, consumed_all);
    free(in.p);
    free(fr.p);
    free(rep.p);
}

static int has_runtime(const char *bundle) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/jre/bin/" LOADER, bundle);
    return access(p, X_OK) == 0;
}

int main(int argc, char **argv) {
    fast_path();
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        if (!strchr(argv[0], '/') || !realpath(argv[0], exe)) {
            fail("cannot find this file: /proc/self/exe unreadable and argv[0] %s has no path", argv[0]);
        }
    } else {
        exe[n] = 0;
    }
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        fail("cannot open %s: %s", exe, strerror(errno));
    }
    unsigned char t[TRAILER_SIZE];
    if (st.st_size < TRAILER_SIZE || full_pread(fd, t, TRAILER_SIZE, st.st_size - TRAILER_SIZE) < 0
        || memcmp(t, MAGIC, 8) != 0) {
        fail("%s carries no bundle (no trailer %s)", exe, MAGIC);
    }
    uint64_t off = le64(t + 8), size = le64(t + 16);
    char id[25];
    memcpy(id, t + 24, 24);
    id[24] = 0;
    if (!valid_id(id) || off + size + TRAILER_SIZE > (uint64_t)st.st_size) {
        fail("%s: damaged trailer", exe);
    }

    char here[PATH_MAX], bundle[PATH_MAX], err[512] = "";
    snprintf(here, sizeof here, "%s", exe);
    char *slash = strrchr(here, '/');
    if (slash == here) {
        here[1] = 0;
    } else {
        *slash = 0;
    }
    snprintf(bundle, sizeof bundle, "%s/jflannel-%s", here, id);
    if (!has_runtime(bundle)) {
        if (unpack(fd, (off_t)off, size, here, id, err, sizeof err) < 0) {
            char first[512];
            snprintf(first, sizeof first, "%s", err);
            /* a read-only plugin directory: unpack where CNI keeps its state */
            mkdir("/var/lib/cni", 0755);
            mkdir(FALLBACK_DIR, 0700);
            snprintf(bundle, sizeof bundle, FALLBACK_DIR "/jflannel-%s", id);
            if (!has_runtime(bundle) && unpack(fd, (off_t)off, size, FALLBACK_DIR, id, err, sizeof err) < 0) {
                fail("cannot unpack the bundle beside %s (%s) nor under " FALLBACK_DIR " (%s)", exe, first, err);
            }
        }
        if (!has_runtime(bundle)) {
            fail("bundle %s has no runtime", bundle);
        }
    }
    close(fd);

    char loader[PATH_MAX], libs[PATH_MAX], java[PATH_MAX], jar[PATH_MAX], aot[PATH_MAX + 32];
    snprintf(loader, sizeof loader, "%s/jre/bin/" LOADER, bundle);
    snprintf(libs, sizeof libs, "%s/jre/lib/glibc", bundle);
    snprintf(java, sizeof java, "%s/jre/bin/java", bundle);
    snprintf(jar, sizeof jar, "%s/cni-flannel.jar", bundle);
    snprintf(aot, sizeof aot, "-XX:AOTCache=%s/flannel.aot", bundle);

    /* JFLANNEL_JAVA_OPTS: extra JVM options, split at spaces (as the shell launcher did) */
    char *extra = getenv("JFLANNEL_JAVA_OPTS");
    char *extra_copy = extra ? strdup(extra) : NULL;
    size_t n_extra = 0;
    for (char *c = extra_copy; c && *c; c++) {
        if (*c != ' ' && (c == extra_copy || c[-1] == ' ' || c[-1] == 0)) {
            n_extra++;
        }
    }
    char **args = calloc(8 + N_JVM_OPTS + n_extra + 3 + (size_t)argc, sizeof(char *));
    if (!args) {
        fail("out of memory");
    }
    size_t a = 0;
    args[a++] = loader;
    args[a++] = "--inhibit-cache"; /* the host's ld.so.cache names the host's libraries, not ours */
    args[a++] = "--library-path";
    args[a++] = libs;
    args[a++] = "--argv0";
    args[a++] = java;
    args[a++] = java;
    for (size_t i = 0; i < N_JVM_OPTS; i++) {
        args[a++] = JVM_OPTS[i] ? (char *)JVM_OPTS[i] : aot;
    }
    for (char *tok = extra_copy ? strtok(extra_copy, " ") : NULL; tok; tok = strtok(NULL, " ")) {
        args[a++] = tok;
    }
    args[a++] = "-cp";
    args[a++] = jar;
    args[a++] = "org.jflannel.cni.Main";
    for (int i = 1; i < argc; i++) {
        args[a++] = argv[i];
    }
    args[a] = NULL;
    execv(loader, args);
    fail("exec %s: %s", loader, strerror(errno));
    return 1;
}
