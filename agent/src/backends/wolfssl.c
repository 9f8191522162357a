/* SPDX-License-Identifier: Apache-2.0 */
/* The wolfSSL 5.x backend (Debian 12's 5.5, the cached 5.7): suite table, per-session
 * configuration (pinned version, forced suite, group and credentials, the RUN options) and
 * the turn/record calls. Crypto operations inside the turns are traced by wolfssl_crypto.c
 * (link-time wrappers, lists in wolfssl_wrap*.h). What differs between builds is read from
 * the build's options below, as constants.
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
#include "tlsbench/pace.h"
#include "tlsbench/trace.h"
#include "wolfssl_internal.h"

#define TB_WOLF_MAX_SUITES 128
/* The connection's session on its WOLFSSL: ex_data slot 0, what wolfSSL_set_app_data uses
 * (which only OPENSSL_EXTRA builds declare; a device build has HAVE_EX_DATA alone). */
#define TB_WOLF_SESSION_SLOT 0

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
/* A build without a session cache (a device's: wolfSSL's settings.h implies NO_SESSION_CACHE
 * from NO_ASN_TIME) keeps no session to resume: the session calls become no-ops and a RESUME
 * configuration fails as not resumed, with that reason, instead of the build failing. */
#ifdef NO_SESSION_CACHE
static long tb_wolf_cache_mode(WOLFSSL_CTX *ctx, long mode) { return (void)ctx, mode; }
static WOLFSSL_SESSION *tb_wolf_session_of(WOLFSSL *ssl) { return (void)ssl, NULL; }
#else
#define tb_wolf_cache_mode wolfSSL_CTX_set_session_cache_mode
#define tb_wolf_session_of wolfSSL_get1_session
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
#ifdef WOLFSSL_DTLS13
#define TB_WOLF_DTLS13 1
#else
#define TB_WOLF_DTLS13 0
#endif
/* Connection IDs: --enable-dtlscid; wolfSSL 5.7 has them for DTLS 1.3 only (RFC 9147). */
#ifdef WOLFSSL_DTLS_CID
#define TB_WOLF_CID 1
#else
#define TB_WOLF_CID 0
#endif
/* Raw public keys (RFC 7250): --enable-rpk (part of --enable-all). */
#ifdef HAVE_RPK
#define TB_WOLF_RPK 1
#else
#define TB_WOLF_RPK 0
#endif
#ifdef WOLFSSL_HAVE_KYBER
#define TB_WOLF_KYBER 1
#else
#define TB_WOLF_KYBER 0
#endif
#ifdef HAVE_SESSION_TICKET
#define TB_WOLF_TICKETS 1
#else
#define TB_WOLF_TICKETS 0
#endif
#ifdef HAVE_ECC_BRAINPOOL
#define TB_WOLF_BRAINPOOL 1
#else
#define TB_WOLF_BRAINPOOL 0
#endif
/* The smallest curve wolfSSL's TLS accepts (bits): --with-eccminsz (5.7 cache: 192). */
#define TB_WOLF_ECC_MIN_BITS ECC_MIN_KEY_SZ
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
static void tb_wolf_ctx_no_tls12_tickets(WOLFSSL_CTX *ctx) { wolfSSL_CTX_NoTicketTLSv12(ctx); }
static int tb_wolf_use_ticket(WOLFSSL *ssl) { return wolfSSL_UseSessionTicket(ssl); }
static int tb_wolf_ticket_cb(WOLFSSL *ssl, const unsigned char *ticket, int len, void *ctx);
static int tb_wolf_watch_tickets(WOLFSSL *ssl, void *s) {
    return wolfSSL_set_SessionTicket_cb(ssl, tb_wolf_ticket_cb, s);
}
#else
static void tb_wolf_ctx_no_tickets(WOLFSSL_CTX *ctx) { (void)ctx; }
static void tb_wolf_ctx_no_tls12_tickets(WOLFSSL_CTX *ctx) { (void)ctx; }
static int tb_wolf_use_ticket(WOLFSSL *ssl) { (void)ssl; return WOLFSSL_FAILURE; }
static int tb_wolf_watch_tickets(WOLFSSL *ssl, void *s) { (void)ssl; (void)s; return WOLFSSL_FAILURE; }
#endif
#if TB_WOLF_DTLS13
static WOLFSSL_METHOD *tb_wolf_dtls13_client(void) { return wolfDTLSv1_3_client_method(); }
static WOLFSSL_METHOD *tb_wolf_dtls13_server(void) { return wolfDTLSv1_3_server_method(); }
/* A DTLS 1.3 ClientHello with a post-quantum key share spans datagrams: the server must take
 * it in fragments (it stalls otherwise). */
static int tb_wolf_dtls13_server_setup(WOLFSSL *ssl) { return wolfSSL_dtls13_allow_ch_frag(ssl, 1); }
#else
#define tb_wolf_dtls13_client NULL
#define tb_wolf_dtls13_server NULL
static int tb_wolf_dtls13_server_setup(WOLFSSL *ssl) { (void)ssl; return WOLFSSL_FAILURE; }
#endif
#if defined(OPENSSL_EXTRA) || defined(WOLFSSL_SET_CIPHER_BYTES)
/* An OpenSSL-compatible build reads a cipher list as OpenSSL does: a TLS 1.3 name replaces the
 * TLS 1.3 suites only, so the ClientHello still offered every TLS 1.2 suite of the build (51
 * suites, 104 bytes, in 5.7.2's). The suite's two bytes set exactly that one. */
static int tb_wolf_set_suite(WOLFSSL *ssl, uint16_t id, const char *name) {
    (void)name;
    const unsigned char bytes[2] = {(unsigned char)(id >> 8), (unsigned char)id};
    return wolfSSL_set_cipher_list_bytes(ssl, bytes, (int)sizeof bytes);
}
#else
static int tb_wolf_set_suite(WOLFSSL *ssl, uint16_t id, const char *name) {
    (void)id;
    return wolfSSL_set_cipher_list(ssl, name);
}
#endif
#if TB_WOLF_CID
/* Each peer asks the other to put a CID into the records it sends (RFC 9147 section 9): 2
 * bytes, wolfSSL 5.7's largest (DTLS_CID_MAX_SIZE); the values only need to differ. */
static int tb_wolf_use_cid(WOLFSSL *ssl, uint8_t peer) {
    static unsigned char cid[2][2] = {{'c', 0}, {'s', 0}};
    int ret = wolfSSL_dtls_cid_use(ssl);
    return ret == WOLFSSL_SUCCESS ? wolfSSL_dtls_cid_set(ssl, cid[peer], sizeof cid[peer]) : ret;
}
#else
static int tb_wolf_use_cid(WOLFSSL *ssl, uint8_t peer) { (void)ssl, (void)peer; return WOLFSSL_FAILURE; }
#endif
#if TB_WOLF_RPK
/* RPK: both peers send and accept only raw public keys. */
static int tb_wolf_ctx_rpk_types(WOLFSSL_CTX *ctx) {
    const char rpk[] = {WOLFSSL_CERT_TYPE_RPK};
    int ret = wolfSSL_CTX_set_client_cert_type(ctx, rpk, sizeof rpk);
    return ret == WOLFSSL_SUCCESS ? wolfSSL_CTX_set_server_cert_type(ctx, rpk, sizeof rpk) : ret;
}
/* The peer's SubjectPublicKeyInfo (PEM) as its "certificate": wolfSSL takes a raw public key as
 * a DER certificate buffer. */
static int tb_wolf_ctx_use_rpk(WOLFSSL_CTX *ctx, const char *spki_pem) {
    unsigned char der[512];
    int n = wc_PubKeyPemToDer((const unsigned char *)spki_pem, (int)strlen(spki_pem), der, (int)sizeof der);
    return n < 0 ? n : wolfSSL_CTX_use_certificate_buffer(ctx, der, n, WOLFSSL_FILETYPE_ASN1);
}
#else
static int tb_wolf_ctx_rpk_types(WOLFSSL_CTX *ctx) { (void)ctx; return WOLFSSL_FAILURE; }
static int tb_wolf_ctx_use_rpk(WOLFSSL_CTX *ctx, const char *spki_pem) { (void)ctx, (void)spki_pem; return WOLFSSL_FAILURE; }
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
static const char *tb_wolf_session_suite_name(WOLFSSL *ssl);
/* TLS 1.3 external PSK: the same key and identity, for the session's pinned suite. */
static unsigned int tb_wolf_psk13_client(WOLFSSL *ssl, const char *hint, char *identity, unsigned int id_max,
                                         unsigned char *key, unsigned int key_max, const char **suite) {
    (void)hint;
    *suite = tb_wolf_session_suite_name(ssl);
    return tb_psk_client(identity, id_max, key, key_max);
}
static unsigned int tb_wolf_psk13_server(WOLFSSL *ssl, const char *identity, unsigned char *key,
                                         unsigned int key_max, const char **suite) {
    *suite = tb_wolf_session_suite_name(ssl);
    return tb_psk_server(identity, key, key_max);
}
static void tb_wolf_ssl_psk13(WOLFSSL *ssl, uint8_t peer, bool psk_only) {
    if (peer == TB_PEER_CLIENT)
        wolfSSL_set_psk_client_tls13_callback(ssl, tb_wolf_psk13_client);
    else
        wolfSSL_set_psk_server_tls13_callback(ssl, tb_wolf_psk13_server);
    if (psk_only) /* psk_ke: no (EC)DHE on either side */
        wolfSSL_no_dhe_psk(ssl);
}
#else
static void tb_wolf_ctx_psk(WOLFSSL_CTX *ctx, uint8_t peer) { (void)ctx; (void)peer; }
static void tb_wolf_ssl_psk13(WOLFSSL *ssl, uint8_t peer, bool psk_only) { (void)ssl, (void)peer, (void)psk_only; }
#endif

/* ---------------------------------------------------------------- turns */

/* The peer's n-th connect/accept call (n from 0); later calls share the last label. */
static const uint16_t tb_wolf_turn_labels[] = {
    TB_L_HANDSHAKE_TURN_1, TB_L_HANDSHAKE_TURN_2, TB_L_HANDSHAKE_TURN_3, TB_L_HANDSHAKE_TURN_4};

uint16_t tb_wolfssl_turn_label(uint32_t turn) {
    return tb_wolf_turn_labels[turn < TB_COUNT(tb_wolf_turn_labels) ? turn : TB_COUNT(tb_wolf_turn_labels) - 1];
}

/* ---------------------------------------------------------------- key exchanges */

/* DTLS versions are "versions" here only for their contexts (DTLS methods); suites are TLS
 * 1.2/1.3 and run over DTLS 1.2/1.3 respectively. */
typedef enum tb_wolf_version {
    TB_WOLF_TLS1_2,
    TB_WOLF_TLS1_3,
    TB_WOLF_DTLS1_2,
    TB_WOLF_DTLS1_3,
    TB_WOLF_N_VERSIONS
} tb_wolf_version;

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

/* A build with raw public keys runs ECDSA and TLS 1.3 suites with rpk-ecdsa too. */
#if TB_WOLF_RPK
#define TB_WOLF_RPK_CRED , TB_CREDENTIAL_RPK_ECDSA
#else
#define TB_WOLF_RPK_CRED
#endif
#define TB_RSA_CREDS TB_CREDS(TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072)
#define TB_ECDSA_CREDS TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384 TB_WOLF_RPK_CRED)
/* TLS 1.3: every certificate credential the build parses, and the external PSK. */
#if TB_WOLF_ED25519
#define TB_TLS13_ED25519 TB_CREDENTIAL_ED25519,
#else
#define TB_TLS13_ED25519
#endif
#if TB_WOLF_PSK
#define TB_TLS13_PSK TB_CREDENTIAL_PSK
#else
#define TB_TLS13_PSK
#endif
#define TB_TLS13_CREDS                                                                                   \
    TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384, TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072, \
             TB_TLS13_ED25519 TB_TLS13_PSK TB_WOLF_RPK_CRED)
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

/* Weierstrass curves, Montgomery curves (X25519, X448), finite fields, post-quantum KEMs
 * (Kyber code points, alone or with a NIST curve). */
typedef enum tb_wolf_family {
    TB_WOLF_FAMILY_EC,
    TB_WOLF_FAMILY_MONT,
    TB_WOLF_FAMILY_FF,
    TB_WOLF_FAMILY_KEM
} tb_wolf_family;

/* Where wolfSSL offers a group: small curves and brainpool in TLS 1.2 only (no TLS 1.3 code
 * points for them in wolfSSL), Kyber in TLS 1.3 only. */
enum { TB_WOLF_IN_TLS12 = 1, TB_WOLF_IN_TLS13 = 2, TB_WOLF_IN_BOTH = 3 };

typedef struct tb_wolf_group {
    uint16_t group; /* TB_GROUP_* (IANA, or wolfSSL's Kyber code points) = WOLFSSL_ECC_* / _FFDHE_* / _KYBER_* */
    tb_wolf_family family;
    int ecc_id;     /* Weierstrass curves: the wolfCrypt curve id, checked at run time */
    bool built;     /* X25519/X448/FFDHE/Kyber: compiled in */
    const DhParams *(*ffdhe)(void);
    uint8_t versions; /* TB_WOLF_IN_* */
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

_Static_assert(TB_GROUP_SECP192R1 == WOLFSSL_ECC_SECP192R1 && TB_GROUP_BRAINPOOLP256R1 == WOLFSSL_ECC_BRAINPOOLP256R1,
               "wolfSSL's small-curve values are the IANA ones");

static const tb_wolf_group tb_wolf_groups[] = {
    {TB_GROUP_SECP256R1, TB_WOLF_FAMILY_EC, ECC_SECP256R1, true, NULL, TB_WOLF_IN_BOTH},
    {TB_GROUP_SECP384R1, TB_WOLF_FAMILY_EC, ECC_SECP384R1, true, NULL, TB_WOLF_IN_BOTH},
    {TB_GROUP_SECP521R1, TB_WOLF_FAMILY_EC, ECC_SECP521R1, true, NULL, TB_WOLF_IN_BOTH},
    {TB_GROUP_X25519, TB_WOLF_FAMILY_MONT, 0, TB_WOLF_X25519, NULL, TB_WOLF_IN_BOTH},
    {TB_GROUP_X448, TB_WOLF_FAMILY_MONT, 0, TB_WOLF_X448, NULL, TB_WOLF_IN_BOTH},
    {TB_GROUP_SECP192R1, TB_WOLF_FAMILY_EC, ECC_SECP192R1, true, NULL, TB_WOLF_IN_TLS12},
    {TB_GROUP_SECP224R1, TB_WOLF_FAMILY_EC, ECC_SECP224R1, true, NULL, TB_WOLF_IN_TLS12},
    {TB_GROUP_BRAINPOOLP256R1, TB_WOLF_FAMILY_EC, ECC_BRAINPOOLP256R1, TB_WOLF_BRAINPOOL, NULL, TB_WOLF_IN_TLS12},
    {TB_GROUP_BRAINPOOLP384R1, TB_WOLF_FAMILY_EC, ECC_BRAINPOOLP384R1, TB_WOLF_BRAINPOOL, NULL, TB_WOLF_IN_TLS12},
    {TB_GROUP_BRAINPOOLP512R1, TB_WOLF_FAMILY_EC, ECC_BRAINPOOLP512R1, TB_WOLF_BRAINPOOL, NULL, TB_WOLF_IN_TLS12},
    {TB_GROUP_FFDHE2048, TB_WOLF_FAMILY_FF, 0, TB_WOLF_FFDHE2048, TB_FFDHE2048_GET, TB_WOLF_IN_BOTH},
    {TB_GROUP_FFDHE3072, TB_WOLF_FAMILY_FF, 0, TB_WOLF_FFDHE3072, TB_FFDHE3072_GET, TB_WOLF_IN_BOTH},
    {TB_GROUP_FFDHE4096, TB_WOLF_FAMILY_FF, 0, TB_WOLF_FFDHE4096, TB_FFDHE4096_GET, TB_WOLF_IN_BOTH},
    /* Kyber code points (liboqs' numbering), ML-KEM arithmetic when built with ml-kem */
    {TB_GROUP_KYBER_LEVEL1, TB_WOLF_FAMILY_KEM, 0, TB_WOLF_KYBER, NULL, TB_WOLF_IN_TLS13},
    {TB_GROUP_KYBER_LEVEL3, TB_WOLF_FAMILY_KEM, 0, TB_WOLF_KYBER, NULL, TB_WOLF_IN_TLS13},
    {TB_GROUP_KYBER_LEVEL5, TB_WOLF_FAMILY_KEM, 0, TB_WOLF_KYBER, NULL, TB_WOLF_IN_TLS13},
    {TB_GROUP_P256_KYBER_LEVEL1, TB_WOLF_FAMILY_KEM, 0, TB_WOLF_KYBER, NULL, TB_WOLF_IN_TLS13},
    {TB_GROUP_P384_KYBER_LEVEL3, TB_WOLF_FAMILY_KEM, 0, TB_WOLF_KYBER, NULL, TB_WOLF_IN_TLS13},
    {TB_GROUP_P521_KYBER_LEVEL5, TB_WOLF_FAMILY_KEM, 0, TB_WOLF_KYBER, NULL, TB_WOLF_IN_TLS13},
};

_Static_assert(offsetof(tb_wolf_group, group) == 0, "tb_row_find reads a group row's id first");
static const tb_wolf_group *tb_wolf_group_find(uint16_t group) {
    return tb_row_find(tb_wolf_groups, TB_COUNT(tb_wolf_groups), sizeof tb_wolf_groups[0], group);
}

/* A Weierstrass curve is usable when wolfCrypt has it and TLS takes its size (ECC_MIN_KEY_SZ). */
static bool tb_wolf_group_built(const tb_wolf_group *g) {
    if (!g->ecc_id)
        return g->built;
    int idx = wc_ecc_get_curve_idx(g->ecc_id);
    return g->built && idx >= 0 && wc_ecc_get_curve_size_from_id(g->ecc_id) * 8 >= TB_WOLF_ECC_MIN_BITS;
}

/* The standard ML-KEM code points: this wolfSSL offers post-quantum groups only at Kyber's. */
static const char *tb_wolf_group_why(uint16_t group) {
    bool ml_kem = tb_group_family(group) == TB_GROUP_FAMILY_KEM || tb_group_family(group) == TB_GROUP_FAMILY_HYBRID;
    if (!ml_kem)
        return NULL;
    return TB_WOLF_KYBER ? "this wolfSSL has post-quantum groups only at pre-standard Kyber code points "
                           "(KYBER_LEVEL1/3/5, P256/P384/P521_KYBER_LEVEL*), not ML-KEM's: no interoperability"
                         : "this wolfSSL build has no post-quantum groups";
}

/* ---------------------------------------------------------------- process state */

typedef struct tb_wolf_suite {
    tb_suite_info info;
    const tb_wolf_kex *kex;
    tb_wolf_version version;
    char wolf_name[48]; /* wolfSSL's own name, for wolfSSL_set_cipher_list */
} tb_wolf_suite;

/* How a context treats sessions: PLAIN keeps none (every connection a full handshake);
 * TICKETS (RESUME) sends and takes session tickets; SESSION_ID (RESUME with RESUME_ID) keeps
 * TLS 1.2 sessions in the server's cache, no tickets. Tickets and the cache are per context. */
typedef enum tb_wolf_mode { TB_WOLF_MODE_PLAIN, TB_WOLF_MODE_TICKETS, TB_WOLF_MODE_SESSION_ID, TB_WOLF_N_MODES } tb_wolf_mode;

/* One context per (mode, version, peer, credential), shared by every session: certificates
 * and keys are parsed once, outside any repetition (PLAIN ones at init; the RESUME ones at
 * their first use, in a RUN's untraced first connection). */
typedef struct tb_wolf_ctx {
    WOLFSSL_CTX *ctx;
    bool built; /* tried: ctx, or why not */
    char why[160]; /* why ctx is NULL */
} tb_wolf_ctx;

static struct {
    bool initialized;
    tb_wolf_suite suites[TB_WOLF_MAX_SUITES];
    tb_wolf_ctx ctx[TB_WOLF_N_MODES][TB_WOLF_N_VERSIONS][2][TB_CREDENTIAL_SLOTS];
    WOLFSSL_SESSION *resume; /* RESUME: the session the client's last connection left */
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
    const tb_wolf_suite *suite;
    uint16_t options;  /* the RUN's (TB_OPTION_*) */
    bool first_connection; /* RESUME: the RUN's first connection, resuming nothing */
    bool ticket;       /* a NewSessionTicket arrived (RESUME client) */
    uint32_t turns; /* connect/accept calls so far */
    /* Paced (tlsbench/pace.h): the device's turns, which over memory always send or finish.
     * Over a network a flight arrives datagram by datagram and a call may only read: it
     * continues the same turn, so its budget carries over as an mbed TLS state's does. */
    uint32_t paced_turns;
    bool turn_sent; /* the current call sent */
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

/* Suites a version lists but does not run as forced (the conformance suite's handshakes
 * found them): listed as unsupported, with what happens instead. */
typedef struct tb_wolf_broken {
    uint16_t id;
    const char *why;
} tb_wolf_broken;

#if LIBWOLFSSL_VERSION_HEX >= 0x05007000 && LIBWOLFSSL_VERSION_HEX <= 0x05007002
#define TB_WOLF_NULL13_WHY "wolfSSL 5.7.2 negotiates TLS_AES_128_CCM_8_SHA256 instead when this integrity-only suite is forced"
#define TB_WOLF_DHE_PSK_CCM_WHY "wolfSSL 5.7.2's server does not take it (can't match cipher suite, -501)"
static const tb_wolf_broken tb_wolf_broken_suites[] = {
    {0xC0B4, TB_WOLF_NULL13_WHY},     {0xC0B5, TB_WOLF_NULL13_WHY},
    {0xC0A6, TB_WOLF_DHE_PSK_CCM_WHY}, {0xC0A7, TB_WOLF_DHE_PSK_CCM_WHY},
    {0, NULL},
};
#else
static const tb_wolf_broken tb_wolf_broken_suites[] = {{0, NULL}};
#endif

static const char *tb_wolf_broken_why(uint16_t id) {
    for (const tb_wolf_broken *b = tb_wolf_broken_suites; b->id; b++)
        if (b->id == id)
            return b->why;
    return NULL;
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
    const char *broken = tb_wolf_broken_why(id);
    bool unsupported = s->kex->n_credentials == 0 || broken;
    s->info = (tb_suite_info){
        .id = id,
        .name = iana,
        .min_version = tls13 ? "TLS1.3" : aead || sha2 ? "TLS1.2" : TB_WOLF_OLDEST_TLS,
        .max_version = tls13 ? "TLS1.3" : "TLS1.2",
        .key_exchange = s->kex->key_exchange,
        .authentication = s->kex->authentication,
        .cipher = cipher,
        .mac = mac,
        .dtls = TB_WOLF_DTLS && dtls && (!tls13 || TB_WOLF_DTLS13), /* TLS 1.3 suites: over DTLS 1.3 */
        .n_credentials = unsupported ? 0 : s->kex->n_credentials,
        .why_unsupported = broken ? broken : unsupported ? s->kex->why_unsupported : NULL,
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
    {"dtls1_3", TB_WOLF_DTLS13},
    {"connection_id", TB_WOLF_CID && TB_WOLF_DTLS13},
    {"raw_public_keys", TB_WOLF_RPK},
    {"kyber", TB_WOLF_KYBER},
    {"session_tickets", TB_WOLF_TICKETS},
    {"brainpool", TB_WOLF_BRAINPOOL},
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
    tb_json_kv_uint(out, "ecc_min_bits", TB_WOLF_ECC_MIN_BITS);
    tb_json_kv_string(out, "post_quantum_groups", TB_WOLF_KYBER ? "Kyber code points (570-573, 12090-12093), "
                                                                   "not ML-KEM's: no interoperability"
                                                                 : "none");
    tb_json_kv_string(out, "session_tickets_used", "with RESUME only (TLS 1.2 RESUME_ID: none)");
    tb_json_kv_string(out, "session_cache_used", "with RESUME_ID only (the server's session-ID cache)");
    tb_json_kv_string(out, "client_certificate", "with MUTUAL_AUTH only (same type as the server's, same CA)");
    tb_json_kv_bool(out, "dh_key_test", false); /* wolfSSL_SetEnableDhKeyTest(ssl, 0) after SetTmpDH */
    tb_json_kv_string(out, "default_groups", "TLS1.2 ECDHE secp256r1, DHE ffdhe2048, TLS1.3 x25519");
    tb_json_kv_string(out, "caches", TB_WOLF_FP_ECC ? "warm unless the RUN option COLD_CACHES (wc_ecc_fp_free before each connection)"
                                                    : "no FP_ECC cache: COLD_CACHES changes nothing");
    tb_json_kv_string(out, "steps", "one wolfSSL_connect/accept call per turn (HANDSHAKE_TURN_n)");
}

/* ---------------------------------------------------------------- init */

/* Protocol method per [version][peer]; NULL where the build lacks the version. */
static WOLFSSL_METHOD *(*const tb_wolf_methods[TB_WOLF_N_VERSIONS][2])(void) = {
    [TB_WOLF_TLS1_2] = {[TB_PEER_CLIENT] = wolfTLSv1_2_client_method, [TB_PEER_SERVER] = wolfTLSv1_2_server_method},
    [TB_WOLF_TLS1_3] = {[TB_PEER_CLIENT] = wolfTLSv1_3_client_method, [TB_PEER_SERVER] = wolfTLSv1_3_server_method},
    [TB_WOLF_DTLS1_2] = {[TB_PEER_CLIENT] = wolfDTLSv1_2_client_method,
                         [TB_PEER_SERVER] = wolfDTLSv1_2_server_method},
    [TB_WOLF_DTLS1_3] = {[TB_PEER_CLIENT] = tb_wolf_dtls13_client, [TB_PEER_SERVER] = tb_wolf_dtls13_server},
};

static const char *const tb_wolf_version_names[] = {[TB_WOLF_TLS1_2] = "TLS1.2", [TB_WOLF_TLS1_3] = "TLS1.3",
                                                    [TB_WOLF_DTLS1_2] = "DTLS1.2", [TB_WOLF_DTLS1_3] = "DTLS1.3"};

static int tb_wolf_send_cb(WOLFSSL *ssl, char *buf, int sz, void *ctx);
static int tb_wolf_recv_cb(WOLFSSL *ssl, char *buf, int sz, void *ctx);
static int tb_wolf_cookie_cb(WOLFSSL *ssl, unsigned char *buf, int sz, void *ctx);

static int tb_wolf_pem_len(const char *pem) { return (int)strlen(pem); }

/* RPK (RFC 7250): the peer's own public key instead of a chain, its private key, only raw
 * public keys accepted. wolfSSL 5.7 authenticates a received raw public key against nothing
 * (its code says DANE would be needed): the CertificateVerify signature is still checked. */
static int tb_wolf_ctx_load_rpk(WOLFSSL_CTX *ctx, bool server, const tb_credential_pem *pem, const char **what) {
    *what = "raw public key types";
    int ret = tb_wolf_ctx_rpk_types(ctx);
    if (ret == WOLFSSL_SUCCESS) {
        *what = server ? "server raw public key" : "client raw public key";
        ret = tb_wolf_ctx_use_rpk(ctx, server ? pem->server_public : pem->client_public);
    }
    if (ret == WOLFSSL_SUCCESS) {
        const char *key = server ? pem->server_key : pem->client_key;
        *what = server ? "server key" : "client key";
        ret = wolfSSL_CTX_use_PrivateKey_buffer(ctx, (const unsigned char *)key, tb_wolf_pem_len(key),
                                                WOLFSSL_FILETYPE_PEM);
    }
    return ret == WOLFSSL_SUCCESS ? 0 : ret;
}

/* The PEMs of a credential: a raw public key is the ecdsa-p256 pair's. */
static const tb_credential_pem *tb_wolf_pem_find(uint8_t cred) {
    return tb_credential_pem_find(cred == TB_CREDENTIAL_RPK_ECDSA && TB_WOLF_RPK ? TB_CREDENTIAL_ECDSA_P256 : cred);
}

/* One peer's certificate chain and key (the client's is sent only when the server asks:
 * MUTUAL_AUTH) and the CA it verifies the other peer with (the server verifies only when
 * MUTUAL_AUTH asks it to). 0 or the failing call's code, with what failed in *what. */
static int tb_wolf_ctx_load(WOLFSSL_CTX *ctx, uint8_t peer, uint8_t cred, const tb_credential_pem *pem,
                            const char **what) {
    if (!pem)
        return 0;
    bool server = peer == TB_PEER_SERVER;
    if (cred == TB_CREDENTIAL_RPK_ECDSA) /* no chain, no CA: the key itself */
        return tb_wolf_ctx_load_rpk(ctx, server, pem, what);
    const char *chain = server ? pem->server_chain : pem->client_chain;
    const char *key = server ? pem->server_key : pem->client_key;
    *what = server ? "server certificate" : "client certificate";
    int ret = wolfSSL_CTX_use_certificate_chain_buffer(ctx, (const unsigned char *)chain, tb_wolf_pem_len(chain));
    if (ret == WOLFSSL_SUCCESS) {
        *what = server ? "server key" : "client key";
        ret = wolfSSL_CTX_use_PrivateKey_buffer(ctx, (const unsigned char *)key, tb_wolf_pem_len(key),
                                                WOLFSSL_FILETYPE_PEM);
    }
    if (ret == WOLFSSL_SUCCESS) {
        *what = "CA certificate";
        ret = wolfSSL_CTX_load_verify_buffer(ctx, (const unsigned char *)pem->ca, tb_wolf_pem_len(pem->ca),
                                             WOLFSSL_FILETYPE_PEM);
    }
    return ret == WOLFSSL_SUCCESS ? 0 : ret;
}

/* Session handling per mode (tb_wolf_mode): tickets off but for TICKETS (TLS 1.2 ones off for
 * SESSION_ID too); the server's session cache only for SESSION_ID. */
static void tb_wolf_ctx_sessions(WOLFSSL_CTX *ctx, tb_wolf_mode mode) {
    tb_wolf_cache_mode(ctx, mode == TB_WOLF_MODE_SESSION_ID ? WOLFSSL_SESS_CACHE_SERVER : WOLFSSL_SESS_CACHE_OFF);
    if (mode == TB_WOLF_MODE_PLAIN)
        tb_wolf_ctx_no_tickets(ctx);
    if (mode == TB_WOLF_MODE_SESSION_ID)
        tb_wolf_ctx_no_tls12_tickets(ctx);
}

static void tb_wolf_ctx_build(tb_wolf_ctx *c, tb_wolf_mode mode, tb_wolf_version v, uint8_t peer, uint8_t cred) {
    const tb_credential_pem *pem = tb_wolf_pem_find(cred);
    c->built = true;
    c->ctx = tb_wolf_methods[v][peer] ? wolfSSL_CTX_new(tb_wolf_methods[v][peer]()) : NULL;
    if (!c->ctx) {
        snprintf(c->why, sizeof c->why, "wolfSSL_CTX_new(%s %s) failed%s", tb_wolf_version_names[v],
                 tb_peer_name(peer), tb_wolf_methods[v][peer] ? "" : ": not in this build");
        return;
    }
    wolfSSL_CTX_SetIORecv(c->ctx, tb_wolf_recv_cb);
    wolfSSL_CTX_SetIOSend(c->ctx, tb_wolf_send_cb);
    if (v == TB_WOLF_DTLS1_2) /* the default cookie reads the socket's peer: there is no socket */
        wolfSSL_CTX_SetGenCookie(c->ctx, tb_wolf_cookie_cb);
    tb_wolf_ctx_sessions(c->ctx, mode);
    /* The client verifies the server's chain; the server asks no client certificate (but
     * with MUTUAL_AUTH, set per session). */
    wolfSSL_CTX_set_verify(c->ctx, peer == TB_PEER_CLIENT && pem ? WOLFSSL_VERIFY_PEER : WOLFSSL_VERIFY_NONE, NULL);
    if (cred == TB_CREDENTIAL_PSK)
        tb_wolf_ctx_psk(c->ctx, peer);
    const char *what = "credential";
    int ret = tb_wolf_ctx_load(c->ctx, peer, cred, pem, &what);
    if (ret != 0) {
        char text[WOLFSSL_MAX_ERROR_SZ];
        wolfSSL_ERR_error_string_n((unsigned long)ret, text, sizeof text);
        snprintf(c->why, sizeof c->why, "wolfSSL cannot load its %s (%s): %d %s", what, tb_credential_name(cred), ret,
                 text);
        wolfSSL_CTX_free(c->ctx);
        c->ctx = NULL;
    }
}

/* The context of a session, made on first use. */
static const tb_wolf_ctx *tb_wolf_ctx_get(tb_wolf_mode mode, tb_wolf_version v, uint8_t peer, uint8_t cred) {
    tb_wolf_ctx *c = &tb_wolf.ctx[mode][v][peer][cred];
    if (!c->built)
        tb_wolf_ctx_build(c, mode, v, peer, cred);
    return c;
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
                if (tb_wolf_methods[v][peer] && (tb_wolf_pem_find(cred) || cred == TB_CREDENTIAL_PSK))
                    tb_wolf_ctx_get(TB_WOLF_MODE_PLAIN, (tb_wolf_version)v, peer, cred);
    tb_wolf.initialized = true;
    return 0;
}

static void tb_wolf_deinit(void) {
    if (!tb_wolf.initialized)
        return;
    for (int mode = 0; mode < TB_WOLF_N_MODES; mode++)
        for (int v = 0; v < TB_WOLF_N_VERSIONS; v++)
            for (int peer = 0; peer < 2; peer++)
                for (int cred = 0; cred < TB_CREDENTIAL_SLOTS; cred++) {
                    wolfSSL_CTX_free(tb_wolf.ctx[mode][v][peer][cred].ctx);
                    tb_wolf.ctx[mode][v][peer][cred] = (tb_wolf_ctx){0};
                }
    wolfSSL_SESSION_free(tb_wolf.resume);
    tb_wolf.resume = NULL;
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
    s->turn_sent = true;
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
    tb_session *s = wolfSSL_get_ex_data(ssl, TB_WOLF_SESSION_SLOT);
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
    uint8_t need = suite->version == TB_WOLF_TLS1_3 ? TB_WOLF_IN_TLS13 : TB_WOLF_IN_TLS12;
    if (g && !(g->versions & need))
        return need == TB_WOLF_IN_TLS13 ? "a TLS 1.3 group (wolfSSL offers this one in TLS 1.2 only)"
                                        : "a TLS 1.2 group (wolfSSL offers this one in TLS 1.3 only)";
    return NULL;
}

/* Credentials are loaded into per-(version, peer) contexts: checked in session_new. */
static const tb_backend_rules tb_wolf_rules = {
    .library_name = "wolfSSL",
    .suites = &tb_wolf_suites,
    .initialized = &tb_wolf.initialized,
    .group_support = tb_wolf_group_support,
    .group_why = tb_wolf_group_why,
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
    bool server = peer == TB_PEER_SERVER;
    if (ret == WOLFSSL_SUCCESS && g->family == TB_WOLF_FAMILY_FF && server) {
        const DhParams *dh = g->ffdhe();
        ret = wolfSSL_SetTmpDH(ssl, dh->p, (int)dh->p_len, dh->g, (int)dh->g_len);
        /* SetTmpDH turns on a primality test of p in every handshake (wolfSSL >= 5.6: ~40 ms
         * for ffdhe2048, 20 times the handshake); an RFC 7919 group is known good, and a
         * device that sets its parameters once per context is tested once: off. */
        if (ret == WOLFSSL_SUCCESS)
            ret = wolfSSL_SetEnableDhKeyTest(ssl, 0);
    }
    /* The TLS 1.2 server takes the client's curve of its preferred ephemeral size (32 bytes
     * by default: a client offering secp192r1 would get P-256 or nothing): the group's. */
    if (ret == WOLFSSL_SUCCESS && g->family == TB_WOLF_FAMILY_EC && server)
        ret = wolfSSL_SetTmpEC_DHE_Sz(ssl, (word16)wc_ecc_get_curve_size_from_id(g->ecc_id));
    return ret;
}

/* RESUME, TLS 1.3 client: the session to keep arrives with the NewSessionTicket after the
 * handshake. */
#if TB_WOLF_TICKETS
static int tb_wolf_ticket_cb(WOLFSSL *ssl, const unsigned char *ticket, int len, void *ctx) {
    (void)ssl, (void)ticket, (void)len;
    ((tb_session *)ctx)->ticket = true;
    return 0;
}
#endif

static const char *tb_wolf_session_suite_name(WOLFSSL *ssl) {
    tb_session *s = wolfSSL_get_ex_data(ssl, TB_WOLF_SESSION_SLOT);
    return s ? s->suite->wolf_name : "";
}

/* MUTUAL_AUTH, RESUME, the TLS 1.3 external PSK, PSK_ONLY and DTLS 1.3 on one session:
 * WOLFSSL_SUCCESS, or the failing call's code with what failed in *what. */
static int tb_wolf_configure_options(tb_session *s, const tb_conn_config *cfg, const char **what) {
    bool server = s->peer == TB_PEER_SERVER, tls13 = s->suite->version == TB_WOLF_TLS1_3;
    bool resume = (cfg->options & TB_OPTION_RESUME) != 0;
    int ret = WOLFSSL_SUCCESS;
    if (server && (cfg->options & TB_OPTION_MUTUAL_AUTH))
        wolfSSL_set_verify(s->ssl, WOLFSSL_VERIFY_PEER | WOLFSSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    if (!server && resume) {
        *what = "the session ticket callback";
        ret = tb_wolf_watch_tickets(s->ssl, s);
        if (ret == WOLFSSL_SUCCESS && !tls13 && !(cfg->options & TB_OPTION_RESUME_ID)) {
            *what = "wolfSSL_UseSessionTicket";
            ret = tb_wolf_use_ticket(s->ssl);
        }
        if (ret == WOLFSSL_SUCCESS && !cfg->first_connection) {
            *what = "wolfSSL_set_session";
            ret = wolfSSL_set_session(s->ssl, tb_wolf.resume);
        }
    }
    if (tls13 && cfg->credential == TB_CREDENTIAL_PSK)
        tb_wolf_ssl_psk13(s->ssl, s->peer, (cfg->options & TB_OPTION_PSK_ONLY) != 0);
    if (ret == WOLFSSL_SUCCESS && (cfg->options & TB_OPTION_CONNECTION_ID)) {
        *what = "wolfSSL_dtls_cid_use/set";
        ret = tb_wolf_use_cid(s->ssl, s->peer);
    }
    if (ret == WOLFSSL_SUCCESS && server && s->dtls && tls13) {
        *what = "wolfSSL_dtls13_allow_ch_frag";
        ret = tb_wolf_dtls13_server_setup(s->ssl);
        /* DTLS 1.3's cookie is a stateless HelloRetryRequest: only when the RUN asks for it */
        if (ret == WOLFSSL_SUCCESS && !(cfg->options & TB_OPTION_DTLS_COOKIES)) {
            *what = "wolfSSL_disable_hrr_cookie";
            ret = wolfSSL_disable_hrr_cookie(s->ssl);
        }
    }
    return ret;
}

/* The context a session uses: its mode, its version (TLS 1.3 suites run over DTLS 1.3). */
static const tb_wolf_ctx *tb_wolf_session_ctx(const tb_wolf_suite *suite, uint8_t peer, const tb_conn_config *cfg) {
    bool dtls = cfg->protocol == TB_PROTOCOL_KIND_DTLS;
    tb_wolf_version v = !dtls ? suite->version : suite->version == TB_WOLF_TLS1_3 ? TB_WOLF_DTLS1_3 : TB_WOLF_DTLS1_2;
    tb_wolf_mode mode = !(cfg->options & TB_OPTION_RESUME)      ? TB_WOLF_MODE_PLAIN
                        : (cfg->options & TB_OPTION_RESUME_ID) ? TB_WOLF_MODE_SESSION_ID
                                                               : TB_WOLF_MODE_TICKETS;
    return tb_wolf_ctx_get(mode, v, peer, cfg->credential);
}

static void tb_wolf_session_free(tb_session *s) {
    if (!s)
        return;
    wolfSSL_free(s->ssl);
    free(s);
}

/* RESUME, client: a RUN's first connection forgets the last RUN's session; every later one
 * needs the session the previous connection left. */
static int tb_wolf_resume_prepare(uint8_t peer, const tb_conn_config *cfg, char *err, size_t errlen) {
    if ((cfg->options & TB_OPTION_RESUME) && peer == TB_PEER_CLIENT && cfg->first_connection) {
        wolfSSL_SESSION_free(tb_wolf.resume);
        tb_wolf.resume = NULL;
    }
    return tb_resume_ready(peer, cfg, tb_wolf.resume != NULL, err, errlen);
}

/* The connection's suite row and group (NULL: none), NULL with why when this build cannot
 * make it: the common checks, then wolfSSL's own, then the peer's context. */
static const tb_wolf_suite *tb_wolf_suite_check(uint8_t peer, const tb_conn_config *cfg, const tb_wolf_group **g,
                                                char *err, size_t errlen) {
    uint16_t group = 0;
    const tb_wolf_suite *suite = tb_backend_check(&tb_wolf_rules, cfg, &group, err, errlen);
    *g = group ? tb_wolf_group_find(group) : NULL;
    bool dtls = cfg->protocol == TB_PROTOCOL_KIND_DTLS;
    if (suite && dtls && (cfg->dtls_mtu || cfg->max_fragment)) {
        snprintf(err, errlen, "this wolfSSL build has no wolfSSL_dtls_set_mtu; max_fragment is not wired yet");
        return NULL;
    }
    /* A post-quantum key share makes the ClientHello exceed a datagram; wolfSSL 5.7's DTLS 1.3
     * server reassembles a fragmented ClientHello only after its stateless cookie exchange. */
    if (suite && dtls && *g && (*g)->family == TB_WOLF_FAMILY_KEM && !(cfg->options & TB_OPTION_DTLS_COOKIES)) {
        snprintf(err, errlen, "group %s over DTLS 1.3 needs the DTLS_COOKIES option: wolfSSL's server takes a "
                              "fragmented ClientHello only after a cookie exchange", tb_group_name(group));
        return NULL;
    }
    /* RFC 9147 4.2.3: record-number encryption samples 16 bytes of ciphertext, and a sender pads
     * shorter records; wolfSSL 5.7.2 does not pad, so its encrypted close_notify (2 + 1 + an 8-byte
     * tag) fails with BUILD_MSG_ERROR every time. */
    if (suite && dtls && suite->version == TB_WOLF_TLS1_3 && strstr(suite->info.cipher, "CCM-8")) {
        snprintf(err, errlen, "wolfSSL 5.7 cannot send a DTLS 1.3 alert with an 8-byte tag (it does not pad a "
                              "record to the 16 bytes RFC 9147 4.2.3 samples): use TLS_AES_128_CCM_SHA256");
        return NULL;
    }
    if (suite && (cfg->options & TB_OPTION_CONNECTION_ID) && suite->version != TB_WOLF_TLS1_3) {
        snprintf(err, errlen, "option CONNECTION_ID: wolfSSL 5.7 has connection IDs for DTLS 1.3 only "
                              "(RFC 9147), not DTLS 1.2's (RFC 9146): use a TLS 1.3 suite over DTLS");
        return NULL;
    }
    const tb_wolf_ctx *c = suite ? tb_wolf_session_ctx(suite, peer, cfg) : NULL;
    if (c && !c->ctx) {
        snprintf(err, errlen, "credential %s: %s", tb_credential_name(cfg->credential), c->why);
        return NULL;
    }
    return suite;
}

static int tb_wolf_check(const tb_conn_config *cfg, char *err, size_t errlen) {
    const tb_wolf_group *g;
    return tb_wolf_suite_check(TB_PEER_CLIENT, cfg, &g, err, errlen) &&
                   tb_wolf_suite_check(TB_PEER_SERVER, cfg, &g, err, errlen)
               ? 0
               : -1;
}

static tb_session *tb_wolf_session_new(uint8_t peer, const tb_conn_config *cfg, tb_io io, char *err, size_t errlen) {
    const tb_wolf_group *g;
    const tb_wolf_suite *suite = tb_wolf_suite_check(peer, cfg, &g, err, errlen);
    if (!suite || tb_wolf_resume_prepare(peer, cfg, err, errlen) != 0)
        return NULL;
    bool dtls = cfg->protocol == TB_PROTOCOL_KIND_DTLS;
    const tb_wolf_ctx *c = tb_wolf_session_ctx(suite, peer, cfg);
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
    s->suite = suite;
    s->options = cfg->options;
    s->first_connection = cfg->first_connection;
    s->peer_id_len = tb_peer_id_copy(s->peer_id, sizeof s->peer_id, cfg);
    s->ssl = wolfSSL_new(c->ctx);
    const char *what = "wolfSSL_new";
    int ret = s->ssl ? WOLFSSL_SUCCESS : WOLFSSL_FAILURE;
    if (ret == WOLFSSL_SUCCESS) {
        what = "the suite (wolfSSL_set_cipher_list[_bytes])";
        ret = tb_wolf_set_suite(s->ssl, suite->info.id, suite->wolf_name);
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
    if (ret == WOLFSSL_SUCCESS)
        ret = tb_wolf_configure_options(s, cfg, &what);
    if (ret != WOLFSSL_SUCCESS) {
        snprintf(err, errlen, "configuring the %s for %s failed: %s returned %d", tb_peer_name(peer), suite->info.name,
                 what, ret);
        tb_wolf_session_free(s);
        return NULL;
    }
    wolfSSL_SetIOReadCtx(s->ssl, s);
    wolfSSL_SetIOWriteCtx(s->ssl, s);
    wolfSSL_set_ex_data(s->ssl, TB_WOLF_SESSION_SLOT, s);
    return s;
}

/* ---------------------------------------------------------------- handshake and records */

static int (*const tb_wolf_handshake_call[2])(WOLFSSL *) = {
    [TB_PEER_CLIENT] = wolfSSL_connect,
    [TB_PEER_SERVER] = wolfSSL_accept,
};

/* wolfSSL_get_error's "come back later" answers. */
static bool tb_wolf_would_block(int err) { return err == WOLFSSL_ERROR_WANT_READ || err == WOLFSSL_ERROR_WANT_WRITE; }

/* RESUME, TLS 1.3 client: the NewSessionTicket comes after the handshake; TLS 1.2 sends it
 * (or the session ID) inside. */
static bool tb_wolf_awaits_ticket(const tb_session *s) {
    return (s->options & TB_OPTION_RESUME) && s->peer == TB_PEER_CLIENT && s->suite->version == TB_WOLF_TLS1_3 &&
           !s->ticket;
}

/* RESUME: a connection after the RUN's first that did not resume fails (a full handshake
 * would be measured as a resumed one); the client keeps the session for the next one. */
static tb_step_result tb_wolf_handshake_over(tb_session *s, int32_t *lib_error) {
    tb_step_result r = tb_resume_verdict(s->options, s->first_connection, wolfSSL_session_reused(s->ssl) == 1, lib_error);
    if (r == TB_STEP_DONE && (s->options & TB_OPTION_RESUME) && s->peer == TB_PEER_CLIENT) {
        wolfSSL_SESSION_free(tb_wolf.resume);
        tb_wolf.resume = tb_wolf_session_of(s->ssl);
    }
    return r;
}

/* One call of the peer's turn, traced as HANDSHAKE_TURN_n: connect/accept during the
 * handshake, then (RESUME, TLS 1.3 client) a peek that processes the NewSessionTicket and
 * leaves application data for read(). STOP value: 0, or wolfSSL_get_error(). */
static int tb_wolf_turn(tb_session *s, int *err) {
    uint16_t label = tb_wolfssl_turn_label(s->turns++);
    unsigned char byte;
    tb_begin(label);
    s->turn_sent = false;
    tb_pace_step_begin(tb_wolfssl_turn_label(s->paced_turns));
    int ret = s->done ? wolfSSL_peek(s->ssl, &byte, 1) : tb_wolf_handshake_call[s->peer](s->ssl);
    bool ok = s->done ? ret > 0 : ret == WOLFSSL_SUCCESS;
    *err = ok ? 0 : wolfSSL_get_error(s->ssl, ret);
    tb_pace_step_end(ok || s->turn_sent);
    s->paced_turns += ok || s->turn_sent;
    tb_end(label, (uint64_t)(int64_t)*err);
    return ok;
}

/* One turn: connect/accept runs until it needs the peer's bytes, or the handshake is over. */
static tb_step_result tb_wolf_step(tb_session *s, int32_t *lib_error) {
    if (s->done && !tb_wolf_awaits_ticket(s))
        return TB_STEP_DONE;
    tb_wolf_check_timer(s);
    int err = 0;
    bool ok = tb_wolf_turn(s, &err);
    if (ok || (s->done && tb_wolf_would_block(err) && !tb_wolf_awaits_ticket(s))) {
        s->done = true;
        return tb_wolf_awaits_ticket(s) ? TB_STEP_CONTINUE : tb_wolf_handshake_over(s, lib_error);
    }
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
    if (tb_common_error_text(code))
        snprintf(buf, len, "%s", tb_common_error_text(code));
    else
        wolfSSL_ERR_error_string_n((unsigned long)(long)code, buf, (unsigned long)len);
}

/* ---------------------------------------------------------------- test hooks */

const char *tb_wolfssl_session_curve(tb_session *s) { return wolfSSL_get_curve_name(s->ssl); }
const char *tb_wolfssl_session_version(tb_session *s) { return wolfSSL_get_version(s->ssl); }
int tb_wolfssl_session_suite(tb_session *s) { return wolfSSL_get_current_cipher_suite(s->ssl); }

static void tb_wolf_linger(tb_session *s) { s->lingering = s->dtls; }

/* The RUN options this build implements: resumption needs session tickets (TLS 1.3), the
 * TLS 1.3 external PSK needs PSK. */
#define TB_WOLF_OPTIONS                                                                                      \
    (TB_OPTION_MUTUAL_AUTH | (TB_WOLF_TICKETS ? TB_OPTION_RESUME | TB_OPTION_RESUME_ID : 0) |                 \
     (TB_WOLF_PSK ? TB_OPTION_PSK_ONLY : 0) | (TB_WOLF_CID && TB_WOLF_DTLS13 ? TB_OPTION_CONNECTION_ID : 0))

const tb_backend tb_linked_backend = {
    .name = "wolfssl",
    .library_name = "wolfSSL",
    .version = tb_wolf_version_string,
    .step_granularity = "turn",
    .options = TB_WOLF_OPTIONS,
    .describe_build = tb_wolf_describe_build,
    .suite_count = tb_wolf_suite_count,
    .suite_at = tb_wolf_suite_at,
    .init = tb_wolf_init,
    .deinit = tb_wolf_deinit,
    .check = tb_wolf_check,
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
