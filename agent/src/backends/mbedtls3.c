/* SPDX-License-Identifier: Apache-2.0 */
/* The mbed TLS 3.6 backend (tlsbench-agent-mbedtls-3.6): TLS 1.3 and TLS 1.2 suites, the
 * state -> step label table of both versions, per-session configuration (forced suite,
 * version, group, credentials, RUN options) and the step calls. What it shares with the
 * 2.28 backend is mbedtls_shared.c; crypto inside the steps is traced by mbedtls3_crypto.c.
 *
 * Suite metadata follows the 2.28 backend (docs/backend-mbedtls.md); a TLS 1.3 suite fixes
 * neither key exchange nor authentication: "any"/"any", the group and credential decide. */

/* 3.6 keeps the handshake state and the suite table's fields private and has no getters for
 * them: per-state stepping reads ssl->state, the suite table reads its rows. */
#define MBEDTLS_ALLOW_PRIVATE_ACCESS

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlsbench/pace.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecp.h"
#include "mbedtls/pk.h"
#include "mbedtls/platform.h"
#include "mbedtls/ssl.h"
#include "mbedtls/ssl_ciphersuites.h"
#include "mbedtls/version.h"
#include "psa/crypto.h"

#include "common.h"
#include "mbedtls3_internal.h"
#include "mbedtls_shared.h"
#include "tlsbench/backend.h"
#include "tlsbench/credentials.h"
#include "tlsbench/trace.h"

#if MBEDTLS_VERSION_MAJOR != 3
#error "mbedtls3.c is the mbed TLS 3.x backend; mbed TLS 2.x builds use mbedtls.c"
#endif
/* What the agent cannot do without (a custom config must keep them; without X.509 certificate
 * parsing, a PSK-only build, it offers no certificate credential). */
#if !defined(MBEDTLS_CTR_DRBG_C) || !defined(MBEDTLS_ENTROPY_C) || !defined(MBEDTLS_ECP_C) || \
    !defined(MBEDTLS_SSL_CLI_C) || !defined(MBEDTLS_SSL_SRV_C) || \
    !(defined(MBEDTLS_SSL_PROTO_TLS1_2) || defined(MBEDTLS_SSL_PROTO_TLS1_3))
#error "the mbed TLS 3 agent needs MBEDTLS_CTR_DRBG_C, _ENTROPY_C, _ECP_C, _SSL_CLI_C, _SSL_SRV_C and _SSL_PROTO_TLS1_2 or _TLS1_3"
#endif

/* Rows of the suite table (a device build sizes it to its config's suites). */
#ifndef TB_MBED3_MAX_SUITES
#define TB_MBED3_MAX_SUITES 256
#endif

/* The cache entry the library came from (mbedtls3.cmake, from its build.json). */
#ifndef TB_MBEDTLS3_SOURCE
#define TB_MBEDTLS3_SOURCE "unknown"
#endif

/* ---------------------------------------------------------------- state -> step label */

/* ssl->state at entry of mbedtls_ssl_handshake_step() names the message written or parsed.
 * One state names two messages: MBEDTLS_SSL_CERTIFICATE_VERIFY is the client's
 * CertificateVerify in TLS 1.2 and the server's in TLS 1.3 (the client's is
 * MBEDTLS_SSL_CLIENT_CERTIFICATE_VERIFY there). */
typedef struct tb_mbed3_state {
    uint16_t tls12, tls13;
} tb_mbed3_state;
#define TB_SAME(label) {TB_L_##label, TB_L_##label}

static const tb_mbed3_state tb_mbed3_states[] = {
    [MBEDTLS_SSL_HELLO_REQUEST] = TB_SAME(HELLO_REQUEST),
    [MBEDTLS_SSL_CLIENT_HELLO] = TB_SAME(CLIENT_HELLO),
    [MBEDTLS_SSL_SERVER_HELLO] = TB_SAME(SERVER_HELLO),
    [MBEDTLS_SSL_SERVER_CERTIFICATE] = TB_SAME(SERVER_CERTIFICATE),
    [MBEDTLS_SSL_SERVER_KEY_EXCHANGE] = TB_SAME(SERVER_KEY_EXCHANGE),
    [MBEDTLS_SSL_CERTIFICATE_REQUEST] = TB_SAME(CERTIFICATE_REQUEST),
    [MBEDTLS_SSL_SERVER_HELLO_DONE] = TB_SAME(SERVER_HELLO_DONE),
    [MBEDTLS_SSL_CLIENT_CERTIFICATE] = TB_SAME(CLIENT_CERTIFICATE),
    [MBEDTLS_SSL_CLIENT_KEY_EXCHANGE] = TB_SAME(CLIENT_KEY_EXCHANGE),
    [MBEDTLS_SSL_CERTIFICATE_VERIFY] = {TB_L_CERTIFICATE_VERIFY, TB_L_SERVER_CERTIFICATE_VERIFY},
    [MBEDTLS_SSL_CLIENT_CHANGE_CIPHER_SPEC] = TB_SAME(CLIENT_CHANGE_CIPHER_SPEC),
    [MBEDTLS_SSL_CLIENT_FINISHED] = TB_SAME(CLIENT_FINISHED),
    [MBEDTLS_SSL_SERVER_CHANGE_CIPHER_SPEC] = TB_SAME(SERVER_CHANGE_CIPHER_SPEC),
    [MBEDTLS_SSL_SERVER_FINISHED] = TB_SAME(SERVER_FINISHED),
    [MBEDTLS_SSL_FLUSH_BUFFERS] = TB_SAME(FLUSH_BUFFERS),
    [MBEDTLS_SSL_HANDSHAKE_WRAPUP] = TB_SAME(HANDSHAKE_WRAPUP),
    [MBEDTLS_SSL_NEW_SESSION_TICKET] = TB_SAME(NEW_SESSION_TICKET),
    [MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT] = TB_SAME(HELLO_VERIFY_REQUEST),
    [MBEDTLS_SSL_HELLO_RETRY_REQUEST] = TB_SAME(HELLO_RETRY_REQUEST),
    [MBEDTLS_SSL_ENCRYPTED_EXTENSIONS] = TB_SAME(ENCRYPTED_EXTENSIONS),
    [MBEDTLS_SSL_END_OF_EARLY_DATA] = TB_SAME(END_OF_EARLY_DATA),
    [MBEDTLS_SSL_CLIENT_CERTIFICATE_VERIFY] = TB_SAME(CERTIFICATE_VERIFY),
    /* TLS 1.3 middlebox compatibility: the dummy ChangeCipherSpec records. */
    [MBEDTLS_SSL_CLIENT_CCS_AFTER_SERVER_FINISHED] = TB_SAME(CLIENT_CHANGE_CIPHER_SPEC),
    [MBEDTLS_SSL_CLIENT_CCS_BEFORE_2ND_CLIENT_HELLO] = TB_SAME(CLIENT_CHANGE_CIPHER_SPEC),
    [MBEDTLS_SSL_SERVER_CCS_AFTER_SERVER_HELLO] = TB_SAME(SERVER_CHANGE_CIPHER_SPEC),
    [MBEDTLS_SSL_CLIENT_CCS_AFTER_CLIENT_HELLO] = TB_SAME(CLIENT_CHANGE_CIPHER_SPEC),
    [MBEDTLS_SSL_SERVER_CCS_AFTER_HELLO_RETRY_REQUEST] = TB_SAME(SERVER_CHANGE_CIPHER_SPEC),
    /* Never stepped (the handshake is over); mapped so no state is without a label. */
    [MBEDTLS_SSL_HANDSHAKE_OVER] = TB_SAME(HANDSHAKE_WRAPUP),
    /* After the handshake is over, TLS 1.3: the server writes a NewSessionTicket, then
     * flushes it; the client parses it (RESUME only). */
    [MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET] = TB_SAME(NEW_SESSION_TICKET),
    [MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET_FLUSH] = TB_SAME(NEW_SESSION_TICKET),
};
_Static_assert(TB_COUNT(tb_mbed3_states) == MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET_FLUSH + 1,
               "a mbedtls_ssl_states value has no step label");

size_t tb_mbedtls3_state_count(void) { return TB_COUNT(tb_mbed3_states); }

uint16_t tb_mbedtls3_state_label(int state, bool tls13) {
    if (state < 0 || (size_t)state >= TB_COUNT(tb_mbed3_states))
        return 0;
    return tls13 ? tb_mbed3_states[state].tls13 : tb_mbed3_states[state].tls12;
}

/* ---------------------------------------------------------------- versions and suites */

/* The protocol versions of mbed TLS 3.6's suite table: SUITES name, build option. */
static const struct {
    uint16_t version; /* mbedtls_ssl_protocol_version */
    const char *name;
} tb_mbed3_versions[] = {
    {MBEDTLS_SSL_VERSION_TLS1_2, "TLS1.2"},
    {MBEDTLS_SSL_VERSION_TLS1_3, "TLS1.3"},
};

static const char *tb_mbed3_version_name(uint16_t version) {
    for (size_t i = 0; i < TB_COUNT(tb_mbed3_versions); i++)
        if (tb_mbed3_versions[i].version == version)
            return tb_mbed3_versions[i].name;
    return "unknown";
}

/* A TLS 1.3 suite: the certificate credentials 3.6 can use (no EdDSA in 3.6) and, where the
 * build has a PSK key exchange mode, the external pre-shared key - on SHA-256 suites only:
 * 3.6 binds an external PSK to SHA-256, so a SHA-384 suite fails the PSK handshake. */
#if defined(MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_ENABLED) || \
    defined(MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_EPHEMERAL_ENABLED)
#define TB_MBED3_TLS13_PSK , TB_CREDENTIAL_PSK
#else
#define TB_MBED3_TLS13_PSK
#endif
/* PSK_ONLY: psk_ke, where the build has that mode. */
#if defined(MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_ENABLED)
#define TB_MBED3_PSK_ONLY TB_OPTION_PSK_ONLY
#else
#define TB_MBED3_PSK_ONLY 0
#endif
#define TB_MBED3_TLS13_CERTS \
    TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384, TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072
static const tb_mbed_kex tb_mbed3_tls13 = {"any", "any", false, TB_CREDS(TB_MBED3_TLS13_CERTS TB_MBED3_TLS13_PSK)};
static const tb_mbed_kex tb_mbed3_tls13_sha384 = {"any", "any", false, TB_CREDS(TB_MBED3_TLS13_CERTS)};

static const tb_mbed_kex *tb_mbed3_tls13_kex(const mbedtls_ssl_ciphersuite_t *cs) {
    return cs->mac == MBEDTLS_MD_SHA256 ? &tb_mbed3_tls13 : &tb_mbed3_tls13_sha384;
}

typedef struct tb_mbed3_suite {
    tb_suite_info info;
    const tb_mbed_kex *kex;
    bool tls13;
    char cipher[32];
} tb_mbed3_suite;

static struct {
    bool initialized;
    tb_mbed3_suite suites[TB_MBED3_MAX_SUITES];
} tb_mbed3;

static void tb_mbed3_suite_fill(tb_mbed3_suite *s, const mbedtls_ssl_ciphersuite_t *cs) {
    const mbedtls_cipher_info_t *cipher = mbedtls_cipher_info_from_type((mbedtls_cipher_type_t)cs->cipher);
    const mbedtls_md_info_t *md = mbedtls_md_info_from_type((mbedtls_md_type_t)cs->mac);
    s->tls13 = cs->max_tls_version == MBEDTLS_SSL_VERSION_TLS1_3;
    s->kex = s->tls13 ? tb_mbed3_tls13_kex(cs) : tb_mbed_kex_find(cs->key_exchange);
    tb_mbed_cipher_name(s->cipher, sizeof s->cipher, cipher ? mbedtls_cipher_info_get_name(cipher) : NULL,
                        cs->flags & MBEDTLS_CIPHERSUITE_SHORT_TAG);
    s->info = (tb_suite_info){
        .id = (uint16_t)cs->id,
        .name = cs->name,
        .min_version = tb_mbed3_version_name(cs->min_tls_version),
        .max_version = tb_mbed3_version_name(cs->max_tls_version),
        .key_exchange = s->kex->key_exchange,
        .authentication = s->kex->authentication,
        .cipher = s->cipher,
        .mac = md ? mbedtls_md_get_name(md) : "unknown",
        .dtls = !s->tls13 && !(cs->flags & MBEDTLS_CIPHERSUITE_NODTLS), /* 3.6 has DTLS 1.2 only */
    };
    tb_mbed_suite_credentials(&s->info, s->kex);
}

/* The library's suites in its preference order (TLS 1.3 first). */
static void tb_mbed3_suites_build(tb_suite_cache *c) {
    tb_mbed3_suite *s;
    for (const int *id = mbedtls_ssl_list_ciphersuites(); *id; id++) {
        const mbedtls_ssl_ciphersuite_t *cs = mbedtls_ssl_ciphersuite_from_id(*id);
        if (cs && (s = tb_suite_cache_add(c)) != NULL)
            tb_mbed3_suite_fill(s, cs);
    }
}

_Static_assert(offsetof(tb_mbed3_suite, info) == 0, "tb_mbed3_suite must start with its tb_suite_info");
static tb_suite_cache tb_mbed3_suites = TB_SUITE_CACHE(tb_mbed3.suites, tb_mbed3_suites_build);

static size_t tb_mbed3_suite_count(void) { return tb_suite_cache_count(&tb_mbed3_suites); }
static const tb_suite_info *tb_mbed3_suite_at(size_t index) { return tb_suite_cache_at(&tb_mbed3_suites, index); }

/* ---------------------------------------------------------------- groups */

/* The groups this backend offers (IANA ids, which mbedtls_ssl_conf_groups takes as they
 * are) and whether 3.6 offers them in TLS 1.3: not the small curves, nor brainpool (3.6
 * has no TLS 1.3 brainpool code points). TLS 1.2 DHE gets the FFDHE group's prime from the
 * server instead (mbedtls_shared.c). */
typedef struct tb_mbed3_group {
    uint16_t group;
    bool tls13;
} tb_mbed3_group;

static const tb_mbed3_group tb_mbed3_groups[] = {
    {TB_GROUP_SECP192R1, false},       {TB_GROUP_SECP224R1, false},       {TB_GROUP_SECP256R1, true},
    {TB_GROUP_SECP384R1, true},        {TB_GROUP_SECP521R1, true},        {TB_GROUP_BRAINPOOLP256R1, false},
    {TB_GROUP_BRAINPOOLP384R1, false}, {TB_GROUP_BRAINPOOLP512R1, false}, {TB_GROUP_X25519, true},
    {TB_GROUP_X448, true},             {TB_GROUP_FFDHE2048, true},        {TB_GROUP_FFDHE3072, true},
    {TB_GROUP_FFDHE4096, true},        {TB_GROUP_FFDHE6144, true},        {TB_GROUP_FFDHE8192, true},
};

_Static_assert(offsetof(tb_mbed3_group, group) == 0, "tb_row_find reads a group row's id first");
static const tb_mbed3_group *tb_mbed3_group_find(uint16_t group) {
    return tb_row_find(tb_mbed3_groups, TB_COUNT(tb_mbed3_groups), sizeof tb_mbed3_groups[0], group);
}

static tb_group_support tb_mbed3_group_support(uint16_t group) {
    if (!tb_mbed3_group_find(group))
        return TB_GROUP_UNKNOWN;
    return tb_mbed_ffdhe_find(group) || tb_mbed_curve_built(group) ? TB_GROUP_READY : TB_GROUP_NOT_BUILT;
}

/* On top of the spec's families: a TLS 1.3 suite takes only 3.6's TLS 1.3 groups. */
static const char *tb_mbed3_group_limit(const void *suite_row, uint16_t group) {
    const tb_mbed3_suite *s = suite_row;
    const tb_mbed3_group *g = tb_mbed3_group_find(group);
    return s->tls13 && g && !g->tls13 ? "a TLS 1.3 group of mbed TLS 3.6 (secp256r1, secp384r1, secp521r1, x25519, "
                                        "x448, ffdhe2048 .. ffdhe8192)"
                                      : NULL;
}

/* ---------------------------------------------------------------- heap counting */

/* Bytes mbed TLS holds on the heap (MBEDTLS_PLATFORM_MEMORY, which the library cache's build
 * enables): compiled in for the memory measurements to come, off unless switched on. A size
 * header in front of each block gives free() its size. */
#if defined(MBEDTLS_PLATFORM_MEMORY) && !defined(MBEDTLS_PLATFORM_CALLOC_MACRO)
#define TB_MBED3_HEAP_HEADER 16 /* keeps the block's alignment */
static size_t tb_mbed3_heap_now, tb_mbed3_heap_peak;

static void *tb_mbed3_counting_calloc(size_t n, size_t size) {
    if (size && n > (SIZE_MAX - TB_MBED3_HEAP_HEADER) / size)
        return NULL;
    uint8_t *p = calloc(1, n * size + TB_MBED3_HEAP_HEADER);
    if (!p)
        return NULL;
    size_t bytes = n * size;
    memcpy(p, &bytes, sizeof bytes);
    tb_mbed3_heap_now += bytes;
    tb_mbed3_heap_peak = tb_mbed3_heap_now > tb_mbed3_heap_peak ? tb_mbed3_heap_now : tb_mbed3_heap_peak;
    return p + TB_MBED3_HEAP_HEADER;
}

static void tb_mbed3_counting_free(void *ptr) {
    if (!ptr)
        return;
    uint8_t *p = (uint8_t *)ptr - TB_MBED3_HEAP_HEADER;
    size_t bytes;
    memcpy(&bytes, p, sizeof bytes);
    tb_mbed3_heap_now -= bytes;
    free(p);
}

int tb_mbedtls3_heap_counting(bool on) {
    tb_mbed3_heap_now = tb_mbed3_heap_peak = 0;
    return on ? mbedtls_platform_set_calloc_free(tb_mbed3_counting_calloc, tb_mbed3_counting_free)
              : mbedtls_platform_set_calloc_free(calloc, free);
}
#else
int tb_mbedtls3_heap_counting(bool on) { return on ? MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE : 0; }
static size_t tb_mbed3_heap_now, tb_mbed3_heap_peak;
#endif

void tb_mbedtls3_heap_stats(size_t *now, size_t *peak) {
    *now = tb_mbed3_heap_now;
    *peak = tb_mbed3_heap_peak;
}

/* ---------------------------------------------------------------- describe */

/* The build options of 3.6 on top of those both versions have (mbedtls_shared.c). */
static const tb_mbed_feature_key tb_mbed3_features[] = {
    {"tls1_3", "MBEDTLS_SSL_PROTO_TLS1_3"},
    {"tls1_3_ephemeral", "MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED"},
    {"tls1_3_psk", "MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_ENABLED"},
    {"tls1_3_psk_ephemeral", "MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_EPHEMERAL_ENABLED"},
    {"tls1_3_compatibility_mode", "MBEDTLS_SSL_TLS1_3_COMPATIBILITY_MODE"},
    {"early_data", "MBEDTLS_SSL_EARLY_DATA"},
    {"dtls_connection_id", "MBEDTLS_SSL_DTLS_CONNECTION_ID"},
    {"record_size_limit", "MBEDTLS_SSL_RECORD_SIZE_LIMIT"},
    {"platform_memory", "MBEDTLS_PLATFORM_MEMORY"},
};

static void tb_mbed3_describe_build(tb_json *out) {
    tb_mbed_describe_library(out, tb_mbed3_features, TB_COUNT(tb_mbed3_features));
    tb_json_kv_string(out, "source", TB_MBEDTLS3_SOURCE);
    tb_json_kv_uint(out, "suites", tb_mbed3_suite_count());
    tb_json_kv_string(out, "session_versions", "the suite's: TLS1.3 or TLS1.2 (min = max)");
    tb_json_kv_string(out, "tls1_3_key_exchange_modes",
                      "certificates: ephemeral (RESUME: psk_dhe_ke); psk: psk_dhe_ke, psk_ke with PSK_ONLY");
    tb_json_kv_bool(out, "heap_counting", false);
    tb_json_kv_string(out, "rng", "CTR_DRBG (AES-256), seeded once from mbedtls_entropy; PSA's own for TLS 1.3");
    tb_json_kv_string(out, "groups", "forced on both peers: the group (TLS 1.2: then the certificate's curve)");
    tb_mbed_describe_config(out);
    tb_mbed_describe_credentials(out);
}

/* ---------------------------------------------------------------- init */

static int tb_mbed3_parse_key(mbedtls_pk_context *pk, const char *pem) {
    return mbedtls_pk_parse_key(pk, (const unsigned char *)pem, strlen(pem) + 1, NULL, 0, mbedtls_ctr_drbg_random,
                                tb_mbed_drbg());
}

/* PSA first: TLS 1.3 needs it, and its set-up (entropy, its DRBG) stays out of the first
 * repetition's first step. */
static int tb_mbed3_init(char *err, size_t errlen) {
    if (tb_mbed3.initialized)
        return 0;
    psa_status_t status = psa_crypto_init();
    if (status != PSA_SUCCESS)
        return tb_fail(err, errlen, "psa_crypto_init failed: %d", (int)status);
    tb_mbed3_suite_count(); /* the suite table, before any repetition */
    if (tb_mbed_process_init("tlsbench-agent-mbedtls-3", tb_mbed3_parse_key, err, errlen) != 0)
        return -1;
    tb_mbed3.initialized = true;
    return 0;
}

static void tb_mbed3_deinit(void) {
    tb_mbed_process_free();
    mbedtls_psa_crypto_free();
    tb_mbed3.initialized = false;
}

/* ---------------------------------------------------------------- sessions */

struct tb_session {
    tb_mbed_session h;    /* what both versions' sessions have (first) */
    bool tls13;           /* the forced suite's version (min = max) */
    uint16_t groups[3];   /* the forced group (+ TLS 1.2: the certificate's curve), 0-terminated */
    bool awaiting_ticket; /* TLS 1.3 client, RESUME: the NewSessionTicket is still to come */
};

mbedtls_ssl_context *tb_mbedtls3_session_ssl(tb_session *s) { return &s->h.ssl; }

static const tb_backend_rules tb_mbed3_rules = {
    .library_name = "mbed TLS",
    .suites = &tb_mbed3_suites,
    .initialized = &tb_mbed3.initialized,
    .credential_why = tb_mbed_credential_why,
    .group_support = tb_mbed3_group_support,
    .group_limit = tb_mbed3_group_limit,
};

/* The group list: the forced group first; TLS 1.2 ECDSA/ECDH certificates need their curve
 * in the list too (mbed TLS checks it). FFDHE in TLS 1.2 is the server's DH parameters. */
static void tb_mbed3_use_groups(tb_session *s, uint16_t group, uint8_t credential) {
    uint16_t cert = s->tls13 ? 0 : tb_credential_group(credential);
    size_t n = 0;
    if (group && (s->tls13 || !tb_mbed_ffdhe_find(group)))
        s->groups[n++] = group;
    if (cert && (n == 0 || s->groups[0] != cert))
        s->groups[n++] = cert;
    s->groups[n] = 0;
}

/* Options a stripped build may lack: then there is nothing to turn off, or the RUN that
 * needs it fails with the library's "feature not available". */
#if defined(MBEDTLS_SSL_RENEGOTIATION)
static void tb_mbed3_conf_no_renegotiation(mbedtls_ssl_config *c) {
    mbedtls_ssl_conf_renegotiation(c, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
}
#else
static void tb_mbed3_conf_no_renegotiation(mbedtls_ssl_config *c) { (void)c; }
#endif

#if defined(MBEDTLS_SSL_HANDSHAKE_WITH_PSK_ENABLED)
static int tb_mbed3_conf_psk(mbedtls_ssl_config *c) {
    return mbedtls_ssl_conf_psk(c, tb_psk_key, TB_PSK_LEN, (const unsigned char *)tb_psk_identity,
                                strlen(tb_psk_identity));
}
#else
static int tb_mbed3_conf_psk(mbedtls_ssl_config *c) {
    (void)c;
    return MBEDTLS_ERR_SSL_FEATURE_UNAVAILABLE;
}
#endif

#if defined(MBEDTLS_SSL_PROTO_TLS1_3)
/* Certificates: an ephemeral exchange (and with RESUME the ticket with one, psk_dhe_ke, as
 * OpenSSL resumes too); the psk credential: psk_dhe_ke, or psk_ke alone with PSK_ONLY. */
static void tb_mbed3_conf_modes(mbedtls_ssl_config *c, bool psk, uint8_t options) {
    int modes = !psk ? ((options & TB_OPTION_RESUME) ? MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ALL
                                                      : MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL)
                : (options & TB_OPTION_PSK_ONLY) ? MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK
                                                 : MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_EPHEMERAL;
    mbedtls_ssl_conf_tls13_key_exchange_modes(c, modes);
}
#else
static void tb_mbed3_conf_modes(mbedtls_ssl_config *c, bool psk, uint8_t options) {
    (void)c;
    (void)psk;
    (void)options;
}
#endif

/* TLS 1.3 tickets come after the handshake: the server sends one only with RESUME, and the
 * client then stops at it (the signal) to keep the session it carries. */
#if defined(MBEDTLS_SSL_PROTO_TLS1_3) && defined(MBEDTLS_SSL_SESSION_TICKETS)
static void tb_mbed3_conf_tls13_tickets(mbedtls_ssl_config *c, bool server, bool resume) {
    if (server)
        mbedtls_ssl_conf_new_session_tickets(c, resume ? 1 : 0);
    else
        mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(
            c, resume ? MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED
                      : MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_DISABLED);
}
#else
static void tb_mbed3_conf_tls13_tickets(mbedtls_ssl_config *c, bool server, bool resume) {
    (void)c;
    (void)server;
    (void)resume;
}
#endif

/* RESUME: the server keeps sessions (tickets, or its cache with RESUME_ID); a TLS 1.2 client
 * asks for a ticket unless it resumes by ID. Without RESUME nobody issues or asks for one. */
static int tb_mbed3_conf_resume(tb_session *s, bool server, uint8_t options) {
    bool resume = options & TB_OPTION_RESUME, by_id = options & TB_OPTION_RESUME_ID;
    tb_mbed3_conf_tls13_tickets(&s->h.conf, server, resume);
    if (!server)
        tb_mbed_conf_client_tickets(&s->h.conf, resume && !by_id && !s->tls13);
    return resume && server ? tb_mbed_conf_resume_server(&s->h.conf, by_id) : 0;
}

/* 3.6's configuration calls (between tb_mbed_session_open's shared ones), in order; 0 or
 * the library's code. */
static int tb_mbed3_configure(tb_session *s, uint8_t peer, const void *suite_row, const tb_conn_config *cfg,
                              uint16_t group) {
    const tb_mbed3_suite *suite = suite_row;
    bool server = peer == TB_PEER_SERVER;
    bool psk = cfg->credential == TB_CREDENTIAL_PSK;
    s->tls13 = suite->tls13;
    s->awaiting_ticket = s->h.resume && s->tls13;
    const tb_mbed_ffdhe *dh = s->tls13 ? NULL : tb_mbed_ffdhe_find(group);
    uint16_t version = s->tls13 ? MBEDTLS_SSL_VERSION_TLS1_3 : MBEDTLS_SSL_VERSION_TLS1_2;
    mbedtls_ssl_conf_min_tls_version(&s->h.conf, (mbedtls_ssl_protocol_version)version);
    mbedtls_ssl_conf_max_tls_version(&s->h.conf, (mbedtls_ssl_protocol_version)version);
    tb_mbed3_use_groups(s, group, cfg->credential);
    mbedtls_ssl_conf_groups(&s->h.conf, s->groups);
    tb_mbed3_conf_no_renegotiation(&s->h.conf);
    tb_mbed3_conf_modes(&s->h.conf, psk, cfg->options);
    int ret = tb_mbed_conf_credentials(&s->h.conf, server, tb_mbed_cred_at(cfg->credential),
                                       cfg->options & TB_OPTION_MUTUAL_AUTH);
    if (ret == 0)
        ret = tb_mbed3_conf_resume(s, server, cfg->options);
    if (ret == 0 && dh && server)
        ret = tb_mbed_conf_dh(&s->h.conf, dh);
    if (ret == 0 && (suite->kex->psk || psk))
        ret = tb_mbed3_conf_psk(&s->h.conf);
    return ret;
}

static tb_session *tb_mbed3_session_new(uint8_t peer, const tb_conn_config *cfg, tb_io io, char *err,
                                        size_t errlen) {
    uint16_t group = 0;
    const tb_mbed3_suite *suite = tb_backend_check(&tb_mbed3_rules, cfg, &group, err, errlen);
    return suite ? tb_mbed_session_open(sizeof(tb_session), peer, cfg, io, &suite->info, group, tb_mbed3_configure,
                                        err, errlen)
                 : NULL;
}

/* ---------------------------------------------------------------- handshake */

/* mbed TLS's result of one traced call -> the backend contract. */
static tb_step_result tb_mbed3_result(int ret, int32_t *lib_error) {
    if (ret == 0)
        return TB_STEP_CONTINUE;
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE)
        return TB_STEP_WANT_READ;
    *lib_error = ret;
    return TB_STEP_ERROR;
}

/* One state of the handshake as one step span. */
static tb_step_result tb_mbed3_handshake_step(tb_session *s, int32_t *lib_error) {
    int state = s->h.ssl.state;
    uint16_t label = tb_mbedtls3_state_label(state, s->tls13);
    if (label == 0) {
        *lib_error = MBEDTLS_ERR_SSL_INTERNAL_ERROR; /* a state this table does not know */
        return TB_STEP_ERROR;
    }
    /* A full handshake brings the server's certificate (TLS 1.3) or runs the client's key
     * exchange (TLS 1.2); a resumed one does neither. */
    s->h.full_handshake |= state == (s->tls13 ? MBEDTLS_SSL_SERVER_CERTIFICATE : MBEDTLS_SSL_CLIENT_KEY_EXCHANGE);
    tb_begin(label);
    tb_pace_step_begin(label);
    int ret = mbedtls_ssl_handshake_step(&s->h.ssl);
    tb_pace_step_end(ret != MBEDTLS_ERR_SSL_WANT_READ && ret != MBEDTLS_ERR_SSL_WANT_WRITE);
    tb_end(label, (uint64_t)(int64_t)ret);
    if (ret == MBEDTLS_ERR_SSL_HELLO_VERIFY_REQUIRED) /* the HelloVerifyRequest is out: start over */
        ret = tb_mbed_after_hello_verify(&s->h.link);
    if (ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) { /* TLS 1.3 client: the ticket is in */
        s->awaiting_ticket = false;
        ret = tb_mbed_resume_keep(&s->h.ssl);
    }
    return tb_mbed3_result(ret, lib_error);
}

/* TLS 1.3 client, RESUME: the NewSessionTicket arrives after the handshake, as a record the
 * client must read; reading it only switches the state to TLS1_3_NEW_SESSION_TICKET (then
 * a handshake step parses it). Traced as the client's NEW_SESSION_TICKET step. */
static tb_step_result tb_mbed3_read_ticket(tb_session *s, int32_t *lib_error) {
    unsigned char none[1];
    tb_begin(TB_L_NEW_SESSION_TICKET);
    int ret = mbedtls_ssl_read(&s->h.ssl, none, 0);
    tb_end(TB_L_NEW_SESSION_TICKET, (uint64_t)(int64_t)ret);
    if (ret == MBEDTLS_ERR_SSL_WANT_READ && s->h.ssl.state == MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET)
        return TB_STEP_CONTINUE;
    /* 0: the connection ended, or application data came first: either way no ticket */
    return tb_mbed3_result(ret >= 0 ? MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE : ret, lib_error);
}

/* Every state until HANDSHAKE_OVER is a step, those after the handshake is over too
 * (mbedtls_ssl_is_handshake_over(): a TLS 1.3 server with tickets is then in
 * TLS1_3_NEW_SESSION_TICKET, the client that read one likewise). */
static tb_step_result tb_mbed3_step(tb_session *s, int32_t *lib_error) {
    if (s->h.ssl.state != MBEDTLS_SSL_HANDSHAKE_OVER) {
        tb_step_result r = tb_mbed3_handshake_step(s, lib_error);
        s->h.link.handshake_over = mbedtls_ssl_is_handshake_over(&s->h.ssl);
        return r;
    }
    if (s->awaiting_ticket)
        return tb_mbed3_read_ticket(s, lib_error);
    return tb_mbed_finish(s, !s->tls13, lib_error); /* TLS 1.3 kept its session at the ticket */
}

/* ---------------------------------------------------------------- records */

/* A TLS 1.3 server may send more tickets than the one the handshake waited for (OpenSSL sends
 * two): with RESUME the client keeps the newest and reads on. */
static int tb_mbed3_read(tb_session *s, uint8_t *buf, size_t len, int32_t *lib_error) {
    int ret;
    do {
        ret = mbedtls_ssl_read(&s->h.ssl, buf, len);
        if (ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
            tb_mbed_resume_keep(&s->h.ssl);
    } while (ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET ||
             (ret == MBEDTLS_ERR_SSL_WANT_READ && s->h.ssl.state == MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET));
    return tb_mbed_io_result(ret, lib_error);
}

const tb_backend tb_linked_backend = {
    .name = "mbedtls",
    .library_name = "mbed TLS",
    .version = tb_mbed_version,
    .step_granularity = "state",
    .options = TB_OPTION_MUTUAL_AUTH | TB_MBED_RESUME_OPTIONS | TB_MBED3_PSK_ONLY | TB_MBED_CID_OPTION,
    .describe_build = tb_mbed3_describe_build,
    .suite_count = tb_mbed3_suite_count,
    .suite_at = tb_mbed3_suite_at,
    .init = tb_mbed3_init,
    .deinit = tb_mbed3_deinit,
    .session_new = tb_mbed3_session_new,
    .step = tb_mbed3_step,
    .write = tb_mbed_write,
    .read = tb_mbed3_read,
    .close_notify = tb_mbed_close_notify,
    .session_free = tb_mbed_session_free,
    .error_text = tb_mbed_error_text,
    .timeout_ms = tb_mbed_timeout_ms,
    .retransmissions = tb_mbed_retransmissions,
};
