/* SPDX-License-Identifier: Apache-2.0 */
/* A raw in-memory handshake loop of wolfSSL, configured as tlsbench's agent configures it
 * (a context per version and peer made once, no tickets, no session cache, the client
 * verifying the server; per handshake: new sessions with the suite and the one group set,
 * wolfSSL_connect and wolfSSL_accept in turn). --suite is wolfSSL's own name
 * (TLS13-AES128-GCM-SHA256, ECDHE-ECDSA-AES128-GCM-SHA256), --group x25519 or secp256r1. */
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include "raw.h"

static raw_pipe c2s, s2c;

static int send_to(WOLFSSL *ssl, char *b, int n, void *ctx) {
    (void)ssl;
    return raw_pipe_write(ctx, (const unsigned char *)b, (size_t)n);
}

static int recv_from(WOLFSSL *ssl, char *b, int n, void *ctx) {
    (void)ssl;
    int got = raw_pipe_read(ctx, (unsigned char *)b, (size_t)n);
    return got ? got : WOLFSSL_CBIO_ERR_WANT_READ;
}

static WOLFSSL_CTX *context(int server, const raw_options *o) {
    WOLFSSL_METHOD *m = o->tls13 ? (server ? wolfTLSv1_3_server_method() : wolfTLSv1_3_client_method())
                                 : (server ? wolfTLSv1_2_server_method() : wolfTLSv1_2_client_method());
    WOLFSSL_CTX *ctx = wolfSSL_CTX_new(m);
    wolfSSL_CTX_SetIORecv(ctx, recv_from);
    wolfSSL_CTX_SetIOSend(ctx, send_to);
    wolfSSL_CTX_set_session_cache_mode(ctx, WOLFSSL_SESS_CACHE_OFF);
    wolfSSL_CTX_NoTicketTLSv12(ctx);
    wolfSSL_CTX_no_ticket_TLSv13(ctx);
    wolfSSL_CTX_set_verify(ctx, server ? WOLFSSL_VERIFY_NONE : WOLFSSL_VERIFY_PEER, NULL);
    char path[4096];
    int ok;
    if (server) {
        snprintf(path, sizeof path, "%s/server.crt", o->creds);
        ok = wolfSSL_CTX_use_certificate_chain_file(ctx, path) == WOLFSSL_SUCCESS;
        snprintf(path, sizeof path, "%s/server.key", o->creds);
        ok = ok && wolfSSL_CTX_use_PrivateKey_file(ctx, path, WOLFSSL_FILETYPE_PEM) == WOLFSSL_SUCCESS;
    } else {
        snprintf(path, sizeof path, "%s/ca.crt", o->creds);
        ok = wolfSSL_CTX_load_verify_locations(ctx, path, NULL) == WOLFSSL_SUCCESS;
    }
    if (!ok) {
        fprintf(stderr, "cannot read the credentials in %s\n", o->creds);
        exit(2);
    }
    return ctx;
}

static WOLFSSL *session(WOLFSSL_CTX *ctx, int server, const raw_options *o) {
    WOLFSSL *ssl = wolfSSL_new(ctx);
    int group = strcmp(o->group, "x25519") == 0 ? WOLFSSL_ECC_X25519 : WOLFSSL_ECC_SECP256R1;
    int ok = wolfSSL_set_cipher_list(ssl, o->suite) == WOLFSSL_SUCCESS &&
             (o->tls13 ? wolfSSL_set_groups(ssl, &group, 1) : wolfSSL_UseSupportedCurve(ssl, (word16)group)) ==
                 WOLFSSL_SUCCESS;
    if (!server)
        ok = ok && wolfSSL_check_domain_name(ssl, "tlsbench.test") == WOLFSSL_SUCCESS;
    if (!ok) {
        fprintf(stderr, "cannot configure a session for %s, %s\n", o->suite, o->group);
        exit(2);
    }
    wolfSSL_SetIOWriteCtx(ssl, server ? &s2c : &c2s);
    wolfSSL_SetIOReadCtx(ssl, server ? &c2s : &s2c);
    return ssl;
}

typedef struct loop {
    WOLFSSL_CTX *cctx, *sctx;
    raw_options o;
} loop;

/* One repetition: each peer runs until it waits for the other; close_notify both ways. */
static uint64_t once(void *ctx) {
    loop *l = ctx;
    c2s.head = c2s.tail = s2c.head = s2c.tail = 0;
    WOLFSSL *c = session(l->cctx, 0, &l->o), *s = session(l->sctx, 1, &l->o);
    uint64_t t0 = raw_now_ns();
    int cdone = 0, sdone = 0;
    for (int turn = 0; turn < 64 && !(cdone && sdone); turn++) {
        cdone = cdone || wolfSSL_connect(c) == WOLFSSL_SUCCESS;
        sdone = sdone || wolfSSL_accept(s) == WOLFSSL_SUCCESS;
    }
    uint64_t t1 = raw_now_ns();
    if (!cdone || !sdone) {
        fprintf(stderr, "handshake failed: %d %d\n", wolfSSL_get_error(c, 0), wolfSSL_get_error(s, 0));
        exit(1);
    }
    wolfSSL_shutdown(c);
    wolfSSL_shutdown(s);
    wolfSSL_free(c);
    wolfSSL_free(s);
    return t1 - t0;
}

int main(int argc, char **argv) {
    raw_options o = raw_parse(argc, argv);
    wolfSSL_Init();
    loop l = {context(0, &o), context(1, &o), o};
    return raw_loop(&o, once, &l);
}
