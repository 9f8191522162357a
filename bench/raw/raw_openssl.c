/* SPDX-License-Identifier: Apache-2.0 */
/* A raw in-memory handshake loop of OpenSSL, configured as tlsbench's agent configures it
 * (contexts made once; per handshake: new sessions with the version, suite and group pinned,
 * no tickets, no session cache, the server's chain as given, the client verifying it). */
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "raw.h"

static raw_pipe c2s, s2c;

static int bio_write(BIO *b, const char *data, int n) {
    BIO_clear_retry_flags(b);
    return raw_pipe_write(BIO_get_data(b), (const unsigned char *)data, (size_t)n);
}

static int bio_read(BIO *b, char *data, int n) {
    BIO_clear_retry_flags(b);
    int got = raw_pipe_read(BIO_get_data(b), (unsigned char *)data, (size_t)n);
    if (got == 0)
        BIO_set_retry_read(b);
    return got ? got : -1;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
    (void)b, (void)num, (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static BIO_METHOD *method;

/* A BIO over one direction's pipe: a session reads through one and writes through another. */
static BIO *pipe_bio(raw_pipe *p) {
    BIO *b = BIO_new(method);
    BIO_set_data(b, p);
    BIO_set_init(b, 1);
    return b;
}

static SSL_CTX *context(int server, const raw_options *o) {
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    SSL_CTX_set_security_level(ctx, 0);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
    char path[4096];
    if (server) {
        snprintf(path, sizeof path, "%s/server.crt", o->creds);
        SSL_CTX_use_certificate_chain_file(ctx, path);
        snprintf(path, sizeof path, "%s/server.key", o->creds);
        SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM);
    } else {
        snprintf(path, sizeof path, "%s/ca.crt", o->creds);
        SSL_CTX_load_verify_locations(ctx, path, NULL);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    return ctx;
}

static SSL *session(SSL_CTX *ctx, int server, const raw_options *o) {
    SSL *ssl = SSL_new(ctx);
    int v = o->tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
    SSL_set_min_proto_version(ssl, v);
    SSL_set_max_proto_version(ssl, v);
    if (o->tls13)
        SSL_set_ciphersuites(ssl, o->suite);
    else
        SSL_set_cipher_list(ssl, o->suite);
    SSL_set1_groups_list(ssl, o->group);
    raw_pipe *out = server ? &s2c : &c2s, *in = server ? &c2s : &s2c;
    SSL_set_bio(ssl, pipe_bio(in), pipe_bio(out));
    if (server)
        SSL_set_accept_state(ssl);
    else
        SSL_set_connect_state(ssl);
    return ssl;
}

typedef struct loop {
    SSL_CTX *cctx, *sctx;
    raw_options o;
} loop;

/* One repetition: handshake with the peers taking turns, close_notify both ways. */
static uint64_t once(void *ctx) {
    loop *l = ctx;
    c2s.head = c2s.tail = s2c.head = s2c.tail = 0;
    SSL *c = session(l->cctx, 0, &l->o), *s = session(l->sctx, 1, &l->o);
    uint64_t t0 = raw_now_ns();
    int cdone = 0, sdone = 0;
    for (int turn = 0; turn < 64 && !(cdone && sdone); turn++) {
        cdone = cdone || SSL_do_handshake(c) == 1;
        sdone = sdone || SSL_do_handshake(s) == 1;
    }
    uint64_t t1 = raw_now_ns();
    if (!cdone || !sdone) {
        ERR_print_errors_fp(stderr);
        exit(1);
    }
    SSL_shutdown(c);
    SSL_shutdown(s);
    SSL_shutdown(c);
    SSL_free(c);
    SSL_free(s);
    return t1 - t0;
}

int main(int argc, char **argv) {
    raw_options o = raw_parse(argc, argv);
    method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "raw pipe");
    BIO_meth_set_write(method, bio_write);
    BIO_meth_set_read(method, bio_read);
    BIO_meth_set_ctrl(method, bio_ctrl);
    loop l = {context(0, &o), context(1, &o), o};
    return raw_loop(&o, once, &l);
}
