/* SPDX-License-Identifier: Apache-2.0 */
/* A raw in-memory handshake loop of mbed TLS 2.28, configured as tlsbench's agent configures
 * it (TLS 1.2 pinned, one suite, the group forced on both peers, no tickets, the client
 * verifying the server; per handshake: new configurations and sessions; mbedtls_ssl_handshake
 * on each peer in turn). --suite is the IANA id in hex (0xC02B), --group the curve's name
 * (secp256r1), --creds "" for a PSK suite. */
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include "raw.h"

static raw_pipe c2s, s2c;
static mbedtls_entropy_context entropy;
static mbedtls_ctr_drbg_context drbg;
static mbedtls_x509_crt chain, ca;
static mbedtls_pk_context key;
static int suites[2];
static mbedtls_ecp_group_id curves[2] = {MBEDTLS_ECP_DP_NONE, MBEDTLS_ECP_DP_NONE};
static const unsigned char psk[32] = {1};

typedef struct peer {
    mbedtls_ssl_config conf;
    mbedtls_ssl_context ssl;
    raw_pipe *out, *in;
} peer;

static int send_to(void *ctx, const unsigned char *b, size_t n) { return raw_pipe_write(((peer *)ctx)->out, b, n); }

static int recv_from(void *ctx, unsigned char *b, size_t n) {
    int got = raw_pipe_read(((peer *)ctx)->in, b, n);
    return got ? got : MBEDTLS_ERR_SSL_WANT_READ;
}

static void setup(peer *p, int server, const raw_options *o) {
    mbedtls_ssl_config_init(&p->conf);
    mbedtls_ssl_init(&p->ssl);
    mbedtls_ssl_config_defaults(&p->conf, server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
                                MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    mbedtls_ssl_conf_rng(&p->conf, mbedtls_ctr_drbg_random, &drbg);
    mbedtls_ssl_conf_min_version(&p->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_max_version(&p->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_ciphersuites(&p->conf, suites);
    mbedtls_ssl_conf_curves(&p->conf, curves);
    mbedtls_ssl_conf_session_tickets(&p->conf, MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
    mbedtls_ssl_conf_renegotiation(&p->conf, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
    int certs = o->creds[0] != '\0';
    mbedtls_ssl_conf_authmode(&p->conf, server || !certs ? MBEDTLS_SSL_VERIFY_NONE : MBEDTLS_SSL_VERIFY_REQUIRED);
    if (certs && server)
        mbedtls_ssl_conf_own_cert(&p->conf, &chain, &key);
    if (certs && !server)
        mbedtls_ssl_conf_ca_chain(&p->conf, &ca, NULL);
    if (!certs)
        mbedtls_ssl_conf_psk(&p->conf, psk, sizeof psk, (const unsigned char *)"tlsbench", 8);
    if (mbedtls_ssl_setup(&p->ssl, &p->conf) != 0)
        exit(1);
    if (!server)
        mbedtls_ssl_set_hostname(&p->ssl, "tlsbench.test");
    p->out = server ? &s2c : &c2s;
    p->in = server ? &c2s : &s2c;
    mbedtls_ssl_set_bio(&p->ssl, p, send_to, recv_from, NULL);
}

static void teardown(peer *p) {
    mbedtls_ssl_free(&p->ssl);
    mbedtls_ssl_config_free(&p->conf);
}

/* One repetition: each peer runs until it waits for the other; close_notify both ways. */
static uint64_t once(void *ctx) {
    const raw_options *o = ctx;
    static peer c, s;
    c2s.head = c2s.tail = s2c.head = s2c.tail = 0;
    setup(&c, 0, o);
    setup(&s, 1, o);
    uint64_t t0 = raw_now_ns();
    int cr = 1, sr = 1;
    for (int turn = 0; turn < 64 && (cr != 0 || sr != 0); turn++) {
        cr = cr ? mbedtls_ssl_handshake(&c.ssl) : 0;
        sr = sr ? mbedtls_ssl_handshake(&s.ssl) : 0;
        if ((cr && cr != MBEDTLS_ERR_SSL_WANT_READ) || (sr && sr != MBEDTLS_ERR_SSL_WANT_READ)) {
            char text[160];
            mbedtls_strerror(cr ? cr : sr, text, sizeof text);
            fprintf(stderr, "handshake failed: %s\n", text);
            exit(1);
        }
    }
    uint64_t t1 = raw_now_ns();
    mbedtls_ssl_close_notify(&c.ssl);
    mbedtls_ssl_close_notify(&s.ssl);
    teardown(&c);
    teardown(&s);
    return t1 - t0;
}

int main(int argc, char **argv) {
    raw_options o = raw_parse(argc, argv);
    suites[0] = (int)strtol(o.suite, NULL, 16);
    const mbedtls_ecp_curve_info *curve = o.group[0] ? mbedtls_ecp_curve_info_from_name(o.group) : NULL;
    curves[0] = curve ? curve->grp_id : MBEDTLS_ECP_DP_NONE;
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, (const unsigned char *)"raw", 3);
    mbedtls_x509_crt_init(&chain);
    mbedtls_x509_crt_init(&ca);
    mbedtls_pk_init(&key);
    if (o.creds[0]) {
        char path[4096];
        snprintf(path, sizeof path, "%s/server.crt", o.creds);
        int bad = mbedtls_x509_crt_parse_file(&chain, path);
        snprintf(path, sizeof path, "%s/ca.crt", o.creds);
        bad |= mbedtls_x509_crt_parse_file(&ca, path);
        snprintf(path, sizeof path, "%s/server.key", o.creds);
        bad |= mbedtls_pk_parse_keyfile(&key, path, NULL);
        if (bad) {
            fprintf(stderr, "cannot read the credentials in %s\n", o.creds);
            return 2;
        }
    }
    return raw_loop(&o, once, &o);
}
