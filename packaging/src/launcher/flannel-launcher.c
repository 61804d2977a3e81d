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

static int has_runtime(const char *bundle) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/jre/bin/" LOADER, bundle);
    return access(p, X_OK) == 0;
}

int main(int argc, char **argv) {
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
