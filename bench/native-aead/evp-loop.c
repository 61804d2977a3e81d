/*
 * NA.java's yardstick without Java: the same EVP calls per 1,420-byte message (one context per direction, key and
 * nonce per message, GET_TAG / SET_TAG), in a C loop: what a batch downcall could reach at best, FFM's cost gone.
 * Thread CPU ns per message, best and median of 30 rounds x 20,000 after 5 warm-up rounds. With "z" a vzeroupper
 * follows each EVP call, as HotSpot's stub does after an ordinary (non-critical) downcall. Run:
 *   gcc -O2 -o /tmp/evp-loop bench/native-aead/evp-loop.c -lcrypto && /tmp/evp-loop && /tmp/evp-loop z
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEN 1420
#define N 20000
#define ROUNDS 30

static int vz;
#define VZ() do { if (vz) __asm__ volatile("vzeroupper"); } while (0)

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void nonce(unsigned char *iv, unsigned long long c) {
    memset(iv, 0, 4);
    for (int i = 0; i < 8; i++) iv[4 + i] = (unsigned char) (c >> (8 * i));
}

int main(int argc, char **argv) {
    vz = argc > 1 && argv[1][0] == 'z';
    static unsigned char key[32], iv[12], plain[LEN], sealed[LEN + 16], opened[LEN], out[LEN + 16];
    int l, bad = 0;
    for (int i = 0; i < 32; i++) key[i] = (unsigned char) (i * 7 + 1);
    for (int i = 0; i < LEN; i++) plain[i] = (unsigned char) (i * 31 + 5);
    EVP_CIPHER_CTX *enc = EVP_CIPHER_CTX_new(), *dec = EVP_CIPHER_CTX_new();
    if (!EVP_EncryptInit_ex(enc, EVP_chacha20_poly1305(), NULL, NULL, NULL) || !EVP_DecryptInit_ex(dec, EVP_chacha20_poly1305(), NULL, NULL, NULL)) return 1;
    nonce(iv, 1);
    EVP_EncryptInit_ex(enc, NULL, NULL, key, iv);
    EVP_EncryptUpdate(enc, sealed, &l, plain, LEN);
    EVP_EncryptFinal_ex(enc, sealed + LEN, &l);
    EVP_CIPHER_CTX_ctrl(enc, 0x10, 16, sealed + LEN);
    double ts[ROUNDS], to[ROUNDS];
    unsigned long long ctr = 1000;
    for (int r = -5; r < ROUNDS; r++) {
        double t = cpu();
        for (int i = 0; i < N; i++) {
            nonce(iv, ctr++);
            EVP_EncryptInit_ex(enc, NULL, NULL, key, iv); VZ();
            EVP_EncryptUpdate(enc, out, &l, plain, LEN); VZ();
            EVP_EncryptFinal_ex(enc, out + LEN, &l); VZ();
            EVP_CIPHER_CTX_ctrl(enc, 0x10, 16, out + LEN); VZ();
        }
        double s = (cpu() - t) / N;
        t = cpu();
        for (int i = 0; i < N; i++) {
            nonce(iv, 1);
            EVP_DecryptInit_ex(dec, NULL, NULL, key, iv); VZ();
            EVP_DecryptUpdate(dec, opened, &l, sealed, LEN); VZ();
            EVP_CIPHER_CTX_ctrl(dec, 0x11, 16, sealed + LEN); VZ();
            bad += EVP_DecryptFinal_ex(dec, opened + LEN, &l) <= 0; VZ();
        }
        double o = (cpu() - t) / N;
        if (r >= 0) { ts[r] = s; to[r] = o; }
    }
    if (bad || memcmp(opened, plain, LEN)) { fprintf(stderr, "open failed\n"); return 1; }
    qsort(ts, ROUNDS, sizeof ts[0], cmp);
    qsort(to, ROUNDS, sizeof to[0], cmp);
    printf("C loop%s, OPENSSL_ia32cap=%s: seal %.0f / %.0f, open %.0f / %.0f CPU ns per %d-byte message (best / median of %d x %d)\n",
           vz ? " with vzeroupper after each call" : "", getenv("OPENSSL_ia32cap") ? getenv("OPENSSL_ia32cap") : "(unset)",
           ts[0], ts[ROUNDS / 2], to[0], to[ROUNDS / 2], LEN, ROUNDS, N);
    return 0;
}
