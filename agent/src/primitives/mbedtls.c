/* SPDX-License-Identifier: Apache-2.0 */
/* mbed TLS's crypto calls for the primitive experiments (common.h), 2.28 and 3.6 alike. Each
 * primitive is compiled in only when the linked build's config has it, so a stripped custom
 * build lists fewer experiments instead of failing to build. Not in 2.28 at all: SHA3-256
 * (3.x has it); in neither: Ed25519.
 *
 * Calls are the module APIs TLS itself reaches (md, gcm/ccm/chachapoly, aes, pk, ecdh), on
 * contexts prepared by open(): keys set, HMAC pads computed, EC groups loaded. A 3.x build
 * with MBEDTLS_USE_PSA_CRYPTO (the device builds) does its TLS key agreement through PSA, so
 * ecdh-* here does too (psa_generate_key + psa_export_public_key, psa_raw_key_agreement):
 * where the build has a PSA driver (p256-m), the primitive measures the driver, as TLS does.
 * pk sign and verify go through PSA there on their own. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/md.h"
#include "mbedtls/pk.h"
#include "mbedtls/version.h"
#if defined(MBEDTLS_AES_C)
#include "mbedtls/aes.h"
#endif
#if defined(MBEDTLS_GCM_C)
#include "mbedtls/gcm.h"
#endif
#if defined(MBEDTLS_CCM_C)
#include "mbedtls/ccm.h"
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
#include "mbedtls/chachapoly.h"
#endif
#if defined(MBEDTLS_ECDH_C)
#include "mbedtls/ecdh.h"
#endif
#if defined(MBEDTLS_USE_PSA_CRYPTO)
#include "mbedtls/psa_util.h"
#include "psa/crypto.h"
#endif

#include "common.h"
#include "tlsbench/credentials.h"
#include "tlsbench/spec_gen.h"

/* ---------------------------------------------------------------- what this build has */

#if defined(MBEDTLS_SHA256_C) && defined(MBEDTLS_MD_C)
#define TB_MBED_SHA256 1
#endif
#if defined(MBEDTLS_SHA512_C) && defined(MBEDTLS_MD_C)
#define TB_MBED_SHA512 1
#endif
#if defined(MBEDTLS_SHA3_C) && defined(MBEDTLS_MD_C)
#define TB_MBED_SHA3 1
#endif
#if defined(MBEDTLS_AES_C) && defined(MBEDTLS_GCM_C)
#define TB_MBED_GCM 1
#endif
#if defined(MBEDTLS_AES_C) && defined(MBEDTLS_CCM_C)
#define TB_MBED_CCM 1
#endif
#if defined(MBEDTLS_AES_C) && defined(MBEDTLS_CIPHER_MODE_CBC)
#define TB_MBED_CBC 1
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
#define TB_MBED_CHACHAPOLY 1
#endif
#if defined(MBEDTLS_RSA_C) && defined(MBEDTLS_PK_PARSE_C) && defined(MBEDTLS_PKCS1_V15) && defined(TB_MBED_SHA256)
#define TB_MBED_RSA 1
#endif
#if defined(MBEDTLS_ECDSA_C) && defined(TB_MBED_SHA256)
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
#define TB_MBED_ECDSA_P256 1
#endif
#if defined(MBEDTLS_ECP_DP_SECP256K1_ENABLED)
#define TB_MBED_ECDSA_K256 1
#endif
#endif
#if defined(MBEDTLS_USE_PSA_CRYPTO)
#define TB_MBED_ECDH_PSA 1 /* key agreement as TLS makes it: PSA */
#endif
#if (defined(MBEDTLS_ECDH_C) || defined(TB_MBED_ECDH_PSA)) && defined(MBEDTLS_ECP_DP_CURVE25519_ENABLED)
#define TB_MBED_X25519 1
#endif
#if (defined(MBEDTLS_ECDH_C) || defined(TB_MBED_ECDH_PSA)) && defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
#define TB_MBED_ECDH_P256 1
#endif

/* What 3.x changed in the calls used here: the key parser takes the RNG (blinding), a
 * signature call its buffer's size. */
#if MBEDTLS_VERSION_MAJOR >= 3
#define TB_MBED_PARSE_KEY(pk, pem, len) mbedtls_pk_parse_key(pk, pem, len, NULL, 0, TB_RNG)
#define TB_MBED_SIG_ROOM(room) room,
#else
#define TB_MBED_PARSE_KEY(pk, pem, len) mbedtls_pk_parse_key(pk, pem, len, NULL, 0)
#define TB_MBED_SIG_ROOM(room)
#endif

/* ---------------------------------------------------------------- calls past the wrappers */

/* The backend's link-time wrappers (backends/mbedtls_wrap.h) would trace some calls below again,
 * as crypto spans nested in the groups: in a primitive the group is the span, and a nested
 * one would only add tracer events to it. With ld --wrap=X, __real_X is X itself; without
 * the flag __real_X stays undefined and, declared weak, null: then X is untraced anyway. */
#define TB_REAL(sym) extern __typeof__(sym) __real_##sym __attribute__((weak));
#define TB_UNTRACED(sym) (__real_##sym ? __real_##sym : sym)
TB_REAL(mbedtls_pk_sign)
TB_REAL(mbedtls_pk_verify)
#if defined(MBEDTLS_ECDH_C) && !defined(TB_MBED_ECDH_PSA)
TB_REAL(mbedtls_ecdh_make_public)
TB_REAL(mbedtls_ecdh_read_public)
TB_REAL(mbedtls_ecdh_calc_secret)
#endif
#if defined(TB_MBED_ECDH_PSA)
TB_REAL(psa_raw_key_agreement)
#endif


/* ---------------------------------------------------------------- the RNG */

/* One CTR_DRBG for the process, seeded once from mbed TLS's entropy collector (the OS).
 * Reseeding is pushed out of reach, so no measured call ever pays for one. ECDSA signs
 * deterministically (RFC 6979) where the build has MBEDTLS_ECDSA_DETERMINISTIC; the RNG
 * then only blinds. */
static struct {
    bool ready;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
} tb_mbed_rng;

static int tb_mbed_rng_ready(void) {
    static const unsigned char personal[] = "tlsbench primitives";
    if (tb_mbed_rng.ready)
        return 0;
    mbedtls_entropy_init(&tb_mbed_rng.entropy);
    mbedtls_ctr_drbg_init(&tb_mbed_rng.drbg);
    if (mbedtls_ctr_drbg_seed(&tb_mbed_rng.drbg, mbedtls_entropy_func, &tb_mbed_rng.entropy, personal,
                              sizeof personal - 1) != 0)
        return -1;
    mbedtls_ctr_drbg_set_reseed_interval(&tb_mbed_rng.drbg, INT_MAX);
    tb_mbed_rng.ready = true;
    return 0;
}

#define TB_RNG mbedtls_ctr_drbg_random, &tb_mbed_rng.drbg

/* ---------------------------------------------------------------- objects */

/* Every object starts with its id, so close() finds its kind. */
typedef struct tb_mbed_md {
    tb_prim_id id;
    mbedtls_md_context_t ctx;
} tb_mbed_md;

typedef struct tb_mbed_aead_impl tb_mbed_aead_impl;
typedef struct tb_mbed_aead {
    tb_prim_id id;
    const tb_mbed_aead_impl *impl;
    union {
#if defined(TB_MBED_GCM)
        mbedtls_gcm_context gcm;
#endif
#if defined(TB_MBED_CCM)
        mbedtls_ccm_context ccm;
#endif
#if defined(TB_MBED_CHACHAPOLY)
        mbedtls_chachapoly_context chachapoly;
#endif
        int none;
    } u;
} tb_mbed_aead;

typedef struct tb_mbed_cbc {
    tb_prim_id id;
#if defined(TB_MBED_CBC)
    mbedtls_aes_context enc, dec;
#endif
} tb_mbed_cbc;

typedef struct tb_mbed_pk {
    tb_prim_id id;
    mbedtls_pk_context pk;
} tb_mbed_pk;

typedef struct tb_mbed_ecdh {
    tb_prim_id id;
#if defined(TB_MBED_ECDH_PSA)
    psa_key_attributes_t attributes;
    mbedtls_svc_key_id_t peer[2]; /* each peer's current key pair (0: none) */
#elif defined(MBEDTLS_ECDH_C)
    mbedtls_ecdh_context peer[2];
#endif
} tb_mbed_ecdh;

/* ---------------------------------------------------------------- AEAD modules */

/* The three AEAD modules behind one shape. */
struct tb_mbed_aead_impl {
    int (*setkey)(tb_mbed_aead *a, const uint8_t *key, size_t key_len);
    int (*seal)(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                uint8_t *tag);
    int (*unseal)(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, const uint8_t *tag,
                  uint8_t *out);
    void (*free)(tb_mbed_aead *a);
};

#if defined(TB_MBED_GCM)
static int tb_gcm_setkey(tb_mbed_aead *a, const uint8_t *key, size_t key_len) {
    mbedtls_gcm_init(&a->u.gcm);
    return mbedtls_gcm_setkey(&a->u.gcm, MBEDTLS_CIPHER_ID_AES, key, (unsigned)key_len * 8);
}
static int tb_gcm_seal(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                       uint8_t *tag) {
    return mbedtls_gcm_crypt_and_tag(&a->u.gcm, MBEDTLS_GCM_ENCRYPT, n, m->nonce, m->nonce_len, m->aad,
                                     m->aad_len, in, out, m->tag_len, tag);
}
static int tb_gcm_unseal(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                         const uint8_t *tag, uint8_t *out) {
    return mbedtls_gcm_auth_decrypt(&a->u.gcm, n, m->nonce, m->nonce_len, m->aad, m->aad_len, tag, m->tag_len,
                                    in, out);
}
static void tb_gcm_free(tb_mbed_aead *a) { mbedtls_gcm_free(&a->u.gcm); }
static const tb_mbed_aead_impl tb_mbed_gcm = {tb_gcm_setkey, tb_gcm_seal, tb_gcm_unseal, tb_gcm_free};
#endif

#if defined(TB_MBED_CCM)
static int tb_ccm_setkey(tb_mbed_aead *a, const uint8_t *key, size_t key_len) {
    mbedtls_ccm_init(&a->u.ccm);
    return mbedtls_ccm_setkey(&a->u.ccm, MBEDTLS_CIPHER_ID_AES, key, (unsigned)key_len * 8);
}
static int tb_ccm_seal(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                       uint8_t *tag) {
    return mbedtls_ccm_encrypt_and_tag(&a->u.ccm, n, m->nonce, m->nonce_len, m->aad, m->aad_len, in, out, tag,
                                       m->tag_len);
}
static int tb_ccm_unseal(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                         const uint8_t *tag, uint8_t *out) {
    return mbedtls_ccm_auth_decrypt(&a->u.ccm, n, m->nonce, m->nonce_len, m->aad, m->aad_len, in, out, tag,
                                    m->tag_len);
}
static void tb_ccm_free(tb_mbed_aead *a) { mbedtls_ccm_free(&a->u.ccm); }
static const tb_mbed_aead_impl tb_mbed_ccm = {tb_ccm_setkey, tb_ccm_seal, tb_ccm_unseal, tb_ccm_free};
#endif

#if defined(TB_MBED_CHACHAPOLY)
/* The module takes only a 12-byte nonce and a 16-byte tag (RFC 8439). */
static bool tb_chachapoly_shape(const tb_prim_aead_msg *m) { return m->nonce_len == 12 && m->tag_len == 16; }
static int tb_chachapoly_setkey(tb_mbed_aead *a, const uint8_t *key, size_t key_len) {
    mbedtls_chachapoly_init(&a->u.chachapoly);
    return key_len == 32 ? mbedtls_chachapoly_setkey(&a->u.chachapoly, key) : -1;
}
static int tb_chachapoly_seal(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                              uint8_t *out, uint8_t *tag) {
    if (!tb_chachapoly_shape(m))
        return -1;
    return mbedtls_chachapoly_encrypt_and_tag(&a->u.chachapoly, n, m->nonce, m->aad, m->aad_len, in, out, tag);
}
static int tb_chachapoly_unseal(tb_mbed_aead *a, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                                const uint8_t *tag, uint8_t *out) {
    if (!tb_chachapoly_shape(m))
        return -1;
    return mbedtls_chachapoly_auth_decrypt(&a->u.chachapoly, n, m->nonce, m->aad, m->aad_len, tag, in, out);
}
static void tb_chachapoly_free(tb_mbed_aead *a) { mbedtls_chachapoly_free(&a->u.chachapoly); }
static const tb_mbed_aead_impl tb_mbed_chachapoly = {tb_chachapoly_setkey, tb_chachapoly_seal,
                                                     tb_chachapoly_unseal, tb_chachapoly_free};
#endif

/* ---------------------------------------------------------------- per-primitive parameters */

typedef struct tb_mbed_alg {
    mbedtls_md_type_t md;           /* HASH, MAC */
    const tb_mbed_aead_impl *aead;  /* AEAD */
    uint8_t credential;             /* RSA: the embedded key (server key of this credential) */
    mbedtls_ecp_group_id curve;     /* ECDSA, ECDH */
} tb_mbed_alg;

static const tb_mbed_alg tb_mbed_algs[TB_PRIM_COUNT] = {
#if defined(TB_MBED_SHA256)
    [TB_PRIM_SHA256] = {.md = MBEDTLS_MD_SHA256},
    [TB_PRIM_HMAC_SHA256] = {.md = MBEDTLS_MD_SHA256},
#endif
#if defined(TB_MBED_SHA512)
    [TB_PRIM_SHA512] = {.md = MBEDTLS_MD_SHA512},
#endif
#if defined(TB_MBED_SHA3)
    [TB_PRIM_SHA3_256] = {.md = MBEDTLS_MD_SHA3_256},
#endif
#if defined(TB_MBED_GCM)
    [TB_PRIM_AES128_GCM] = {.aead = &tb_mbed_gcm},
    [TB_PRIM_AES256_GCM] = {.aead = &tb_mbed_gcm},
#endif
#if defined(TB_MBED_CCM)
    [TB_PRIM_AES128_CCM] = {.aead = &tb_mbed_ccm},
    [TB_PRIM_AES256_CCM] = {.aead = &tb_mbed_ccm},
#endif
#if defined(TB_MBED_CHACHAPOLY)
    [TB_PRIM_CHACHA20_POLY1305] = {.aead = &tb_mbed_chachapoly},
#endif
    [TB_PRIM_RSA2048] = {.credential = TB_CREDENTIAL_RSA2048},
    [TB_PRIM_RSA3072] = {.credential = TB_CREDENTIAL_RSA3072},
#if defined(MBEDTLS_ECP_C)
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
    [TB_PRIM_ECDSA_P256] = {.curve = MBEDTLS_ECP_DP_SECP256R1},
    [TB_PRIM_ECDH_P256] = {.curve = MBEDTLS_ECP_DP_SECP256R1},
#endif
#if defined(MBEDTLS_ECP_DP_SECP256K1_ENABLED)
    [TB_PRIM_ECDSA_SECP256K1] = {.curve = MBEDTLS_ECP_DP_SECP256K1},
#endif
#if defined(MBEDTLS_ECP_DP_CURVE25519_ENABLED)
    [TB_PRIM_ECDH_X25519] = {.curve = MBEDTLS_ECP_DP_CURVE25519},
#endif
#endif
};

/* ---------------------------------------------------------------- open, per kind */

static void *tb_mbed_fail(void *obj, void (*close)(void *), char *err, size_t errlen, const char *what,
                          tb_prim_id id, int rc) {
    snprintf(err, errlen, "%s: %s (mbed TLS -0x%04x)", tb_prim_name(id), what, (unsigned)-rc);
    close(obj);
    return NULL;
}

static void tb_mbed_close(void *obj);

static void *tb_mbed_open_md(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    tb_mbed_md *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    mbedtls_md_init(&o->ctx);
    const mbedtls_md_info_t *info = mbedtls_md_info_from_type(tb_mbed_algs[id].md);
    int rc = info ? mbedtls_md_setup(&o->ctx, info, key != NULL) : MBEDTLS_ERR_MD_FEATURE_UNAVAILABLE;
    /* HMAC: the key's inner and outer pads are computed here, once; each digest resets. */
    if (rc == 0 && key != NULL)
        rc = mbedtls_md_hmac_starts(&o->ctx, key, key_len);
    return rc ? tb_mbed_fail(o, tb_mbed_close, err, errlen, "md setup failed", id, rc) : o;
}

static void *tb_mbed_open_aead(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    tb_mbed_aead *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    o->impl = tb_mbed_algs[id].aead;
    int rc = o->impl ? o->impl->setkey(o, key, key_len) : -1;
    return rc ? tb_mbed_fail(o, tb_mbed_close, err, errlen, "setting the key failed", id, rc) : o;
}

static void *tb_mbed_open_cbc(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    tb_mbed_cbc *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    int rc = -1;
#if defined(TB_MBED_CBC)
    mbedtls_aes_init(&o->enc);
    mbedtls_aes_init(&o->dec);
    rc = mbedtls_aes_setkey_enc(&o->enc, key, (unsigned)key_len * 8);
    if (rc == 0)
        rc = mbedtls_aes_setkey_dec(&o->dec, key, (unsigned)key_len * 8);
#else
    (void)key, (void)key_len;
#endif
    return rc ? tb_mbed_fail(o, tb_mbed_close, err, errlen, "setting the key failed", id, rc) : o;
}

/* RSA: the build's embedded server key. ECDSA: a fresh key pair on the curve. */
static int tb_mbed_pk_key(tb_mbed_pk *o, const tb_mbed_alg *alg) {
    if (alg->credential) {
        const tb_credential_pem *pem = tb_credential_pem_find(alg->credential);
        if (pem == NULL)
            return -1;
        return TB_MBED_PARSE_KEY(&o->pk, (const unsigned char *)pem->server_key, strlen(pem->server_key) + 1);
    }
#if defined(MBEDTLS_ECP_C)
    int rc = mbedtls_pk_setup(&o->pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
    return rc ? rc : mbedtls_ecp_gen_key(alg->curve, mbedtls_pk_ec(o->pk), TB_RNG);
#else
    return -1;
#endif
}

static void *tb_mbed_open_pk(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    (void)key, (void)key_len;
    tb_mbed_pk *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    mbedtls_pk_init(&o->pk);
    int rc = tb_mbed_pk_key(o, &tb_mbed_algs[id]);
    return rc ? tb_mbed_fail(o, tb_mbed_close, err, errlen, "loading or generating the key failed", id, rc) : o;
}

/* A key agreement's two peers: legacy ECDH contexts on the curve, or (TB_MBED_ECDH_PSA) the
 * PSA attributes of the curve's key pairs, each peer's key made by keygen. */
#if defined(TB_MBED_ECDH_PSA)
static int tb_mbed_ecdh_setup(tb_mbed_ecdh *o, mbedtls_ecp_group_id curve) {
    size_t bits = 0;
    psa_ecc_family_t family = mbedtls_ecc_group_to_psa(curve, &bits);
    if (family == 0 || psa_crypto_init() != PSA_SUCCESS)
        return MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE;
    o->attributes = psa_key_attributes_init();
    psa_set_key_type(&o->attributes, PSA_KEY_TYPE_ECC_KEY_PAIR(family));
    psa_set_key_bits(&o->attributes, bits);
    psa_set_key_usage_flags(&o->attributes, PSA_KEY_USAGE_DERIVE);
    psa_set_key_algorithm(&o->attributes, PSA_ALG_ECDH);
    return 0;
}
static void tb_mbed_ecdh_free(tb_mbed_ecdh *o, int peer) {
    psa_destroy_key(o->peer[peer]);
    o->peer[peer] = MBEDTLS_SVC_KEY_ID_INIT;
}
#elif defined(MBEDTLS_ECDH_C)
static int tb_mbed_ecdh_setup(tb_mbed_ecdh *o, mbedtls_ecp_group_id curve) {
    for (int p = 0; p < 2; p++)
        mbedtls_ecdh_init(&o->peer[p]);
    int rc = mbedtls_ecdh_setup(&o->peer[0], curve);
    return rc ? rc : mbedtls_ecdh_setup(&o->peer[1], curve);
}
static void tb_mbed_ecdh_free(tb_mbed_ecdh *o, int peer) { mbedtls_ecdh_free(&o->peer[peer]); }
#else
static int tb_mbed_ecdh_setup(tb_mbed_ecdh *o, mbedtls_ecp_group_id curve) { (void)o, (void)curve; return -1; }
static void tb_mbed_ecdh_free(tb_mbed_ecdh *o, int peer) { (void)o, (void)peer; }
#endif

static void *tb_mbed_open_ecdh(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    (void)key, (void)key_len;
    tb_mbed_ecdh *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    int rc = tb_mbed_ecdh_setup(o, tb_mbed_algs[id].curve);
    return rc ? tb_mbed_fail(o, tb_mbed_close, err, errlen, "loading the curve failed", id, rc) : o;
}

typedef struct tb_mbed_kind {
    void *(*open)(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen);
    void (*close)(void *obj);
} tb_mbed_kind;

static void tb_mbed_close_md(void *obj) { mbedtls_md_free(&((tb_mbed_md *)obj)->ctx); }
static void tb_mbed_close_aead(void *obj) {
    tb_mbed_aead *o = obj;
    if (o->impl)
        o->impl->free(o);
}
static void tb_mbed_close_cbc(void *obj) {
#if defined(TB_MBED_CBC)
    mbedtls_aes_free(&((tb_mbed_cbc *)obj)->enc);
    mbedtls_aes_free(&((tb_mbed_cbc *)obj)->dec);
#else
    (void)obj;
#endif
}
static void tb_mbed_close_pk(void *obj) { mbedtls_pk_free(&((tb_mbed_pk *)obj)->pk); }
static void tb_mbed_close_ecdh(void *obj) {
    for (int p = 0; p < 2; p++)
        tb_mbed_ecdh_free(obj, p);
}

static const tb_mbed_kind tb_mbed_kinds[] = {
    [TB_PRIM_KIND_HASH] = {tb_mbed_open_md, tb_mbed_close_md},
    [TB_PRIM_KIND_MAC] = {tb_mbed_open_md, tb_mbed_close_md},
    [TB_PRIM_KIND_AEAD] = {tb_mbed_open_aead, tb_mbed_close_aead},
    [TB_PRIM_KIND_CBC] = {tb_mbed_open_cbc, tb_mbed_close_cbc},
    [TB_PRIM_KIND_SIGN] = {tb_mbed_open_pk, tb_mbed_close_pk},
    [TB_PRIM_KIND_ECDH] = {tb_mbed_open_ecdh, tb_mbed_close_ecdh},
};

static void *tb_mbed_open(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    tb_prim_kind kind = tb_prim_kind_of(id);
    if (kind >= sizeof tb_mbed_kinds / sizeof tb_mbed_kinds[0] || tb_mbed_kinds[kind].open == NULL) {
        snprintf(err, errlen, "%s: not a library primitive", tb_prim_name(id));
        return NULL;
    }
    if (tb_mbed_rng_ready() != 0) {
        snprintf(err, errlen, "seeding CTR_DRBG failed");
        return NULL;
    }
    return tb_mbed_kinds[kind].open(id, key, key_len, err, errlen);
}

static void tb_mbed_close(void *obj) {
    if (obj == NULL)
        return;
    tb_mbed_kinds[tb_prim_kind_of(*(tb_prim_id *)obj)].close(obj);
    free(obj);
}

/* ---------------------------------------------------------------- the measured calls */

static int tb_mbed_digest(void *obj, const uint8_t *in, size_t n, uint8_t *out) {
    tb_mbed_md *o = obj;
    if (tb_prim_kind_of(o->id) == TB_PRIM_KIND_MAC) {
        int rc = mbedtls_md_hmac_reset(&o->ctx);
        rc = rc ? rc : mbedtls_md_hmac_update(&o->ctx, in, n);
        return rc ? rc : mbedtls_md_hmac_finish(&o->ctx, out);
    }
    int rc = mbedtls_md_starts(&o->ctx);
    rc = rc ? rc : mbedtls_md_update(&o->ctx, in, n);
    return rc ? rc : mbedtls_md_finish(&o->ctx, out);
}

static int tb_mbed_seal(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                        uint8_t *tag) {
    tb_mbed_aead *o = obj;
    return o->impl->seal(o, m, in, n, out, tag);
}

static int tb_mbed_unseal(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                          const uint8_t *tag, uint8_t *out) {
    tb_mbed_aead *o = obj;
    return o->impl->unseal(o, m, in, n, tag, out);
}

#if defined(TB_MBED_CBC)
/* The module advances the IV in place: a copy keeps the caller's. */
static int tb_mbed_cbc_crypt(mbedtls_aes_context *ctx, int mode, const uint8_t iv[16], const uint8_t *in,
                             size_t n, uint8_t *out) {
    unsigned char v[16];
    memcpy(v, iv, sizeof v);
    return mbedtls_aes_crypt_cbc(ctx, mode, n, v, in, out);
}
static int tb_mbed_cbc_encrypt(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out) {
    return tb_mbed_cbc_crypt(&((tb_mbed_cbc *)obj)->enc, MBEDTLS_AES_ENCRYPT, iv, in, n, out);
}
static int tb_mbed_cbc_decrypt(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out) {
    return tb_mbed_cbc_crypt(&((tb_mbed_cbc *)obj)->dec, MBEDTLS_AES_DECRYPT, iv, in, n, out);
}
#else
#define tb_mbed_cbc_encrypt NULL
#define tb_mbed_cbc_decrypt NULL
#endif

/* mbedtls_pk_sign in 2.28 takes no output size: refuse a buffer smaller than the key (3.x takes it). */
static int tb_mbed_sign(void *obj, const uint8_t digest[32], uint8_t *sig, size_t *sig_len) {
    tb_mbed_pk *o = obj;
    size_t room = *sig_len;
    if (mbedtls_pk_get_type(&o->pk) == MBEDTLS_PK_RSA && mbedtls_pk_get_len(&o->pk) > room)
        return -1;
    return TB_UNTRACED(mbedtls_pk_sign)(&o->pk, MBEDTLS_MD_SHA256, digest, 32, sig, TB_MBED_SIG_ROOM(room) sig_len,
                                        TB_RNG);
}

static int tb_mbed_verify(void *obj, const uint8_t digest[32], const uint8_t *sig, size_t sig_len) {
    return TB_UNTRACED(mbedtls_pk_verify)(&((tb_mbed_pk *)obj)->pk, MBEDTLS_MD_SHA256, digest, 32, sig, sig_len);
}

#if defined(TB_MBED_ECDH_PSA)
/* The TLS 1.3 (and, with MBEDTLS_USE_PSA_CRYPTO, TLS 1.2) calls: a fresh key pair and its
 * public key in the key share's form; the peer's key imported, checked and agreed with. */
static int tb_mbed_keygen(void *obj, int peer, uint8_t *pub, size_t *pub_len) {
    tb_mbed_ecdh *o = obj;
    size_t room = *pub_len;
    tb_mbed_ecdh_free(o, peer);
    psa_status_t status = psa_generate_key(&o->attributes, &o->peer[peer]);
    if (status == PSA_SUCCESS)
        status = psa_export_public_key(o->peer[peer], pub, room, pub_len);
    return status == PSA_SUCCESS ? 0 : (int)status;
}
static int tb_mbed_shared(void *obj, int peer, const uint8_t *peer_pub, size_t pub_len, uint8_t *secret,
                          size_t *secret_len) {
    tb_mbed_ecdh *o = obj;
    size_t room = *secret_len;
    psa_status_t status = TB_UNTRACED(psa_raw_key_agreement)(PSA_ALG_ECDH, o->peer[peer], peer_pub, pub_len,
                                                              secret, room, secret_len);
    return status == PSA_SUCCESS ? 0 : (int)status;
}
#elif defined(MBEDTLS_ECDH_C)
/* The TLS calls: a fresh key pair and its public point in ECPoint wire form (length byte
 * first); the peer's point read and checked, then the secret. */
static int tb_mbed_keygen(void *obj, int peer, uint8_t *pub, size_t *pub_len) {
    size_t room = *pub_len;
    return TB_UNTRACED(mbedtls_ecdh_make_public)(&((tb_mbed_ecdh *)obj)->peer[peer], pub_len, pub, room, TB_RNG);
}
static int tb_mbed_shared(void *obj, int peer, const uint8_t *peer_pub, size_t pub_len, uint8_t *secret,
                          size_t *secret_len) {
    mbedtls_ecdh_context *c = &((tb_mbed_ecdh *)obj)->peer[peer];
    size_t room = *secret_len;
    int rc = TB_UNTRACED(mbedtls_ecdh_read_public)(c, peer_pub, pub_len);
    return rc ? rc : TB_UNTRACED(mbedtls_ecdh_calc_secret)(c, secret_len, secret, room, TB_RNG);
}
#else
#define tb_mbed_keygen NULL
#define tb_mbed_shared NULL
#endif

const tb_prim_ops tb_prim_library_ops = {
    .open = tb_mbed_open,
    .close = tb_mbed_close,
    .digest = tb_mbed_digest,
    .seal = tb_mbed_seal,
    .unseal = tb_mbed_unseal,
    .cbc_encrypt = tb_mbed_cbc_encrypt,
    .cbc_decrypt = tb_mbed_cbc_decrypt,
    .sign = tb_mbed_sign,
    .verify = tb_mbed_verify,
    .keygen = tb_mbed_keygen,
    .shared = tb_mbed_shared,
};

/* What this build has; docs/primitives.md says why SHA3-256 and Ed25519 never appear. */
const tb_experiment *const tb_library_primitives[] = {
#if defined(TB_MBED_SHA256)
    TB_PRIM(SHA256),
#endif
#if defined(TB_MBED_SHA512)
    TB_PRIM(SHA512),
#endif
#if defined(TB_MBED_SHA3)
    TB_PRIM(SHA3_256),
#endif
#if defined(TB_MBED_SHA256)
    TB_PRIM(HMAC_SHA256),
#endif
#if defined(TB_MBED_GCM)
    TB_PRIM(AES128_GCM),
    TB_PRIM(AES256_GCM),
#endif
#if defined(TB_MBED_CCM)
    TB_PRIM(AES128_CCM),
    TB_PRIM(AES256_CCM),
#endif
#if defined(TB_MBED_CBC)
    TB_PRIM(AES128_CBC),
    TB_PRIM(AES256_CBC),
#endif
#if defined(TB_MBED_CHACHAPOLY)
    TB_PRIM(CHACHA20_POLY1305),
#endif
#if defined(TB_MBED_RSA)
    TB_PRIM(RSA2048),
    TB_PRIM(RSA3072),
#endif
#if defined(TB_MBED_ECDSA_P256)
    TB_PRIM(ECDSA_P256),
#endif
#if defined(TB_MBED_ECDSA_K256)
    TB_PRIM(ECDSA_SECP256K1),
#endif
#if defined(TB_MBED_X25519)
    TB_PRIM(ECDH_X25519),
#endif
#if defined(TB_MBED_ECDH_P256)
    TB_PRIM(ECDH_P256),
#endif
#if defined(TB_MBED_ECDSA_P256)
    TB_PRIM(SENDER),
    TB_PRIM(RECEIVER),
#endif
#if defined(TB_MBED_ECDSA_K256)
    TB_PRIM_SCENARIO(SHA256_K256),
#endif
#if defined(TB_MBED_RSA)
    TB_PRIM_SCENARIO(SHA256_RSA2048),
#endif
#if defined(TB_MBED_SHA3) && defined(TB_MBED_ECDSA_P256)
    TB_PRIM_SCENARIO(SHA3_P256),
#endif
#if defined(TB_MBED_SHA3) && defined(TB_MBED_ECDSA_K256)
    TB_PRIM_SCENARIO(SHA3_K256),
#endif
    NULL, /* no Ed25519 in mbed TLS (nor SHA-3 in 2.28): their scenarios are left out too */
};
