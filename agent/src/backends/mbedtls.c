/* SPDX-License-Identifier: Apache-2.0 */
/* The mbed TLS 2.28 backend: suite table, state -> step label table, per-session
 * configuration (forced suite, group and credentials) and the step/record calls.
 * Crypto operations inside the steps are traced by mbedtls_crypto.c (link-time wrappers).
 *
 * Suite metadata conventions (SUITES JSON, docs/protocol.md):
 *   key_exchange   = how the premaster secret is agreed: ECDHE, ECDH (static, the server
 *                    certificate's key), DHE, RSA (key transport), PSK (the key alone);
 *   authentication = what authenticates the server: ECDSA, RSA (the certificate's signature
 *                    for ECDH-RSA) or PSK. Hybrids split the same way: DHE-PSK = DHE/PSK,
 *                    ECDHE-PSK = ECDHE/PSK, RSA-PSK = RSA/PSK (the server also sends an RSA
 *                    certificate, whose key encrypts the premaster).
 *   cipher         = mbed TLS's cipher name, "-8" appended for 8-byte-tag CCM suites;
 *   mac            = the suite's hash (the PRF hash for AEAD suites). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/dhm.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h" /* MBEDTLS_ERR_NET_* codes only */
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/ssl_ciphersuites.h"
#include "mbedtls/ssl_cookie.h"
#include "mbedtls/version.h"
#include "mbedtls/x509_crt.h"

#include "common.h"
#include "mbedtls_internal.h"
#include "tlsbench/backend.h"
#include "tlsbench/credentials.h"
#include "tlsbench/trace.h"

/* What the agent cannot do without (a custom config must keep them). */
#if !defined(MBEDTLS_CTR_DRBG_C) || !defined(MBEDTLS_ENTROPY_C) || !defined(MBEDTLS_ECP_C) || \
    !defined(MBEDTLS_X509_CRT_PARSE_C) || !defined(MBEDTLS_SSL_CLI_C) || !defined(MBEDTLS_SSL_SRV_C) || \
    !defined(MBEDTLS_SSL_PROTO_TLS1_2)
#error "the mbed TLS agent needs MBEDTLS_CTR_DRBG_C, _ENTROPY_C, _ECP_C, _X509_CRT_PARSE_C, _SSL_CLI_C, _SSL_SRV_C and _SSL_PROTO_TLS1_2"
#endif

/* Rows of the suite table (a device build sizes it to its config's suites). */
#ifndef TB_MBED_MAX_SUITES
#define TB_MBED_MAX_SUITES 256
#endif

/* ---------------------------------------------------------------- state -> step label */

/* ssl->state at entry of mbedtls_ssl_handshake_step() names the message written or parsed. */
static const uint16_t tb_mbed_state_labels[] = {
    [MBEDTLS_SSL_HELLO_REQUEST] = TB_L_HELLO_REQUEST,
    [MBEDTLS_SSL_CLIENT_HELLO] = TB_L_CLIENT_HELLO,
    [MBEDTLS_SSL_SERVER_HELLO] = TB_L_SERVER_HELLO,
    [MBEDTLS_SSL_SERVER_CERTIFICATE] = TB_L_SERVER_CERTIFICATE,
    [MBEDTLS_SSL_SERVER_KEY_EXCHANGE] = TB_L_SERVER_KEY_EXCHANGE,
    [MBEDTLS_SSL_CERTIFICATE_REQUEST] = TB_L_CERTIFICATE_REQUEST,
    [MBEDTLS_SSL_SERVER_HELLO_DONE] = TB_L_SERVER_HELLO_DONE,
    [MBEDTLS_SSL_CLIENT_CERTIFICATE] = TB_L_CLIENT_CERTIFICATE,
    [MBEDTLS_SSL_CLIENT_KEY_EXCHANGE] = TB_L_CLIENT_KEY_EXCHANGE,
    [MBEDTLS_SSL_CERTIFICATE_VERIFY] = TB_L_CERTIFICATE_VERIFY,
    [MBEDTLS_SSL_CLIENT_CHANGE_CIPHER_SPEC] = TB_L_CLIENT_CHANGE_CIPHER_SPEC,
    [MBEDTLS_SSL_CLIENT_FINISHED] = TB_L_CLIENT_FINISHED,
    [MBEDTLS_SSL_SERVER_CHANGE_CIPHER_SPEC] = TB_L_SERVER_CHANGE_CIPHER_SPEC,
    [MBEDTLS_SSL_SERVER_FINISHED] = TB_L_SERVER_FINISHED,
    [MBEDTLS_SSL_FLUSH_BUFFERS] = TB_L_FLUSH_BUFFERS,
    [MBEDTLS_SSL_HANDSHAKE_WRAPUP] = TB_L_HANDSHAKE_WRAPUP,
    /* Never stepped (step() reports DONE first); mapped so no state is without a label. */
    [MBEDTLS_SSL_HANDSHAKE_OVER] = TB_L_HANDSHAKE_WRAPUP,
    [MBEDTLS_SSL_SERVER_NEW_SESSION_TICKET] = TB_L_NEW_SESSION_TICKET,
    [MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT] = TB_L_HELLO_VERIFY_REQUEST,
};
_Static_assert(TB_COUNT(tb_mbed_state_labels) == MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT + 1,
               "a mbedtls_ssl_states value has no step label");

size_t tb_mbedtls_state_count(void) { return TB_COUNT(tb_mbed_state_labels); }

uint16_t tb_mbedtls_state_label(int state) {
    return state >= 0 && (size_t)state < TB_COUNT(tb_mbed_state_labels) ? tb_mbed_state_labels[state] : 0;
}

/* ---------------------------------------------------------------- key exchanges */

/* Which groups each key exchange takes is the spec's ([key_exchange], by name). */
typedef struct tb_mbed_kex {
    const char *key_exchange;
    const char *authentication;
    bool psk; /* the pre-shared key is configured on both peers */
    uint8_t credentials[TB_MAX_SUITE_CREDENTIALS];
    uint8_t n_credentials;
    const char *why_unsupported;
} tb_mbed_kex;

#define TB_RSA_CREDS TB_CREDS(TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072)
#define TB_ECDSA_CREDS TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384)

/* Indexed by mbedtls_key_exchange_type_t. */
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

/* Protocol versions by minor version (major is always 3): name and the build option. */
static const struct {
    const char *name;
    const char *feature;
} tb_mbed_versions[] = {
    {"SSL3.0", "MBEDTLS_SSL_PROTO_SSL3"},
    {"TLS1.0", "MBEDTLS_SSL_PROTO_TLS1"},
    {"TLS1.1", "MBEDTLS_SSL_PROTO_TLS1_1"},
    {"TLS1.2", "MBEDTLS_SSL_PROTO_TLS1_2"},
};

/* ---------------------------------------------------------------- groups */

static const uint8_t tb_ffdhe2048_p[] = MBEDTLS_DHM_RFC7919_FFDHE2048_P_BIN;
static const uint8_t tb_ffdhe3072_p[] = MBEDTLS_DHM_RFC7919_FFDHE3072_P_BIN;
static const uint8_t tb_ffdhe4096_p[] = MBEDTLS_DHM_RFC7919_FFDHE4096_P_BIN;
static const uint8_t tb_ffdhe_g[] = MBEDTLS_DHM_RFC7919_FFDHE2048_G_BIN; /* 2 for every group */

typedef struct tb_mbed_group {
    uint16_t group; /* TB_GROUP_* (IANA) */
    mbedtls_ecp_group_id ec; /* EC groups */
    const uint8_t *p;        /* FFDHE groups: the prime */
    size_t p_len;
} tb_mbed_group;

static const tb_mbed_group tb_mbed_groups[] = {
    {TB_GROUP_SECP256R1, MBEDTLS_ECP_DP_SECP256R1, NULL, 0},
    {TB_GROUP_SECP384R1, MBEDTLS_ECP_DP_SECP384R1, NULL, 0},
    {TB_GROUP_SECP521R1, MBEDTLS_ECP_DP_SECP521R1, NULL, 0},
    {TB_GROUP_X25519, MBEDTLS_ECP_DP_CURVE25519, NULL, 0},
    {TB_GROUP_X448, MBEDTLS_ECP_DP_CURVE448, NULL, 0},
    {TB_GROUP_FFDHE2048, MBEDTLS_ECP_DP_NONE, tb_ffdhe2048_p, sizeof tb_ffdhe2048_p},
    {TB_GROUP_FFDHE3072, MBEDTLS_ECP_DP_NONE, tb_ffdhe3072_p, sizeof tb_ffdhe3072_p},
    {TB_GROUP_FFDHE4096, MBEDTLS_ECP_DP_NONE, tb_ffdhe4096_p, sizeof tb_ffdhe4096_p},
};

_Static_assert(offsetof(tb_mbed_group, group) == 0, "tb_row_find reads a group row's id first");
static const tb_mbed_group *tb_mbed_group_find(uint16_t group) {
    return tb_row_find(tb_mbed_groups, TB_COUNT(tb_mbed_groups), sizeof tb_mbed_groups[0], group);
}

/* The curve of a credential's key (spec [credential_group]); MBEDTLS_ECP_DP_NONE for RSA and PSK. */
static mbedtls_ecp_group_id tb_mbed_cred_curve(uint8_t id) {
    const tb_mbed_group *g = tb_mbed_group_find(tb_credential_group(id));
    return g ? g->ec : MBEDTLS_ECP_DP_NONE;
}

/* Credentials whose certificates need RSA: an RSA key, or (ecdh-rsa) an RSA-signed chain. */
static const bool tb_mbed_cred_rsa[TB_CREDENTIAL_SLOTS] = {
    [TB_CREDENTIAL_RSA2048] = true,
    [TB_CREDENTIAL_RSA3072] = true,
    [TB_CREDENTIAL_ECDH_RSA] = true,
};

/* Whether the linked build has what a credential needs (its key's curve; RSA where used).
 * A stripped build offers only these, so a plan's `auto` never picks one it cannot parse. */
static bool tb_mbed_cred_usable(uint8_t id) {
    mbedtls_ecp_group_id curve = tb_mbed_cred_curve(id);
    bool rsa = id < TB_CREDENTIAL_SLOTS && tb_mbed_cred_rsa[id];
    return (curve == MBEDTLS_ECP_DP_NONE || mbedtls_ecp_curve_info_from_grp_id(curve) != NULL) &&
           (!rsa || mbedtls_pk_info_from_type(MBEDTLS_PK_RSA) != NULL);
}

static tb_group_support tb_mbed_group_support(uint16_t group) {
    const tb_mbed_group *g = tb_mbed_group_find(group);
    if (!g)
        return TB_GROUP_UNKNOWN;
    return g->p || mbedtls_ecp_curve_info_from_grp_id(g->ec) ? TB_GROUP_READY : TB_GROUP_NOT_BUILT;
}

/* ---------------------------------------------------------------- process state */

typedef struct tb_mbed_suite {
    tb_suite_info info;
    const tb_mbed_kex *kex;
    char cipher[32];
} tb_mbed_suite;

/* Parsed once at init, shared read-only by every session. */
typedef struct tb_mbed_cred {
    bool ready;
    char why[128]; /* why it is not ready */
    mbedtls_x509_crt ca, server_chain, client_chain;
    mbedtls_pk_context server_key, client_key;
} tb_mbed_cred;

static struct {
    bool initialized;
    tb_mbed_suite suites[TB_MBED_MAX_SUITES];
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    tb_mbed_cred creds[TB_CREDENTIAL_SLOTS];
} tb_mbed;

struct tb_session {
    mbedtls_ssl_context ssl;
    mbedtls_ssl_config conf;
    tb_io io;
    int ciphersuites[2];                /* the forced suite, 0-terminated */
    mbedtls_ecp_group_id curves[3];     /* the forced group (+ the certificate's curve) */
    /* DTLS: the retransmission timer mbed TLS asks for (mbedtls_ssl_set_timer_cb), on the
     * port's monotonic clock; 0 = not armed. */
    bool dtls, server;
    uint64_t timer_int_ns, timer_fin_ns;
    bool timer_fired;           /* this arming's expiry was already counted */
    uint32_t retransmissions;   /* expiries seen during the handshake: each resends a flight */
    uint8_t peer_id[20];        /* the client's transport id (server cookies) */
    uint8_t peer_id_len;
};

mbedtls_ssl_context *tb_mbedtls_session_ssl(tb_session *s) { return &s->ssl; }

/* ---------------------------------------------------------------- optional modules */

/* A stripped config may leave out the version and error modules: fall back to the headers'
 * version string and a numeric error text. */
#if defined(MBEDTLS_VERSION_C)
static void tb_mbed_version_string(char *buf) { mbedtls_version_get_string(buf); }
static unsigned tb_mbed_version_number(void) { return mbedtls_version_get_number(); }
/* 0 = in the build, -1 = not, -2 = feature list compiled out */
static int tb_mbed_feature(const char *feature) { return mbedtls_version_check_feature(feature); }
#else
static void tb_mbed_version_string(char *buf) { strcpy(buf, MBEDTLS_VERSION_STRING); }
static unsigned tb_mbed_version_number(void) { return MBEDTLS_VERSION_NUMBER; }
static int tb_mbed_feature(const char *feature) { (void)feature; return -2; }
#endif

#if defined(MBEDTLS_ERROR_C) || defined(MBEDTLS_ERROR_STRERROR_DUMMY)
static void tb_mbed_strerror(int code, char *buf, size_t len) { mbedtls_strerror(code, buf, len); }
#else
static void tb_mbed_strerror(int code, char *buf, size_t len) {
    snprintf(buf, len, "mbed TLS error -0x%04X (MBEDTLS_ERROR_C not in this build)", (unsigned)-code);
}
#endif

/* ---------------------------------------------------------------- suite table */

/* The lowest version in [lo, hi] the linked build enables: suites declare SSL3.0 as their
 * minimum, which no build we link has. (-2 = feature list compiled out: trust the suite.) */
static const char *tb_mbed_min_version(int lo, int hi) {
    int m = lo < 0 ? 0 : lo;
    while (m < hi && (size_t)m < TB_COUNT(tb_mbed_versions) &&
           tb_mbed_feature(tb_mbed_versions[m].feature) == -1)
        m++;
    return (size_t)m < TB_COUNT(tb_mbed_versions) ? tb_mbed_versions[m].name : "unknown";
}

static void tb_mbed_suite_fill(tb_mbed_suite *s, const mbedtls_ssl_ciphersuite_t *cs) {
    const mbedtls_cipher_info_t *cipher = mbedtls_cipher_info_from_type(cs->cipher);
    const mbedtls_md_info_t *md = mbedtls_md_info_from_type(cs->mac);
    size_t kex = (size_t)cs->key_exchange;
    s->kex = kex < TB_COUNT(tb_mbed_kex_table) && tb_mbed_kex_table[kex].key_exchange
                 ? &tb_mbed_kex_table[kex]
                 : &tb_mbed_kex_table[MBEDTLS_KEY_EXCHANGE_NONE];
    /* "-8": mbed TLS names CCM and CCM_8 alike; the tag length is in the flags. */
    snprintf(s->cipher, sizeof s->cipher, "%s%s", cipher ? cipher->name : "unknown",
             (cs->flags & MBEDTLS_CIPHERSUITE_SHORT_TAG) ? "-8" : "");
    s->info = (tb_suite_info){
        .id = (uint16_t)cs->id,
        .name = cs->name,
        .min_version = tb_mbed_min_version(cs->min_minor_ver, cs->max_minor_ver),
        .max_version = cs->max_minor_ver >= 0 && (size_t)cs->max_minor_ver < TB_COUNT(tb_mbed_versions)
                           ? tb_mbed_versions[cs->max_minor_ver].name
                           : "unknown",
        .key_exchange = s->kex->key_exchange,
        .authentication = s->kex->authentication,
        .cipher = s->cipher,
        .mac = md ? mbedtls_md_get_name(md) : "unknown",
        .dtls = !(cs->flags & MBEDTLS_CIPHERSUITE_NODTLS),
    };
    for (uint8_t i = 0; i < s->kex->n_credentials; i++)
        if (tb_mbed_cred_usable(s->kex->credentials[i]))
            s->info.credentials[s->info.n_credentials++] = s->kex->credentials[i];
    s->info.why_unsupported = s->info.n_credentials ? NULL
                              : s->kex->n_credentials
                                  ? "this build lacks what every credential of the key exchange needs (RSA or the key's curve)"
                                  : s->kex->why_unsupported;
}

/* The library's suites in its preference order. */
static void tb_mbed_suites_build(tb_suite_cache *c) {
    tb_mbed_suite *s;
    for (const int *id = mbedtls_ssl_list_ciphersuites(); *id; id++) {
        const mbedtls_ssl_ciphersuite_t *cs = mbedtls_ssl_ciphersuite_from_id(*id);
        if (cs && (s = tb_suite_cache_add(c)) != NULL)
            tb_mbed_suite_fill(s, cs);
    }
}

_Static_assert(offsetof(tb_mbed_suite, info) == 0, "tb_mbed_suite must start with its tb_suite_info");
static tb_suite_cache tb_mbed_suites = TB_SUITE_CACHE(tb_mbed.suites, tb_mbed_suites_build);

static size_t tb_mbed_suite_count(void) { return tb_suite_cache_count(&tb_mbed_suites); }
static const tb_suite_info *tb_mbed_suite_at(size_t index) { return tb_suite_cache_at(&tb_mbed_suites, index); }

/* ---------------------------------------------------------------- describe */

static const char *tb_mbed_version(void) {
    static char version[18]; /* mbedtls_version_get_string() writes at most 9 bytes */
    tb_mbed_version_string(version);
    return version;
}

/* Build facts read from the linked library itself (MBEDTLS_VERSION_FEATURES), so they
 * describe the library that runs, not the headers it was compiled against. */
static const struct {
    const char *key;
    const char *feature;
} tb_mbed_features[] = {
    {"tls1_0", "MBEDTLS_SSL_PROTO_TLS1"},
    {"tls1_1", "MBEDTLS_SSL_PROTO_TLS1_1"},
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

static const tb_mbed_cred *tb_mbed_cred_at(uint8_t id);

/* The config header the library was built with: what an experiment measured. */
static void tb_mbed_describe_config(tb_json *out) {
    tb_json_key(out, "config");
    tb_json_begin_object(out);
    tb_json_kv_string(out, "origin", tb_mbedtls_config_origin);
    tb_json_kv_string(out, "name", tb_mbedtls_config_name);
    tb_json_kv_string(out, "sha256", tb_mbedtls_config_sha256);
    if (tb_mbedtls_config_text[0])
        tb_json_kv_string(out, "text", tb_mbedtls_config_text);
    tb_json_end_object(out);
}

/* Per credential: "ready", or why this build cannot use it (known once init parsed them). */
static void tb_mbed_describe_credentials(tb_json *out) {
    tb_json_key(out, "credentials");
    tb_json_begin_object(out);
    for (uint8_t id = 0; id < TB_CREDENTIAL_SLOTS; id++) {
        const tb_mbed_cred *c = tb_mbed_cred_at(id);
        if (c)
            tb_json_kv_string(out, tb_credential_name(id), c->ready ? "ready" : c->why);
    }
    tb_json_end_object(out);
}

static void tb_mbed_describe_build(tb_json *out) {
    tb_json_kv_string(out, "version", tb_mbed_version());
    tb_json_kv_uint(out, "version_number", tb_mbed_version_number());
    bool listed = tb_mbed_feature("MBEDTLS_VERSION_C") != -2;
    tb_json_kv_bool(out, "features_known", listed);
    for (size_t i = 0; listed && i < TB_COUNT(tb_mbed_features); i++)
        tb_json_kv_bool(out, tb_mbed_features[i].key, tb_mbed_feature(tb_mbed_features[i].feature) == 0);
    tb_json_kv_bool(out, "tls1_3", false);
    tb_json_kv_uint(out, "max_content_len", MBEDTLS_SSL_MAX_CONTENT_LEN);
    tb_json_kv_uint(out, "in_content_len", MBEDTLS_SSL_IN_CONTENT_LEN);
    tb_json_kv_uint(out, "out_content_len", MBEDTLS_SSL_OUT_CONTENT_LEN);
    tb_json_kv_uint(out, "suites", tb_mbed_suite_count());
    /* How sessions are configured here (not build options, but they shape every number). */
    tb_json_kv_string(out, "session_versions", "TLS1.2");
    tb_json_kv_bool(out, "session_tickets_used", false);
    tb_json_kv_bool(out, "renegotiation_used", false);
    tb_json_kv_bool(out, "debug_output", false);
    tb_json_kv_string(out, "rng", "CTR_DRBG (AES-256), seeded once from mbedtls_entropy");
    tb_json_kv_string(out, "curves", "forced on both peers: the group, then the certificate's curve");
    tb_mbed_describe_config(out);
    tb_mbed_describe_credentials(out);
}

/* ---------------------------------------------------------------- init */

static int tb_mbed_parse_pem_crt(mbedtls_x509_crt *crt, const char *pem) {
    return mbedtls_x509_crt_parse(crt, (const unsigned char *)pem, strlen(pem) + 1);
}

static int tb_mbed_parse_pem_key(mbedtls_pk_context *pk, const char *pem) {
    return mbedtls_pk_parse_key(pk, (const unsigned char *)pem, strlen(pem) + 1, NULL, 0);
}

/* Parses one credential's PEMs; a failure only disables that credential (Ed25519 does
 * not parse in 2.28, and no suite lists it). One this build lacks the algorithms for is
 * not even tried: a stripped build's parser would fail on it anyway, less clearly. */
static void tb_mbed_cred_load(tb_mbed_cred *c, uint8_t id, const tb_credential_pem *pem) {
    mbedtls_x509_crt_init(&c->ca);
    mbedtls_x509_crt_init(&c->server_chain);
    mbedtls_x509_crt_init(&c->client_chain);
    mbedtls_pk_init(&c->server_key);
    mbedtls_pk_init(&c->client_key);
    if (!tb_mbed_cred_usable(id)) {
        c->ready = false;
        snprintf(c->why, sizeof c->why, "not in this build: %s", tb_mbed_cred_rsa[id] ? "RSA" : "the key's curve");
        return;
    }
    const struct {
        const char *what;
        mbedtls_x509_crt *crt; /* a certificate, or */
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
        ret = parts[i].crt ? tb_mbed_parse_pem_crt(parts[i].crt, parts[i].pem)
                           : tb_mbed_parse_pem_key(parts[i].key, parts[i].pem);
    c->ready = ret == 0;
    if (ret != 0) {
        char text[80];
        tb_mbed_strerror(ret, text, sizeof text);
        snprintf(c->why, sizeof c->why, "mbed TLS cannot parse its %s: %s", parts[i - 1].what, text);
    }
}

static void tb_mbed_cred_free(tb_mbed_cred *c) {
    mbedtls_x509_crt_free(&c->ca);
    mbedtls_x509_crt_free(&c->server_chain);
    mbedtls_x509_crt_free(&c->client_chain);
    mbedtls_pk_free(&c->server_key);
    mbedtls_pk_free(&c->client_key);
    c->ready = false;
}

/* A parsed credential (after init), or NULL for slots without certificates (PSK, unused). */
static const tb_mbed_cred *tb_mbed_cred_at(uint8_t id) {
    return tb_mbed.initialized && id < TB_CREDENTIAL_SLOTS && tb_credential_pem_find(id) ? &tb_mbed.creds[id] : NULL;
}

static int tb_mbed_init(char *err, size_t errlen) {
    if (tb_mbed.initialized)
        return 0;
    tb_mbed_suite_count(); /* the suite table, before any repetition */
    mbedtls_entropy_init(&tb_mbed.entropy);
    mbedtls_ctr_drbg_init(&tb_mbed.drbg);
    static const char pers[] = "tlsbench-agent-mbedtls";
    int ret = mbedtls_ctr_drbg_seed(&tb_mbed.drbg, mbedtls_entropy_func, &tb_mbed.entropy,
                                    (const unsigned char *)pers, sizeof pers - 1);
    if (ret != 0) {
        char text[80];
        tb_mbed_strerror(ret, text, sizeof text);
        snprintf(err, errlen, "seeding CTR_DRBG failed: %s", text);
        return -1;
    }
    for (uint8_t id = 0; id < TB_CREDENTIAL_SLOTS; id++) {
        const tb_credential_pem *pem = tb_credential_pem_find(id);
        if (pem)
            tb_mbed_cred_load(&tb_mbed.creds[id], id, pem);
    }
    tb_mbed.initialized = true;
    return 0;
}

static void tb_mbed_deinit(void) {
    if (!tb_mbed.initialized)
        return;
    for (size_t i = 0; i < TB_CREDENTIAL_SLOTS; i++)
        if (tb_credential_pem_find((uint8_t)i))
            tb_mbed_cred_free(&tb_mbed.creds[i]);
    mbedtls_ctr_drbg_free(&tb_mbed.drbg);
    mbedtls_entropy_free(&tb_mbed.entropy);
    tb_mbed.initialized = false;
}

/* ---------------------------------------------------------------- I/O callbacks */

/* The tb_io functions are already traced as I/O by the core. */
static int tb_mbed_send(void *ctx, const unsigned char *buf, size_t len) {
    tb_session *s = ctx;
    int n = s->io.send(s->io.ctx, buf, len);
    return n == TB_IO_WOULD_BLOCK ? MBEDTLS_ERR_SSL_WANT_WRITE : n < 0 ? MBEDTLS_ERR_NET_SEND_FAILED : n;
}

static int tb_mbed_recv(void *ctx, unsigned char *buf, size_t len) {
    tb_session *s = ctx;
    int n = s->io.recv(s->io.ctx, buf, len);
    return n == TB_IO_WOULD_BLOCK ? MBEDTLS_ERR_SSL_WANT_READ : n < 0 ? MBEDTLS_ERR_NET_RECV_FAILED : n;
}

/* ---------------------------------------------------------------- sessions */

/* Why a parsed credential cannot be used; NULL when it can (or has no certificates). */
static const char *tb_mbed_credential_why(uint8_t id) {
    const tb_mbed_cred *c = tb_mbed_cred_at(id);
    return c && !c->ready ? c->why : NULL;
}

static const tb_backend_rules tb_mbed_rules = {
    .library_name = "mbed TLS",
    .suites = &tb_mbed_suites,
    .initialized = &tb_mbed.initialized,
    .credential_why = tb_mbed_credential_why,
    .group_support = tb_mbed_group_support,
};

/* The curve list (s->curves) and, for DHE, the FFDHE group (*dh) of the chosen group. The
 * forced group first: the server picks the first curve of the client's list that it also
 * has. An ECDSA/ECDH certificate's curve must be in the list too (mbed TLS checks it). */
static void tb_mbed_use_group(tb_session *s, uint16_t group, uint8_t credential, const tb_mbed_group **dh) {
    const tb_mbed_group *g = group ? tb_mbed_group_find(group) : NULL;
    mbedtls_ecp_group_id cert_curve = tb_mbed_cred_curve(credential);
    size_t n = 0;
    if (g && g->ec != MBEDTLS_ECP_DP_NONE)
        s->curves[n++] = g->ec;
    if (cert_curve != MBEDTLS_ECP_DP_NONE && (n == 0 || s->curves[0] != cert_curve))
        s->curves[n++] = cert_curve;
    s->curves[n] = MBEDTLS_ECP_DP_NONE;
    *dh = g && g->p ? g : NULL;
}

/* Options a stripped build may lack: then there is nothing to turn off. */
#if defined(MBEDTLS_SSL_SESSION_TICKETS) && defined(MBEDTLS_SSL_CLI_C)
static void tb_mbed_conf_no_tickets(mbedtls_ssl_config *c) {
    mbedtls_ssl_conf_session_tickets(c, MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
}
#else
static void tb_mbed_conf_no_tickets(mbedtls_ssl_config *c) { (void)c; }
#endif
#if defined(MBEDTLS_SSL_RENEGOTIATION)
static void tb_mbed_conf_no_renegotiation(mbedtls_ssl_config *c) {
    mbedtls_ssl_conf_renegotiation(c, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
}
#else
static void tb_mbed_conf_no_renegotiation(mbedtls_ssl_config *c) { (void)c; }
#endif

#if defined(MBEDTLS_DHM_C)
static int tb_mbed_conf_dh(mbedtls_ssl_config *c, const tb_mbed_group *dh) {
    return mbedtls_ssl_conf_dh_param_bin(c, dh->p, dh->p_len, tb_ffdhe_g, sizeof tb_ffdhe_g);
}
#else /* no DHE suite in the build: never reached */
static int tb_mbed_conf_dh(mbedtls_ssl_config *c, const tb_mbed_group *dh) {
    (void)c;
    (void)dh;
    (void)tb_ffdhe_g;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
#endif
#if defined(MBEDTLS_KEY_EXCHANGE_SOME_PSK_ENABLED)
static int tb_mbed_conf_psk(mbedtls_ssl_config *c) {
    return mbedtls_ssl_conf_psk(c, tb_psk_key, TB_PSK_LEN, (const unsigned char *)tb_psk_identity,
                                strlen(tb_psk_identity));
}
#else /* no PSK suite in the build: never reached */
static int tb_mbed_conf_psk(mbedtls_ssl_config *c) {
    (void)c;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
#endif

/* RC4 suites (a build that keeps them) are refused unless RC4 is also enabled at run time;
 * the forced one-suite list keeps every other suite unaffected. */
#if defined(MBEDTLS_ARC4_C)
static void tb_mbed_conf_arc4(mbedtls_ssl_config *c) { mbedtls_ssl_conf_arc4_support(c, MBEDTLS_SSL_ARC4_ENABLED); }
#else
static void tb_mbed_conf_arc4(mbedtls_ssl_config *c) { (void)c; }
#endif

/* ---------------------------------------------------------------- DTLS */

#if defined(MBEDTLS_SSL_PROTO_DTLS)
/* The timer callbacks (mbedtls_ssl_set_timer_cb): fin_ms == 0 cancels. get returns -1
 * cancelled, 0 running, 1 intermediate delay passed, 2 final delay passed: on 2 during a
 * handshake mbed TLS resends its last flight, so each first 2 of an arming is counted. */
static void tb_mbed_timer_set(void *ctx, uint32_t int_ms, uint32_t fin_ms) {
    tb_session *s = ctx;
    uint64_t now = tb_port_now_ns();
    s->timer_int_ns = fin_ms ? now + (uint64_t)int_ms * 1000000u : 0;
    s->timer_fin_ns = fin_ms ? now + (uint64_t)fin_ms * 1000000u : 0;
    s->timer_fired = false;
}

static int tb_mbed_timer_get(void *ctx) {
    tb_session *s = ctx;
    if (s->timer_fin_ns == 0)
        return -1;
    uint64_t now = tb_port_now_ns();
    if (now < s->timer_int_ns)
        return 0;
    if (now < s->timer_fin_ns)
        return 1;
    if (!s->timer_fired && s->ssl.state != MBEDTLS_SSL_HANDSHAKE_OVER) {
        s->timer_fired = true;
        s->retransmissions++;
        tb_instant(TB_L_RETRANSMIT, s->retransmissions);
    }
    return 2;
}
#endif

static uint32_t tb_mbed_timeout_ms(tb_session *s) {
    if (!s->dtls || s->timer_fin_ns == 0)
        return TB_NO_TIMER;
    uint64_t now = tb_port_now_ns();
    return now >= s->timer_fin_ns ? 0 : (uint32_t)((s->timer_fin_ns - now + 999999u) / 1000000u);
}

static uint32_t tb_mbed_retransmissions(tb_session *s) { return s->retransmissions; }

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
        int ret = mbedtls_ssl_cookie_setup(&tb_mbed_cookie, mbedtls_ctr_drbg_random, &tb_mbed.drbg);
        if (ret != 0)
            return ret;
        tb_mbed_cookie_ready = true;
    }
    mbedtls_ssl_conf_dtls_cookies(c, mbedtls_ssl_cookie_write, mbedtls_ssl_cookie_check, &tb_mbed_cookie);
    return 0;
}
static int tb_mbed_set_transport_id(tb_session *s) {
    return mbedtls_ssl_set_client_transport_id(&s->ssl, s->peer_id, s->peer_id_len);
}
#elif defined(MBEDTLS_SSL_PROTO_DTLS)
static int tb_mbed_conf_cookies(mbedtls_ssl_config *c, bool on) {
    (void)c;
    return on ? MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE : 0;
}
static int tb_mbed_set_transport_id(tb_session *s) { (void)s; return 0; }
#else /* no DTLS in the build: nothing to configure */
static int tb_mbed_set_transport_id(tb_session *s) { (void)s; return 0; }
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
static int tb_mbed_conf_dtls(tb_session *s, const tb_conn_config *cfg) {
    uint32_t lo = cfg->dtls_timeout_min_ms ? cfg->dtls_timeout_min_ms : MBEDTLS_SSL_DTLS_TIMEOUT_DFL_MIN;
    uint32_t hi = cfg->dtls_timeout_max_ms ? cfg->dtls_timeout_max_ms : MBEDTLS_SSL_DTLS_TIMEOUT_DFL_MAX;
    mbedtls_ssl_conf_handshake_timeout(&s->conf, lo, hi > lo ? hi : lo);
    return s->server ? tb_mbed_conf_cookies(&s->conf, cfg->options & TB_OPTION_DTLS_COOKIES) : 0;
}
/* After mbedtls_ssl_setup: the timer, the MTU and (server) the client's id for cookies. */
static int tb_mbed_ssl_dtls(tb_session *s, const tb_conn_config *cfg) {
    mbedtls_ssl_set_timer_cb(&s->ssl, s, tb_mbed_timer_set, tb_mbed_timer_get);
    if (cfg->dtls_mtu)
        mbedtls_ssl_set_mtu(&s->ssl, cfg->dtls_mtu);
    return s->server ? tb_mbed_set_transport_id(s) : 0;
}
#else
static int tb_mbed_conf_dtls(tb_session *s, const tb_conn_config *cfg) {
    (void)s;
    (void)cfg;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
static int tb_mbed_ssl_dtls(tb_session *s, const tb_conn_config *cfg) {
    (void)s;
    (void)cfg;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
#endif

/* Everything that can fail in mbed TLS's configuration calls, in order; 0 or its code. */
static int tb_mbed_configure(tb_session *s, uint8_t peer, const tb_mbed_suite *suite, const tb_conn_config *cfg,
                             const tb_mbed_group *dh) {
    bool server = peer == TB_PEER_SERVER;
    const tb_mbed_cred *cred = &tb_mbed.creds[cfg->credential];
    bool certs = tb_credential_pem_find(cfg->credential) != NULL;
    s->dtls = cfg->protocol == TB_PROTOCOL_KIND_DTLS;
    s->server = server;
    int ret = mbedtls_ssl_config_defaults(&s->conf, server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
                                          s->dtls ? MBEDTLS_SSL_TRANSPORT_DATAGRAM : MBEDTLS_SSL_TRANSPORT_STREAM,
                                          MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret == 0 && s->dtls)
        ret = tb_mbed_conf_dtls(s, cfg);
    if (ret == 0)
        ret = tb_mbed_conf_mfl(&s->conf, cfg->max_fragment);
    if (ret != 0)
        return ret;
    mbedtls_ssl_conf_rng(&s->conf, mbedtls_ctr_drbg_random, &tb_mbed.drbg);
    mbedtls_ssl_conf_min_version(&s->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_max_version(&s->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    s->ciphersuites[0] = suite->info.id;
    s->ciphersuites[1] = 0;
    mbedtls_ssl_conf_ciphersuites(&s->conf, s->ciphersuites);
    mbedtls_ssl_conf_curves(&s->conf, s->curves);
    tb_mbed_conf_no_tickets(&s->conf);
    tb_mbed_conf_no_renegotiation(&s->conf);
    tb_mbed_conf_arc4(&s->conf);
    /* The client verifies the server; the server asks no client certificate. */
    mbedtls_ssl_conf_authmode(&s->conf, server || !certs ? MBEDTLS_SSL_VERIFY_NONE : MBEDTLS_SSL_VERIFY_REQUIRED);
    if (certs && server)
        ret = mbedtls_ssl_conf_own_cert(&s->conf, (mbedtls_x509_crt *)&cred->server_chain,
                                        (mbedtls_pk_context *)&cred->server_key);
    if (certs && !server)
        mbedtls_ssl_conf_ca_chain(&s->conf, (mbedtls_x509_crt *)&cred->ca, NULL);
    if (ret == 0 && dh && server)
        ret = tb_mbed_conf_dh(&s->conf, dh);
    if (ret == 0 && suite->kex->psk)
        ret = tb_mbed_conf_psk(&s->conf);
    if (ret == 0)
        ret = mbedtls_ssl_setup(&s->ssl, &s->conf);
    if (ret == 0 && !server)
        ret = mbedtls_ssl_set_hostname(&s->ssl, TB_CREDENTIAL_HOSTNAME);
    if (ret == 0 && s->dtls)
        ret = tb_mbed_ssl_dtls(s, cfg);
    mbedtls_ssl_set_bio(&s->ssl, s, tb_mbed_send, tb_mbed_recv, NULL);
    return ret;
}

static void tb_mbed_session_free(tb_session *s) {
    if (!s)
        return;
    mbedtls_ssl_free(&s->ssl);
    mbedtls_ssl_config_free(&s->conf);
    free(s);
}

static tb_session *tb_mbed_session_new(uint8_t peer, const tb_conn_config *cfg, tb_io io, char *err, size_t errlen) {
    uint16_t group = 0;
    const tb_mbed_suite *suite = tb_backend_check(&tb_mbed_rules, cfg, &group, err, errlen);
    if (!suite)
        return NULL;
    tb_session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    mbedtls_ssl_init(&s->ssl);
    mbedtls_ssl_config_init(&s->conf);
    s->io = io;
    s->peer_id_len = tb_peer_id_copy(s->peer_id, sizeof s->peer_id, cfg);
    const tb_mbed_group *dh = NULL;
    tb_mbed_use_group(s, group, cfg->credential, &dh);
    int ret = tb_mbed_configure(s, peer, suite, cfg, dh);
    if (ret != 0) {
        char text[100];
        tb_mbed_strerror(ret, text, sizeof text);
        snprintf(err, errlen, "configuring the %s for %s failed: %s (-0x%04X)", tb_peer_name(peer),
                 suite->info.name, text, (unsigned)-ret);
        tb_mbed_session_free(s);
        return NULL;
    }
    return s;
}

/* ---------------------------------------------------------------- handshake and records */

/* A DTLS server that sent a HelloVerifyRequest keeps no state: reset, and wait for the
 * client's second ClientHello (with the cookie) from the same transport id. */
static int tb_mbed_after_hello_verify(tb_session *s) {
    int ret = mbedtls_ssl_session_reset(&s->ssl);
    if (ret == 0)
        ret = tb_mbed_set_transport_id(s);
    return ret == 0 ? MBEDTLS_ERR_SSL_WANT_READ : ret;
}

static tb_step_result tb_mbed_step(tb_session *s, int32_t *lib_error) {
    if (s->ssl.state == MBEDTLS_SSL_HANDSHAKE_OVER)
        return TB_STEP_DONE;
    uint16_t label = tb_mbedtls_state_label(s->ssl.state);
    if (label == 0) {
        *lib_error = MBEDTLS_ERR_SSL_INTERNAL_ERROR; /* a state this table does not know */
        return TB_STEP_ERROR;
    }
    tb_begin(label);
    int ret = mbedtls_ssl_handshake_step(&s->ssl);
    tb_end(label, (uint64_t)(int64_t)ret);
    if (ret == MBEDTLS_ERR_SSL_HELLO_VERIFY_REQUIRED) /* the HelloVerifyRequest is out: start over */
        ret = tb_mbed_after_hello_verify(s);
    if (ret == 0)
        return s->ssl.state == MBEDTLS_SSL_HANDSHAKE_OVER ? TB_STEP_DONE : TB_STEP_CONTINUE;
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE)
        return TB_STEP_WANT_READ;
    *lib_error = ret;
    return TB_STEP_ERROR;
}

/* mbed TLS's byte count / WANT_* / error -> the backend contract. */
static int tb_mbed_io_result(int ret, int32_t *lib_error) {
    if (ret >= 0)
        return ret;
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE)
        return TB_IO_WOULD_BLOCK;
    *lib_error = ret;
    return -1;
}

static int tb_mbed_write(tb_session *s, const uint8_t *buf, size_t len, int32_t *lib_error) {
    return tb_mbed_io_result(mbedtls_ssl_write(&s->ssl, buf, len), lib_error);
}

static int tb_mbed_read(tb_session *s, uint8_t *buf, size_t len, int32_t *lib_error) {
    return tb_mbed_io_result(mbedtls_ssl_read(&s->ssl, buf, len), lib_error);
}

static int tb_mbed_close_notify(tb_session *s, int32_t *lib_error) {
    return tb_mbed_io_result(mbedtls_ssl_close_notify(&s->ssl), lib_error);
}

static void tb_mbed_error_text(int32_t code, char *buf, size_t len) { tb_mbed_strerror(code, buf, len); }

const tb_backend tb_linked_backend = {
    .name = "mbedtls",
    .library_name = "mbed TLS",
    .version = tb_mbed_version,
    .step_granularity = "state",
    .describe_build = tb_mbed_describe_build,
    .suite_count = tb_mbed_suite_count,
    .suite_at = tb_mbed_suite_at,
    .init = tb_mbed_init,
    .deinit = tb_mbed_deinit,
    .session_new = tb_mbed_session_new,
    .step = tb_mbed_step,
    .write = tb_mbed_write,
    .read = tb_mbed_read,
    .close_notify = tb_mbed_close_notify,
    .session_free = tb_mbed_session_free,
    .error_text = tb_mbed_error_text,
    .timeout_ms = tb_mbed_timeout_ms,
    .retransmissions = tb_mbed_retransmissions,
};
