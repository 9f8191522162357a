/* SPDX-License-Identifier: Apache-2.0 */
/* What the mbed TLS 2.28 and 3.6 backends share (mbedtls_shared.h). Options a stripped
 * custom build may lack are switched per function, outside function bodies. */
#include "mbedtls_shared.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbedtls/dhm.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h" /* MBEDTLS_ERR_NET_* codes only */
#include "mbedtls/ssl_cache.h"
#include "mbedtls/ssl_cookie.h"
#include "mbedtls/ssl_ticket.h"
#include "mbedtls/version.h"

#include "common.h"
#include "tlsbench/spec_gen.h"
#include "tlsbench/trace.h"

/* ---------------------------------------------------------------- link: I/O */

/* The tb_io functions are already traced as I/O by the core. */
static int tb_mbed_send(void *ctx, const unsigned char *buf, size_t len) {
    tb_mbed_link *l = ctx;
    int n = l->io.send(l->io.ctx, buf, len);
    return n == TB_IO_WOULD_BLOCK ? MBEDTLS_ERR_SSL_WANT_WRITE : n < 0 ? MBEDTLS_ERR_NET_SEND_FAILED : n;
}

static int tb_mbed_recv(void *ctx, unsigned char *buf, size_t len) {
    tb_mbed_link *l = ctx;
    int n = l->io.recv(l->io.ctx, buf, len);
    return n == TB_IO_WOULD_BLOCK ? MBEDTLS_ERR_SSL_WANT_READ : n < 0 ? MBEDTLS_ERR_NET_RECV_FAILED : n;
}

static void tb_mbed_link_init(tb_mbed_link *l, mbedtls_ssl_context *ssl, uint8_t peer, const tb_conn_config *cfg,
                              tb_io io) {
    *l = (tb_mbed_link){.ssl = ssl, .io = io, .dtls = cfg->protocol == TB_PROTOCOL_KIND_DTLS,
                        .server = peer == TB_PEER_SERVER};
    l->peer_id_len = tb_peer_id_copy(l->peer_id, sizeof l->peer_id, cfg);
}

/* ---------------------------------------------------------------- link: DTLS timer */

#if defined(MBEDTLS_SSL_PROTO_DTLS)
/* The timer callbacks (mbedtls_ssl_set_timer_cb): fin_ms == 0 cancels. get returns -1
 * cancelled, 0 running, 1 intermediate delay passed, 2 final delay passed: on 2 during a
 * handshake mbed TLS resends its last flight, so each first 2 of an arming is counted. */
static void tb_mbed_timer_set(void *ctx, uint32_t int_ms, uint32_t fin_ms) {
    tb_mbed_link *l = ctx;
    uint64_t now = tb_port_now_ns();
    l->timer_int_ns = fin_ms ? now + (uint64_t)int_ms * 1000000u : 0;
    l->timer_fin_ns = fin_ms ? now + (uint64_t)fin_ms * 1000000u : 0;
    l->timer_fired = false;
}

static int tb_mbed_timer_get(void *ctx) {
    tb_mbed_link *l = ctx;
    if (l->timer_fin_ns == 0)
        return -1;
    uint64_t now = tb_port_now_ns();
    if (now < l->timer_int_ns)
        return 0;
    if (now < l->timer_fin_ns)
        return 1;
    if (!l->timer_fired && !l->handshake_over) {
        l->timer_fired = true;
        l->retransmissions++;
        tb_instant(TB_L_RETRANSMIT, l->retransmissions);
    }
    return 2;
}
#endif

static uint32_t tb_mbed_link_timeout_ms(const tb_mbed_link *l) {
    if (!l->dtls || l->timer_fin_ns == 0)
        return TB_NO_TIMER;
    uint64_t now = tb_port_now_ns();
    return now >= l->timer_fin_ns ? 0 : (uint32_t)((l->timer_fin_ns - now + 999999u) / 1000000u);
}

/* ---------------------------------------------------------------- link: cookies, MTU, MFL */

/* Cookies: mbed TLS's own helpers (HMAC over the client's transport id), one key per process. */
#if defined(MBEDTLS_SSL_PROTO_DTLS) && defined(MBEDTLS_SSL_COOKIE_C) && defined(MBEDTLS_SSL_DTLS_HELLO_VERIFY)
static mbedtls_ssl_cookie_ctx tb_mbed_cookie;
static bool tb_mbed_cookie_ready;
static int tb_mbed_conf_cookies(mbedtls_ssl_config *c, bool on) {
    if (!on) { /* the defaults are dummies that demand a cookie and reject every one */
        mbedtls_ssl_conf_dtls_cookies(c, NULL, NULL, NULL);
        return 0;
    }
    if (!tb_mbed_cookie_ready) {
        mbedtls_ssl_cookie_init(&tb_mbed_cookie);
        int ret = mbedtls_ssl_cookie_setup(&tb_mbed_cookie, mbedtls_ctr_drbg_random, tb_mbed_drbg());
        if (ret != 0)
            return ret;
        tb_mbed_cookie_ready = true;
    }
    mbedtls_ssl_conf_dtls_cookies(c, mbedtls_ssl_cookie_write, mbedtls_ssl_cookie_check, &tb_mbed_cookie);
    return 0;
}
static int tb_mbed_set_transport_id(tb_mbed_link *l) {
    return mbedtls_ssl_set_client_transport_id(l->ssl, l->peer_id, l->peer_id_len);
}
static void tb_mbed_cookie_free(void) {
    if (tb_mbed_cookie_ready)
        mbedtls_ssl_cookie_free(&tb_mbed_cookie);
    tb_mbed_cookie_ready = false;
}
#elif defined(MBEDTLS_SSL_PROTO_DTLS)
static int tb_mbed_conf_cookies(mbedtls_ssl_config *c, bool on) {
    (void)c;
    return on ? MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE : 0;
}
static int tb_mbed_set_transport_id(tb_mbed_link *l) { (void)l; return 0; }
static void tb_mbed_cookie_free(void) {}
#else /* no DTLS in the build: nothing to configure */
static int tb_mbed_set_transport_id(tb_mbed_link *l) { (void)l; return 0; }
static void tb_mbed_cookie_free(void) {}
#endif

#if defined(MBEDTLS_SSL_DTLS_CONNECTION_ID)
/* CONNECTION_ID (RFC 9146, DTLS 1.2): each peer asks the other to put a 2-byte CID into the
 * records it sends, as the wolfSSL agent does; the values only need to differ. */
static const unsigned char tb_mbed_cid[2][2] = {{'c', 0}, {'s', 0}};
static int tb_mbed_conf_cid(mbedtls_ssl_config *c, bool on) {
    return on ? mbedtls_ssl_conf_cid(c, sizeof tb_mbed_cid[0], MBEDTLS_SSL_UNEXPECTED_CID_IGNORE) : 0;
}
static int tb_mbed_set_cid(tb_mbed_link *l, bool on) {
    return on ? mbedtls_ssl_set_cid(l->ssl, MBEDTLS_SSL_CID_ENABLED, tb_mbed_cid[l->server], sizeof tb_mbed_cid[0])
              : 0;
}
#elif defined(MBEDTLS_SSL_PROTO_DTLS) /* only DTLS asks for them: a build without DTLS has no use */
static int tb_mbed_conf_cid(mbedtls_ssl_config *c, bool on) {
    (void)c;
    return on ? MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE : 0;
}
static int tb_mbed_set_cid(tb_mbed_link *l, bool on) {
    (void)l;
    return on ? MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE : 0;
}
#endif

#if defined(MBEDTLS_SSL_MAX_FRAGMENT_LENGTH)
/* RFC 6066 codes 1..4 are mbed TLS's MBEDTLS_SSL_MAX_FRAG_LEN_512..4096. */
static int tb_mbed_conf_mfl(mbedtls_ssl_config *c, uint8_t code) {
    return code ? mbedtls_ssl_conf_max_frag_len(c, code) : 0;
}
#else
static int tb_mbed_conf_mfl(mbedtls_ssl_config *c, uint8_t code) {
    (void)c;
    return code ? MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE : 0;
}
#endif

#if defined(MBEDTLS_SSL_PROTO_DTLS)
static int tb_mbed_conf_dtls(mbedtls_ssl_config *c, const tb_mbed_link *l, const tb_conn_config *cfg) {
    uint32_t lo = cfg->dtls_timeout_min_ms ? cfg->dtls_timeout_min_ms : MBEDTLS_SSL_DTLS_TIMEOUT_DFL_MIN;
    uint32_t hi = cfg->dtls_timeout_max_ms ? cfg->dtls_timeout_max_ms : MBEDTLS_SSL_DTLS_TIMEOUT_DFL_MAX;
    mbedtls_ssl_conf_handshake_timeout(c, lo, hi > lo ? hi : lo);
    int ret = tb_mbed_conf_cid(c, cfg->options & TB_OPTION_CONNECTION_ID);
    return ret == 0 && l->server ? tb_mbed_conf_cookies(c, cfg->options & TB_OPTION_DTLS_COOKIES) : ret;
}
/* After mbedtls_ssl_setup: the timer, the MTU and (server) the client's id for cookies. */
static int tb_mbed_setup_dtls(tb_mbed_link *l, const tb_conn_config *cfg) {
    mbedtls_ssl_set_timer_cb(l->ssl, l, tb_mbed_timer_set, tb_mbed_timer_get);
    if (cfg->dtls_mtu)
        mbedtls_ssl_set_mtu(l->ssl, cfg->dtls_mtu);
    int ret = tb_mbed_set_cid(l, cfg->options & TB_OPTION_CONNECTION_ID);
    return ret == 0 && l->server ? tb_mbed_set_transport_id(l) : ret;
}
#else
static int tb_mbed_conf_dtls(mbedtls_ssl_config *c, const tb_mbed_link *l, const tb_conn_config *cfg) {
    (void)c;
    (void)l;
    (void)cfg;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
static int tb_mbed_setup_dtls(tb_mbed_link *l, const tb_conn_config *cfg) {
    (void)l;
    (void)cfg;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
#endif

static int tb_mbed_conf_link(mbedtls_ssl_config *c, const tb_mbed_link *l, const tb_conn_config *cfg) {
    int ret = l->dtls ? tb_mbed_conf_dtls(c, l, cfg) : 0;
    return ret == 0 ? tb_mbed_conf_mfl(c, cfg->max_fragment) : ret;
}

static int tb_mbed_setup_link(tb_mbed_link *l, const tb_conn_config *cfg) {
    mbedtls_ssl_set_bio(l->ssl, l, tb_mbed_send, tb_mbed_recv, NULL);
    return l->dtls ? tb_mbed_setup_dtls(l, cfg) : 0;
}

int tb_mbed_after_hello_verify(tb_mbed_link *l) {
    int ret = mbedtls_ssl_session_reset(l->ssl);
    if (ret == 0)
        ret = tb_mbed_set_transport_id(l);
    return ret == 0 ? MBEDTLS_ERR_SSL_WANT_READ : ret;
}

/* ---------------------------------------------------------------- groups */

static const uint8_t tb_ffdhe2048_p[] = MBEDTLS_DHM_RFC7919_FFDHE2048_P_BIN;
static const uint8_t tb_ffdhe3072_p[] = MBEDTLS_DHM_RFC7919_FFDHE3072_P_BIN;
static const uint8_t tb_ffdhe4096_p[] = MBEDTLS_DHM_RFC7919_FFDHE4096_P_BIN;
static const uint8_t tb_ffdhe6144_p[] = MBEDTLS_DHM_RFC7919_FFDHE6144_P_BIN;
static const uint8_t tb_ffdhe8192_p[] = MBEDTLS_DHM_RFC7919_FFDHE8192_P_BIN;
static const uint8_t tb_ffdhe_g[] = MBEDTLS_DHM_RFC7919_FFDHE2048_G_BIN; /* 2 for every group */

_Static_assert(offsetof(tb_mbed_ffdhe, group) == 0, "tb_row_find reads a group row's id first");
static const tb_mbed_ffdhe tb_mbed_ffdhe_groups[] = {
    {TB_GROUP_FFDHE2048, tb_ffdhe2048_p, sizeof tb_ffdhe2048_p},
    {TB_GROUP_FFDHE3072, tb_ffdhe3072_p, sizeof tb_ffdhe3072_p},
    {TB_GROUP_FFDHE4096, tb_ffdhe4096_p, sizeof tb_ffdhe4096_p},
    {TB_GROUP_FFDHE6144, tb_ffdhe6144_p, sizeof tb_ffdhe6144_p},
    {TB_GROUP_FFDHE8192, tb_ffdhe8192_p, sizeof tb_ffdhe8192_p},
};

const tb_mbed_ffdhe *tb_mbed_ffdhe_find(uint16_t group) {
    return tb_row_find(tb_mbed_ffdhe_groups, TB_COUNT(tb_mbed_ffdhe_groups), sizeof tb_mbed_ffdhe_groups[0], group);
}

#if defined(MBEDTLS_DHM_C)
int tb_mbed_conf_dh(mbedtls_ssl_config *c, const tb_mbed_ffdhe *dh) {
    return mbedtls_ssl_conf_dh_param_bin(c, dh->p, dh->p_len, tb_ffdhe_g, sizeof tb_ffdhe_g);
}
#else /* no DHE suite in the build: never reached */
int tb_mbed_conf_dh(mbedtls_ssl_config *c, const tb_mbed_ffdhe *dh) {
    (void)c;
    (void)dh;
    (void)tb_ffdhe_g;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
#endif

bool tb_mbed_curve_built(uint16_t group) { return mbedtls_ecp_curve_info_from_tls_id(group) != NULL; }

/* ---------------------------------------------------------------- process */

static struct {
    bool ready;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    tb_mbed_cred creds[TB_CREDENTIAL_SLOTS];
} tb_mbed_process;

mbedtls_ctr_drbg_context *tb_mbed_drbg(void) { return &tb_mbed_process.drbg; }

const tb_mbed_cred *tb_mbed_cred_at(uint8_t id) {
    return tb_mbed_process.ready && id < TB_CREDENTIAL_SLOTS && tb_credential_pem_find(id) ? &tb_mbed_process.creds[id]
                                                                                           : NULL;
}

/* Credentials whose certificates need RSA: an RSA key, or (ecdh-rsa) an RSA-signed chain. */
static const bool tb_mbed_cred_rsa[TB_CREDENTIAL_SLOTS] = {
    [TB_CREDENTIAL_RSA2048] = true,
    [TB_CREDENTIAL_RSA3072] = true,
    [TB_CREDENTIAL_ECDH_RSA] = true,
};

/* A PSK-only build (no X.509 certificate parsing) has no certificate credential. */
#if defined(MBEDTLS_X509_CRT_PARSE_C)
#define TB_MBED_X509 1
#else
#define TB_MBED_X509 0
#endif

bool tb_mbed_cred_usable(uint8_t id) {
    if (id == TB_CREDENTIAL_PSK)
        return true;
    if (!TB_MBED_X509)
        return false;
    uint16_t group = tb_credential_group(id);
    bool rsa = id < TB_CREDENTIAL_SLOTS && tb_mbed_cred_rsa[id];
    return (!group || tb_mbed_curve_built(group)) && (!rsa || mbedtls_pk_info_from_type(MBEDTLS_PK_RSA) != NULL);
}

const char *tb_mbed_credential_why(uint8_t id) {
    const tb_mbed_cred *c = tb_mbed_cred_at(id);
    return c && !c->ready ? c->why : NULL;
}

static int tb_mbed_parse_crt(mbedtls_x509_crt *crt, const char *pem) {
#if TB_MBED_X509
    return mbedtls_x509_crt_parse(crt, (const unsigned char *)pem, strlen(pem) + 1);
#else
    (void)crt, (void)pem;
    return MBEDTLS_ERR_X509_FEATURE_UNAVAILABLE;
#endif
}

static void tb_mbed_cred_init(tb_mbed_cred *c) {
    *c = (tb_mbed_cred){.ready = false};
#if TB_MBED_X509
    mbedtls_x509_crt_init(&c->ca);
    mbedtls_x509_crt_init(&c->server_chain);
    mbedtls_x509_crt_init(&c->client_chain);
#endif
    mbedtls_pk_init(&c->server_key);
    mbedtls_pk_init(&c->client_key);
}

/* One credential's PEMs; a failure only disables that credential (Ed25519 does not parse in
 * mbed TLS, and no suite lists it). One this build lacks the algorithms for is not even
 * tried: a stripped build's parser would fail on it anyway, less clearly. */
static void tb_mbed_cred_load(tb_mbed_cred *c, uint8_t id, const tb_credential_pem *pem, tb_mbed_key_parser parse_key) {
    tb_mbed_cred_init(c);
    if (!tb_mbed_cred_usable(id)) {
        snprintf(c->why, sizeof c->why, "not in this build: %s",
                 !TB_MBED_X509 ? "X.509" : tb_mbed_cred_rsa[id] ? "RSA" : "the key's curve");
        return;
    }
    const struct {
        const char *what;
        mbedtls_x509_crt *crt;   /* a certificate, or */
        mbedtls_pk_context *key; /* a key */
        const char *pem;
    } parts[] = {
        {"CA certificate", &c->ca, NULL, pem->ca},
        {"server certificate", &c->server_chain, NULL, pem->server_chain},
        {"server key", NULL, &c->server_key, pem->server_key},
        {"client certificate", &c->client_chain, NULL, pem->client_chain},
        {"client key", NULL, &c->client_key, pem->client_key},
    };
    int ret = 0;
    size_t i = 0;
    for (; i < TB_COUNT(parts) && ret == 0; i++)
        ret = parts[i].crt ? tb_mbed_parse_crt(parts[i].crt, parts[i].pem) : parse_key(parts[i].key, parts[i].pem);
    c->ready = ret == 0;
    if (ret != 0) {
        char text[80];
        tb_mbed_error_text(ret, text, sizeof text);
        snprintf(c->why, sizeof c->why, "mbed TLS cannot parse its %s: %s", parts[i - 1].what, text);
    }
}

static void tb_mbed_cred_free(tb_mbed_cred *c) {
#if TB_MBED_X509
    mbedtls_x509_crt_free(&c->ca);
    mbedtls_x509_crt_free(&c->server_chain);
    mbedtls_x509_crt_free(&c->client_chain);
#endif
    mbedtls_pk_free(&c->server_key);
    mbedtls_pk_free(&c->client_key);
    c->ready = false;
}

int tb_mbed_process_init(const char *personalization, tb_mbed_key_parser parse_key, char *err, size_t errlen) {
    if (tb_mbed_process.ready)
        return 0;
    mbedtls_entropy_init(&tb_mbed_process.entropy);
    mbedtls_ctr_drbg_init(&tb_mbed_process.drbg);
    int ret = mbedtls_ctr_drbg_seed(&tb_mbed_process.drbg, mbedtls_entropy_func, &tb_mbed_process.entropy,
                                    (const unsigned char *)personalization, strlen(personalization));
    if (ret != 0) {
        char text[80];
        tb_mbed_error_text(ret, text, sizeof text);
        return tb_fail(err, errlen, "seeding CTR_DRBG failed: %s", text);
    }
    for (uint8_t id = 0; id < TB_CREDENTIAL_SLOTS; id++) {
        const tb_credential_pem *pem = tb_credential_pem_find(id);
        if (pem)
            tb_mbed_cred_load(&tb_mbed_process.creds[id], id, pem, parse_key);
    }
    tb_mbed_process.ready = true;
    return 0;
}

static void tb_mbed_resumption_free(void);
static void tb_mbed_cookie_free(void);

void tb_mbed_process_free(void) {
    if (!tb_mbed_process.ready)
        return;
    for (uint8_t id = 0; id < TB_CREDENTIAL_SLOTS; id++)
        if (tb_credential_pem_find(id))
            tb_mbed_cred_free(&tb_mbed_process.creds[id]);
    tb_mbed_resumption_free();
    tb_mbed_cookie_free();
    mbedtls_ctr_drbg_free(&tb_mbed_process.drbg);
    mbedtls_entropy_free(&tb_mbed_process.entropy);
    tb_mbed_process.ready = false;
}

/* ---------------------------------------------------------------- suites */

#define TB_RSA_CREDS TB_CREDS(TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072)
#define TB_ECDSA_CREDS TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384)

/* Indexed by mbedtls_key_exchange_type_t (the same values in 2.28 and 3.6). */
static const tb_mbed_kex tb_mbed_kex_table[] = {
    [MBEDTLS_KEY_EXCHANGE_NONE] = {"NONE", "NONE", false, .why_unsupported = "the suite has no key exchange"},
    [MBEDTLS_KEY_EXCHANGE_RSA] = {"RSA", "RSA", false, TB_RSA_CREDS},
    [MBEDTLS_KEY_EXCHANGE_DHE_RSA] = {"DHE", "RSA", false, TB_RSA_CREDS},
    [MBEDTLS_KEY_EXCHANGE_ECDHE_RSA] = {"ECDHE", "RSA", false, TB_RSA_CREDS},
    [MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA] = {"ECDHE", "ECDSA", false, TB_ECDSA_CREDS},
    [MBEDTLS_KEY_EXCHANGE_PSK] = {"PSK", "PSK", true, TB_CREDS(TB_CREDENTIAL_PSK)},
    [MBEDTLS_KEY_EXCHANGE_DHE_PSK] = {"DHE", "PSK", true, TB_CREDS(TB_CREDENTIAL_PSK)},
    [MBEDTLS_KEY_EXCHANGE_RSA_PSK] = {"RSA", "PSK", true, TB_RSA_CREDS},
    [MBEDTLS_KEY_EXCHANGE_ECDHE_PSK] = {"ECDHE", "PSK", true, TB_CREDS(TB_CREDENTIAL_PSK)},
    [MBEDTLS_KEY_EXCHANGE_ECDH_RSA] = {"ECDH", "RSA", false, TB_CREDS(TB_CREDENTIAL_ECDH_RSA)},
    [MBEDTLS_KEY_EXCHANGE_ECDH_ECDSA] = {"ECDH", "ECDSA", false, TB_ECDSA_CREDS},
    [MBEDTLS_KEY_EXCHANGE_ECJPAKE] = {"ECJPAKE", "ECJPAKE", false,
                                      .why_unsupported = "EC J-PAKE needs a shared password set up "
                                                         "with mbedtls_ssl_set_hs_ecjpake_password(), "
                                                         "which this agent does not configure"},
};

const tb_mbed_kex *tb_mbed_kex_find(int key_exchange) {
    bool known = key_exchange >= 0 && (size_t)key_exchange < TB_COUNT(tb_mbed_kex_table) &&
                 tb_mbed_kex_table[key_exchange].key_exchange;
    return &tb_mbed_kex_table[known ? key_exchange : MBEDTLS_KEY_EXCHANGE_NONE];
}

void tb_mbed_suite_credentials(tb_suite_info *info, const tb_mbed_kex *kex) {
    info->n_credentials = 0;
    for (uint8_t i = 0; i < kex->n_credentials; i++)
        if (tb_mbed_cred_usable(kex->credentials[i]))
            info->credentials[info->n_credentials++] = kex->credentials[i];
    info->why_unsupported = info->n_credentials ? NULL
                            : kex->n_credentials
                                ? "this build lacks what every credential of the key exchange needs (RSA or the key's curve)"
                                : kex->why_unsupported;
}

void tb_mbed_cipher_name(char *buf, size_t len, const char *name, bool short_tag) {
    snprintf(buf, len, "%s%s", name ? name : "unknown", short_tag ? "-8" : "");
}

/* ---------------------------------------------------------------- credentials */

int tb_mbed_conf_credentials(mbedtls_ssl_config *c, bool server, const tb_mbed_cred *cred, bool mutual) {
    /* The chains are shared read-only; mbed TLS only reads them through these pointers. */
    tb_mbed_cred *k = (tb_mbed_cred *)cred;
    bool verifies = k && (!server || mutual);
    bool sends = k && (server || mutual);
    mbedtls_ssl_conf_authmode(c, verifies ? MBEDTLS_SSL_VERIFY_REQUIRED : MBEDTLS_SSL_VERIFY_NONE);
#if TB_MBED_X509
    if (verifies)
        mbedtls_ssl_conf_ca_chain(c, &k->ca, NULL);
    if (!sends)
        return 0;
    return server ? mbedtls_ssl_conf_own_cert(c, &k->server_chain, &k->server_key)
                  : mbedtls_ssl_conf_own_cert(c, &k->client_chain, &k->client_key);
#else
    return sends ? MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE : 0; /* no credential is usable: never asked */
#endif
}

/* ---------------------------------------------------------------- resumption */

static struct {
    mbedtls_ssl_session saved; /* client: the session the previous connection left */
    bool has_saved, saved_init;
} tb_mbed_client_resume;

#if defined(MBEDTLS_SSL_TICKET_C) && defined(MBEDTLS_SSL_SESSION_TICKETS) && defined(MBEDTLS_SSL_SRV_C)
static mbedtls_ssl_ticket_context tb_mbed_ticket;
static bool tb_mbed_ticket_ready;
/* One ticket key per process, AES-256-GCM as mbed TLS's own examples use; tickets live a day. */
static int tb_mbed_conf_tickets(mbedtls_ssl_config *c) {
    if (!tb_mbed_ticket_ready) {
        mbedtls_ssl_ticket_init(&tb_mbed_ticket);
        int ret = mbedtls_ssl_ticket_setup(&tb_mbed_ticket, mbedtls_ctr_drbg_random, tb_mbed_drbg(),
                                           MBEDTLS_CIPHER_AES_256_GCM, 86400);
        if (ret != 0)
            return ret;
        tb_mbed_ticket_ready = true;
    }
    mbedtls_ssl_conf_session_tickets_cb(c, mbedtls_ssl_ticket_write, mbedtls_ssl_ticket_parse, &tb_mbed_ticket);
    return 0;
}
static void tb_mbed_tickets_free(void) {
    if (tb_mbed_ticket_ready)
        mbedtls_ssl_ticket_free(&tb_mbed_ticket);
    tb_mbed_ticket_ready = false;
}
#else
static int tb_mbed_conf_tickets(mbedtls_ssl_config *c) {
    (void)c;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
static void tb_mbed_tickets_free(void) {}
#endif

#if defined(MBEDTLS_SSL_CACHE_C) && defined(MBEDTLS_SSL_SRV_C)
static mbedtls_ssl_cache_context tb_mbed_cache;
static bool tb_mbed_cache_ready;
/* The session-ID cache: mbed TLS's defaults (50 sessions, a day). */
static int tb_mbed_conf_cache(mbedtls_ssl_config *c) {
    if (!tb_mbed_cache_ready) {
        mbedtls_ssl_cache_init(&tb_mbed_cache);
        tb_mbed_cache_ready = true;
    }
    mbedtls_ssl_conf_session_cache(c, &tb_mbed_cache, mbedtls_ssl_cache_get, mbedtls_ssl_cache_set);
    return 0;
}
static void tb_mbed_cache_free(void) {
    if (tb_mbed_cache_ready)
        mbedtls_ssl_cache_free(&tb_mbed_cache);
    tb_mbed_cache_ready = false;
}
#else
static int tb_mbed_conf_cache(mbedtls_ssl_config *c) {
    (void)c;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
static void tb_mbed_cache_free(void) {}
#endif

#if defined(MBEDTLS_SSL_SESSION_TICKETS) && defined(MBEDTLS_SSL_CLI_C)
void tb_mbed_conf_client_tickets(mbedtls_ssl_config *c, bool on) {
    mbedtls_ssl_conf_session_tickets(c, on ? MBEDTLS_SSL_SESSION_TICKETS_ENABLED : MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
}
#else
void tb_mbed_conf_client_tickets(mbedtls_ssl_config *c, bool on) {
    (void)c;
    (void)on;
}
#endif

int tb_mbed_conf_resume_server(mbedtls_ssl_config *c, bool by_id) {
    return by_id ? tb_mbed_conf_cache(c) : tb_mbed_conf_tickets(c);
}

static void tb_mbed_forget_session(void) {
    if (tb_mbed_client_resume.saved_init)
        mbedtls_ssl_session_free(&tb_mbed_client_resume.saved);
    mbedtls_ssl_session_init(&tb_mbed_client_resume.saved);
    tb_mbed_client_resume.saved_init = true;
    tb_mbed_client_resume.has_saved = false;
}

int tb_mbed_resume_offer(mbedtls_ssl_context *ssl, bool first_connection) {
    if (first_connection) {
        tb_mbed_forget_session();
        return 0;
    }
    if (!tb_mbed_client_resume.has_saved)
        return TB_MBED_ERR_NO_SESSION;
    return mbedtls_ssl_set_session(ssl, &tb_mbed_client_resume.saved);
}

int tb_mbed_resume_keep(mbedtls_ssl_context *ssl) {
    tb_mbed_forget_session();
    int ret = mbedtls_ssl_get_session(ssl, &tb_mbed_client_resume.saved);
    tb_mbed_client_resume.has_saved = ret == 0;
    return ret;
}

static void tb_mbed_resumption_free(void) {
    if (tb_mbed_client_resume.saved_init)
        mbedtls_ssl_session_free(&tb_mbed_client_resume.saved);
    tb_mbed_client_resume.saved_init = tb_mbed_client_resume.has_saved = false;
    tb_mbed_tickets_free();
    tb_mbed_cache_free();
}

/* ---------------------------------------------------------------- library facts */

#if defined(MBEDTLS_VERSION_C)
const char *tb_mbed_version(void) {
    static char version[18]; /* mbedtls_version_get_string() writes at most 9 bytes */
    mbedtls_version_get_string(version);
    return version;
}
unsigned tb_mbed_version_number(void) { return mbedtls_version_get_number(); }
int tb_mbed_feature(const char *feature) { return mbedtls_version_check_feature(feature); }
#else
const char *tb_mbed_version(void) { return MBEDTLS_VERSION_STRING; }
unsigned tb_mbed_version_number(void) { return MBEDTLS_VERSION_NUMBER; }
int tb_mbed_feature(const char *feature) {
    (void)feature;
    return -2;
}
#endif

/* The agent's own codes, in the library's words' place. */
static const struct {
    int32_t code;
    const char *text;
} tb_mbed_agent_errors[] = {
    {TB_MBED_ERR_NO_SESSION, "no session to resume: the RUN's first (full) handshake left none"},
    {TB_MBED_ERR_NOT_RESUMED, "the server did not resume the offered session (it ran a full handshake)"},
};

#if defined(MBEDTLS_ERROR_C) || defined(MBEDTLS_ERROR_STRERROR_DUMMY)
static void tb_mbed_strerror(int32_t code, char *buf, size_t len) { mbedtls_strerror((int)code, buf, len); }
#else
static void tb_mbed_strerror(int32_t code, char *buf, size_t len) {
    snprintf(buf, len, "mbed TLS error -0x%04X (MBEDTLS_ERROR_C not in this build)", (unsigned)-code);
}
#endif

void tb_mbed_error_text(int32_t code, char *buf, size_t len) {
    for (size_t i = 0; i < TB_COUNT(tb_mbed_agent_errors); i++)
        if (tb_mbed_agent_errors[i].code == code) {
            snprintf(buf, len, "%s", tb_mbed_agent_errors[i].text);
            return;
        }
    tb_mbed_strerror(code, buf, len);
}

/* Build options both versions have. */
static const tb_mbed_feature_key tb_mbed_common_features[] = {
    {"tls1_2", "MBEDTLS_SSL_PROTO_TLS1_2"},
    {"dtls", "MBEDTLS_SSL_PROTO_DTLS"},
    {"dtls_hello_verify", "MBEDTLS_SSL_DTLS_HELLO_VERIFY"},
    {"max_fragment_length", "MBEDTLS_SSL_MAX_FRAGMENT_LENGTH"},
    {"encrypt_then_mac", "MBEDTLS_SSL_ENCRYPT_THEN_MAC"},
    {"extended_master_secret", "MBEDTLS_SSL_EXTENDED_MASTER_SECRET"},
    {"session_tickets", "MBEDTLS_SSL_SESSION_TICKETS"},
    {"renegotiation", "MBEDTLS_SSL_RENEGOTIATION"},
    {"debug_c", "MBEDTLS_DEBUG_C"},
    {"aesni", "MBEDTLS_AESNI_C"},
    {"have_asm", "MBEDTLS_HAVE_ASM"},
    {"ecp_nist_optim", "MBEDTLS_ECP_NIST_OPTIM"},
    {"ecp_restartable", "MBEDTLS_ECP_RESTARTABLE"},
    {"ecdsa_deterministic", "MBEDTLS_ECDSA_DETERMINISTIC"},
    {"use_psa_crypto", "MBEDTLS_USE_PSA_CRYPTO"},
    {"threading", "MBEDTLS_THREADING_C"},
};

static void tb_mbed_describe_features(tb_json *out, const tb_mbed_feature_key *features, size_t n) {
    for (size_t i = 0; i < n; i++)
        tb_json_kv_bool(out, features[i].key, tb_mbed_feature(features[i].feature) == 0);
}

void tb_mbed_describe_library(tb_json *out, const tb_mbed_feature_key *features, size_t n) {
    tb_json_kv_string(out, "version", tb_mbed_version());
    tb_json_kv_uint(out, "version_number", tb_mbed_version_number());
    bool listed = tb_mbed_feature("MBEDTLS_VERSION_C") != -2;
    tb_json_kv_bool(out, "features_known", listed);
    if (listed) {
        tb_mbed_describe_features(out, tb_mbed_common_features, TB_COUNT(tb_mbed_common_features));
        tb_mbed_describe_features(out, features, n);
    }
    tb_json_kv_uint(out, "in_content_len", MBEDTLS_SSL_IN_CONTENT_LEN);
    tb_json_kv_uint(out, "out_content_len", MBEDTLS_SSL_OUT_CONTENT_LEN);
    /* How sessions are configured here (not build options, but they shape every number). */
    tb_json_kv_string(out, "session_tickets_used", "only with RESUME (without RESUME_ID)");
    tb_json_kv_bool(out, "renegotiation_used", false);
    tb_json_kv_bool(out, "debug_output", false);
}

void tb_mbed_describe_config(tb_json *out) {
    tb_json_key(out, "config");
    tb_json_begin_object(out);
    tb_json_kv_string(out, "origin", tb_mbedtls_config_origin);
    tb_json_kv_string(out, "name", tb_mbedtls_config_name);
    tb_json_kv_string(out, "sha256", tb_mbedtls_config_sha256);
    if (tb_mbedtls_config_text[0])
        tb_json_kv_string(out, "text", tb_mbedtls_config_text);
    tb_json_end_object(out);
}

void tb_mbed_describe_credentials(tb_json *out) {
    tb_json_key(out, "credentials");
    tb_json_begin_object(out);
    for (uint8_t id = 0; id < TB_CREDENTIAL_SLOTS; id++) {
        const tb_mbed_cred *c = tb_mbed_cred_at(id);
        if (c)
            tb_json_kv_string(out, tb_credential_name(id), c->ready ? "ready" : c->why);
    }
    tb_json_end_object(out);
}

/* ---------------------------------------------------------------- sessions */

_Static_assert(offsetof(tb_mbed_session, ssl) == 0, "a session begins with its connection");

/* Before the version's calls: the role and transport, the link, the RNG, the forced suite. */
static int tb_mbed_configure_start(tb_mbed_session *h, bool server, uint16_t suite_id, const tb_conn_config *cfg) {
    int ret = mbedtls_ssl_config_defaults(&h->conf, server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
                                          h->link.dtls ? MBEDTLS_SSL_TRANSPORT_DATAGRAM : MBEDTLS_SSL_TRANSPORT_STREAM,
                                          MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret == 0)
        ret = tb_mbed_conf_link(&h->conf, &h->link, cfg);
    if (ret != 0)
        return ret;
    mbedtls_ssl_conf_rng(&h->conf, mbedtls_ctr_drbg_random, tb_mbed_drbg());
    h->ciphersuites[0] = suite_id;
    h->ciphersuites[1] = 0;
    mbedtls_ssl_conf_ciphersuites(&h->conf, h->ciphersuites);
    return 0;
}

/* After them: the connection on its configuration, the server's name the client checks, the
 * session a resuming client offers, the I/O and timer callbacks. */
static int tb_mbed_configure_end(tb_mbed_session *h, bool server, const tb_conn_config *cfg) {
    int ret = mbedtls_ssl_setup(&h->ssl, &h->conf);
#if TB_MBED_X509
    if (ret == 0 && !server)
        ret = mbedtls_ssl_set_hostname(&h->ssl, TB_CREDENTIAL_HOSTNAME);
#else
    (void)server; /* no certificate: no name to check */
#endif
    if (ret == 0 && h->resume)
        ret = tb_mbed_resume_offer(&h->ssl, cfg->first_connection);
    return ret == 0 ? tb_mbed_setup_link(&h->link, cfg) : ret;
}

tb_session *tb_mbed_session_open(size_t size, uint8_t peer, const tb_conn_config *cfg, tb_io io,
                                 const tb_suite_info *suite, uint16_t group, tb_mbed_configure_fn configure,
                                 char *err, size_t errlen) {
    tb_session *s = calloc(1, size);
    if (!s) {
        tb_fail(err, errlen, "out of memory");
        return NULL;
    }
    tb_mbed_session *h = TB_MBED_SESSION(s);
    bool server = peer == TB_PEER_SERVER;
    mbedtls_ssl_init(&h->ssl);
    mbedtls_ssl_config_init(&h->conf);
    tb_mbed_link_init(&h->link, &h->ssl, peer, cfg, io);
    h->resume = !server && (cfg->options & TB_OPTION_RESUME);
    h->offered = h->resume && !cfg->first_connection;
    int ret = tb_mbed_configure_start(h, server, suite->id, cfg);
    if (ret == 0)
        ret = configure(s, peer, suite, cfg, group);
    if (ret == 0)
        ret = tb_mbed_configure_end(h, server, cfg);
    if (ret == 0)
        return s;
    char text[100];
    tb_mbed_error_text(ret, text, sizeof text);
    tb_fail(err, errlen, "configuring the %s for %s failed: %s (-0x%04X)", tb_peer_name(peer), suite->name, text,
            (unsigned)-ret);
    tb_mbed_session_free(s);
    return NULL;
}

tb_step_result tb_mbed_finish(tb_session *s, bool keep, int32_t *lib_error) {
    tb_mbed_session *h = TB_MBED_SESSION(s);
    h->link.handshake_over = true;
    int ret = h->offered && h->full_handshake ? TB_MBED_ERR_NOT_RESUMED : 0;
    if (ret == 0 && h->resume && keep)
        ret = tb_mbed_resume_keep(&h->ssl);
    if (ret == 0)
        return TB_STEP_DONE;
    *lib_error = ret;
    return TB_STEP_ERROR;
}

void tb_mbed_session_free(tb_session *s) {
    if (!s)
        return;
    mbedtls_ssl_free(&TB_MBED_SESSION(s)->ssl);
    mbedtls_ssl_config_free(&TB_MBED_SESSION(s)->conf);
    free(s);
}

int tb_mbed_write(tb_session *s, const uint8_t *buf, size_t len, int32_t *lib_error) {
    return tb_mbed_io_result(mbedtls_ssl_write(&TB_MBED_SESSION(s)->ssl, buf, len), lib_error);
}

int tb_mbed_read(tb_session *s, uint8_t *buf, size_t len, int32_t *lib_error) {
    return tb_mbed_io_result(mbedtls_ssl_read(&TB_MBED_SESSION(s)->ssl, buf, len), lib_error);
}

int tb_mbed_close_notify(tb_session *s, int32_t *lib_error) {
    return tb_mbed_io_result(mbedtls_ssl_close_notify(&TB_MBED_SESSION(s)->ssl), lib_error);
}

uint32_t tb_mbed_timeout_ms(tb_session *s) { return tb_mbed_link_timeout_ms(&TB_MBED_SESSION(s)->link); }

uint32_t tb_mbed_retransmissions(tb_session *s) { return TB_MBED_SESSION(s)->link.retransmissions; }

int tb_mbed_io_result(int ret, int32_t *lib_error) {
    if (ret >= 0)
        return ret;
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE)
        return TB_IO_WOULD_BLOCK;
    *lib_error = ret;
    return -1;
}
