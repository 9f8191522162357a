/* SPDX-License-Identifier: Apache-2.0 */
/* The mbed TLS 2.28 backend: suite table, state -> step label table, per-session
 * configuration (forced suite, group, credentials, RUN options) and the step calls; what
 * it shares with the 3.6 backend is mbedtls_shared.c. Crypto operations inside the steps
 * are traced by mbedtls_crypto.c (link-time wrappers).
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

#include "tlsbench/pace.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecp.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/ssl_ciphersuites.h"
#include "mbedtls/x509_crt.h"

#include "common.h"
#include "mbedtls_internal.h"
#include "mbedtls_shared.h"
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

/* ---------------------------------------------------------------- suite versions */

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

/* The groups this backend offers (IANA ids, as mbed TLS's TLS ids): the curves TLS 1.2 can
 * use when the build has them, and the RFC 7919 groups a DHE server sends. */
static const uint16_t tb_mbed_curves[] = {
    TB_GROUP_SECP192R1, TB_GROUP_SECP224R1, TB_GROUP_SECP256R1, TB_GROUP_SECP384R1, TB_GROUP_SECP521R1,
    TB_GROUP_BRAINPOOLP256R1, TB_GROUP_BRAINPOOLP384R1, TB_GROUP_BRAINPOOLP512R1, TB_GROUP_X25519, TB_GROUP_X448,
};

static bool tb_mbed_curve_known(uint16_t group) {
    for (size_t i = 0; i < TB_COUNT(tb_mbed_curves); i++)
        if (tb_mbed_curves[i] == group)
            return true;
    return false;
}

/* The mbed TLS curve of an IANA group id; MBEDTLS_ECP_DP_NONE when the build lacks it. */
static mbedtls_ecp_group_id tb_mbed_curve(uint16_t group) {
    const mbedtls_ecp_curve_info *info = group ? mbedtls_ecp_curve_info_from_tls_id(group) : NULL;
    return info ? info->grp_id : MBEDTLS_ECP_DP_NONE;
}

/* The curve of a credential's key (spec [credential_group]); MBEDTLS_ECP_DP_NONE for RSA and PSK. */
static mbedtls_ecp_group_id tb_mbed_cred_curve(uint8_t id) { return tb_mbed_curve(tb_credential_group(id)); }

static tb_group_support tb_mbed_group_support(uint16_t group) {
    if (tb_mbed_ffdhe_find(group))
        return TB_GROUP_READY;
    if (!tb_mbed_curve_known(group))
        return TB_GROUP_UNKNOWN;
    return tb_mbed_curve_built(group) ? TB_GROUP_READY : TB_GROUP_NOT_BUILT;
}

/* ---------------------------------------------------------------- process state */

typedef struct tb_mbed_suite {
    tb_suite_info info;
    const tb_mbed_kex *kex;
    char cipher[32];
} tb_mbed_suite;

static struct {
    bool initialized;
    tb_mbed_suite suites[TB_MBED_MAX_SUITES];
} tb_mbed;

struct tb_session {
    tb_mbed_session h;              /* what both versions' sessions have (first) */
    mbedtls_ecp_group_id curves[3]; /* the forced group (+ the certificate's curve) */
};

mbedtls_ssl_context *tb_mbedtls_session_ssl(tb_session *s) { return &s->h.ssl; }

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
    s->kex = tb_mbed_kex_find(cs->key_exchange);
    tb_mbed_cipher_name(s->cipher, sizeof s->cipher, cipher ? cipher->name : NULL,
                        cs->flags & MBEDTLS_CIPHERSUITE_SHORT_TAG);
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
    tb_mbed_suite_credentials(&s->info, s->kex);
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

/* The build options of 2.28 on top of those both versions have (mbedtls_shared.c). */
static const tb_mbed_feature_key tb_mbed_features[] = {
    {"tls1_0", "MBEDTLS_SSL_PROTO_TLS1"},
    {"tls1_1", "MBEDTLS_SSL_PROTO_TLS1_1"},
};

static void tb_mbed_describe_build(tb_json *out) {
    tb_mbed_describe_library(out, tb_mbed_features, TB_COUNT(tb_mbed_features));
    tb_json_kv_bool(out, "tls1_3", false);
    tb_json_kv_uint(out, "max_content_len", MBEDTLS_SSL_MAX_CONTENT_LEN);
    tb_json_kv_uint(out, "suites", tb_mbed_suite_count());
    tb_json_kv_string(out, "session_versions", "TLS1.2");
    tb_json_kv_string(out, "rng", "CTR_DRBG (AES-256), seeded once from mbedtls_entropy");
    tb_json_kv_string(out, "curves", "forced on both peers: the group, then the certificate's curve");
    tb_mbed_describe_config(out);
    tb_mbed_describe_credentials(out);
}

/* ---------------------------------------------------------------- init */

static int tb_mbed_parse_key(mbedtls_pk_context *pk, const char *pem) {
    return mbedtls_pk_parse_key(pk, (const unsigned char *)pem, strlen(pem) + 1, NULL, 0);
}

static int tb_mbed_init(char *err, size_t errlen) {
    if (tb_mbed.initialized)
        return 0;
    tb_mbed_suite_count(); /* the suite table, before any repetition */
    if (tb_mbed_process_init("tlsbench-agent-mbedtls", tb_mbed_parse_key, err, errlen) != 0)
        return -1;
    tb_mbed.initialized = true;
    return 0;
}

static void tb_mbed_deinit(void) {
    tb_mbed_process_free();
    tb_mbed.initialized = false;
}

/* ---------------------------------------------------------------- sessions */

static const tb_backend_rules tb_mbed_rules = {
    .library_name = "mbed TLS",
    .suites = &tb_mbed_suites,
    .initialized = &tb_mbed.initialized,
    .credential_why = tb_mbed_credential_why,
    .group_support = tb_mbed_group_support,
};

/* The curve list (s->curves) of the chosen group. The forced group first: the server picks
 * the first curve of the client's list that it also has. An ECDSA/ECDH certificate's curve
 * must be in the list too (mbed TLS checks it). */
static void tb_mbed_use_curves(tb_session *s, uint16_t group, uint8_t credential) {
    mbedtls_ecp_group_id curve = tb_mbed_curve(group), cert_curve = tb_mbed_cred_curve(credential);
    size_t n = 0;
    if (curve != MBEDTLS_ECP_DP_NONE)
        s->curves[n++] = curve;
    if (cert_curve != MBEDTLS_ECP_DP_NONE && (n == 0 || s->curves[0] != cert_curve))
        s->curves[n++] = cert_curve;
    s->curves[n] = MBEDTLS_ECP_DP_NONE;
}

/* Options a stripped build may lack: then there is nothing to turn off. */
#if defined(MBEDTLS_SSL_RENEGOTIATION)
static void tb_mbed_conf_no_renegotiation(mbedtls_ssl_config *c) {
    mbedtls_ssl_conf_renegotiation(c, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
}
#else
static void tb_mbed_conf_no_renegotiation(mbedtls_ssl_config *c) { (void)c; }
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

/* RESUME: the server keeps sessions (tickets, or its cache with RESUME_ID); the client asks
 * for a ticket unless it resumes by ID. Without RESUME nobody issues or asks for a ticket. */
static int tb_mbed_conf_resume(mbedtls_ssl_config *c, bool server, uint8_t options) {
    bool resume = options & TB_OPTION_RESUME, by_id = options & TB_OPTION_RESUME_ID;
    if (!server)
        tb_mbed_conf_client_tickets(c, resume && !by_id);
    return resume && server ? tb_mbed_conf_resume_server(c, by_id) : 0;
}

/* 2.28's configuration calls (between tb_mbed_session_open's shared ones), in order; 0 or
 * the library's code. */
static int tb_mbed_configure(tb_session *s, uint8_t peer, const void *suite_row, const tb_conn_config *cfg,
                             uint16_t group) {
    const tb_mbed_suite *suite = suite_row;
    bool server = peer == TB_PEER_SERVER;
    const tb_mbed_ffdhe *dh = tb_mbed_ffdhe_find(group);
    mbedtls_ssl_conf_min_version(&s->h.conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_max_version(&s->h.conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    tb_mbed_use_curves(s, group, cfg->credential);
    mbedtls_ssl_conf_curves(&s->h.conf, s->curves);
    tb_mbed_conf_no_renegotiation(&s->h.conf);
    tb_mbed_conf_arc4(&s->h.conf);
    int ret = tb_mbed_conf_credentials(&s->h.conf, server, tb_mbed_cred_at(cfg->credential),
                                       cfg->options & TB_OPTION_MUTUAL_AUTH);
    if (ret == 0)
        ret = tb_mbed_conf_resume(&s->h.conf, server, cfg->options);
    if (ret == 0 && dh && server)
        ret = tb_mbed_conf_dh(&s->h.conf, dh);
    if (ret == 0 && suite->kex->psk)
        ret = tb_mbed_conf_psk(&s->h.conf);
    return ret;
}

static tb_session *tb_mbed_session_new(uint8_t peer, const tb_conn_config *cfg, tb_io io, char *err, size_t errlen) {
    uint16_t group = 0;
    const tb_mbed_suite *suite = tb_backend_check(&tb_mbed_rules, cfg, &group, err, errlen);
    return suite ? tb_mbed_session_open(sizeof(tb_session), peer, cfg, io, &suite->info, group, tb_mbed_configure, err,
                                        errlen)
                 : NULL;
}

/* ---------------------------------------------------------------- handshake and records */

static tb_step_result tb_mbed_step(tb_session *s, int32_t *lib_error) {
    if (s->h.ssl.state == MBEDTLS_SSL_HANDSHAKE_OVER)
        return TB_STEP_DONE;
    uint16_t label = tb_mbedtls_state_label(s->h.ssl.state);
    if (label == 0) {
        *lib_error = MBEDTLS_ERR_SSL_INTERNAL_ERROR; /* a state this table does not know */
        return TB_STEP_ERROR;
    }
    /* A full TLS 1.2 handshake always passes the client's key exchange; a resumed one never does. */
    s->h.full_handshake |= s->h.ssl.state == MBEDTLS_SSL_CLIENT_KEY_EXCHANGE;
    tb_begin(label);
    tb_pace_step_begin(label);
    int ret = mbedtls_ssl_handshake_step(&s->h.ssl);
    tb_pace_step_end(ret != MBEDTLS_ERR_SSL_WANT_READ && ret != MBEDTLS_ERR_SSL_WANT_WRITE);
    tb_end(label, (uint64_t)(int64_t)ret);
    if (ret == MBEDTLS_ERR_SSL_HELLO_VERIFY_REQUIRED) /* the HelloVerifyRequest is out: start over */
        ret = tb_mbed_after_hello_verify(&s->h.link);
    if (ret == 0)
        return s->h.ssl.state == MBEDTLS_SSL_HANDSHAKE_OVER ? tb_mbed_finish(s, true, lib_error) : TB_STEP_CONTINUE;
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE)
        return TB_STEP_WANT_READ;
    *lib_error = ret;
    return TB_STEP_ERROR;
}

const tb_backend tb_linked_backend = {
    .name = "mbedtls",
    .library_name = "mbed TLS",
    .version = tb_mbed_version,
    .step_granularity = "state",
    .options = TB_OPTION_MUTUAL_AUTH | TB_MBED_RESUME_OPTIONS | TB_MBED_CID_OPTION,
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
