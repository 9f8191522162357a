/* SPDX-License-Identifier: Apache-2.0 */
/* The wolfSSL 5.5 backend: suite table, per-session configuration (pinned version, forced
 * suite, group and credentials) and the turn/record calls. Crypto operations inside the
 * turns are traced by wolfssl_crypto.c (link-time wrappers, list in wolfssl_wrap.h).
 *
 * Steps are TURNS, not messages: wolfSSL 5.5 exposes no per-message state a caller can read
 * between messages (internal.h is not installed; the info callback is per context and
 * misses the server's writes and most of TLS 1.3), and wolfSSL_connect/accept run until
 * they need the peer's bytes. So step() is one connect/accept call, traced as
 * HANDSHAKE_TURN_n (n = this peer's call count, the 4th and later share TURN_4). The crypto
 * spans nested in a turn still say where its cost is. docs/backend-wolfssl.md.
 *
 * Suite metadata conventions (SUITES JSON, docs/protocol.md), as the mbed TLS backend:
 *   name           = the IANA name (wolfSSL_get_cipher_name_iana_from_suite);
 *   key_exchange   = ECDHE, DHE, PSK, RSA...; authentication = ECDSA, RSA, PSK; hybrids split
 *                    as DHE-PSK = DHE/PSK; TLS 1.3 suites fix neither: "any"/"any" (the group
 *                    and the credential of the run decide, as OpenSSL prints Kx=any Au=any);
 *   cipher         = AES-128-GCM, CHACHA20-POLY1305, AES-128-CCM-8, DES-EDE3-CBC, NULL...;
 *   mac            = the suite's hash (the PRF hash for AEAD suites), SHA1 for "_SHA". */
#include <stddef.h>
#include <wolfssl/options.h> /* first: the build's configuration shapes every other header */
#include <wolfssl/ssl.h>
#include <wolfssl/version.h>
#include <wolfssl/wolfcrypt/dh.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/sha256.h>
#include <wolfssl/error-ssl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "tlsbench/backend.h"
#include "tlsbench/credentials.h"
#include "tlsbench/trace.h"
#include "wolfssl_internal.h"

#define TB_WOLF_MAX_SUITES 128

/* ---------------------------------------------------------------- build options
 * Read once here, as constants, so function bodies carry no #ifdef. */
#ifdef WOLFSSL_TLS13
#define TB_WOLF_TLS13 1
#else
#define TB_WOLF_TLS13 0
#endif
#ifdef WOLFSSL_DTLS
#define TB_WOLF_DTLS 1
#else
#define TB_WOLF_DTLS 0
#endif
#ifdef HAVE_CURVE25519
#define TB_WOLF_X25519 1
#else
#define TB_WOLF_X25519 0
#endif
#ifdef HAVE_CURVE448
#define TB_WOLF_X448 1
#else
#define TB_WOLF_X448 0
#endif
#ifdef HAVE_ED25519
#define TB_WOLF_ED25519 1
#else
#define TB_WOLF_ED25519 0
#endif
#ifdef HAVE_FFDHE_2048
#define TB_WOLF_FFDHE2048 1
#else
#define TB_WOLF_FFDHE2048 0
#endif
#ifdef HAVE_FFDHE_3072
#define TB_WOLF_FFDHE3072 1
#else
#define TB_WOLF_FFDHE3072 0
#endif
#ifdef HAVE_FFDHE_4096
#define TB_WOLF_FFDHE4096 1
#else
#define TB_WOLF_FFDHE4096 0
#endif
#ifdef FP_ECC
#define TB_WOLF_FP_ECC 1
#else
#define TB_WOLF_FP_ECC 0
#endif
#ifdef NO_PSK
#define TB_WOLF_PSK 0
#else
#define TB_WOLF_PSK 1
#endif
/* ECDHE-PSK over X25519/X448 fails in the client ("Bad ECC Peer Key": the curve OID is not
 * set for ECDHE-PSK) until wolfSSL 5.7.0 (wolfSSL PR #7120/#7132). */
#if LIBWOLFSSL_VERSION_HEX < 0x05007000
#define TB_WOLF_PSK_MONTGOMERY 0
#else
#define TB_WOLF_PSK_MONTGOMERY 1
#endif
#ifdef NO_OLD_TLS
#define TB_WOLF_OLDEST_TLS "TLS1.2"
#elif defined(WOLFSSL_ALLOW_TLSV10)
#define TB_WOLF_OLDEST_TLS "TLS1.0"
#else
#define TB_WOLF_OLDEST_TLS "TLS1.1"
#endif

/* Functions a stripped build may lack: then there is nothing to do. */
#ifdef FP_ECC
static void tb_wolf_fp_cache_free(void) { wc_ecc_fp_free(); }
#else
static void tb_wolf_fp_cache_free(void) {}
#endif
#ifdef HAVE_SESSION_TICKET
static void tb_wolf_ctx_no_tickets(WOLFSSL_CTX *ctx) {
    wolfSSL_CTX_NoTicketTLSv12(ctx);
    wolfSSL_CTX_no_ticket_TLSv13(ctx);
}
#else
static void tb_wolf_ctx_no_tickets(WOLFSSL_CTX *ctx) { (void)ctx; }
#endif
#ifndef NO_PSK
/* The fixed test key and identity (tlsbench/credentials.h), for both peers. */
static unsigned int tb_wolf_psk_client(WOLFSSL *ssl, const char *hint, char *identity, unsigned int id_max,
                                       unsigned char *key, unsigned int key_max) {
    (void)ssl;
    (void)hint;
    return tb_psk_client(identity, id_max, key, key_max);
}
static unsigned int tb_wolf_psk_server(WOLFSSL *ssl, const char *identity, unsigned char *key,
                                       unsigned int key_max) {
    (void)ssl;
    return tb_psk_server(identity, key, key_max);
}
static void tb_wolf_ctx_psk(WOLFSSL_CTX *ctx, uint8_t peer) {
    if (peer == TB_PEER_CLIENT)
        wolfSSL_CTX_set_psk_client_callback(ctx, tb_wolf_psk_client);
    else
        wolfSSL_CTX_set_psk_server_callback(ctx, tb_wolf_psk_server);
}
#else
static void tb_wolf_ctx_psk(WOLFSSL_CTX *ctx, uint8_t peer) { (void)ctx; (void)peer; }
#endif

/* ---------------------------------------------------------------- turns */

/* The peer's n-th connect/accept call (n from 0); later calls share the last label. */
static const uint16_t tb_wolf_turn_labels[] = {
    TB_L_HANDSHAKE_TURN_1, TB_L_HANDSHAKE_TURN_2, TB_L_HANDSHAKE_TURN_3, TB_L_HANDSHAKE_TURN_4};

uint16_t tb_wolfssl_turn_label(uint32_t turn) {
    return tb_wolf_turn_labels[turn < TB_COUNT(tb_wolf_turn_labels) ? turn : TB_COUNT(tb_wolf_turn_labels) - 1];
}

/* ---------------------------------------------------------------- key exchanges */

/* DTLS 1.2 is a "version" here only for its contexts (DTLS methods); suites are TLS 1.2/1.3. */
typedef enum tb_wolf_version { TB_WOLF_TLS1_2, TB_WOLF_TLS1_3, TB_WOLF_DTLS1_2, TB_WOLF_N_VERSIONS } tb_wolf_version;

/* Which groups each key exchange takes is the spec's ([key_exchange], by name);
 * no_montgomery is this library's own limit on top. */
typedef struct tb_wolf_kex {
    const char *iana;           /* what the IANA name holds between "TLS_" and "_WITH_" */
    const char *key_exchange;
    const char *authentication;
    uint8_t credentials[TB_MAX_SUITE_CREDENTIALS];
    uint8_t n_credentials;
    const char *why_unsupported;
    bool no_montgomery;         /* X25519/X448 fail with it (TB_WOLF_PSK_MONTGOMERY) */
} tb_wolf_kex;

#define TB_RSA_CREDS TB_CREDS(TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072)
#define TB_ECDSA_CREDS TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384)
#if TB_WOLF_ED25519
#define TB_TLS13_CREDS                                                                                   \
    TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384, TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072, \
             TB_CREDENTIAL_ED25519)
#else
#define TB_TLS13_CREDS \
    TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384, TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072)
#endif
#define TB_PSK_CREDS TB_CREDS(TB_CREDENTIAL_PSK)

/* The first entry is TLS 1.3 (no "_WITH_" in the name); the last catches what is not listed. */
static const tb_wolf_kex tb_wolf_kex_table[] = {
    {"", "any", "any", TB_TLS13_CREDS, NULL},
    {"ECDHE_ECDSA", "ECDHE", "ECDSA", TB_ECDSA_CREDS, NULL},
    {"ECDHE_RSA", "ECDHE", "RSA", TB_RSA_CREDS, NULL},
    {"DHE_RSA", "DHE", "RSA", TB_RSA_CREDS, NULL},
    {"RSA", "RSA", "RSA", TB_RSA_CREDS, NULL},
    {"ECDHE_PSK", "ECDHE", "PSK", TB_PSK_CREDS, NULL, .no_montgomery = !TB_WOLF_PSK_MONTGOMERY},
    {"DHE_PSK", "DHE", "PSK", TB_PSK_CREDS, NULL},
    {"PSK", "PSK", "PSK", TB_PSK_CREDS, NULL},
    {"DH_anon", "DHE", "anon", .n_credentials = 0,
     .why_unsupported = "anonymous Diffie-Hellman authenticates nobody; tlsbench has no anonymous credential"},
    {NULL, "unknown", "unknown", .n_credentials = 0,
     .why_unsupported = "not an IANA TLS suite, or a key exchange the wolfSSL agent does not configure"},
};

static const tb_wolf_kex *tb_wolf_kex_find(const char *iana, size_t len) {
    size_t i = 0;
    for (; tb_wolf_kex_table[i].iana; i++)
        if (strlen(tb_wolf_kex_table[i].iana) == len && strncmp(tb_wolf_kex_table[i].iana, iana, len) == 0)
            break;
    return &tb_wolf_kex_table[i];
}

/* Bulk ciphers by the IANA token after "_WITH_" (TLS 1.2) or "TLS_" (TLS 1.3). Longer
 * tokens first (CCM_8 before CCM). aead: the suite needs TLS 1.2. */
static const struct {
    const char *iana;
    const char *name;
    bool aead;
    bool dtls; /* a stream cipher cannot run over DTLS */
} tb_wolf_ciphers[] = {
    {"AES_128_CCM_8", "AES-128-CCM-8", true, true},
    {"AES_256_CCM_8", "AES-256-CCM-8", true, true},
    {"AES_128_CCM", "AES-128-CCM", true, true},
    {"AES_256_CCM", "AES-256-CCM", true, true},
    {"AES_128_GCM", "AES-128-GCM", true, true},
    {"AES_256_GCM", "AES-256-GCM", true, true},
    {"AES_128_CBC", "AES-128-CBC", false, true},
    {"AES_256_CBC", "AES-256-CBC", false, true},
    {"CAMELLIA_128_CBC", "CAMELLIA-128-CBC", false, true},
    {"CAMELLIA_256_CBC", "CAMELLIA-256-CBC", false, true},
    {"CHACHA20_POLY1305", "CHACHA20-POLY1305", true, true},
    {"CHACHA20_OLD_POLY1305", "CHACHA20-POLY1305-OLD", true, true},
    {"3DES_EDE_CBC", "DES-EDE3-CBC", false, true},
    {"RC4_128", "ARC4-128", false, false},
    {"NULL", "NULL", false, true},
    /* RFC 9150 integrity-only TLS 1.3 suites: TLS_SHA256_SHA256 */
    {"SHA256", "NULL", true, true},
    {"SHA384", "NULL", true, true},
};

/* Hashes by the IANA name's last token; "" = none named (CCM suites: the PRF's SHA-256). */
static const struct {
    const char *iana;
    const char *name;
    bool tls12; /* a SHA-2 suite needs TLS 1.2 */
} tb_wolf_macs[] = {
    {"", "SHA256", true}, {"_SHA", "SHA1", false}, {"_SHA256", "SHA256", true},
    {"_SHA384", "SHA384", true}, {"_MD5", "MD5", false},
};

/* ---------------------------------------------------------------- groups */

/* Weierstrass curves, Montgomery curves (X25519, X448), finite fields. */
typedef enum tb_wolf_family { TB_WOLF_FAMILY_EC, TB_WOLF_FAMILY_MONT, TB_WOLF_FAMILY_FF } tb_wolf_family;

typedef struct tb_wolf_group {
    uint16_t group; /* TB_GROUP_* (IANA) = WOLFSSL_ECC_* / WOLFSSL_FFDHE_* */
    tb_wolf_family family;
    int ecc_id;     /* NIST curves: the wolfCrypt curve id, checked at run time */
    bool built;     /* X25519/X448/FFDHE: compiled in */
    const DhParams *(*ffdhe)(void);
} tb_wolf_group;

_Static_assert(TB_GROUP_SECP256R1 == WOLFSSL_ECC_SECP256R1 && TB_GROUP_X25519 == WOLFSSL_ECC_X25519 &&
                   TB_GROUP_X448 == WOLFSSL_ECC_X448 && TB_GROUP_FFDHE2048 == WOLFSSL_FFDHE_2048 &&
                   TB_GROUP_FFDHE4096 == WOLFSSL_FFDHE_4096,
               "wolfSSL's group values are the IANA ones the spec uses");

/* Builds without a group have no wc_Dh_ffdheXXXX_Get: point at a stub that is never called. */
#if TB_WOLF_FFDHE2048
#define TB_FFDHE2048_GET wc_Dh_ffdhe2048_Get
#else
#define TB_FFDHE2048_GET NULL
#endif
#if TB_WOLF_FFDHE3072
#define TB_FFDHE3072_GET wc_Dh_ffdhe3072_Get
#else
#define TB_FFDHE3072_GET NULL
#endif
#if TB_WOLF_FFDHE4096
#define TB_FFDHE4096_GET wc_Dh_ffdhe4096_Get
#else
#define TB_FFDHE4096_GET NULL
#endif

static const tb_wolf_group tb_wolf_groups[] = {
    {TB_GROUP_SECP256R1, TB_WOLF_FAMILY_EC, ECC_SECP256R1, true, NULL},
    {TB_GROUP_SECP384R1, TB_WOLF_FAMILY_EC, ECC_SECP384R1, true, NULL},
    {TB_GROUP_SECP521R1, TB_WOLF_FAMILY_EC, ECC_SECP521R1, true, NULL},
    {TB_GROUP_X25519, TB_WOLF_FAMILY_MONT, 0, TB_WOLF_X25519, NULL},
    {TB_GROUP_X448, TB_WOLF_FAMILY_MONT, 0, TB_WOLF_X448, NULL},
    {TB_GROUP_FFDHE2048, TB_WOLF_FAMILY_FF, 0, TB_WOLF_FFDHE2048, TB_FFDHE2048_GET},
    {TB_GROUP_FFDHE3072, TB_WOLF_FAMILY_FF, 0, TB_WOLF_FFDHE3072, TB_FFDHE3072_GET},
    {TB_GROUP_FFDHE4096, TB_WOLF_FAMILY_FF, 0, TB_WOLF_FFDHE4096, TB_FFDHE4096_GET},
};

_Static_assert(offsetof(tb_wolf_group, group) == 0, "tb_row_find reads a group row's id first");
static const tb_wolf_group *tb_wolf_group_find(uint16_t group) {
    return tb_row_find(tb_wolf_groups, TB_COUNT(tb_wolf_groups), sizeof tb_wolf_groups[0], group);
}

static bool tb_wolf_group_built(const tb_wolf_group *g) {
    return g->ecc_id ? wc_ecc_get_curve_idx(g->ecc_id) >= 0 : g->built;
}

/* ---------------------------------------------------------------- process state */

typedef struct tb_wolf_suite {
    tb_suite_info info;
    const tb_wolf_kex *kex;
    tb_wolf_version version;
    char wolf_name[48]; /* wolfSSL's own name, for wolfSSL_set_cipher_list */
} tb_wolf_suite;

/* One context per (version, peer, credential), built at init and shared by every session:
 * certificates and keys are parsed once, outside any repetition. */
typedef struct tb_wolf_ctx {
    WOLFSSL_CTX *ctx;
    char why[160]; /* why ctx is NULL */
} tb_wolf_ctx;

static struct {
    bool initialized;
    tb_wolf_suite suites[TB_WOLF_MAX_SUITES];
    tb_wolf_ctx ctx[TB_WOLF_N_VERSIONS][2][TB_CREDENTIAL_SLOTS];
} tb_wolf;

/* wolfSSL 5.5 drops every epoch-0 record once its handshake is done (DtlsShouldDrop; 5.6
 * keeps them while dtlsHsRetain), so a finished server never sees the client's retransmitted
 * flight and cannot resend its own last flight, which the client then waits for in vain. The
 * backend keeps the datagrams of that flight as wolfSSL sent them and, lingering, sends them
 * again when a handshake record of the client arrives (docs/networks.md "Linger"). */
#define TB_WOLF_FLIGHT_BYTES 2048u
#define TB_WOLF_FLIGHT_DATAGRAMS 8u

typedef struct tb_wolf_flight {
    uint8_t bytes[TB_WOLF_FLIGHT_BYTES];
    uint16_t len[TB_WOLF_FLIGHT_DATAGRAMS];
    uint8_t n;
    bool open;     /* sent since the peer's last datagram: the flight still grows */
    bool too_big;  /* not kept: no resend */
} tb_wolf_flight;

struct tb_session {
    WOLFSSL *ssl;
    tb_io io;
    uint8_t peer;
    uint32_t turns; /* connect/accept calls so far */
    bool done;
    /* DTLS: wolfSSL in non-blocking mode does not watch time; we do (docs/networks.md). */
    bool dtls;
    uint64_t deadline_ns;     /* when the current flight's timer expires; 0 = not armed */
    uint32_t retransmissions; /* wolfSSL_dtls_got_timeout() calls */
    uint8_t peer_id[20];
    uint8_t peer_id_len;
    tb_wolf_flight flight; /* DTLS: the last flight this peer sent during its handshake */
    bool lingering;        /* finished: answers the peer's retransmissions with `flight` */
};

/* ---------------------------------------------------------------- suite table */

static const char *tb_wolf_cipher_name(const char *token, bool *aead, bool *dtls, const char **rest) {
    for (size_t i = 0; i < TB_COUNT(tb_wolf_ciphers); i++) {
        size_t n = strlen(tb_wolf_ciphers[i].iana);
        if (strncmp(token, tb_wolf_ciphers[i].iana, n) == 0 && (token[n] == '_' || token[n] == '\0')) {
            *aead = tb_wolf_ciphers[i].aead;
            *dtls = tb_wolf_ciphers[i].dtls;
            *rest = token + n;
            return tb_wolf_ciphers[i].name;
        }
    }
    *aead = false;
    *dtls = false;
    *rest = "?";
    return "unknown";
}

static const char *tb_wolf_mac_name(const char *rest, bool *tls12) {
    for (size_t i = 0; i < TB_COUNT(tb_wolf_macs); i++)
        if (strcmp(rest, tb_wolf_macs[i].iana) == 0) {
            *tls12 = tb_wolf_macs[i].tls12;
            return tb_wolf_macs[i].name;
        }
    *tls12 = true;
    return "unknown";
}

/* Metadata from the IANA name: TLS_<kex>_WITH_<cipher>[_<hash>] or TLS_<cipher>_<hash>. */
static void tb_wolf_suite_fill(tb_wolf_suite *s, const char *wolf_name, const char *iana, uint16_t id) {
    const char *body = strncmp(iana, "TLS_", 4) == 0 ? iana + 4 : NULL;
    const char *with = body ? strstr(body, "_WITH_") : NULL;
    bool tls13 = body && !with;
    s->kex = !body ? tb_wolf_kex_find("?", 1) : tls13 ? &tb_wolf_kex_table[0] : tb_wolf_kex_find(body, (size_t)(with - body));
    s->version = tls13 ? TB_WOLF_TLS1_3 : TB_WOLF_TLS1_2;
    snprintf(s->wolf_name, sizeof s->wolf_name, "%s", wolf_name);
    bool aead = false, dtls = false, sha2 = true;
    const char *rest = "";
    const char *cipher = body ? tb_wolf_cipher_name(tls13 ? body : with + 6, &aead, &dtls, &rest) : "unknown";
    const char *mac = body ? tb_wolf_mac_name(rest, &sha2) : "unknown";
    bool unsupported = s->kex->n_credentials == 0;
    s->info = (tb_suite_info){
        .id = id,
        .name = iana,
        .min_version = tls13 ? "TLS1.3" : aead || sha2 ? "TLS1.2" : TB_WOLF_OLDEST_TLS,
        .max_version = tls13 ? "TLS1.3" : "TLS1.2",
        .key_exchange = s->kex->key_exchange,
        .authentication = s->kex->authentication,
        .cipher = cipher,
        .mac = mac,
        .dtls = TB_WOLF_DTLS && !tls13 && dtls, /* no DTLS 1.3 in 5.5's Debian build */
        .n_credentials = s->kex->n_credentials,
        .why_unsupported = unsupported ? s->kex->why_unsupported : NULL,
    };
    memcpy(s->info.credentials, s->kex->credentials, sizeof s->info.credentials);
}

/* wolfSSL_get_ciphers lists every suite of the build (with name aliases such as ...-CCM8,
 * skipped), preference order. */
static void tb_wolf_suites_build(tb_suite_cache *c) {
    static char names[8192];
    tb_wolf_suite *s;
    if (wolfSSL_get_ciphers(names, (int)sizeof names) != WOLFSSL_SUCCESS)
        return;
    for (char *save = NULL, *name = strtok_r(names, ":", &save); name; name = strtok_r(NULL, ":", &save)) {
        unsigned char cs0 = 0, cs1 = 0;
        int flags = 0;
        if (wolfSSL_get_cipher_suite_from_name(name, &cs0, &cs1, &flags) != 0 ||
            (flags & WOLFSSL_CIPHER_SUITE_FLAG_NAMEALIAS))
            continue;
        const char *iana = wolfSSL_get_cipher_name_iana_from_suite(cs0, cs1);
        if ((s = tb_suite_cache_add(c)) == NULL)
            return;
        tb_wolf_suite_fill(s, name, iana ? iana : name, (uint16_t)(cs0 << 8 | cs1));
    }
}

_Static_assert(offsetof(tb_wolf_suite, info) == 0, "tb_wolf_suite must start with its tb_suite_info");
static tb_suite_cache tb_wolf_suites = TB_SUITE_CACHE(tb_wolf.suites, tb_wolf_suites_build);

static size_t tb_wolf_suite_count(void) { return tb_suite_cache_count(&tb_wolf_suites); }
static const tb_suite_info *tb_wolf_suite_at(size_t index) { return tb_suite_cache_at(&tb_wolf_suites, index); }

/* ---------------------------------------------------------------- describe */

static const char *tb_wolf_version_string(void) { return wolfSSL_lib_version(); }

static const struct {
    const char *key;
    bool on;
} tb_wolf_features[] = {
    {"tls1_2", true},
    {"tls1_3", TB_WOLF_TLS13},
    {"dtls", TB_WOLF_DTLS},
    {"psk", TB_WOLF_PSK},
    {"x25519", TB_WOLF_X25519},
    {"x448", TB_WOLF_X448},
    {"ed25519", TB_WOLF_ED25519},
    {"ffdhe2048", TB_WOLF_FFDHE2048},
    {"ffdhe3072", TB_WOLF_FFDHE3072},
    {"ffdhe4096", TB_WOLF_FFDHE4096},
    /* FP_ECC caches fixed-point tables: the first ECDSA sign costs ~45x a warm one. */
    {"fp_ecc", TB_WOLF_FP_ECC},
};

static void tb_wolf_describe_build(tb_json *out) {
    tb_json_kv_string(out, "version", wolfSSL_lib_version());
    tb_json_kv_uint(out, "version_number", wolfSSL_lib_version_hex());
    for (size_t i = 0; i < TB_COUNT(tb_wolf_features); i++)
        tb_json_kv_bool(out, tb_wolf_features[i].key, tb_wolf_features[i].on);
    tb_json_key(out, "groups");
    tb_json_begin_array(out);
    for (size_t i = 0; i < TB_COUNT(tb_wolf_groups); i++)
        if (tb_wolf_group_built(&tb_wolf_groups[i]))
            tb_json_string(out, tb_group_name(tb_wolf_groups[i].group));
    tb_json_end_array(out);
    tb_json_kv_uint(out, "suites", tb_wolf_suite_count());
    /* How sessions are configured here (not build options, but they shape every number). */
    tb_json_kv_string(out, "session_versions", "pinned per suite: TLS1.2 or TLS1.3");
    tb_json_kv_bool(out, "session_tickets_used", false);
    tb_json_kv_bool(out, "session_cache_used", false);
    tb_json_kv_string(out, "default_groups", "TLS1.2 ECDHE secp256r1, DHE ffdhe2048, TLS1.3 x25519");
    tb_json_kv_string(out, "caches", TB_WOLF_FP_ECC ? "warm unless the RUN option COLD_CACHES (wc_ecc_fp_free before each connection)"
                                                    : "no FP_ECC cache: COLD_CACHES changes nothing");
    tb_json_kv_string(out, "steps", "one wolfSSL_connect/accept call per turn (HANDSHAKE_TURN_n)");
}

/* ---------------------------------------------------------------- init */

/* Protocol method per [version][peer]. */
static WOLFSSL_METHOD *(*const tb_wolf_methods[TB_WOLF_N_VERSIONS][2])(void) = {
    [TB_WOLF_TLS1_2] = {[TB_PEER_CLIENT] = wolfTLSv1_2_client_method, [TB_PEER_SERVER] = wolfTLSv1_2_server_method},
    [TB_WOLF_TLS1_3] = {[TB_PEER_CLIENT] = wolfTLSv1_3_client_method, [TB_PEER_SERVER] = wolfTLSv1_3_server_method},
    [TB_WOLF_DTLS1_2] = {[TB_PEER_CLIENT] = wolfDTLSv1_2_client_method,
                         [TB_PEER_SERVER] = wolfDTLSv1_2_server_method},
};

static const char *const tb_wolf_version_names[] = {[TB_WOLF_TLS1_2] = "TLS1.2", [TB_WOLF_TLS1_3] = "TLS1.3",
                                                    [TB_WOLF_DTLS1_2] = "DTLS1.2"};

static int tb_wolf_send_cb(WOLFSSL *ssl, char *buf, int sz, void *ctx);
static int tb_wolf_recv_cb(WOLFSSL *ssl, char *buf, int sz, void *ctx);
static int tb_wolf_cookie_cb(WOLFSSL *ssl, unsigned char *buf, int sz, void *ctx);

static int tb_wolf_pem_len(const char *pem) { return (int)strlen(pem); }

/* Loads what one peer needs: the server its chain and key, the client the CA. 0 or the
 * failing call's code, with what failed in *what. */
static int tb_wolf_ctx_load(WOLFSSL_CTX *ctx, uint8_t peer, const tb_credential_pem *pem, const char **what) {
    int ret = WOLFSSL_SUCCESS;
    if (!pem)
        return 0;
    if (peer == TB_PEER_SERVER) {
        *what = "server certificate";
        ret = wolfSSL_CTX_use_certificate_chain_buffer(ctx, (const unsigned char *)pem->server_chain,
                                                       tb_wolf_pem_len(pem->server_chain));
        if (ret == WOLFSSL_SUCCESS) {
            *what = "server key";
            ret = wolfSSL_CTX_use_PrivateKey_buffer(ctx, (const unsigned char *)pem->server_key,
                                                    tb_wolf_pem_len(pem->server_key), WOLFSSL_FILETYPE_PEM);
        }
    } else {
        *what = "CA certificate";
        ret = wolfSSL_CTX_load_verify_buffer(ctx, (const unsigned char *)pem->ca, tb_wolf_pem_len(pem->ca),
                                             WOLFSSL_FILETYPE_PEM);
    }
    return ret == WOLFSSL_SUCCESS ? 0 : ret;
}

static void tb_wolf_ctx_build(tb_wolf_ctx *c, tb_wolf_version v, uint8_t peer, uint8_t cred) {
    const tb_credential_pem *pem = tb_credential_pem_find(cred);
    c->ctx = wolfSSL_CTX_new(tb_wolf_methods[v][peer]());
    if (!c->ctx) {
        snprintf(c->why, sizeof c->why, "wolfSSL_CTX_new(%s %s) failed", tb_wolf_version_names[v], tb_peer_name(peer));
        return;
    }
    wolfSSL_CTX_SetIORecv(c->ctx, tb_wolf_recv_cb);
    wolfSSL_CTX_SetIOSend(c->ctx, tb_wolf_send_cb);
    if (v == TB_WOLF_DTLS1_2) /* the default cookie reads the socket's peer: there is no socket */
        wolfSSL_CTX_SetGenCookie(c->ctx, tb_wolf_cookie_cb);
    wolfSSL_CTX_set_session_cache_mode(c->ctx, WOLFSSL_SESS_CACHE_OFF);
    tb_wolf_ctx_no_tickets(c->ctx);
    /* The client verifies the server's chain; the server asks no client certificate. */
    wolfSSL_CTX_set_verify(c->ctx, peer == TB_PEER_CLIENT && pem ? WOLFSSL_VERIFY_PEER : WOLFSSL_VERIFY_NONE, NULL);
    if (cred == TB_CREDENTIAL_PSK)
        tb_wolf_ctx_psk(c->ctx, peer);
    const char *what = "credential";
    int ret = tb_wolf_ctx_load(c->ctx, peer, pem, &what);
    if (ret != 0) {
        char text[WOLFSSL_MAX_ERROR_SZ];
        wolfSSL_ERR_error_string_n((unsigned long)ret, text, sizeof text);
        snprintf(c->why, sizeof c->why, "wolfSSL cannot load its %s (%s): %d %s", what, tb_credential_name(cred), ret,
                 text);
        wolfSSL_CTX_free(c->ctx);
        c->ctx = NULL;
    }
}

static int tb_wolf_init(char *err, size_t errlen) {
    if (tb_wolf.initialized)
        return 0;
    if (wolfSSL_Init() != WOLFSSL_SUCCESS) {
        snprintf(err, errlen, "wolfSSL_Init failed");
        return -1;
    }
    tb_wolf_suite_count(); /* the suite table, before any repetition */
    for (int v = 0; v < TB_WOLF_N_VERSIONS; v++)
        for (uint8_t peer = TB_PEER_CLIENT; peer <= TB_PEER_SERVER; peer++)
            for (uint8_t cred = 1; cred < TB_CREDENTIAL_SLOTS; cred++)
                if (tb_credential_pem_find(cred) || cred == TB_CREDENTIAL_PSK)
                    tb_wolf_ctx_build(&tb_wolf.ctx[v][peer][cred], (tb_wolf_version)v, peer, cred);
    tb_wolf.initialized = true;
    return 0;
}

static void tb_wolf_deinit(void) {
    if (!tb_wolf.initialized)
        return;
    for (int v = 0; v < TB_WOLF_N_VERSIONS; v++)
        for (int peer = 0; peer < 2; peer++)
            for (int cred = 0; cred < TB_CREDENTIAL_SLOTS; cred++) {
                wolfSSL_CTX_free(tb_wolf.ctx[v][peer][cred].ctx);
                tb_wolf.ctx[v][peer][cred].ctx = NULL;
            }
    wolfSSL_Cleanup();
    tb_wolf.initialized = false;
}

/* ---------------------------------------------------------------- I/O callbacks */

/* A datagram sent during the handshake joins the current flight (kept for a lingering resend). */
static void tb_wolf_flight_add(tb_wolf_flight *f, const char *buf, int n) {
    if (!f->open)
        *f = (tb_wolf_flight){.open = true};
    size_t used = 0;
    for (uint8_t i = 0; i < f->n; i++)
        used += f->len[i];
    if (f->too_big || f->n == TB_WOLF_FLIGHT_DATAGRAMS || used + (size_t)n > TB_WOLF_FLIGHT_BYTES) {
        f->too_big = true;
        return;
    }
    memcpy(f->bytes + used, buf, (size_t)n);
    f->len[f->n++] = (uint16_t)n;
}

static void tb_wolf_flight_resend(tb_session *s) {
    const tb_wolf_flight *f = &s->flight;
    size_t at = 0;
    for (uint8_t i = 0; i < f->n && !f->too_big; i++) {
        s->io.send(s->io.ctx, f->bytes + at, f->len[i]);
        at += f->len[i];
    }
}

/* Whether a DTLS datagram holds a handshake record (type 22): the peer retransmitted. */
static bool tb_wolf_has_handshake(const uint8_t *d, int n) {
    for (int at = 0; at + 13 <= n; at += 13 + (d[at + 11] << 8 | d[at + 12]))
        if (d[at] == 22)
            return true;
    return false;
}

/* The tb_io functions are already traced as I/O by the core. A send starts a new flight (or
 * resends one): its timer is armed at the next WANT_READ. */
static int tb_wolf_send_cb(WOLFSSL *ssl, char *buf, int sz, void *ctx) {
    (void)ssl;
    tb_session *s = ctx;
    s->deadline_ns = 0;
    int n = s->io.send(s->io.ctx, (const uint8_t *)buf, (size_t)sz);
    if (n > 0 && s->dtls && !s->done)
        tb_wolf_flight_add(&s->flight, buf, n);
    return n == TB_IO_WOULD_BLOCK ? WOLFSSL_CBIO_ERR_WANT_WRITE : n < 0 ? WOLFSSL_CBIO_ERR_GENERAL : n;
}

static int tb_wolf_recv_cb(WOLFSSL *ssl, char *buf, int sz, void *ctx) {
    (void)ssl;
    tb_session *s = ctx;
    int n = s->io.recv(s->io.ctx, (uint8_t *)buf, (size_t)sz);
    if (n > 0 && !s->done)
        s->flight.open = false; /* the peer answered: our next send starts a new flight */
    if (n > 0 && s->lingering && tb_wolf_has_handshake((const uint8_t *)buf, n))
        tb_wolf_flight_resend(s);
    return n == TB_IO_WOULD_BLOCK ? WOLFSSL_CBIO_ERR_WANT_READ : n < 0 ? WOLFSSL_CBIO_ERR_GENERAL : n;
}

/* ---------------------------------------------------------------- DTLS */

/* The cookie of a HelloVerifyRequest: SHA-256 of a per-process secret and the client's
 * transport id (the session's), cut to what wolfSSL asks. */
static int tb_wolf_cookie_cb(WOLFSSL *ssl, unsigned char *buf, int sz, void *ctx) {
    (void)ctx;
    static uint64_t secret;
    tb_session *s = wolfSSL_get_app_data(ssl);
    uint8_t in[sizeof secret + sizeof s->peer_id], md[WC_SHA256_DIGEST_SIZE];
    if (!secret)
        secret = tb_port_now_ns() | 1u; /* unpredictable enough for a benchmark's loopback */
    memcpy(in, &secret, sizeof secret);
    memcpy(in + sizeof secret, s->peer_id, s->peer_id_len);
    if (wc_Sha256Hash(in, (word32)(sizeof secret + s->peer_id_len), md) != 0)
        return GEN_COOKIE_E;
    int n = sz < (int)sizeof md ? sz : (int)sizeof md;
    memcpy(buf, md, (size_t)n);
    return n;
}

/* RUN timeouts are ms; wolfSSL's are whole seconds (at least 1). */
static int tb_wolf_seconds(uint16_t ms) { return ms ? (ms + 999) / 1000 : 0; }

static int tb_wolf_configure_dtls(tb_session *s, const tb_conn_config *cfg) {
    wolfSSL_dtls_set_using_nonblock(s->ssl, 1);
    int ret = WOLFSSL_SUCCESS;
    if (cfg->dtls_timeout_max_ms)
        ret = wolfSSL_dtls_set_timeout_max(s->ssl, tb_wolf_seconds(cfg->dtls_timeout_max_ms));
    if (ret == WOLFSSL_SUCCESS && cfg->dtls_timeout_min_ms)
        ret = wolfSSL_dtls_set_timeout_init(s->ssl, tb_wolf_seconds(cfg->dtls_timeout_min_ms));
    return ret;
}

/* Before a turn: an expired flight timer resends the flight (counted, traced). */
static void tb_wolf_check_timer(tb_session *s) {
    if (!s->dtls || s->done || s->deadline_ns == 0 || tb_port_now_ns() < s->deadline_ns)
        return;
    s->deadline_ns = 0;
    s->retransmissions++;
    tb_instant(TB_L_RETRANSMIT, s->retransmissions);
    wolfSSL_dtls_got_timeout(s->ssl);
}

static void tb_wolf_arm_timer(tb_session *s) {
    if (s->dtls && s->deadline_ns == 0)
        s->deadline_ns = tb_port_now_ns() + (uint64_t)wolfSSL_dtls_get_current_timeout(s->ssl) * 1000000000u;
}

static uint32_t tb_wolf_timeout_ms(tb_session *s) {
    if (!s->dtls || s->done || s->deadline_ns == 0)
        return TB_NO_TIMER;
    uint64_t now = tb_port_now_ns();
    return now >= s->deadline_ns ? 0 : (uint32_t)((s->deadline_ns - now + 999999u) / 1000000u);
}

static uint32_t tb_wolf_retransmissions(tb_session *s) { return s->retransmissions; }

/* ---------------------------------------------------------------- sessions */

static tb_group_support tb_wolf_group_support(uint16_t group) {
    const tb_wolf_group *g = tb_wolf_group_find(group);
    return !g ? TB_GROUP_UNKNOWN : tb_wolf_group_built(g) ? TB_GROUP_READY : TB_GROUP_NOT_BUILT;
}

/* wolfSSL before 5.7.0 fails ECDHE-PSK over X25519/X448 in the client ("Bad ECC Peer Key"):
 * refused up front, by name, instead of failing in the handshake. */
static const char *tb_wolf_group_limit(const void *suite_row, uint16_t group) {
    const tb_wolf_suite *suite = suite_row;
    const tb_wolf_group *g = tb_wolf_group_find(group);
    if (suite->kex->no_montgomery && g && g->family == TB_WOLF_FAMILY_MONT)
        return "a NIST curve (before wolfSSL 5.7.0, ECDHE-PSK over X25519/X448 fails: the curve OID is not set, "
               "wolfSSL PR #7132)";
    return NULL;
}

/* Credentials are loaded into per-(version, peer) contexts: checked in session_new. */
static const tb_backend_rules tb_wolf_rules = {
    .library_name = "wolfSSL",
    .suites = &tb_wolf_suites,
    .initialized = &tb_wolf.initialized,
    .group_support = tb_wolf_group_support,
    .group_limit = tb_wolf_group_limit,
};

/* Group settings on one SSL object. TLS 1.3: the one group on both peers, so the client's
 * only key share is in it (no HelloRetryRequest). TLS 1.2 ECDHE: the client offers only
 * that curve. DHE: the server's parameters are the RFC 7919 group, and the client offers
 * only it (wolfSSL's server would otherwise pick from the client's FFDHE list). */
static int tb_wolf_set_group(WOLFSSL *ssl, uint8_t peer, const tb_wolf_suite *suite, const tb_wolf_group *g) {
    if (!g)
        return WOLFSSL_SUCCESS;
    if (suite->version == TB_WOLF_TLS1_3) {
        int groups[1] = {g->group};
        return wolfSSL_set_groups(ssl, groups, 1);
    }
    int ret = wolfSSL_UseSupportedCurve(ssl, g->group);
    if (ret == WOLFSSL_SUCCESS && g->family == TB_WOLF_FAMILY_FF && peer == TB_PEER_SERVER) {
        const DhParams *dh = g->ffdhe();
        ret = wolfSSL_SetTmpDH(ssl, dh->p, (int)dh->p_len, dh->g, (int)dh->g_len);
    }
    return ret;
}

static void tb_wolf_session_free(tb_session *s) {
    if (!s)
        return;
    wolfSSL_free(s->ssl);
    free(s);
}

static tb_session *tb_wolf_session_new(uint8_t peer, const tb_conn_config *cfg, tb_io io, char *err, size_t errlen) {
    uint16_t group = 0;
    const tb_wolf_suite *suite = tb_backend_check(&tb_wolf_rules, cfg, &group, err, errlen);
    if (!suite)
        return NULL;
    const tb_wolf_group *g = group ? tb_wolf_group_find(group) : NULL;
    bool dtls = cfg->protocol == TB_PROTOCOL_KIND_DTLS;
    if (dtls && (cfg->dtls_mtu || cfg->max_fragment)) {
        snprintf(err, errlen, "this wolfSSL build has no wolfSSL_dtls_set_mtu; max_fragment is not wired yet");
        return NULL;
    }
    const tb_wolf_ctx *c = &tb_wolf.ctx[dtls ? TB_WOLF_DTLS1_2 : suite->version][peer][cfg->credential];
    if (!c->ctx) {
        snprintf(err, errlen, "credential %s: %s", tb_credential_name(cfg->credential), c->why);
        return NULL;
    }
    /* Cold caches: what a device's first handshake after boot pays. Here, in setup, so the
     * freeing itself is not in the handshake. */
    if (cfg->options & TB_OPTION_COLD_CACHES)
        tb_wolf_fp_cache_free();
    tb_session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->io = io;
    s->peer = peer;
    s->dtls = dtls;
    s->peer_id_len = tb_peer_id_copy(s->peer_id, sizeof s->peer_id, cfg);
    s->ssl = wolfSSL_new(c->ctx);
    const char *what = "wolfSSL_new";
    int ret = s->ssl ? WOLFSSL_SUCCESS : WOLFSSL_FAILURE;
    if (ret == WOLFSSL_SUCCESS) {
        what = "wolfSSL_set_cipher_list";
        ret = wolfSSL_set_cipher_list(s->ssl, suite->wolf_name);
    }
    if (ret == WOLFSSL_SUCCESS) {
        what = "the group";
        ret = tb_wolf_set_group(s->ssl, peer, suite, g);
    }
    if (ret == WOLFSSL_SUCCESS && dtls) {
        what = "the DTLS settings";
        ret = tb_wolf_configure_dtls(s, cfg);
    }
    if (ret == WOLFSSL_SUCCESS && peer == TB_PEER_CLIENT && tb_credential_pem_find(cfg->credential)) {
        what = "wolfSSL_check_domain_name";
        ret = wolfSSL_check_domain_name(s->ssl, TB_CREDENTIAL_HOSTNAME);
    }
    if (ret != WOLFSSL_SUCCESS) {
        snprintf(err, errlen, "configuring the %s for %s failed: %s returned %d", tb_peer_name(peer), suite->info.name,
                 what, ret);
        tb_wolf_session_free(s);
        return NULL;
    }
    wolfSSL_SetIOReadCtx(s->ssl, s);
    wolfSSL_SetIOWriteCtx(s->ssl, s);
    wolfSSL_set_app_data(s->ssl, s);
    return s;
}

/* ---------------------------------------------------------------- handshake and records */

static int (*const tb_wolf_handshake_call[2])(WOLFSSL *) = {
    [TB_PEER_CLIENT] = wolfSSL_connect,
    [TB_PEER_SERVER] = wolfSSL_accept,
};

/* wolfSSL_get_error's "come back later" answers. */
static bool tb_wolf_would_block(int err) { return err == WOLFSSL_ERROR_WANT_READ || err == WOLFSSL_ERROR_WANT_WRITE; }

/* One turn: connect/accept runs until it needs the peer's bytes, or the handshake is over.
 * STOP value: 0 when done, else wolfSSL_get_error() (WANT_READ = 2, or a negative code). */
static tb_step_result tb_wolf_step(tb_session *s, int32_t *lib_error) {
    if (s->done)
        return TB_STEP_DONE;
    tb_wolf_check_timer(s);
    uint16_t label = tb_wolfssl_turn_label(s->turns++);
    tb_begin(label);
    int ret = tb_wolf_handshake_call[s->peer](s->ssl);
    int err = ret == WOLFSSL_SUCCESS ? 0 : wolfSSL_get_error(s->ssl, ret);
    tb_end(label, (uint64_t)(int64_t)err);
    s->done = ret == WOLFSSL_SUCCESS;
    if (s->done)
        return TB_STEP_DONE;
    if (tb_wolf_would_block(err)) {
        tb_wolf_arm_timer(s);
        return TB_STEP_WANT_READ;
    }
    *lib_error = err;
    return TB_STEP_ERROR;
}

/* wolfSSL's byte count / error -> the backend contract. */
static int tb_wolf_io_result(tb_session *s, int ret, int32_t *lib_error) {
    if (ret > 0)
        return ret;
    int err = wolfSSL_get_error(s->ssl, ret);
    if (tb_wolf_would_block(err))
        return TB_IO_WOULD_BLOCK;
    *lib_error = err;
    return -1;
}

static int tb_wolf_write(tb_session *s, const uint8_t *buf, size_t len, int32_t *lib_error) {
    return tb_wolf_io_result(s, wolfSSL_write(s->ssl, buf, (int)len), lib_error);
}

static int tb_wolf_read(tb_session *s, uint8_t *buf, size_t len, int32_t *lib_error) {
    return tb_wolf_io_result(s, wolfSSL_read(s->ssl, buf, (int)len), lib_error);
}

/* Sends close_notify; not waiting for the peer's (SHUTDOWN_NOT_DONE) is success here. */
static int tb_wolf_close_notify(tb_session *s, int32_t *lib_error) {
    int ret = wolfSSL_shutdown(s->ssl);
    if (ret == WOLFSSL_SUCCESS || ret == WOLFSSL_SHUTDOWN_NOT_DONE)
        return 0;
    int err = wolfSSL_get_error(s->ssl, ret);
    if (tb_wolf_would_block(err))
        return TB_IO_WOULD_BLOCK;
    *lib_error = err;
    return -1;
}

/* wolfSSL's codes are negative ints; its error-string function takes the magnitude too. */
static void tb_wolf_error_text(int32_t code, char *buf, size_t len) {
    wolfSSL_ERR_error_string_n((unsigned long)(long)code, buf, (unsigned long)len);
}

/* ---------------------------------------------------------------- test hooks */

const char *tb_wolfssl_session_curve(tb_session *s) { return wolfSSL_get_curve_name(s->ssl); }
const char *tb_wolfssl_session_version(tb_session *s) { return wolfSSL_get_version(s->ssl); }
int tb_wolfssl_session_suite(tb_session *s) { return wolfSSL_get_current_cipher_suite(s->ssl); }

static void tb_wolf_linger(tb_session *s) { s->lingering = s->dtls; }

const tb_backend tb_linked_backend = {
    .name = "wolfssl",
    .library_name = "wolfSSL",
    .version = tb_wolf_version_string,
    .step_granularity = "turn",
    .describe_build = tb_wolf_describe_build,
    .suite_count = tb_wolf_suite_count,
    .suite_at = tb_wolf_suite_at,
    .init = tb_wolf_init,
    .deinit = tb_wolf_deinit,
    .session_new = tb_wolf_session_new,
    .step = tb_wolf_step,
    .write = tb_wolf_write,
    .read = tb_wolf_read,
    .close_notify = tb_wolf_close_notify,
    .session_free = tb_wolf_session_free,
    .error_text = tb_wolf_error_text,
    .timeout_ms = tb_wolf_timeout_ms,
    .retransmissions = tb_wolf_retransmissions,
    .linger = tb_wolf_linger,
};
