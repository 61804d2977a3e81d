/*
 * tcp-crr: new TCP connections per second and their connect times, as netperf's TCP_CRR measures (no netperf in
 * Debian main): a closed loop of connect, a 1-byte request, a 1-byte answer, close; no keep-alive. The client closes
 * with an RST (SO_LINGER 0) so that neither end keeps TIME_WAIT and the run never runs out of ports.
 *
 *   tcp-crr server PORT                     serves until killed (one thread per accepted connection is too dear:
 *                                           a loop, the request read and answered in turn)
 *   tcp-crr client ADDR PORT SECONDS        prints: crr conns=N seconds=S rate=R connect_p50_us=.. connect_p99_us=..
 *                                           txn_p50_us=.. txn_p99_us=.. failures=F
 * Built by bench/netpol-datapath.sh with gcc -O2.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 4000000

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static int serve(int port) {
    int s = socket(AF_INET6, SOCK_STREAM, 0), one = 1, zero = 0;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_any};
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 4096)) {
        perror("tcp-crr server");
        return 1;
    }
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) {
            continue;
        }
        char b;
        if (read(c, &b, 1) == 1) {
            (void)!write(c, &b, 1);
            (void)!read(c, &b, 1); /* the client's RST (or FIN) */
        }
        close(c);
    }
}

static int client(const char *addr, int port, double seconds) {
    struct sockaddr_storage ss = {0};
    socklen_t len;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        len = sizeof *a4;
    } else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        len = sizeof *a6;
    } else {
        fprintf(stderr, "tcp-crr: not an address: %s\n", addr);
        return 2;
    }
    float *conn = malloc(sizeof(float) * MAX_SAMPLES), *txn = malloc(sizeof(float) * MAX_SAMPLES);
    long n = 0, failures = 0;
    double start = now_us(), end = start + seconds * 1e6;
    struct linger rst = {1, 0};
    int one = 1;
    while (n < MAX_SAMPLES) {
        double t0 = now_us();
        if (t0 >= end) {
            break;
        }
        int s = socket(ss.ss_family, SOCK_STREAM, 0);
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(s, SOL_SOCKET, SO_LINGER, &rst, sizeof rst);
        char b = 'x';
        if (connect(s, (struct sockaddr *)&ss, len) != 0) {
            failures++;
            close(s);
            continue;
        }
        double t1 = now_us();
        if (write(s, &b, 1) != 1 || read(s, &b, 1) != 1) {
            failures++;
            close(s);
            continue;
        }
        double t2 = now_us();
        close(s);
        conn[n] = (float)(t1 - t0);
        txn[n] = (float)(t2 - t0);
        n++;
    }
    double took = (now_us() - start) / 1e6;
    qsort(conn, n, sizeof(float), cmp);
    qsort(txn, n, sizeof(float), cmp);
    if (n == 0) {
        printf("crr conns=0 seconds=%.2f failures=%ld\n", took, failures);
        return 1;
    }
    printf("crr conns=%ld seconds=%.2f rate=%.0f connect_p50_us=%.1f connect_p99_us=%.1f txn_p50_us=%.1f txn_p99_us=%.1f failures=%ld\n",
           n, took, n / took, conn[n / 2], conn[(long)(n * 0.99)], txn[n / 2], txn[(long)(n * 0.99)], failures);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "server") == 0) {
        return serve(atoi(argv[2]));
    }
    if (argc == 5 && strcmp(argv[1], "client") == 0) {
        return client(argv[2], atoi(argv[3]), atof(argv[4]));
    }
    fprintf(stderr, "usage: tcp-crr server PORT | tcp-crr client ADDR PORT SECONDS\n");
    return 2;
}
