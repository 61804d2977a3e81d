/*
 * Preloaded (ld.so --preload, not LD_PRELOAD: nothing leaks into the environment of the plugins) into
 * upstream's cnitool, which is dynamically linked and so cannot start inside a root with no libc: the
 * loader maps cnitool and its libraries from this machine, then this constructor moves the process
 * into $JFLANNEL_CHROOT before cnitool's main runs. Every path cnitool reads (NETCONFPATH, CNI_PATH,
 * the netns) and every plugin it runs is then the bare root's, as on a host without /bin/sh or libc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void enter_root(void) {
    const char *root = getenv("JFLANNEL_CHROOT");
    if (root == NULL || *root == 0) {
        return;
    }
    if (chroot(root) != 0 || chdir("/") != 0) {
        perror("chroot-preload");
        _exit(97);
    }
}
