/* SPDX-License-Identifier: Apache-2.0 */
/* The OpenSSL 3 backend: suite table, state -> step label table, per-session configuration
 * (pinned version, suite, group and credentials), a custom BIO over the tb_io, and the step
 * tracing driven by OpenSSL's info and message callbacks. Crypto operations inside the steps
 * are traced by openssl_crypto.c (link-time wrappers). docs/backend-openssl.md explains the
 * conventions; the comments here say why the code does what it does.
 *
 * Suite metadata conventions (SUITES JSON), the same as the mbed TLS backend's where the
 * suites are the same:
 *   key_exchange   = ECDHE, DHE, RSA (key transport), PSK; TLS 1.3 suites: "any" (the
 *                    group decides; a TLS 1.3 suite does not fix the key exchange; the same
 *                    word as wolfSSL's backend and `openssl ciphers -v`);
 *   authentication = ECDSA, RSA, PSK; hybrids split like mbed TLS: DHE-PSK = DHE/PSK,
 *                    ECDHE-PSK = ECDHE/PSK, RSA-PSK = RSA/PSK; TLS 1.3 suites: "any" (the
 *                    certificate decides);
 *   cipher         = AES-128-GCM, CHACHA20-POLY1305, AES-128-CCM-8, NULL, ...;
 *   mac            = the MAC hash, or the PRF/HKDF hash for AEAD suites. */
#include <stddef.h>
#include <limits.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "common.h"
#include "openssl_internal.h"
#include "tlsbench/backend.h"
#include "tlsbench/credentials.h"
#include "tlsbench/trace.h"

#define TB_OSSL_MAX_SUITES 256

/* PSK_ONLY: psk_ke needs the client to offer it (SSL_OP_ALLOW_NO_DHE_KEX: it still offers
 * psk_dhe_ke and a key share too) and the server to prefer it, which only OpenSSL >= 3.3 can
 * (SSL_OP_PREFER_NO_DHE_KEX; 3.0 always answers psk_dhe_ke). */
#ifdef SSL_OP_PREFER_NO_DHE_KEX
#define TB_OSSL_PREFER_NO_DHE SSL_OP_PREFER_NO_DHE_KEX
#define TB_OSSL_PSK_ONLY TB_OPTION_PSK_ONLY
#else
#define TB_OSSL_PREFER_NO_DHE 0
#define TB_OSSL_PSK_ONLY 0
#endif

/* Raw public keys (RFC 7250): OpenSSL >= 3.2. Both peers send and accept raw public keys only;
 * each pins the other's key (SSL_add_expected_rpk: a DANE-EE SPKI record, so DANE is enabled on
 * the context and the connection). The key pairs are ecdsa-p256's. */
#if OPENSSL_VERSION_PREREQ(3, 2)
#define TB_OSSL_RPK 1
static int tb_ossl_ctx_rpk_types(SSL_CTX *ctx) {
    static const unsigned char rpk[] = {TLSEXT_cert_type_rpk};
    return SSL_CTX_set1_client_cert_type(ctx, rpk, sizeof rpk) == 1 &&
           SSL_CTX_set1_server_cert_type(ctx, rpk, sizeof rpk) == 1 && SSL_CTX_dane_enable(ctx) > 0;
}
static int tb_ossl_expect_rpk(SSL *ssl, const char *spki_pem) {
    BIO *bio = BIO_new_mem_buf(spki_pem, -1);
    EVP_PKEY *key = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
    int ok = key && SSL_dane_enable(ssl, TB_CREDENTIAL_HOSTNAME) > 0 && SSL_add_expected_rpk(ssl, key) == 1;
    EVP_PKEY_free(key);
    BIO_free(bio);
    return ok;
}
#else
#define TB_OSSL_RPK 0
static int tb_ossl_ctx_rpk_types(SSL_CTX *ctx) { (void)ctx; return 0; }
static int tb_ossl_expect_rpk(SSL *ssl, const char *spki_pem) { (void)ssl, (void)spki_pem; return 0; }
#endif

/* Every TLS 1.3 suite RFC 8446 defines: the build keeps those it has (there is no API that
 * lists the TLS 1.3 suites a build could enable, only those a context has enabled). */
static const char tb_ossl_tls13_all[] =
    "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:"
    "TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256";
/* Every TLS <= 1.2 suite of the build, including those the default list leaves out. */
static const char tb_ossl_tls12_all[] = "ALL:COMPLEMENTOFALL";

/* ---------------------------------------------------------------- state -> step label */

/* OpenSSL >= 3.2: a compressed certificate (RFC 8879) has states of its own. */
#if OPENSSL_VERSION_PREREQ(3, 2)
#define TB_OSSL_COMP_CERT_LABELS                                                            \
    [TLS_ST_CR_COMP_CERT] = TB_L_SERVER_CERTIFICATE, [TLS_ST_SW_COMP_CERT] = TB_L_SERVER_CERTIFICATE, \
    [TLS_ST_CW_COMP_CERT] = TB_L_CLIENT_CERTIFICATE, [TLS_ST_SR_COMP_CERT] = TB_L_CLIENT_CERTIFICATE,
#else
#define TB_OSSL_COMP_CERT_LABELS
#endif

/* SSL_get_state() names the message just written or parsed when a step ends (see the step
 * tracing below). Every OSSL_HANDSHAKE_STATE has a label; states this agent never reaches
 * (NPN, OCSP status, early data, renegotiation) are mapped to the nearest message. */
static const uint16_t tb_ossl_state_labels[] = {
    [TLS_ST_BEFORE] = TB_L_HELLO_REQUEST,
    [TLS_ST_OK] = TB_L_HANDSHAKE_DONE,
    [DTLS_ST_CR_HELLO_VERIFY_REQUEST] = TB_L_HELLO_VERIFY_REQUEST,
    [TLS_ST_CR_SRVR_HELLO] = TB_L_SERVER_HELLO,
    [TLS_ST_CR_CERT] = TB_L_SERVER_CERTIFICATE,
    [TLS_ST_CR_CERT_STATUS] = TB_L_SERVER_CERTIFICATE, /* OCSP staple: part of the server's certificate */
    [TLS_ST_CR_KEY_EXCH] = TB_L_SERVER_KEY_EXCHANGE,
    [TLS_ST_CR_CERT_REQ] = TB_L_CERTIFICATE_REQUEST,
    [TLS_ST_CR_SRVR_DONE] = TB_L_SERVER_HELLO_DONE,
    [TLS_ST_CR_SESSION_TICKET] = TB_L_NEW_SESSION_TICKET,
    [TLS_ST_CR_CHANGE] = TB_L_SERVER_CHANGE_CIPHER_SPEC,
    [TLS_ST_CR_FINISHED] = TB_L_SERVER_FINISHED,
    [TLS_ST_CW_CLNT_HELLO] = TB_L_CLIENT_HELLO,
    [TLS_ST_CW_CERT] = TB_L_CLIENT_CERTIFICATE,
    [TLS_ST_CW_KEY_EXCH] = TB_L_CLIENT_KEY_EXCHANGE,
    [TLS_ST_CW_CERT_VRFY] = TB_L_CERTIFICATE_VERIFY,
    [TLS_ST_CW_CHANGE] = TB_L_CLIENT_CHANGE_CIPHER_SPEC,
    [TLS_ST_CW_NEXT_PROTO] = TB_L_CLIENT_FINISHED, /* NPN: sent with the client's Finished */
    [TLS_ST_CW_FINISHED] = TB_L_CLIENT_FINISHED,
    [TLS_ST_SW_HELLO_REQ] = TB_L_HELLO_REQUEST,
    [TLS_ST_SR_CLNT_HELLO] = TB_L_CLIENT_HELLO,
    [DTLS_ST_SW_HELLO_VERIFY_REQUEST] = TB_L_HELLO_VERIFY_REQUEST,
    [TLS_ST_SW_SRVR_HELLO] = TB_L_SERVER_HELLO,
    [TLS_ST_SW_CERT] = TB_L_SERVER_CERTIFICATE,
    [TLS_ST_SW_KEY_EXCH] = TB_L_SERVER_KEY_EXCHANGE,
    [TLS_ST_SW_CERT_REQ] = TB_L_CERTIFICATE_REQUEST,
    [TLS_ST_SW_SRVR_DONE] = TB_L_SERVER_HELLO_DONE,
    [TLS_ST_SR_CERT] = TB_L_CLIENT_CERTIFICATE,
    [TLS_ST_SR_KEY_EXCH] = TB_L_CLIENT_KEY_EXCHANGE,
    [TLS_ST_SR_CERT_VRFY] = TB_L_CERTIFICATE_VERIFY,
    [TLS_ST_SR_NEXT_PROTO] = TB_L_CLIENT_FINISHED,
    [TLS_ST_SR_CHANGE] = TB_L_CLIENT_CHANGE_CIPHER_SPEC,
    [TLS_ST_SR_FINISHED] = TB_L_CLIENT_FINISHED,
    [TLS_ST_SW_SESSION_TICKET] = TB_L_NEW_SESSION_TICKET,
    [TLS_ST_SW_CERT_STATUS] = TB_L_SERVER_CERTIFICATE,
    [TLS_ST_SW_CHANGE] = TB_L_SERVER_CHANGE_CIPHER_SPEC,
    [TLS_ST_SW_FINISHED] = TB_L_SERVER_FINISHED,
    [TLS_ST_SW_ENCRYPTED_EXTENSIONS] = TB_L_ENCRYPTED_EXTENSIONS,
    [TLS_ST_CR_ENCRYPTED_EXTENSIONS] = TB_L_ENCRYPTED_EXTENSIONS,
    [TLS_ST_CR_CERT_VRFY] = TB_L_SERVER_CERTIFICATE_VERIFY,
    [TLS_ST_SW_CERT_VRFY] = TB_L_SERVER_CERTIFICATE_VERIFY,
    [TLS_ST_CR_HELLO_REQ] = TB_L_HELLO_REQUEST,
    [TLS_ST_SW_KEY_UPDATE] = TB_L_KEY_UPDATE,
    [TLS_ST_CW_KEY_UPDATE] = TB_L_KEY_UPDATE,
    [TLS_ST_SR_KEY_UPDATE] = TB_L_KEY_UPDATE,
    [TLS_ST_CR_KEY_UPDATE] = TB_L_KEY_UPDATE,
    [TLS_ST_EARLY_DATA] = TB_L_END_OF_EARLY_DATA, /* no message: never ends a step (see below) */
    [TLS_ST_PENDING_EARLY_DATA_END] = TB_L_END_OF_EARLY_DATA,
    [TLS_ST_CW_END_OF_EARLY_DATA] = TB_L_END_OF_EARLY_DATA,
    [TLS_ST_SR_END_OF_EARLY_DATA] = TB_L_END_OF_EARLY_DATA,
    TB_OSSL_COMP_CERT_LABELS
};
_Static_assert(TB_COUNT(tb_ossl_state_labels) == TLS_ST_SR_END_OF_EARLY_DATA + 1,
               "an OSSL_HANDSHAKE_STATE value has no step label");


size_t tb_openssl_state_count(void) { return TB_COUNT(tb_ossl_state_labels); }

uint16_t tb_openssl_state_label(int state) {
    return state >= 0 && (size_t)state < TB_COUNT(tb_ossl_state_labels) ? tb_ossl_state_labels[state] : 0;
}


/* ---------------------------------------------------------------- key exchange and authentication */

/* Which groups each key exchange takes is the spec's ([key_exchange], by name). */
typedef struct tb_ossl_kex {
    int nid;                /* SSL_CIPHER_get_kx_nid() */
    const char *name;
    const char *auth_name;  /* overrides the authentication name (RSA-PSK: "PSK"), or NULL */
    bool psk;               /* the pre-shared key is configured on both peers */
    const char *why_unsupported;
} tb_ossl_kex;

static const tb_ossl_kex tb_ossl_kex_table[] = {
    {NID_kx_ecdhe, "ECDHE", NULL, false, NULL},
    {NID_kx_dhe, "DHE", NULL, false, NULL},
    {NID_kx_rsa, "RSA", NULL, false, NULL},
    {NID_kx_psk, "PSK", NULL, true, NULL},
    {NID_kx_ecdhe_psk, "ECDHE", NULL, true, NULL},
    {NID_kx_dhe_psk, "DHE", NULL, true, NULL},
    {NID_kx_rsa_psk, "RSA", "PSK", true, NULL},
    {NID_kx_any, "any", NULL, false, NULL},
    {NID_kx_srp, "SRP", NULL, false,
     "SRP needs a password verifier database, which this agent does not set up"},
    {NID_kx_gost, "GOST", NULL, false, "GOST needs the GOST engine/provider"},
    {NID_kx_gost18, "GOST", NULL, false, "GOST needs the GOST engine/provider"},
};
static const tb_ossl_kex tb_ossl_kex_unknown = {NID_undef, "unknown", NULL, false,
                                                "a key exchange this agent does not know"};

typedef struct tb_ossl_auth {
    int nid; /* SSL_CIPHER_get_auth_nid() */
    const char *name;
    uint8_t credentials[TB_MAX_SUITE_CREDENTIALS];
    uint8_t n_credentials;
    const char *why_unsupported;
} tb_ossl_auth;

static const tb_ossl_auth tb_ossl_auth_table[] = {
    {NID_auth_ecdsa, "ECDSA", TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384, TB_CREDENTIAL_RPK_ECDSA),
     NULL},
    {NID_auth_rsa, "RSA", TB_CREDS(TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072), NULL},
    {NID_auth_psk, "PSK", TB_CREDS(TB_CREDENTIAL_PSK), NULL},
    /* TLS 1.3: every certificate credential, and the external PSK (RFC 8446 4.2.11). Those
     * the build cannot use (ML-DSA before 3.5) are left out when the table is made. */
    {NID_auth_any, "any",
     TB_CREDS(TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384, TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072,
              TB_CREDENTIAL_ED25519, TB_CREDENTIAL_MLDSA44, TB_CREDENTIAL_MLDSA65, TB_CREDENTIAL_MLDSA87,
              TB_CREDENTIAL_PSK, TB_CREDENTIAL_RPK_ECDSA),
     NULL},
    {NID_auth_dss, "DSS", .why_unsupported = "no DSA credential: the test credentials are RSA, ECDSA and Ed25519"},
    {NID_auth_null, "NONE", .why_unsupported = "anonymous: the server is not authenticated; the agent "
                                               "benchmarks authenticated handshakes only"},
    {NID_auth_srp, "SRP", .why_unsupported = "SRP needs a password verifier database"},
    {NID_auth_gost01, "GOST", .why_unsupported = "GOST needs the GOST engine/provider"},
    {NID_auth_gost12, "GOST", .why_unsupported = "GOST needs the GOST engine/provider"},
};
static const tb_ossl_auth tb_ossl_auth_unknown = {NID_undef, "unknown",
                                                  .why_unsupported = "an authentication this agent does not know"};

/* Bulk ciphers by NID; CCM with an 8-byte tag has the CCM NID and "-8" appended. */
static const struct {
    int nid;
    const char *name;
} tb_ossl_ciphers[] = {
    {NID_aes_128_gcm, "AES-128-GCM"},
    {NID_aes_256_gcm, "AES-256-GCM"},
    {NID_aes_128_ccm, "AES-128-CCM"},
    {NID_aes_256_ccm, "AES-256-CCM"},
    {NID_chacha20_poly1305, "CHACHA20-POLY1305"},
    {NID_aes_128_cbc, "AES-128-CBC"},
    {NID_aes_256_cbc, "AES-256-CBC"},
    {NID_camellia_128_cbc, "CAMELLIA-128-CBC"},
    {NID_camellia_256_cbc, "CAMELLIA-256-CBC"},
    {NID_aria_128_gcm, "ARIA-128-GCM"},
    {NID_aria_256_gcm, "ARIA-256-GCM"},
    {NID_des_ede3_cbc, "3DES-EDE-CBC"},
    {NID_seed_cbc, "SEED-CBC"},
    {NID_rc4, "RC4-128"},
    {NID_undef, "NULL"}, /* eNULL suites: integrity only */
};

static const struct {
    int nid;
    const char *name;
} tb_ossl_digests[] = {
    {NID_sha1, "SHA1"}, {NID_sha256, "SHA256"}, {NID_sha384, "SHA384"}, {NID_md5, "MD5"}, {NID_sha512, "SHA512"},
};

/* Protocol versions: OpenSSL's SSL_CIPHER_get_version() text -> ours. SSLv3 is clamped to
 * TLS1.0 below: Debian (and OpenSSL 3 by default) builds without SSLv3. */
static const struct {
    const char *openssl;
    const char *name;
} tb_ossl_versions[] = {
    {"SSLv3", "TLS1.0"}, {"TLSv1.0", "TLS1.0"}, {"TLSv1", "TLS1.0"},
    {"TLSv1.1", "TLS1.1"}, {"TLSv1.2", "TLS1.2"}, {"TLSv1.3", "TLS1.3"},
};

/* ---------------------------------------------------------------- groups */

/* Where OpenSSL offers a group: small curves and brainpool's RFC 7027 code points in TLS 1.2
 * only, brainpool's RFC 8734 code points and the ML-KEM groups in TLS 1.3 only. */
enum { TB_OSSL_TLS12 = 1, TB_OSSL_TLS13 = 2, TB_OSSL_BOTH = 3 };

typedef struct tb_ossl_group {
    uint16_t group;   /* TB_GROUP_* (IANA) */
    const char *name; /* OpenSSL's group name: SSL_set1_groups_list() (ML-KEM groups have no
                       * NID), the availability probe, FFDHE parameters */
    uint8_t versions; /* TB_OSSL_TLS12 | TB_OSSL_TLS13 */
    bool ffdhe;
} tb_ossl_group;

_Static_assert(offsetof(tb_ossl_group, group) == 0, "tb_row_find reads a group row's id first");
static const tb_ossl_group tb_ossl_groups[] = {
    {TB_GROUP_X25519, "X25519", TB_OSSL_BOTH, false},
    {TB_GROUP_SECP256R1, "P-256", TB_OSSL_BOTH, false},
    {TB_GROUP_SECP384R1, "P-384", TB_OSSL_BOTH, false},
    {TB_GROUP_SECP521R1, "P-521", TB_OSSL_BOTH, false},
    {TB_GROUP_X448, "X448", TB_OSSL_BOTH, false},
    {TB_GROUP_SECP192R1, "secp192r1", TB_OSSL_TLS12, false},
    {TB_GROUP_SECP224R1, "secp224r1", TB_OSSL_TLS12, false},
    {TB_GROUP_BRAINPOOLP256R1, "brainpoolP256r1", TB_OSSL_TLS12, false},
    {TB_GROUP_BRAINPOOLP384R1, "brainpoolP384r1", TB_OSSL_TLS12, false},
    {TB_GROUP_BRAINPOOLP512R1, "brainpoolP512r1", TB_OSSL_TLS12, false},
    {TB_GROUP_BRAINPOOLP256R1TLS13, "brainpoolP256r1tls13", TB_OSSL_TLS13, false},
    {TB_GROUP_BRAINPOOLP384R1TLS13, "brainpoolP384r1tls13", TB_OSSL_TLS13, false},
    {TB_GROUP_BRAINPOOLP512R1TLS13, "brainpoolP512r1tls13", TB_OSSL_TLS13, false},
    {TB_GROUP_FFDHE2048, "ffdhe2048", TB_OSSL_BOTH, true},
    {TB_GROUP_FFDHE3072, "ffdhe3072", TB_OSSL_BOTH, true},
    {TB_GROUP_FFDHE4096, "ffdhe4096", TB_OSSL_BOTH, true},
    {TB_GROUP_FFDHE6144, "ffdhe6144", TB_OSSL_BOTH, true},
    {TB_GROUP_FFDHE8192, "ffdhe8192", TB_OSSL_BOTH, true},
    {TB_GROUP_MLKEM512, "MLKEM512", TB_OSSL_TLS13, false},
    {TB_GROUP_MLKEM768, "MLKEM768", TB_OSSL_TLS13, false},
    {TB_GROUP_MLKEM1024, "MLKEM1024", TB_OSSL_TLS13, false},
    {TB_GROUP_SECP256R1MLKEM768, "SecP256r1MLKEM768", TB_OSSL_TLS13, false},
    {TB_GROUP_X25519MLKEM768, "X25519MLKEM768", TB_OSSL_TLS13, false},
    {TB_GROUP_SECP384R1MLKEM1024, "SecP384r1MLKEM1024", TB_OSSL_TLS13, false},
};

static size_t tb_ossl_group_index(uint16_t group) {
    const tb_ossl_group *g = tb_row_find(tb_ossl_groups, TB_COUNT(tb_ossl_groups), sizeof tb_ossl_groups[0], group);
    return g ? (size_t)(g - tb_ossl_groups) : SIZE_MAX;
}

/* The group of a credential's key as OpenSSL names it (spec [credential_group]): TLS 1.2
 * checks an ECDSA certificate's curve against the client's groups. NULL = no EC key. */
static const char *tb_ossl_cred_curve(uint8_t credential) {
    size_t g = tb_ossl_group_index(tb_credential_group(credential));
    return g == SIZE_MAX ? NULL : tb_ossl_groups[g].name;
}

/* The key algorithm a credential needs beyond what every OpenSSL 3 has (ML-DSA: 3.5). */
static const char *const tb_ossl_cred_algorithm[TB_CREDENTIAL_SLOTS] = {
    [TB_CREDENTIAL_MLDSA44] = "ML-DSA-44",
    [TB_CREDENTIAL_MLDSA65] = "ML-DSA-65",
    [TB_CREDENTIAL_MLDSA87] = "ML-DSA-87",
};

/* Whether this build can use a credential at all: its certificates were generated (ML-DSA
 * ones need an OpenSSL >= 3.5 command line at build time) and its key algorithm exists.
 * A suite lists only these, so a plan's `auto` never picks one that cannot run. */
/* The PEMs of a credential: a raw public key is the ecdsa-p256 pair's (where the build has RPK). */
static const tb_credential_pem *tb_ossl_pem_find(uint8_t credential) {
    if (credential == TB_CREDENTIAL_RPK_ECDSA)
        return TB_OSSL_RPK ? tb_credential_pem_find(TB_CREDENTIAL_ECDSA_P256) : NULL;
    return tb_credential_pem_find(credential);
}

static bool tb_ossl_cred_offered(uint8_t credential) {
    const char *alg = credential < TB_CREDENTIAL_SLOTS ? tb_ossl_cred_algorithm[credential] : NULL;
    EVP_KEYMGMT *k = alg ? EVP_KEYMGMT_fetch(NULL, alg, NULL) : NULL;
    bool has_alg = !alg || k != NULL;
    EVP_KEYMGMT_free(k);
    ERR_clear_error();
    return has_alg && (credential == TB_CREDENTIAL_PSK || tb_ossl_pem_find(credential) != NULL);
}

/* ---------------------------------------------------------------- process state */

/* The session ID context of every context (and of the TLS 1.3 PSK sessions, which OpenSSL
 * checks against it). */
static const unsigned char tb_ossl_sid_ctx[] = "tlsbench";

typedef struct tb_ossl_suite {
    tb_suite_info info;
    const tb_ossl_kex *kex;
    const char *openssl_name; /* SSL_CIPHER_get_name(): what SSL_set_cipher_list() takes */
    bool tls13;
    char cipher[32];
} tb_ossl_suite;

/* The contexts of a credential: the client, the server, and a server with a session cache
 * for RESUME_ID (the cache mode is the context's, and a server without one sends an empty
 * session ID: the other runs keep their bytes). */
typedef enum tb_ossl_role { TB_OSSL_CLIENT, TB_OSSL_SERVER, TB_OSSL_SERVER_ID_CACHE, TB_OSSL_N_ROLES } tb_ossl_role;

/* Per credential: one SSL_CTX per transport and role with the certificates loaded (parsed
 * once, shared by every session). */
typedef struct tb_ossl_cred {
    bool ready;
    char why[160];                      /* why it is not ready */
    SSL_CTX *ctx[2][TB_OSSL_N_ROLES];   /* [dtls][role] */
} tb_ossl_cred;

static struct {
    bool initialized;
    tb_ossl_suite suites[TB_OSSL_MAX_SUITES];
    BIO_METHOD *bio_method;
    bool group_available[TB_COUNT(tb_ossl_groups)];
    EVP_PKEY *ffdhe_params[TB_COUNT(tb_ossl_groups)]; /* DH parameters for TLS 1.2 DHE */
    tb_ossl_cred creds[TB_CREDENTIAL_SLOTS];
    /* RESUME: the session the client's last connection left (its ticket or ID), resumed next. */
    SSL_SESSION *resume;
} tb_ossl;

/* Step tracing state of one session (see "step tracing"). */
#define TB_OSSL_MAX_PENDING 16
#define TB_OSSL_NO_RECORD UINT32_MAX

typedef struct tb_ossl_record_ref {
    uint32_t index;
    uint16_t label; /* the provisional label written there */
} tb_ossl_record_ref;

typedef struct tb_ossl_steps {
    bool open;        /* a step span is open */
    bool has_message; /* the open span has written or received its message */
    int start_state;  /* SSL_get_state() when it opened */
    uint16_t label;   /* provisional label of the open span (its START and STOP carry it) */
    uint16_t override; /* HELLO_RETRY_REQUEST when its ServerHello is one, else 0 */
    tb_ossl_record_ref start;
    uint32_t n_pending; /* records of spans whose message was not known when they ended */
    tb_ossl_record_ref pending[TB_OSSL_MAX_PENDING];
} tb_ossl_steps;

struct tb_session {
    SSL *ssl;
    tb_io io;
    uint8_t peer;
    tb_ossl_steps steps;
    uint8_t options;         /* the RUN's (TB_OPTION_*) */
    bool first_connection;       /* RESUME: the RUN's first connection, resuming nothing */
    bool tls13;
    uint16_t suite_id;       /* TLS 1.3 external PSK: the session's cipher */
    SSL_SESSION *offered;    /* RESUME client: the session offered (the new ticket replaces it) */
    /* DTLS */
    bool dtls;
    uint32_t timeout_min_us, timeout_max_us; /* what the timer callback hands out */
    uint32_t retransmissions;
    uint8_t peer_id[20]; /* the client's transport id: the server's cookies bind to it */
    uint8_t peer_id_len;
};

SSL *tb_openssl_session_ssl(tb_session *s) { return s->ssl; }

/* ---------------------------------------------------------------- suite table */

static const tb_ossl_kex *tb_ossl_kex_find(int nid) {
    for (size_t i = 0; i < TB_COUNT(tb_ossl_kex_table); i++)
        if (tb_ossl_kex_table[i].nid == nid)
            return &tb_ossl_kex_table[i];
    return &tb_ossl_kex_unknown;
}

static const tb_ossl_auth *tb_ossl_auth_find(int nid) {
    for (size_t i = 0; i < TB_COUNT(tb_ossl_auth_table); i++)
        if (tb_ossl_auth_table[i].nid == nid)
            return &tb_ossl_auth_table[i];
    return &tb_ossl_auth_unknown;
}

static const char *tb_ossl_cipher_name(int nid) {
    for (size_t i = 0; i < TB_COUNT(tb_ossl_ciphers); i++)
        if (tb_ossl_ciphers[i].nid == nid)
            return tb_ossl_ciphers[i].name;
    return OBJ_nid2sn(nid); /* a cipher newer than this table: OpenSSL's short name */
}

static const char *tb_ossl_digest_name(int nid) {
    for (size_t i = 0; i < TB_COUNT(tb_ossl_digests); i++)
        if (tb_ossl_digests[i].nid == nid)
            return tb_ossl_digests[i].name;
    return nid == NID_undef ? "unknown" : OBJ_nid2sn(nid);
}

static const char *tb_ossl_version_name(const char *openssl) {
    for (size_t i = 0; openssl && i < TB_COUNT(tb_ossl_versions); i++)
        if (strcmp(tb_ossl_versions[i].openssl, openssl) == 0)
            return tb_ossl_versions[i].name;
    return "unknown";
}

/* The MAC hash, or for AEAD suites (no MAC digest) the PRF/HKDF hash. */
static const char *tb_ossl_mac_name(const SSL_CIPHER *c) {
    int nid = SSL_CIPHER_get_digest_nid(c);
    if (nid == NID_undef) {
        const EVP_MD *md = SSL_CIPHER_get_handshake_digest(c);
        nid = md ? EVP_MD_get_type(md) : NID_undef;
    }
    return tb_ossl_digest_name(nid);
}

static bool tb_ossl_in_list(STACK_OF(SSL_CIPHER) *list, uint16_t id) {
    for (int i = 0; list && i < sk_SSL_CIPHER_num(list); i++)
        if (SSL_CIPHER_get_protocol_id(sk_SSL_CIPHER_value(list, i)) == id)
            return true;
    return false;
}

static void tb_ossl_suite_fill(tb_ossl_suite *s, const SSL_CIPHER *c, STACK_OF(SSL_CIPHER) *dtls) {
    const tb_ossl_auth *auth = tb_ossl_auth_find(SSL_CIPHER_get_auth_nid(c));
    const char *std = SSL_CIPHER_standard_name(c);
    s->kex = tb_ossl_kex_find(SSL_CIPHER_get_kx_nid(c));
    s->tls13 = s->kex->nid == NID_kx_any;
    s->openssl_name = SSL_CIPHER_get_name(c);
    /* "-8": CCM and CCM_8 share one NID; the tag length is only in the name. */
    snprintf(s->cipher, sizeof s->cipher, "%s%s", tb_ossl_cipher_name(SSL_CIPHER_get_cipher_nid(c)),
             std && strstr(std, "CCM_8") ? "-8" : "");
    const char *why = s->kex->why_unsupported ? s->kex->why_unsupported : auth->why_unsupported;
    s->info = (tb_suite_info){
        .id = SSL_CIPHER_get_protocol_id(c),
        .name = std ? std : s->openssl_name,
        .min_version = tb_ossl_version_name(SSL_CIPHER_get_version(c)),
        .max_version = s->tls13 ? "TLS1.3" : "TLS1.2",
        .key_exchange = s->kex->name,
        .authentication = s->kex->auth_name ? s->kex->auth_name : auth->name,
        .cipher = s->cipher,
        .mac = tb_ossl_mac_name(c),
        /* A DTLS context lists the TLS 1.3 suites too, but 3.0 has no DTLS 1.3. */
        .dtls = !s->tls13 && tb_ossl_in_list(dtls, SSL_CIPHER_get_protocol_id(c)),
        .why_unsupported = why,
    };
    for (uint8_t i = 0; !why && i < auth->n_credentials; i++)
        if (tb_ossl_cred_offered(auth->credentials[i]))
            s->info.credentials[s->info.n_credentials++] = auth->credentials[i];
}

/* A context that enables every suite of the build (security level 0 keeps NULL, MD5 and
 * SHA-1 suites in the list). NULL when the method cannot be created. */
static SSL_CTX *tb_ossl_all_suites_ctx(const SSL_METHOD *method) {
    SSL_CTX *ctx = SSL_CTX_new(method);
    if (!ctx)
        return NULL;
    SSL_CTX_set_security_level(ctx, 0);
    SSL_CTX_set_cipher_list(ctx, tb_ossl_tls12_all);
    SSL_CTX_set_ciphersuites(ctx, tb_ossl_tls13_all);
    return ctx;
}

/* The build's suites in the library's preference order. */
static void tb_ossl_suites_build(tb_suite_cache *c) {
    tb_ossl_suite *s;
    SSL_CTX *tls = tb_ossl_all_suites_ctx(TLS_method());
    SSL_CTX *dtls = tb_ossl_all_suites_ctx(DTLS_method());
    STACK_OF(SSL_CIPHER) *list = tls ? SSL_CTX_get_ciphers(tls) : NULL;
    STACK_OF(SSL_CIPHER) *dtls_list = dtls ? SSL_CTX_get_ciphers(dtls) : NULL;
    for (int i = 0; list && i < sk_SSL_CIPHER_num(list) && (s = tb_suite_cache_add(c)) != NULL; i++)
        tb_ossl_suite_fill(s, sk_SSL_CIPHER_value(list, i), dtls_list);
    /* SSL_CIPHERs live in libssl's static tables: the pointers outlive the contexts. */
    SSL_CTX_free(tls);
    SSL_CTX_free(dtls);
}

_Static_assert(offsetof(tb_ossl_suite, info) == 0, "tb_ossl_suite must start with its tb_suite_info");
static tb_suite_cache tb_ossl_suites = TB_SUITE_CACHE(tb_ossl.suites, tb_ossl_suites_build);

static size_t tb_ossl_suite_count(void) { return tb_suite_cache_count(&tb_ossl_suites); }
static const tb_suite_info *tb_ossl_suite_at(size_t index) { return tb_suite_cache_at(&tb_ossl_suites, index); }

/* ---------------------------------------------------------------- describe */

static const char *tb_ossl_version(void) { return OpenSSL_version(OPENSSL_VERSION_STRING); }

static bool tb_ossl_has_tls13(void) {
    for (size_t i = 0; i < tb_ossl_suite_count(); i++)
        if (tb_ossl.suites[i].tls13)
            return true;
    return false;
}

static void tb_ossl_describe_build(tb_json *out) {
    tb_json_kv_string(out, "version", tb_ossl_version());
    tb_json_kv_string(out, "version_text", OpenSSL_version(OPENSSL_VERSION));
    tb_json_kv_uint(out, "version_number", OpenSSL_version_num());
    tb_json_kv_string(out, "platform", OpenSSL_version(OPENSSL_PLATFORM));
    tb_json_kv_string(out, "cpu_info", OpenSSL_version(OPENSSL_CPU_INFO)); /* AES-NI etc. */
    tb_json_kv_bool(out, "tls1_2", true);
    tb_json_kv_bool(out, "tls1_3", tb_ossl_has_tls13());
    tb_json_kv_uint(out, "suites", tb_ossl_suite_count());
    for (size_t i = 0; i < TB_COUNT(tb_ossl_groups); i++) {
        char key[32];
        snprintf(key, sizeof key, "group_%s", tb_ossl_groups[i].name);
        tb_json_kv_bool(out, key, tb_ossl.group_available[i]);
    }
    /* How sessions are configured here (not build options, but they shape every number). */
    tb_json_kv_string(out, "session_versions", "TLS1.2 or TLS1.3, pinned per suite (min = max)");
    tb_json_kv_string(out, "session_tickets_used", "with RESUME only (one per connection; TLS 1.2 RESUME_ID: none)");
    tb_json_kv_string(out, "session_cache_used", "with RESUME_ID only (the server's session-ID cache)");
    tb_json_kv_string(out, "client_certificate", "with MUTUAL_AUTH only (same type as the server's, same CA)");
    tb_json_kv_string(out, "tls13_psk", "external PSK (the psk credential): psk_dhe_ke; PSK_ONLY: psk_ke "
                                        "(the client still sends a key share)");
    tb_json_kv_bool(out, "psk_ke", TB_OSSL_PSK_ONLY != 0);
    tb_json_kv_bool(out, "renegotiation_used", false);
    tb_json_kv_bool(out, "middlebox_compat", true);
    tb_json_kv_bool(out, "server_auto_chain", false);
    tb_json_kv_uint(out, "security_level", 0);
    tb_json_kv_string(out, "groups", "forced on both peers: the group (TLS 1.2 ECDSA: then the certificate's curve)");
    tb_json_key(out, "credentials");
    tb_json_begin_array(out);
    for (uint8_t id = 1; id < TB_CREDENTIAL_SLOTS; id++)
        if (tb_ossl_cred_offered(id))
            tb_json_string(out, tb_credential_name(id));
    tb_json_end_array(out);
}

/* ---------------------------------------------------------------- error text */

/* lib_error: an OpenSSL error code (ERR_get_error(), > 0), or -SSL_ERROR_* when the error
 * queue was empty (e.g. a transport error), or one of common.h's. */
static const char *const tb_ossl_ssl_errors[] = {
    [SSL_ERROR_NONE] = "SSL_ERROR_NONE",
    [SSL_ERROR_SSL] = "SSL_ERROR_SSL (no queued error)",
    [SSL_ERROR_WANT_READ] = "SSL_ERROR_WANT_READ",
    [SSL_ERROR_WANT_WRITE] = "SSL_ERROR_WANT_WRITE",
    [SSL_ERROR_WANT_X509_LOOKUP] = "SSL_ERROR_WANT_X509_LOOKUP",
    [SSL_ERROR_SYSCALL] = "SSL_ERROR_SYSCALL: the transport failed or the peer closed",
    [SSL_ERROR_ZERO_RETURN] = "SSL_ERROR_ZERO_RETURN: the peer sent close_notify",
    [SSL_ERROR_WANT_CONNECT] = "SSL_ERROR_WANT_CONNECT",
    [SSL_ERROR_WANT_ACCEPT] = "SSL_ERROR_WANT_ACCEPT",
};

static void tb_ossl_error_text(int32_t code, char *buf, size_t len) {
    if (len == 0)
        return;
    if (tb_common_error_text(code)) {
        snprintf(buf, len, "%s", tb_common_error_text(code));
        return;
    }
    if (code < 0) {
        int64_t e = -(int64_t)code;
        const char *t = e < (int64_t)TB_COUNT(tb_ossl_ssl_errors) ? tb_ossl_ssl_errors[e] : NULL;
        snprintf(buf, len, "%s", t ? t : "unknown SSL_get_error() value");
        return;
    }
    ERR_error_string_n((unsigned long)code, buf, len);
}

/* The library's code for a failed call: the last queued error, else -SSL_get_error(). */
static int32_t tb_ossl_lib_error(SSL *ssl, int ret) {
    unsigned long e = ERR_peek_last_error();
    ERR_clear_error();
    return e ? (int32_t)(e & INT32_MAX) : -(int32_t)SSL_get_error(ssl, ret);
}

/* ---------------------------------------------------------------- step tracing
 *
 * One step() is one SSL_do_handshake() call, which runs as many states as it can. Inside
 * it, a step span ends when OpenSSL has finished one message:
 *  - writing: the info callback's SSL_CB_LOOP fires after the message was built, buffered
 *    (and, at the end of a flight, flushed: the SEND is inside) and its post-work done;
 *  - reading: OpenSSL reads the NEXT message's record header before it fires SSL_CB_LOOP,
 *    so ending there would put the next message's I/O and decryption into this step. The
 *    step ends instead at the first BIO read after its message arrived (the message
 *    callback fires when a handshake message is complete, before it is processed); that
 *    read opens the next step. SSL_CB_LOOP still ends a step whose message arrived without
 *    a read in between (two messages in one record).
 * A step "has its message" once the message callback saw a handshake message (either
 * direction) or a sent ChangeCipherSpec, or SSL_get_state() entered a silent state (a
 * received ChangeCipherSpec reaches no callback). States without a message (OpenSSL's
 * dummy states, the client's TLS_ST_BEFORE) never end a step: their work belongs to the
 * next message. The label is SSL_get_state() when the step ends: the state of the message
 * just written or parsed. A step that ends in SSL_do_handshake() waiting for bytes has no
 * message yet: its label is written when the message is known, in a later call (the
 * records stay in the trace buffer until the repetition ends, so the START/STOP pair is
 * relabelled in place). The step open when the handshake completes is HANDSHAKE_DONE
 * (TLS_ST_OK: OpenSSL's wrap-up). Compiled out with the tracer: no callback is installed. */
#if TB_TRACE_ENABLED

/* States whose message OpenSSL parses without calling the message callback: a received
 * ChangeCipherSpec. Entering one counts as "the step has its message". */
static const bool tb_ossl_state_silent[TB_COUNT(tb_ossl_state_labels)] = {
    [TLS_ST_CR_CHANGE] = true,
    [TLS_ST_SR_CHANGE] = true,
};

static bool tb_ossl_state_is_silent(int state) {
    return state >= 0 && (size_t)state < TB_COUNT(tb_ossl_state_silent) && tb_ossl_state_silent[state];
}

/* The random of a HelloRetryRequest (RFC 8446 4.1.3): a ServerHello carrying it is an HRR. */
static const uint8_t tb_ossl_hrr_random[32] = {
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C};

/* Where the next record will be stored, with the label it will carry. */
static tb_ossl_record_ref tb_ossl_emit_ref(uint16_t label) {
    uint32_t before = tb_trace_buffer.count;
    return (tb_ossl_record_ref){.index = before < TB_TRACE_CAPACITY ? before : TB_OSSL_NO_RECORD, .label = label};
}

/* Rewrites a record's label if it is still the record we wrote (same peer, same label). */
static void tb_ossl_relabel(tb_ossl_record_ref ref, uint8_t peer, uint16_t label) {
    if (ref.index >= tb_trace_buffer.count)
        return;
    tb_record *r = &tb_trace_buffer.records[ref.index];
    if (r->peer == peer && r->label == ref.label)
        r->label = label;
}

static void tb_ossl_step_open(tb_session *s) {
    tb_ossl_steps *st = &s->steps;
    int state = (int)SSL_get_state(s->ssl);
    st->open = true;
    st->has_message = false;
    st->override = 0;
    st->start_state = state;
    /* Provisional: the message of this step is not known yet. */
    st->label = tb_openssl_state_label(state) ? tb_openssl_state_label(state) : TB_L_HELLO_REQUEST;
    st->start = tb_ossl_emit_ref(st->label);
    tb_begin(st->label);
}

/* Ends the open step. known: its message is known (label = the current state's);
 * otherwise it waits in `pending` for the next step that knows its message. */
static void tb_ossl_step_close(tb_session *s, bool known, uint64_t value) {
    tb_ossl_steps *st = &s->steps;
    if (!st->open)
        return;
    tb_ossl_record_ref stop = tb_ossl_emit_ref(st->label);
    tb_end(st->label, value);
    st->open = false;
    if (!known) {
        if (st->n_pending + 2 <= TB_OSSL_MAX_PENDING) {
            st->pending[st->n_pending++] = st->start;
            st->pending[st->n_pending++] = stop;
        }
        return;
    }
    uint16_t label = st->override ? st->override : tb_openssl_state_label((int)SSL_get_state(s->ssl));
    label = label ? label : st->label;
    tb_ossl_relabel(st->start, s->peer, label);
    tb_ossl_relabel(stop, s->peer, label);
    for (uint32_t i = 0; i < st->n_pending; i++)
        tb_ossl_relabel(st->pending[i], s->peer, label);
    st->n_pending = 0;
}

static bool tb_ossl_step_has_message(const tb_session *s) {
    int state = (int)SSL_get_state(s->ssl);
    return s->steps.has_message || (state != s->steps.start_state && tb_ossl_state_is_silent(state));
}

/* A state ended (SSL_CB_LOOP): end the step if it has its message, open the next. */
static void tb_ossl_info_cb(const SSL *ssl, int where, int ret) {
    (void)ret;
    tb_session *s = SSL_get_app_data(ssl);
    if (!(where & SSL_CB_LOOP) || !s || !s->steps.open || !tb_ossl_step_has_message(s))
        return;
    tb_ossl_step_close(s, true, 0);
    tb_ossl_step_open(s);
}

/* A handshake message (or a sent ChangeCipherSpec) was written or received completely. */
static void tb_ossl_msg_cb(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl,
                           void *arg) {
    (void)version;
    (void)ssl;
    tb_session *s = arg;
    bool handshake = content_type == SSL3_RT_HANDSHAKE;
    if (!s->steps.open || !(handshake || (write_p && content_type == SSL3_RT_CHANGE_CIPHER_SPEC)))
        return;
    s->steps.has_message = true;
    const uint8_t *m = buf;
    /* type(1) length(3) legacy_version(2) random(32) */
    if (handshake && len >= 38 && m[0] == SSL3_MT_SERVER_HELLO &&
        memcmp(m + 6, tb_ossl_hrr_random, sizeof tb_ossl_hrr_random) == 0)
        s->steps.override = TB_L_HELLO_RETRY_REQUEST;
    /* TLS 1.3: read after the handshake, when the state says only "OK" */
    if (handshake && len >= 1 && m[0] == SSL3_MT_NEWSESSION_TICKET)
        s->steps.override = TB_L_NEW_SESSION_TICKET;
}

/* Before a BIO read: the first read after the step's message arrived is the next step's. */
static void tb_ossl_before_read(tb_session *s) {
    if (!s->steps.open || !tb_ossl_step_has_message(s))
        return;
    tb_ossl_step_close(s, true, 0);
    tb_ossl_step_open(s);
}

static void tb_ossl_install_tracing(tb_session *s) {
    SSL_set_info_callback(s->ssl, tb_ossl_info_cb);
    SSL_set_msg_callback(s->ssl, tb_ossl_msg_cb);
    SSL_set_msg_callback_arg(s->ssl, s);
}

/* SSL_do_handshake() entry: a fresh step (nothing carried over from the other peer's turn). */
static void tb_ossl_steps_enter(tb_session *s) { tb_ossl_step_open(s); }

/* SSL_do_handshake() returned: done -> the wrap-up step is HANDSHAKE_DONE; waiting -> the
 * step waits for its message; failed -> labelled with the state that failed. */
static void tb_ossl_steps_leave(tb_session *s, tb_step_result r, int ret) {
    tb_ossl_step_close(s, r != TB_STEP_WANT_READ || tb_ossl_step_has_message(s), (uint64_t)(int64_t)ret);
}

#else /* the uninstrumented baseline: no callbacks, no bookkeeping */

static void tb_ossl_before_read(tb_session *s) { (void)s; }
static void tb_ossl_install_tracing(tb_session *s) { (void)s; }
static void tb_ossl_steps_enter(tb_session *s) { (void)s; }
static void tb_ossl_steps_leave(tb_session *s, tb_step_result r, int ret) {
    (void)s;
    (void)r;
    (void)ret;
}

#endif

/* ---------------------------------------------------------------- BIO over tb_io */

/* The tb_io functions are already traced as I/O by the core. */
static int tb_ossl_bio_read(BIO *bio, char *buf, int len) {
    tb_session *s = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    if (len <= 0)
        return 0;
    tb_ossl_before_read(s);
    int n = s->io.recv(s->io.ctx, (uint8_t *)buf, (size_t)len);
    if (n == TB_IO_WOULD_BLOCK)
        BIO_set_retry_read(bio);
    return n > 0 ? n : -1;
}

static int tb_ossl_bio_write(BIO *bio, const char *buf, int len) {
    tb_session *s = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    if (len <= 0)
        return 0;
    int n = s->io.send(s->io.ctx, (const uint8_t *)buf, (size_t)len);
    if (n == TB_IO_WOULD_BLOCK)
        BIO_set_retry_write(bio);
    return n > 0 ? n : -1;
}

/* Flush: bytes were handed to the transport by write already. Everything else (the DTLS
 * datagram controls included: the MTU is set, not queried, SSL_OP_NO_QUERY_MTU; the timer
 * is the session's): unsupported. */
static long tb_ossl_bio_ctrl(BIO *bio, int cmd, long num, void *ptr) {
    (void)bio;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

/* ---------------------------------------------------------------- DTLS */

/* OpenSSL cannot ask our BIO for the path MTU: without a RUN MTU, an Ethernet path's
 * (1500 minus IPv4 and UDP headers). */
#define TB_OSSL_DTLS_DEFAULT_MTU 1472
#define TB_OSSL_DTLS_DEFAULT_MIN_US 1000000u  /* OpenSSL's own: 1 s, doubling ... */
#define TB_OSSL_DTLS_DEFAULT_MAX_US 60000000u /* ... up to 60 s */

static unsigned char tb_ossl_cookie_secret[32];
static bool tb_ossl_cookie_secret_ready;

/* cookie = SHA-256(process secret || the client's transport id), first 16 bytes. */
static int tb_ossl_cookie_make(SSL *ssl, unsigned char *cookie, unsigned int *len) {
    tb_session *s = SSL_get_app_data(ssl);
    unsigned char in[sizeof tb_ossl_cookie_secret + sizeof s->peer_id], md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!tb_ossl_cookie_secret_ready)
        tb_ossl_cookie_secret_ready = RAND_bytes(tb_ossl_cookie_secret, sizeof tb_ossl_cookie_secret) == 1;
    memcpy(in, tb_ossl_cookie_secret, sizeof tb_ossl_cookie_secret);
    memcpy(in + sizeof tb_ossl_cookie_secret, s->peer_id, s->peer_id_len);
    if (!tb_ossl_cookie_secret_ready ||
        EVP_Digest(in, sizeof tb_ossl_cookie_secret + s->peer_id_len, md, &mdlen, EVP_sha256(), NULL) != 1)
        return 0;
    memcpy(cookie, md, 16);
    *len = 16;
    return 1;
}

static int tb_ossl_cookie_verify(SSL *ssl, const unsigned char *cookie, unsigned int len) {
    unsigned char want[DTLS1_COOKIE_LENGTH];
    unsigned int n = 0;
    return tb_ossl_cookie_make(ssl, want, &n) == 1 && n == len && CRYPTO_memcmp(want, cookie, n) == 0;
}

/* DTLS_set_timer_cb: called with 0 when a flight's timer first starts (the initial timeout)
 * and with the last timeout when it expired (OpenSSL then resends the flight): count those. */
static unsigned int tb_ossl_dtls_timer(SSL *ssl, unsigned int last_us) {
    tb_session *s = SSL_get_app_data(ssl);
    if (last_us == 0)
        return s->timeout_min_us;
    s->retransmissions++;
    tb_instant(TB_L_RETRANSMIT, s->retransmissions);
    return last_us >= s->timeout_max_us / 2 ? s->timeout_max_us : last_us * 2;
}

static void tb_ossl_configure_dtls(tb_session *s, const tb_conn_config *cfg) {
    s->timeout_min_us = cfg->dtls_timeout_min_ms ? cfg->dtls_timeout_min_ms * 1000u : TB_OSSL_DTLS_DEFAULT_MIN_US;
    s->timeout_max_us = cfg->dtls_timeout_max_ms ? cfg->dtls_timeout_max_ms * 1000u : TB_OSSL_DTLS_DEFAULT_MAX_US;
    if (s->timeout_max_us < s->timeout_min_us)
        s->timeout_max_us = s->timeout_min_us;
    DTLS_set_timer_cb(s->ssl, tb_ossl_dtls_timer);
    SSL_set_options(s->ssl, SSL_OP_NO_QUERY_MTU);
    SSL_set_mtu(s->ssl, cfg->dtls_mtu ? cfg->dtls_mtu : TB_OSSL_DTLS_DEFAULT_MTU);
    if (s->peer == TB_PEER_SERVER && (cfg->options & TB_OPTION_DTLS_COOKIES))
        SSL_set_options(s->ssl, SSL_OP_COOKIE_EXCHANGE); /* stateful HelloVerifyRequest in SSL_accept */
}

static uint32_t tb_ossl_timeout_ms(tb_session *s) {
    struct timeval tv;
    if (!s->dtls || DTLSv1_get_timeout(s->ssl, &tv) != 1)
        return TB_NO_TIMER;
    uint64_t us = (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
    return (uint32_t)((us + 999u) / 1000u);
}

static uint32_t tb_ossl_retransmissions(tb_session *s) { return s->retransmissions; }

/* ---------------------------------------------------------------- init */

/* Reads every certificate of a PEM text; the first is the leaf. Returns how many. */
static int tb_ossl_read_certs(const char *pem, X509 **certs, int max) {
    BIO *b = BIO_new_mem_buf(pem, -1);
    int n = 0;
    for (X509 *x = NULL; b && n < max && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL;)
        certs[n++] = x;
    BIO_free(b);
    ERR_clear_error(); /* the end of the PEM text is reported as an error */
    return n;
}

static EVP_PKEY *tb_ossl_read_key(const char *pem) {
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    return k;
}

/* What every session context has: no tickets (a RESUME session turns them on), no session
 * cache (but the RESUME_ID server's), no renegotiation, every suite allowed by the security
 * level (a session then pins one). */
static SSL_CTX *tb_ossl_ctx_new(tb_ossl_role role, bool dtls) {
    bool server = role != TB_OSSL_CLIENT;
    const SSL_METHOD *m = server ? (dtls ? DTLS_server_method() : TLS_server_method())
                                 : (dtls ? DTLS_client_method() : TLS_client_method());
    SSL_CTX *ctx = SSL_CTX_new(m);
    if (!ctx)
        return NULL;
    if (dtls && server) { /* used when a RUN asks for cookies */
        SSL_CTX_set_cookie_generate_cb(ctx, tb_ossl_cookie_make);
        SSL_CTX_set_cookie_verify_cb(ctx, tb_ossl_cookie_verify);
    }
    SSL_CTX_set_security_level(ctx, 0);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_session_cache_mode(ctx, role == TB_OSSL_SERVER_ID_CACHE ? SSL_SESS_CACHE_SERVER : SSL_SESS_CACHE_OFF);
    /* A server that verifies client certificates resumes only sessions of its own context. */
    SSL_CTX_set_session_id_context(ctx, tb_ossl_sid_ctx, sizeof tb_ossl_sid_ctx - 1);
    /* The server sends the chain it was given: building it from a store for every handshake
     * (OpenSSL's default) would add an X509_verify_cert() to the server's certificate step. */
    SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
    return ctx;
}

/* One peer's own certificate chain and key (the client's is sent only when the server asks:
 * MUTUAL_AUTH), and the CA it verifies the other peer with (the server verifies only when
 * MUTUAL_AUTH asks it to). 0, or -1 with why. */
static int tb_ossl_load_peer(SSL_CTX *ctx, const char *chain, const char *key_pem, const char *ca_pem, char *why,
                             size_t whylen) {
    X509 *certs[8], *ca = NULL;
    int n = tb_ossl_read_certs(chain, certs, 8);
    EVP_PKEY *key = tb_ossl_read_key(key_pem);
    int ok = n > 0 && key && SSL_CTX_use_certificate(ctx, certs[0]) == 1;
    for (int i = 1; ok && i < n; i++)
        ok = SSL_CTX_add1_chain_cert(ctx, certs[i]) == 1;
    ok = ok && SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
    ok = ok && tb_ossl_read_certs(ca_pem, &ca, 1) == 1 && X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca) == 1;
    if (!ok) {
        char text[120];
        ERR_error_string_n(ERR_get_error(), text, sizeof text);
        snprintf(why, whylen, "OpenSSL cannot load the certificates or key: %.100s", text);
    }
    for (int i = 0; i < n; i++)
        X509_free(certs[i]);
    X509_free(ca);
    EVP_PKEY_free(key);
    ERR_clear_error();
    return ok ? 0 : -1;
}

static int tb_ossl_load_role(SSL_CTX *ctx, tb_ossl_role role, const tb_credential_pem *pem, char *why, size_t whylen) {
    if (role != TB_OSSL_CLIENT)
        return tb_ossl_load_peer(ctx, pem->server_chain, pem->server_key, pem->ca, why, whylen);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL); /* the client verifies the server */
    return tb_ossl_load_peer(ctx, pem->client_chain, pem->client_key, pem->ca, why, whylen);
}

static void tb_ossl_cred_load(tb_ossl_cred *c, uint8_t id) {
    const tb_credential_pem *pem = tb_ossl_pem_find(id);
    c->ready = true;
    for (int dtls = 0; dtls < 2; dtls++)
        for (int role = 0; role < TB_OSSL_N_ROLES; role++) {
            SSL_CTX *ctx = c->ctx[dtls][role] = tb_ossl_ctx_new((tb_ossl_role)role, dtls);
            if (!ctx)
                snprintf(c->why, sizeof c->why, "SSL_CTX_new failed");
            /* PSK: no certificates; the key is given by the session's PSK callbacks. */
            c->ready = c->ready && ctx &&
                       (!pem || tb_ossl_load_role(ctx, (tb_ossl_role)role, pem, c->why, sizeof c->why) == 0);
            if (c->ready && id == TB_CREDENTIAL_RPK_ECDSA && !tb_ossl_ctx_rpk_types(ctx)) {
                snprintf(c->why, sizeof c->why, "OpenSSL refused the raw public key certificate types");
                c->ready = false;
            }
        }
}

/* DH parameters of an RFC 7919 group, for a TLS 1.2 DHE server (OpenSSL 3.0 does not
 * negotiate FFDHE groups in TLS 1.2: the server sends the parameters it was given). */
static EVP_PKEY *tb_ossl_ffdhe_params(const char *name) {
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)name, 0),
                           OSSL_PARAM_construct_end()};
    EVP_PKEY *pkey = NULL;
    if (!pctx || EVP_PKEY_fromdata_init(pctx) <= 0 || EVP_PKEY_fromdata(pctx, &pkey, EVP_PKEY_KEY_PARAMETERS, params) <= 0)
        pkey = NULL;
    EVP_PKEY_CTX_free(pctx);
    return pkey;
}

/* Which groups the providers offer: SSL_CTX_set1_groups_list() checks names against them. */
static void tb_ossl_groups_probe(void) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    for (size_t i = 0; i < TB_COUNT(tb_ossl_groups); i++) {
        tb_ossl.group_available[i] = ctx && SSL_CTX_set1_groups_list(ctx, tb_ossl_groups[i].name) == 1;
        if (tb_ossl.group_available[i] && tb_ossl_groups[i].ffdhe)
            tb_ossl.ffdhe_params[i] = tb_ossl_ffdhe_params(tb_ossl_groups[i].name);
    }
    SSL_CTX_free(ctx);
    ERR_clear_error();
}

static int tb_ossl_init(char *err, size_t errlen) {
    if (tb_ossl.initialized)
        return 0;
    if (OPENSSL_init_ssl(0, NULL) != 1) {
        snprintf(err, errlen, "OPENSSL_init_ssl failed");
        return -1;
    }
    tb_ossl_suite_count(); /* the suite table, before any repetition */
    tb_ossl.bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tlsbench tb_io");
    if (!tb_ossl.bio_method || BIO_meth_set_read(tb_ossl.bio_method, tb_ossl_bio_read) != 1 ||
        BIO_meth_set_write(tb_ossl.bio_method, tb_ossl_bio_write) != 1 ||
        BIO_meth_set_ctrl(tb_ossl.bio_method, tb_ossl_bio_ctrl) != 1) {
        snprintf(err, errlen, "creating the BIO method failed");
        return -1;
    }
    tb_ossl_groups_probe();
    for (uint8_t id = 1; id < TB_CREDENTIAL_SLOTS; id++)
        if (tb_ossl_cred_offered(id))
            tb_ossl_cred_load(&tb_ossl.creds[id], id);
    tb_ossl.initialized = true;
    return 0;
}

static void tb_ossl_deinit(void) {
    if (!tb_ossl.initialized)
        return;
    for (size_t i = 0; i < TB_CREDENTIAL_SLOTS; i++) {
        for (int dtls = 0; dtls < 2; dtls++)
            for (int role = 0; role < TB_OSSL_N_ROLES; role++)
                SSL_CTX_free(tb_ossl.creds[i].ctx[dtls][role]);
        tb_ossl.creds[i] = (tb_ossl_cred){0};
    }
    SSL_SESSION_free(tb_ossl.resume);
    tb_ossl.resume = NULL;
    for (size_t i = 0; i < TB_COUNT(tb_ossl_groups); i++) {
        EVP_PKEY_free(tb_ossl.ffdhe_params[i]);
        tb_ossl.ffdhe_params[i] = NULL;
    }
    BIO_meth_free(tb_ossl.bio_method);
    tb_ossl.bio_method = NULL;
    tb_ossl.initialized = false;
}

/* ---------------------------------------------------------------- sessions */

static const char *tb_ossl_credential_why(uint8_t credential) {
    const tb_ossl_cred *c = credential < TB_CREDENTIAL_SLOTS ? &tb_ossl.creds[credential] : NULL;
    return c && !c->ready ? c->why : NULL;
}

static tb_group_support tb_ossl_group_support(uint16_t group) {
    size_t g = tb_ossl_group_index(group);
    return g == SIZE_MAX ? TB_GROUP_UNKNOWN : tb_ossl.group_available[g] ? TB_GROUP_READY : TB_GROUP_NOT_BUILT;
}

/* Groups OpenSSL offers in one TLS version only (small curves, brainpool code points, ML-KEM). */
static const char *tb_ossl_group_limit(const void *suite_row, uint16_t group) {
    const tb_ossl_suite *suite = suite_row;
    size_t g = tb_ossl_group_index(group);
    uint8_t need = suite->tls13 ? TB_OSSL_TLS13 : TB_OSSL_TLS12;
    if (g == SIZE_MAX || (tb_ossl_groups[g].versions & need))
        return NULL;
    return suite->tls13 ? "a TLS 1.3 group (OpenSSL offers this one in TLS 1.2 only)"
                        : "a TLS 1.2 group (OpenSSL offers this one in TLS 1.3 only)";
}

static const tb_backend_rules tb_ossl_rules = {
    .library_name = "OpenSSL",
    .suites = &tb_ossl_suites,
    .initialized = &tb_ossl.initialized,
    .credential_why = tb_ossl_credential_why,
    .group_support = tb_ossl_group_support,
    .group_limit = tb_ossl_group_limit,
};

static unsigned int tb_ossl_psk_client_cb(SSL *ssl, const char *hint, char *identity, unsigned int max_identity_len,
                                          unsigned char *psk, unsigned int max_psk_len) {
    (void)ssl;
    (void)hint;
    return tb_psk_client(identity, max_identity_len, psk, max_psk_len);
}

static unsigned int tb_ossl_psk_server_cb(SSL *ssl, const char *identity, unsigned char *psk,
                                          unsigned int max_psk_len) {
    (void)ssl;
    return tb_psk_server(identity, psk, max_psk_len);
}

/* TLS 1.3 external PSK (RFC 8446 4.2.11): a session holding the test key, for the pinned
 * suite (its hash is the PSK's). NULL when OpenSSL cannot make it. */
static SSL_SESSION *tb_ossl_psk_session(SSL *ssl, uint16_t suite_id) {
    const unsigned char id[2] = {(unsigned char)(suite_id >> 8), (unsigned char)suite_id};
    const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, id);
    SSL_SESSION *sess = SSL_SESSION_new();
    if (sess && cipher && SSL_SESSION_set1_master_key(sess, tb_psk_key, TB_PSK_LEN) == 1 &&
        SSL_SESSION_set1_id_context(sess, tb_ossl_sid_ctx, sizeof tb_ossl_sid_ctx - 1) == 1 &&
        SSL_SESSION_set_cipher(sess, cipher) == 1 && SSL_SESSION_set_protocol_version(sess, TLS1_3_VERSION) == 1)
        return sess;
    SSL_SESSION_free(sess);
    return NULL;
}

/* The client offers the test identity (once more after a HelloRetryRequest, if the hash fits). */
static int tb_ossl_psk_use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
                              SSL_SESSION **sess) {
    tb_session *s = SSL_get_app_data(ssl);
    *sess = tb_ossl_psk_session(ssl, s->suite_id);
    if (*sess && md && SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(*sess)) != md) {
        SSL_SESSION_free(*sess);
        *sess = NULL;
    }
    *id = (const unsigned char *)tb_psk_identity;
    *idlen = strlen(tb_psk_identity);
    return *sess != NULL;
}

/* The server knows only the test identity; another gets no session (the handshake fails). */
static int tb_ossl_psk_find_cb(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess) {
    tb_session *s = SSL_get_app_data(ssl);
    bool ours = idlen == strlen(tb_psk_identity) && memcmp(id, tb_psk_identity, idlen) == 0;
    *sess = ours ? tb_ossl_psk_session(ssl, s->suite_id) : NULL;
    return !ours || *sess != NULL;
}

/* The group list: the group, then (TLS 1.2 ECDSA) the certificate's curve: the client lists
 * them in that order and the server takes the client's first choice it has, i.e. the forced
 * group. TLS 1.2 DHE lists no group (the server sends the group's parameters). */
static int tb_ossl_set_groups(SSL *ssl, const tb_ossl_suite *suite, uint8_t credential, size_t g) {
    char list[64] = "";
    const char *group = g != SIZE_MAX && (suite->tls13 || !tb_ossl_groups[g].ffdhe) ? tb_ossl_groups[g].name : NULL;
    const char *curve = !suite->tls13 ? tb_ossl_cred_curve(credential) : NULL;
    if (curve && group && strcmp(curve, group) == 0)
        curve = NULL;
    snprintf(list, sizeof list, "%s%s%s", group ? group : "", group && curve ? ":" : "", curve ? curve : "");
    return list[0] == '\0' || SSL_set1_groups_list(ssl, list) == 1;
}

/* MUTUAL_AUTH, RESUME, the TLS 1.3 external PSK and PSK_ONLY on one session; 1 = ok. */
static int tb_ossl_configure_options(tb_session *s, const tb_conn_config *cfg) {
    SSL *ssl = s->ssl;
    bool server = s->peer == TB_PEER_SERVER;
    int ok = 1;
    if (server && (cfg->options & TB_OPTION_MUTUAL_AUTH))
        SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    /* RESUME: tickets (TLS 1.3 always; TLS 1.2 unless RESUME_ID, which resumes by session ID
     * from the server context's cache); the client offers the session its last connection left. */
    if ((cfg->options & TB_OPTION_RESUME) && !(cfg->options & TB_OPTION_RESUME_ID)) {
        SSL_clear_options(ssl, SSL_OP_NO_TICKET);
        ok = SSL_set_num_tickets(ssl, 1) == 1;
    }
    if (ok && !server && (cfg->options & TB_OPTION_RESUME) && !cfg->first_connection) {
        s->offered = tb_ossl.resume;
        ok = s->offered && SSL_SESSION_up_ref(s->offered) == 1 && SSL_set_session(ssl, s->offered) == 1;
    }
    if (ok && s->tls13 && cfg->credential == TB_CREDENTIAL_PSK) {
        if (server)
            SSL_set_psk_find_session_callback(ssl, tb_ossl_psk_find_cb);
        else
            SSL_set_psk_use_session_callback(ssl, tb_ossl_psk_use_cb);
    }
    if (ok && (cfg->options & TB_OPTION_PSK_ONLY))
        SSL_set_options(ssl, SSL_OP_ALLOW_NO_DHE_KEX | (server ? TB_OSSL_PREFER_NO_DHE : 0));
    /* RPK: the client pins the server's key; with MUTUAL_AUTH the server pins the client's. */
    const tb_credential_pem *pem = cfg->credential == TB_CREDENTIAL_RPK_ECDSA ? tb_ossl_pem_find(cfg->credential) : NULL;
    if (ok && pem && (!server || (cfg->options & TB_OPTION_MUTUAL_AUTH)))
        ok = tb_ossl_expect_rpk(ssl, server ? pem->client_public : pem->server_public);
    return ok;
}

/* Everything that can fail in OpenSSL's per-connection configuration, in order; 1 = ok. */
static int tb_ossl_configure(tb_session *s, const tb_ossl_suite *suite, const tb_conn_config *cfg, size_t g) {
    SSL *ssl = s->ssl;
    bool server = s->peer == TB_PEER_SERVER;
    int version = s->dtls ? DTLS1_2_VERSION : suite->tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
    int ok = SSL_set_min_proto_version(ssl, version) && SSL_set_max_proto_version(ssl, version);
    /* One suite: TLS 1.3 suites through set_ciphersuites, the others through the cipher list
     * (OpenSSL's name). The other list is left as is: the pinned version ignores it. */
    ok = ok && (suite->tls13 ? SSL_set_ciphersuites(ssl, suite->info.name) : SSL_set_cipher_list(ssl, suite->openssl_name));
    ok = ok && tb_ossl_set_groups(ssl, suite, cfg->credential, g);
    if (ok && server && g != SIZE_MAX && tb_ossl_groups[g].ffdhe && !suite->tls13) {
        EVP_PKEY *dh = tb_ossl.ffdhe_params[g];
        ok = EVP_PKEY_up_ref(dh) == 1 && SSL_set0_tmp_dh_pkey(ssl, dh) == 1;
    }
    if (ok && suite->kex->psk && server)
        SSL_set_psk_server_callback(ssl, tb_ossl_psk_server_cb);
    if (ok && suite->kex->psk && !server)
        SSL_set_psk_client_callback(ssl, tb_ossl_psk_client_cb);
    ok = ok && tb_ossl_configure_options(s, cfg);
    /* The client verifies the chain and the host name (a raw public key: its pinned key) and
     * sends the name as SNI, like a real client. */
    ok = ok && (server || SSL_set_tlsext_host_name(ssl, TB_CREDENTIAL_HOSTNAME) == 1);
    ok = ok && (server || cfg->credential == TB_CREDENTIAL_RPK_ECDSA || SSL_set1_host(ssl, TB_CREDENTIAL_HOSTNAME) == 1);
    /* RFC 6066 codes 1..4 are OpenSSL's TLSEXT_max_fragment_length_512..4096 (the client asks). */
    ok = ok && (server || cfg->max_fragment == 0 || SSL_set_tlsext_max_fragment_length(ssl, cfg->max_fragment) == 1);
    if (ok && s->dtls)
        tb_ossl_configure_dtls(s, cfg);
    return ok;
}

static void tb_ossl_session_free(tb_session *s) {
    if (!s)
        return;
    SSL_free(s->ssl); /* frees the BIO too */
    SSL_SESSION_free(s->offered);
    free(s);
}

/* RESUME, client: a RUN's first connection forgets the last RUN's session; every later one
 * needs the session the previous connection left. */
static int tb_ossl_resume_prepare(uint8_t peer, const tb_conn_config *cfg, char *err, size_t errlen) {
    if ((cfg->options & TB_OPTION_RESUME) && peer == TB_PEER_CLIENT && cfg->first_connection) {
        SSL_SESSION_free(tb_ossl.resume);
        tb_ossl.resume = NULL;
    }
    return tb_resume_ready(peer, cfg, tb_ossl.resume != NULL, err, errlen);
}

/* The connection's suite row and group index (SIZE_MAX: none), NULL with why when the build
 * cannot make it: the common checks, then OpenSSL's own. */
static const tb_ossl_suite *tb_ossl_suite_check(const tb_conn_config *cfg, size_t *g, char *err, size_t errlen) {
    uint16_t group = 0;
    const tb_ossl_suite *suite = tb_backend_check(&tb_ossl_rules, cfg, &group, err, errlen);
    *g = group ? tb_ossl_group_index(group) : SIZE_MAX;
    /* OpenSSL 3.0 does not negotiate FFDHE in TLS 1.2: the server sends the group's parameters. */
    if (suite && *g != SIZE_MAX && !suite->tls13 && tb_ossl_groups[*g].ffdhe && !tb_ossl.ffdhe_params[*g]) {
        snprintf(err, errlen, "group %s: OpenSSL cannot create its DH parameters", tb_ossl_groups[*g].name);
        return NULL;
    }
    return suite;
}

static int tb_ossl_check(const tb_conn_config *cfg, char *err, size_t errlen) {
    size_t g;
    return tb_ossl_suite_check(cfg, &g, err, errlen) ? 0 : -1;
}

static tb_session *tb_ossl_session_new(uint8_t peer, const tb_conn_config *cfg, tb_io io, char *err, size_t errlen) {
    size_t g;
    const tb_ossl_suite *suite = tb_ossl_suite_check(cfg, &g, err, errlen);
    if (!suite)
        return NULL;
    if (tb_ossl_resume_prepare(peer, cfg, err, errlen) != 0)
        return NULL;
    tb_session *s = calloc(1, sizeof *s);
    const tb_ossl_cred *cred = &tb_ossl.creds[cfg->credential];
    bool dtls = cfg->protocol == TB_PROTOCOL_KIND_DTLS;
    tb_ossl_role role = peer != TB_PEER_SERVER ? TB_OSSL_CLIENT
                        : (cfg->options & TB_OPTION_RESUME_ID) ? TB_OSSL_SERVER_ID_CACHE : TB_OSSL_SERVER;
    if (!s || !(s->ssl = SSL_new(cred->ctx[dtls][role]))) {
        snprintf(err, errlen, "out of memory");
        free(s);
        return NULL;
    }
    s->io = io;
    s->peer = peer;
    s->dtls = dtls;
    s->tls13 = suite->tls13;
    s->options = cfg->options;
    s->first_connection = cfg->first_connection;
    s->suite_id = suite->info.id;
    s->peer_id_len = tb_peer_id_copy(s->peer_id, sizeof s->peer_id, cfg);
    BIO *bio = BIO_new(tb_ossl.bio_method);
    if (bio) {
        BIO_set_data(bio, s);
        BIO_set_init(bio, 1);
        SSL_set_bio(s->ssl, bio, bio); /* one reference for both directions */
    }
    SSL_set_app_data(s->ssl, s);
    if (!bio || !tb_ossl_configure(s, suite, cfg, g)) {
        char text[120];
        ERR_error_string_n(ERR_peek_last_error(), text, sizeof text);
        snprintf(err, errlen, "configuring the %s for %s failed: %.120s", tb_peer_name(peer), suite->info.name, text);
        ERR_clear_error();
        tb_ossl_session_free(s);
        return NULL;
    }
    tb_ossl_install_tracing(s);
    if (peer == TB_PEER_SERVER)
        SSL_set_accept_state(s->ssl);
    else
        SSL_set_connect_state(s->ssl);
    return s;
}

/* ---------------------------------------------------------------- handshake and records */

/* What SSL_get_error() means for a step. */
static tb_step_result tb_ossl_step_result(SSL *ssl, int ret) {
    if (ret == 1)
        return TB_STEP_DONE;
    int e = SSL_get_error(ssl, ret);
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? TB_STEP_WANT_READ : TB_STEP_ERROR;
}

/* RESUME, TLS 1.3 client: the server's NewSessionTicket comes after the handshake. It has
 * arrived when the connection's session is resumable and is not the one offered (OpenSSL
 * replaces the session with a copy holding the new ticket). */
static bool tb_ossl_awaits_ticket(tb_session *s) {
    SSL_SESSION *now = SSL_get0_session(s->ssl);
    return (s->options & TB_OPTION_RESUME) && s->peer == TB_PEER_CLIENT && s->tls13 &&
           (now == s->offered || !SSL_SESSION_is_resumable(now));
}

/* RESUME: a connection after the RUN's first that did not resume fails (a full handshake
 * would be measured as a resumed one); the client keeps the session for the next one. */
static tb_step_result tb_ossl_handshake_over(tb_session *s, int32_t *lib_error) {
    tb_step_result r = tb_resume_verdict(s->options, s->first_connection, SSL_session_reused(s->ssl) == 1, lib_error);
    if (r == TB_STEP_DONE && (s->options & TB_OPTION_RESUME) && s->peer == TB_PEER_CLIENT) {
        SSL_SESSION_free(tb_ossl.resume);
        tb_ossl.resume = SSL_get1_session(s->ssl);
    }
    return r;
}

/* One SSL_peek() (application data stays for read()): processes the NewSessionTicket, traced
 * as a step like the handshake's. */
static tb_step_result tb_ossl_read_ticket(tb_session *s, int32_t *lib_error) {
    unsigned char byte;
    ERR_clear_error();
    tb_ossl_steps_enter(s);
    int ret = SSL_peek(s->ssl, &byte, 1);
    tb_step_result r = ret > 0 ? TB_STEP_DONE : tb_ossl_step_result(s->ssl, ret);
    tb_ossl_steps_leave(s, r, ret);
    if (r == TB_STEP_ERROR) {
        *lib_error = tb_ossl_lib_error(s->ssl, ret);
        return r;
    }
    return tb_ossl_awaits_ticket(s) ? TB_STEP_WANT_READ : tb_ossl_handshake_over(s, lib_error);
}

/* One SSL_do_handshake() call: every state it can run, each traced as one step span. */
static tb_step_result tb_ossl_step(tb_session *s, int32_t *lib_error) {
    if (SSL_is_init_finished(s->ssl))
        return tb_ossl_awaits_ticket(s) ? tb_ossl_read_ticket(s, lib_error) : TB_STEP_DONE;
    ERR_clear_error(); /* SSL_get_error() needs an empty queue before the call */
    if (s->dtls) /* an expired timer resends the last flight here, outside any step span */
        DTLSv1_handle_timeout(s->ssl);
    tb_ossl_steps_enter(s);
    int ret = SSL_do_handshake(s->ssl);
    tb_step_result r = tb_ossl_step_result(s->ssl, ret);
    tb_ossl_steps_leave(s, r, ret);
    if (r == TB_STEP_ERROR)
        *lib_error = tb_ossl_lib_error(s->ssl, ret);
    if (r != TB_STEP_DONE)
        return r;
    return tb_ossl_awaits_ticket(s) ? TB_STEP_CONTINUE : tb_ossl_handshake_over(s, lib_error);
}

/* A record call's return -> the backend contract. */
static int tb_ossl_io_result(SSL *ssl, int ret, int32_t *lib_error) {
    if (ret > 0)
        return ret;
    int e = SSL_get_error(ssl, ret);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return TB_IO_WOULD_BLOCK;
    *lib_error = tb_ossl_lib_error(ssl, ret);
    return -1;
}

static int tb_ossl_write(tb_session *s, const uint8_t *buf, size_t len, int32_t *lib_error) {
    ERR_clear_error();
    int n = len > INT_MAX ? INT_MAX : (int)len;
    return tb_ossl_io_result(s->ssl, SSL_write(s->ssl, buf, n), lib_error);
}

static int tb_ossl_read(tb_session *s, uint8_t *buf, size_t len, int32_t *lib_error) {
    ERR_clear_error();
    int n = len > INT_MAX ? INT_MAX : (int)len;
    return tb_ossl_io_result(s->ssl, SSL_read(s->ssl, buf, n), lib_error);
}

/* SSL_shutdown: 0 = our close_notify was sent (the peer's not yet read), 1 = both. */
static int tb_ossl_close_notify(tb_session *s, int32_t *lib_error) {
    ERR_clear_error();
    int ret = SSL_shutdown(s->ssl);
    if (ret >= 0)
        return 0;
    return tb_ossl_io_result(s->ssl, ret, lib_error);
}

/* After SSL_shutdown, OpenSSL's DTLS record layer drops every record but alerts and
 * application data (SSL_SENT_SHUTDOWN), so the client's retransmitted Finished would never
 * reach the code that resends our CCS and Finished. The close_notify is on the wire: only
 * the flag goes, and SSL_read answers again (and still ends at the client's close_notify). */
static void tb_ossl_linger(tb_session *s) { SSL_set_shutdown(s->ssl, SSL_get_shutdown(s->ssl) & ~SSL_SENT_SHUTDOWN); }

const tb_backend tb_linked_backend = {
    .name = "openssl",
    .library_name = "OpenSSL",
    .version = tb_ossl_version,
    .step_granularity = "state",
    .options = TB_OPTION_MUTUAL_AUTH | TB_OPTION_RESUME | TB_OPTION_RESUME_ID | TB_OSSL_PSK_ONLY,
    .describe_build = tb_ossl_describe_build,
    .suite_count = tb_ossl_suite_count,
    .suite_at = tb_ossl_suite_at,
    .init = tb_ossl_init,
    .deinit = tb_ossl_deinit,
    .check = tb_ossl_check,
    .session_new = tb_ossl_session_new,
    .step = tb_ossl_step,
    .write = tb_ossl_write,
    .read = tb_ossl_read,
    .close_notify = tb_ossl_close_notify,
    .session_free = tb_ossl_session_free,
    .error_text = tb_ossl_error_text,
    .timeout_ms = tb_ossl_timeout_ms,
    .retransmissions = tb_ossl_retransmissions,
    .linger = tb_ossl_linger,
};
