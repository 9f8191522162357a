/* SPDX-License-Identifier: Apache-2.0 */
/* wolfCrypt's calls for the primitive experiments (common.h), mostly those wolfSSL's TLS
 * layer makes (docs/primitives.md lists them). Each primitive is compiled in only when the
 * linked build's options.h has it, so a stripped build lists fewer experiments instead of
 * failing to build; Debian's 5.5.4 build has all of them.
 *
 * The backend's link-time wrappers (backends/wolfssl_wrap.h) would time some of these calls
 * again as crypto spans nested in the groups: primitives call them through the linker's
 * __real_ names instead, so a primitive's trace holds only its USER_GROUP spans.
 *
 * FP_ECC (Debian's build): wolfCrypt builds a fixed-point table for a point on its second
 * multiplication and uses it from then on. The generator and a RUN's fixed keys are cached
 * after the warm-up; a point seen once never is (docs/primitives.md). */
#include <wolfssl/options.h> /* first: the build's configuration shapes every other header */
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/asn.h> /* with curve448.h, dh.h, kdf.h: the wrapped list's types */
#include <wolfssl/wolfcrypt/asn_public.h>
#include <wolfssl/wolfcrypt/chacha20_poly1305.h>
#include <wolfssl/wolfcrypt/curve25519.h>
#include <wolfssl/wolfcrypt/curve448.h>
#include <wolfssl/wolfcrypt/dh.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <wolfssl/wolfcrypt/error-crypt.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/kdf.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/rsa.h>
#include <wolfssl/wolfcrypt/wc_port.h>
#include <wolfssl/version.h>
#if defined(WOLFSSL_HAVE_KYBER)
#include <wolfssl/wolfcrypt/kyber.h>
#include <wolfssl/wolfcrypt/wc_kyber.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "tlsbench/credentials.h"
#include "tlsbench/spec_gen.h"

/* ---------------------------------------------------------------- what this build has */

#if !defined(NO_SHA256)
#define TB_WOLF_SHA256 1
#endif
#if defined(WOLFSSL_SHA512)
#define TB_WOLF_SHA512 1
#endif
#if defined(WOLFSSL_SHA3) && !defined(WOLFSSL_NOSHA3_256)
#define TB_WOLF_SHA3_256 1
#endif
#if defined(TB_WOLF_SHA256) && !defined(NO_HMAC)
#define TB_WOLF_HMAC 1
#endif
#if !defined(NO_AES) && defined(HAVE_AESGCM)
#define TB_WOLF_GCM 1
#endif
#if !defined(NO_AES) && defined(HAVE_AESCCM)
#define TB_WOLF_CCM 1
#endif
#if !defined(NO_AES) && defined(HAVE_AES_CBC) && defined(HAVE_AES_DECRYPT)
#define TB_WOLF_CBC 1
#endif
#if defined(HAVE_CHACHA) && defined(HAVE_POLY1305)
#define TB_WOLF_CHACHAPOLY 1
#endif
#if !defined(NO_RSA) && defined(TB_WOLF_SHA256)
#define TB_WOLF_RSA 1
#endif
#if defined(HAVE_ECC) && defined(HAVE_ECC_SIGN) && defined(HAVE_ECC_VERIFY) && defined(TB_WOLF_SHA256)
#define TB_WOLF_ECDSA 1
#if defined(HAVE_ECC_KOBLITZ)
#define TB_WOLF_ECDSA_K256 1
#endif
#endif
#if defined(HAVE_ED25519)
#define TB_WOLF_ED25519 1
#endif
#if defined(HAVE_CURVE25519)
#define TB_WOLF_X25519 1
#endif
#if defined(HAVE_ECC) && defined(HAVE_ECC_DHE) && defined(HAVE_ECC_KEY_IMPORT) && defined(USE_ECC_B_PARAM)
#define TB_WOLF_ECDH_P256 1
#endif
/* ML-KEM: wolfSSL 5.7's Kyber code built with its ml-kem option encapsulates and decapsulates
 * as FIPS 203 (the same shared secret as OpenSSL 3.5 for one public key and message); without
 * that option it is Kyber round 3, which these experiments do not name. */
#if defined(WOLFSSL_HAVE_KYBER) && defined(WOLFSSL_WC_KYBER) && defined(WOLFSSL_ML_KEM)
#define TB_WOLF_ML_KEM 1
#endif

/* ---------------------------------------------------------------- calls past the wrappers */

/* With ld --wrap=X, a reference to __real_X is X itself; without the flag (a build that
 * wraps less) __real_X stays undefined and, declared weak, null: then X is not wrapped and
 * the plain call is already untraced. Only symbols of the wrapped list can be named here. */
#define TB_WRAP(sym, label, params, args) extern int __real_##sym params __attribute__((weak));
#include "../backends/wolfssl_wrap.h"
#if LIBWOLFSSL_VERSION_HEX >= 0x05007000
#include "../backends/wolfssl_wrap_5_7.h"
#endif
#undef TB_WRAP
#define TB_UNTRACED(sym) (__real_##sym ? __real_##sym : sym)

/* ---------------------------------------------------------------- objects */

typedef struct tb_wolf_kind tb_wolf_kind;

/* Per-primitive parameters: the kind and what distinguishes its members. */
typedef struct tb_wolf_alg {
    const tb_wolf_kind *kind;
    int type;           /* HASH: enum wc_HashType; MAC: the HMAC hash; ECDSA: the curve id */
    uint8_t credential; /* RSA: the embedded server key of this credential */
} tb_wolf_alg;

/* One object per primitive and RUN; its union member is the kind's state. */
typedef struct tb_wolf_obj {
    tb_prim_id id;
    const tb_wolf_kind *kind;
    bool crypt_ready, rng_ready;
    WC_RNG rng; /* per object: signing, blinding, key generation */
    union {
        struct {
            wc_HashAlg alg;
            enum wc_HashType type;
        } hash;
#if defined(TB_WOLF_HMAC)
        Hmac hmac;
#endif
#if !defined(NO_AES)
        Aes aes; /* GCM, CCM */
        struct {
            Aes enc, dec; /* wolfCrypt keeps one direction's key schedule per Aes */
        } cbc;
#endif
        uint8_t chacha_key[32];
#if defined(TB_WOLF_RSA)
        RsaKey rsa;
#endif
#if defined(HAVE_ECC)
        ecc_key ecc; /* ECDSA */
        struct {
            ecc_key own[2], other; /* peers 0 and 1; `other` parses the received point */
        } ecdh;
#endif
#if defined(TB_WOLF_ED25519)
        ed25519_key ed;
#endif
#if defined(TB_WOLF_X25519)
        struct {
            curve25519_key own[2], other;
        } x25519;
#endif
#if defined(TB_WOLF_ML_KEM)
        struct {
            KyberKey pair, other; /* the key pair; `other` parses the received encapsulation key */
            int type;
        } kem;
#endif
    } u;
} tb_wolf_obj;

/* A kind: how its object is made and freed, and the calls it answers (others NULL). */
struct tb_wolf_kind {
    int (*open)(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len);
    void (*close)(tb_wolf_obj *o);
    int (*digest)(tb_wolf_obj *o, const uint8_t *in, size_t n, uint8_t *out);
    int (*seal)(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                uint8_t *tag);
    int (*unseal)(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, const uint8_t *tag,
                  uint8_t *out);
    int (*sign)(tb_wolf_obj *o, const uint8_t digest[32], uint8_t *sig, size_t *sig_len);
    int (*verify)(tb_wolf_obj *o, const uint8_t digest[32], const uint8_t *sig, size_t sig_len);
    int (*keygen)(tb_wolf_obj *o, int peer, uint8_t *pub, size_t *pub_len);
    int (*shared)(tb_wolf_obj *o, int peer, const uint8_t *peer_pub, size_t pub_len, uint8_t *secret,
                  size_t *secret_len);
    int (*kem_keygen)(tb_wolf_obj *o, uint8_t *pub, size_t *pub_len);
    int (*encapsulate)(tb_wolf_obj *o, const uint8_t *pub, size_t pub_len, uint8_t *ct, size_t *ct_len,
                       uint8_t *secret, size_t *secret_len);
    int (*decapsulate)(tb_wolf_obj *o, const uint8_t *ct, size_t ct_len, uint8_t *secret, size_t *secret_len);
};


/* ---------------------------------------------------------------- HASH, MAC */

/* Init, update, final each time: one complete digest, as the other libraries time it. */
static int tb_wolf_hash_digest(tb_wolf_obj *o, const uint8_t *in, size_t n, uint8_t *out) {
    int rc = wc_HashInit(&o->u.hash.alg, o->u.hash.type);
    rc = rc ? rc : wc_HashUpdate(&o->u.hash.alg, o->u.hash.type, in, (word32)n);
    return rc ? rc : wc_HashFinal(&o->u.hash.alg, o->u.hash.type, out);
}
static int tb_wolf_hash_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)key, (void)key_len;
    o->u.hash.type = (enum wc_HashType)alg->type;
    return wc_HashInit(&o->u.hash.alg, o->u.hash.type);
}
static void tb_wolf_hash_close(tb_wolf_obj *o) { wc_HashFree(&o->u.hash.alg, o->u.hash.type); }
static const tb_wolf_kind tb_wolf_hash = {.open = tb_wolf_hash_open, .close = tb_wolf_hash_close,
                                          .digest = tb_wolf_hash_digest};

#if defined(TB_WOLF_HMAC)
/* The key's pads are hashed once here; wc_HmacFinal leaves them for the next message. */
static int tb_wolf_hmac_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    int rc = wc_HmacInit(&o->u.hmac, NULL, INVALID_DEVID);
    return rc ? rc : wc_HmacSetKey(&o->u.hmac, alg->type, key, (word32)key_len);
}
static void tb_wolf_hmac_close(tb_wolf_obj *o) { wc_HmacFree(&o->u.hmac); }
static int tb_wolf_hmac_digest(tb_wolf_obj *o, const uint8_t *in, size_t n, uint8_t *out) {
    int rc = wc_HmacUpdate(&o->u.hmac, in, (word32)n);
    return rc ? rc : wc_HmacFinal(&o->u.hmac, out);
}
static const tb_wolf_kind tb_wolf_hmac = {.open = tb_wolf_hmac_open, .close = tb_wolf_hmac_close,
                                          .digest = tb_wolf_hmac_digest};
#endif

/* ---------------------------------------------------------------- AEAD, CBC */

#if !defined(NO_AES)
static void tb_wolf_aes_close(tb_wolf_obj *o) { wc_AesFree(&o->u.aes); }
#endif

#if defined(TB_WOLF_GCM)
static int tb_wolf_gcm_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)alg;
    int rc = wc_AesInit(&o->u.aes, NULL, INVALID_DEVID);
    return rc ? rc : wc_AesGcmSetKey(&o->u.aes, key, (word32)key_len);
}
static int tb_wolf_gcm_seal(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                            uint8_t *out, uint8_t *tag) {
    return wc_AesGcmEncrypt(&o->u.aes, out, in, (word32)n, m->nonce, (word32)m->nonce_len, tag,
                            (word32)m->tag_len, m->aad, (word32)m->aad_len);
}
static int tb_wolf_gcm_unseal(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                              const uint8_t *tag, uint8_t *out) {
    return wc_AesGcmDecrypt(&o->u.aes, out, in, (word32)n, m->nonce, (word32)m->nonce_len, tag,
                            (word32)m->tag_len, m->aad, (word32)m->aad_len);
}
static const tb_wolf_kind tb_wolf_gcm = {.open = tb_wolf_gcm_open, .close = tb_wolf_aes_close,
                                         .seal = tb_wolf_gcm_seal, .unseal = tb_wolf_gcm_unseal};
#endif

#if defined(TB_WOLF_CCM)
static int tb_wolf_ccm_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)alg;
    int rc = wc_AesInit(&o->u.aes, NULL, INVALID_DEVID);
    return rc ? rc : wc_AesCcmSetKey(&o->u.aes, key, (word32)key_len);
}
static int tb_wolf_ccm_seal(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                            uint8_t *out, uint8_t *tag) {
    return wc_AesCcmEncrypt(&o->u.aes, out, in, (word32)n, m->nonce, (word32)m->nonce_len, tag,
                            (word32)m->tag_len, m->aad, (word32)m->aad_len);
}
static int tb_wolf_ccm_unseal(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                              const uint8_t *tag, uint8_t *out) {
    return wc_AesCcmDecrypt(&o->u.aes, out, in, (word32)n, m->nonce, (word32)m->nonce_len, tag,
                            (word32)m->tag_len, m->aad, (word32)m->aad_len);
}
static const tb_wolf_kind tb_wolf_ccm = {.open = tb_wolf_ccm_open, .close = tb_wolf_aes_close,
                                         .seal = tb_wolf_ccm_seal, .unseal = tb_wolf_ccm_unseal};
#endif

#if defined(TB_WOLF_CHACHAPOLY)
/* wolfCrypt's one-shot AEAD (the record layer composes the same wc_Chacha and wc_Poly1305
 * steps itself): the key on every call (ChaCha20 has no key schedule), and only RFC 8439's
 * shape, a 12-byte nonce and a 16-byte tag. */
static bool tb_wolf_chachapoly_shape(const tb_prim_aead_msg *m) {
    return m->nonce_len == CHACHA20_POLY1305_AEAD_IV_SIZE && m->tag_len == CHACHA20_POLY1305_AEAD_AUTHTAG_SIZE;
}
static int tb_wolf_chachapoly_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)alg;
    if (key_len != sizeof o->u.chacha_key)
        return BAD_FUNC_ARG;
    memcpy(o->u.chacha_key, key, key_len);
    return 0;
}
static void tb_wolf_chachapoly_close(tb_wolf_obj *o) { (void)o; }
static int tb_wolf_chachapoly_seal(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                                   uint8_t *out, uint8_t *tag) {
    if (!tb_wolf_chachapoly_shape(m))
        return BAD_FUNC_ARG;
    return wc_ChaCha20Poly1305_Encrypt(o->u.chacha_key, m->nonce, m->aad, (word32)m->aad_len, in, (word32)n,
                                       out, tag);
}
static int tb_wolf_chachapoly_unseal(tb_wolf_obj *o, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                                     const uint8_t *tag, uint8_t *out) {
    if (!tb_wolf_chachapoly_shape(m))
        return BAD_FUNC_ARG;
    return wc_ChaCha20Poly1305_Decrypt(o->u.chacha_key, m->nonce, m->aad, (word32)m->aad_len, in, (word32)n,
                                       tag, out);
}
static const tb_wolf_kind tb_wolf_chachapoly = {.open = tb_wolf_chachapoly_open,
                                                .close = tb_wolf_chachapoly_close,
                                                .seal = tb_wolf_chachapoly_seal,
                                                .unseal = tb_wolf_chachapoly_unseal};
#endif

#if defined(TB_WOLF_CBC)
static int tb_wolf_cbc_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)alg;
    int rc = wc_AesInit(&o->u.cbc.enc, NULL, INVALID_DEVID);
    rc = rc ? rc : wc_AesInit(&o->u.cbc.dec, NULL, INVALID_DEVID);
    rc = rc ? rc : wc_AesSetKey(&o->u.cbc.enc, key, (word32)key_len, NULL, AES_ENCRYPTION);
    return rc ? rc : wc_AesSetKey(&o->u.cbc.dec, key, (word32)key_len, NULL, AES_DECRYPTION);
}
static void tb_wolf_cbc_close(tb_wolf_obj *o) {
    wc_AesFree(&o->u.cbc.enc);
    wc_AesFree(&o->u.cbc.dec);
}
/* wolfCrypt chains the IV inside the Aes: set the caller's before each message. */
static int tb_wolf_cbc_encrypt(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out) {
    Aes *aes = &((tb_wolf_obj *)obj)->u.cbc.enc;
    int rc = wc_AesSetIV(aes, iv);
    return rc ? rc : wc_AesCbcEncrypt(aes, out, in, (word32)n);
}
static int tb_wolf_cbc_decrypt(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out) {
    Aes *aes = &((tb_wolf_obj *)obj)->u.cbc.dec;
    int rc = wc_AesSetIV(aes, iv);
    return rc ? rc : wc_AesCbcDecrypt(aes, out, in, (word32)n);
}
static const tb_wolf_kind tb_wolf_cbc = {.open = tb_wolf_cbc_open, .close = tb_wolf_cbc_close};
#else
#define tb_wolf_cbc_encrypt NULL
#define tb_wolf_cbc_decrypt NULL
#endif

/* ---------------------------------------------------------------- SIGN */

#if defined(TB_WOLF_RSA)
/* The embedded PKCS#8 PEM key, as DER; wc_RsaPrivateKeyDecode skips the PKCS#8 header. */
static int tb_wolf_rsa_load(RsaKey *rsa, uint8_t credential) {
    const tb_credential_pem *pem = tb_credential_pem_find(credential);
    if (pem == NULL)
        return BAD_FUNC_ARG;
    int pem_len = (int)strlen(pem->server_key);
    byte *der = malloc((size_t)pem_len);
    if (der == NULL)
        return MEMORY_E;
    int der_len = wc_KeyPemToDer((const unsigned char *)pem->server_key, pem_len, der, pem_len, NULL);
    word32 idx = 0;
    int rc = der_len < 0 ? der_len : wc_RsaPrivateKeyDecode(der, &idx, rsa, (word32)der_len);
    free(der);
    return rc;
}
static int tb_wolf_rsa_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)key, (void)key_len;
    int rc = wc_InitRsaKey(&o->u.rsa, NULL);
    rc = rc ? rc : tb_wolf_rsa_load(&o->u.rsa, alg->credential);
    return rc ? rc : wc_RsaSetRNG(&o->u.rsa, &o->rng); /* blinding (WC_RSA_BLINDING) */
}
static void tb_wolf_rsa_close(tb_wolf_obj *o) { wc_FreeRsaKey(&o->u.rsa); }
/* PKCS#1 v1.5: the SHA-256 DigestInfo, then the private-key operation, as TLS 1.2 does. */
static int tb_wolf_rsa_sign(tb_wolf_obj *o, const uint8_t digest[32], uint8_t *sig, size_t *sig_len) {
    byte info[MAX_DER_DIGEST_SZ];
    word32 info_len = wc_EncodeSignature(info, digest, 32, wc_HashGetOID(WC_HASH_TYPE_SHA256));
    int rc = TB_UNTRACED(wc_RsaSSL_Sign)(info, info_len, sig, (word32)*sig_len, &o->u.rsa, &o->rng);
    if (rc < 0)
        return rc;
    *sig_len = (size_t)rc;
    return 0;
}
/* The public-key operation recovers the DigestInfo; it must be the expected one. */
static int tb_wolf_rsa_verify(tb_wolf_obj *o, const uint8_t digest[32], const uint8_t *sig, size_t sig_len) {
    byte info[MAX_DER_DIGEST_SZ], got[TB_PRIM_MAX_SIG];
    word32 info_len = wc_EncodeSignature(info, digest, 32, wc_HashGetOID(WC_HASH_TYPE_SHA256));
    int rc = wc_RsaSSL_Verify(sig, (word32)sig_len, got, sizeof got, &o->u.rsa);
    if (rc < 0)
        return rc;
    return (word32)rc == info_len && memcmp(got, info, info_len) == 0 ? 0 : SIG_VERIFY_E;
}
static const tb_wolf_kind tb_wolf_rsa = {.open = tb_wolf_rsa_open, .close = tb_wolf_rsa_close,
                                         .sign = tb_wolf_rsa_sign, .verify = tb_wolf_rsa_verify};
#endif

#if defined(TB_WOLF_ECDSA)
/* A fresh key pair per RUN, as the other libraries' ECDSA primitives make. */
static int tb_wolf_ecdsa_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)key, (void)key_len;
    int curve = alg->type;
    int rc = wc_ecc_init(&o->u.ecc);
    return rc ? rc
              : TB_UNTRACED(wc_ecc_make_key_ex)(&o->rng, wc_ecc_get_curve_size_from_id(curve), &o->u.ecc, curve);
}
static void tb_wolf_ecdsa_close(tb_wolf_obj *o) { wc_ecc_free(&o->u.ecc); }
/* A DER ECDSA-Sig-Value with a random k, as wolfSSL's TLS signs (no RFC 6979). */
static int tb_wolf_ecdsa_sign(tb_wolf_obj *o, const uint8_t digest[32], uint8_t *sig, size_t *sig_len) {
    word32 len = (word32)*sig_len;
    int rc = TB_UNTRACED(wc_ecc_sign_hash)(digest, 32, sig, &len, &o->rng, &o->u.ecc);
    *sig_len = len;
    return rc;
}
static int tb_wolf_ecdsa_verify(tb_wolf_obj *o, const uint8_t digest[32], const uint8_t *sig, size_t sig_len) {
    int valid = 0;
    int rc = TB_UNTRACED(wc_ecc_verify_hash)(sig, (word32)sig_len, digest, 32, &valid, &o->u.ecc);
    return rc ? rc : valid == 1 ? 0 : SIG_VERIFY_E;
}
static const tb_wolf_kind tb_wolf_ecdsa = {.open = tb_wolf_ecdsa_open, .close = tb_wolf_ecdsa_close,
                                           .sign = tb_wolf_ecdsa_sign, .verify = tb_wolf_ecdsa_verify};
#endif

#if defined(TB_WOLF_ED25519)
static int tb_wolf_ed25519_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)alg, (void)key, (void)key_len;
    int rc = wc_ed25519_init(&o->u.ed);
    return rc ? rc : wc_ed25519_make_key(&o->rng, ED25519_KEY_SIZE, &o->u.ed);
}
static void tb_wolf_ed25519_close(tb_wolf_obj *o) { wc_ed25519_free(&o->u.ed); }
/* Pure Ed25519 over the 32 digest bytes as the message (common.h). */
static int tb_wolf_ed25519_sign(tb_wolf_obj *o, const uint8_t digest[32], uint8_t *sig, size_t *sig_len) {
    word32 len = (word32)*sig_len;
    int rc = TB_UNTRACED(wc_ed25519_sign_msg)(digest, 32, sig, &len, &o->u.ed);
    *sig_len = len;
    return rc;
}
static int tb_wolf_ed25519_verify(tb_wolf_obj *o, const uint8_t digest[32], const uint8_t *sig,
                                  size_t sig_len) {
    int valid = 0;
    int rc = TB_UNTRACED(wc_ed25519_verify_msg)(sig, (word32)sig_len, digest, 32, &valid, &o->u.ed);
    return rc ? rc : valid == 1 ? 0 : SIG_VERIFY_E;
}
static const tb_wolf_kind tb_wolf_ed25519 = {.open = tb_wolf_ed25519_open, .close = tb_wolf_ed25519_close,
                                             .sign = tb_wolf_ed25519_sign, .verify = tb_wolf_ed25519_verify};
#endif

/* ---------------------------------------------------------------- ECDH */

#if defined(TB_WOLF_X25519)
static int tb_wolf_x25519_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)alg, (void)key, (void)key_len;
    int rc = wc_curve25519_init(&o->u.x25519.own[0]);
    rc = rc ? rc : wc_curve25519_init(&o->u.x25519.own[1]);
    return rc ? rc : wc_curve25519_init(&o->u.x25519.other);
}
static void tb_wolf_x25519_close(tb_wolf_obj *o) {
    wc_curve25519_free(&o->u.x25519.own[0]);
    wc_curve25519_free(&o->u.x25519.own[1]);
    wc_curve25519_free(&o->u.x25519.other);
}
/* A fresh key on a re-initialized object, its public key little-endian as in a key share. */
static int tb_wolf_x25519_keygen(tb_wolf_obj *o, int peer, uint8_t *pub, size_t *pub_len) {
    curve25519_key *k = &o->u.x25519.own[peer];
    word32 len = (word32)*pub_len;
    wc_curve25519_free(k);
    int rc = wc_curve25519_init(k);
    rc = rc ? rc : TB_UNTRACED(wc_curve25519_make_key)(&o->rng, CURVE25519_KEYSIZE, k);
    rc = rc ? rc : wc_curve25519_export_public_ex(k, pub, &len, EC25519_LITTLE_ENDIAN);
    *pub_len = len;
    return rc;
}
/* wolfSSL's TLS path: check the received point, import it, then the secret. */
static int tb_wolf_x25519_shared(tb_wolf_obj *o, int peer, const uint8_t *peer_pub, size_t pub_len,
                                 uint8_t *secret, size_t *secret_len) {
    curve25519_key *other = &o->u.x25519.other;
    word32 len = (word32)*secret_len;
    int rc = wc_curve25519_check_public(peer_pub, (word32)pub_len, EC25519_LITTLE_ENDIAN);
    rc = rc ? rc : wc_curve25519_import_public_ex(peer_pub, (word32)pub_len, other, EC25519_LITTLE_ENDIAN);
    rc = rc ? rc
            : TB_UNTRACED(wc_curve25519_shared_secret_ex)(&o->u.x25519.own[peer], other, secret, &len,
                                                          EC25519_LITTLE_ENDIAN);
    *secret_len = len;
    return rc;
}
static const tb_wolf_kind tb_wolf_x25519 = {.open = tb_wolf_x25519_open, .close = tb_wolf_x25519_close,
                                            .keygen = tb_wolf_x25519_keygen, .shared = tb_wolf_x25519_shared};
#endif

#if defined(TB_WOLF_ECDH_P256)
static int tb_wolf_ecdh_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)alg, (void)key, (void)key_len;
    int rc = wc_ecc_init(&o->u.ecdh.own[0]);
    rc = rc ? rc : wc_ecc_init(&o->u.ecdh.own[1]);
    return rc ? rc : wc_ecc_init(&o->u.ecdh.other);
}
static void tb_wolf_ecdh_close(tb_wolf_obj *o) {
    wc_ecc_free(&o->u.ecdh.own[0]);
    wc_ecc_free(&o->u.ecdh.own[1]);
    wc_ecc_free(&o->u.ecdh.other);
}
/* As TLS makes a key share: a fresh key object, the key pair, the uncompressed point. The
 * RNG also blinds the shared-secret multiplication (ECC_TIMING_RESISTANT requires it). */
static int tb_wolf_ecdh_keygen(tb_wolf_obj *o, int peer, uint8_t *pub, size_t *pub_len) {
    ecc_key *k = &o->u.ecdh.own[peer];
    word32 len = (word32)*pub_len;
    wc_ecc_free(k);
    int rc = wc_ecc_init(k);
    rc = rc ? rc : TB_UNTRACED(wc_ecc_make_key_ex)(&o->rng, 32, k, ECC_SECP256R1);
    rc = rc ? rc : wc_ecc_set_rng(k, &o->rng);
    rc = rc ? rc : wc_ecc_export_x963(k, pub, &len);
    *pub_len = len;
    return rc;
}
/* The received point imported and checked to lie on the curve (common.h: validation
 * included; wolfSSL's TLS layer skips the check unless WOLFSSL_VALIDATE_ECC_IMPORT, and it
 * costs < 1 µs), then the secret. A fresh peer point costs ~270 µs here; common.c's peer 1
 * keeps its point for the RUN, which FP_ECC caches after two uses: ~35 µs. */
static int tb_wolf_ecdh_shared(tb_wolf_obj *o, int peer, const uint8_t *peer_pub, size_t pub_len,
                               uint8_t *secret, size_t *secret_len) {
    ecc_key *other = &o->u.ecdh.other;
    word32 len = (word32)*secret_len;
    int rc = wc_ecc_import_x963_ex(peer_pub, (word32)pub_len, other, ECC_SECP256R1);
    rc = rc ? rc : wc_ecc_point_is_on_curve(&other->pubkey, other->idx);
    rc = rc ? rc : TB_UNTRACED(wc_ecc_shared_secret)(&o->u.ecdh.own[peer], other, secret, &len);
    *secret_len = len;
    return rc;
}
static const tb_wolf_kind tb_wolf_ecdh = {.open = tb_wolf_ecdh_open, .close = tb_wolf_ecdh_close,
                                          .keygen = tb_wolf_ecdh_keygen, .shared = tb_wolf_ecdh_shared};
#endif

/* ---------------------------------------------------------------- KEM */

#if defined(TB_WOLF_ML_KEM)
static int tb_wolf_kem_open(tb_wolf_obj *o, const tb_wolf_alg *alg, const uint8_t *key, size_t key_len) {
    (void)key, (void)key_len;
    o->u.kem.type = alg->type;
    int rc = wc_KyberKey_Init(alg->type, &o->u.kem.pair, NULL, INVALID_DEVID);
    return rc ? rc : wc_KyberKey_Init(alg->type, &o->u.kem.other, NULL, INVALID_DEVID);
}
static void tb_wolf_kem_close(tb_wolf_obj *o) {
    wc_KyberKey_Free(&o->u.kem.pair);
    wc_KyberKey_Free(&o->u.kem.other);
}
/* A key object made again each time (wolfCrypt's key holds state from its last use), as
 * TLS does (tls.o) for every key share and every received one. */
static int tb_wolf_kem_fresh(tb_wolf_obj *o, KyberKey *k) {
    wc_KyberKey_Free(k);
    return wc_KyberKey_Init(o->u.kem.type, k, NULL, INVALID_DEVID);
}
/* A fresh key pair, its encoded encapsulation key. */
static int tb_wolf_kem_keygen(tb_wolf_obj *o, uint8_t *pub, size_t *pub_len) {
    word32 len = 0;
    int rc = tb_wolf_kem_fresh(o, &o->u.kem.pair);
    rc = rc ? rc : TB_UNTRACED(wc_KyberKey_MakeKey)(&o->u.kem.pair, &o->rng);
    rc = rc ? rc : wc_KyberKey_PublicKeySize(&o->u.kem.pair, &len);
    rc = rc ? rc : len > *pub_len ? BUFFER_E : wc_KyberKey_EncodePublicKey(&o->u.kem.pair, pub, len);
    *pub_len = len;
    return rc;
}
/* As a TLS server does with the key share: decode it, encapsulate to it. */
static int tb_wolf_kem_encapsulate(tb_wolf_obj *o, const uint8_t *pub, size_t pub_len, uint8_t *ct, size_t *ct_len,
                                   uint8_t *secret, size_t *secret_len) {
    word32 clen = 0, slen = 0;
    KyberKey *k = &o->u.kem.other;
    int rc = tb_wolf_kem_fresh(o, k);
    rc = rc ? rc : wc_KyberKey_DecodePublicKey(k, pub, (word32)pub_len);
    rc = rc ? rc : wc_KyberKey_CipherTextSize(k, &clen);
    rc = rc ? rc : wc_KyberKey_SharedSecretSize(k, &slen);
    rc = rc ? rc : clen > *ct_len || slen > *secret_len ? BUFFER_E : TB_UNTRACED(wc_KyberKey_Encapsulate)(k, ct, secret, &o->rng);
    *ct_len = clen;
    *secret_len = slen;
    return rc;
}
static int tb_wolf_kem_decapsulate(tb_wolf_obj *o, const uint8_t *ct, size_t ct_len, uint8_t *secret,
                                   size_t *secret_len) {
    word32 slen = 0;
    int rc = wc_KyberKey_SharedSecretSize(&o->u.kem.pair, &slen);
    rc = rc ? rc : slen > *secret_len ? BUFFER_E : TB_UNTRACED(wc_KyberKey_Decapsulate)(&o->u.kem.pair, secret, ct, (word32)ct_len);
    *secret_len = slen;
    return rc;
}
static const tb_wolf_kind tb_wolf_kem = {.open = tb_wolf_kem_open, .close = tb_wolf_kem_close,
                                         .kem_keygen = tb_wolf_kem_keygen, .encapsulate = tb_wolf_kem_encapsulate,
                                         .decapsulate = tb_wolf_kem_decapsulate};
#endif

/* ---------------------------------------------------------------- per-primitive parameters */

static const tb_wolf_alg tb_wolf_algs[TB_PRIM_COUNT] = {
#if defined(TB_WOLF_SHA256)
    [TB_PRIM_SHA256] = {&tb_wolf_hash, WC_HASH_TYPE_SHA256, 0},
#endif
#if defined(TB_WOLF_SHA512)
    [TB_PRIM_SHA512] = {&tb_wolf_hash, WC_HASH_TYPE_SHA512, 0},
#endif
#if defined(TB_WOLF_SHA3_256)
    [TB_PRIM_SHA3_256] = {&tb_wolf_hash, WC_HASH_TYPE_SHA3_256, 0},
#endif
#if defined(TB_WOLF_HMAC)
    [TB_PRIM_HMAC_SHA256] = {&tb_wolf_hmac, WC_SHA256, 0},
#endif
#if defined(TB_WOLF_GCM)
    [TB_PRIM_AES128_GCM] = {&tb_wolf_gcm, 0, 0},
    [TB_PRIM_AES256_GCM] = {&tb_wolf_gcm, 0, 0},
#endif
#if defined(TB_WOLF_CCM)
    [TB_PRIM_AES128_CCM] = {&tb_wolf_ccm, 0, 0},
    [TB_PRIM_AES256_CCM] = {&tb_wolf_ccm, 0, 0},
#endif
#if defined(TB_WOLF_CBC)
    [TB_PRIM_AES128_CBC] = {&tb_wolf_cbc, 0, 0},
    [TB_PRIM_AES256_CBC] = {&tb_wolf_cbc, 0, 0},
#endif
#if defined(TB_WOLF_CHACHAPOLY)
    [TB_PRIM_CHACHA20_POLY1305] = {&tb_wolf_chachapoly, 0, 0},
#endif
#if defined(TB_WOLF_RSA)
    [TB_PRIM_RSA2048] = {&tb_wolf_rsa, 0, TB_CREDENTIAL_RSA2048},
    [TB_PRIM_RSA3072] = {&tb_wolf_rsa, 0, TB_CREDENTIAL_RSA3072},
#endif
#if defined(TB_WOLF_ECDSA)
    [TB_PRIM_ECDSA_P256] = {&tb_wolf_ecdsa, ECC_SECP256R1, 0},
#endif
#if defined(TB_WOLF_ECDSA_K256)
    [TB_PRIM_ECDSA_SECP256K1] = {&tb_wolf_ecdsa, ECC_SECP256K1, 0},
#endif
#if defined(TB_WOLF_ED25519)
    [TB_PRIM_ED25519] = {&tb_wolf_ed25519, 0, 0},
#endif
#if defined(TB_WOLF_X25519)
    [TB_PRIM_ECDH_X25519] = {&tb_wolf_x25519, 0, 0},
#endif
#if defined(TB_WOLF_ECDH_P256)
    [TB_PRIM_ECDH_P256] = {&tb_wolf_ecdh, 0, 0},
#endif
#if defined(TB_WOLF_ML_KEM)
    [TB_PRIM_MLKEM512] = {&tb_wolf_kem, KYBER512, 0},
    [TB_PRIM_MLKEM768] = {&tb_wolf_kem, KYBER768, 0},
    [TB_PRIM_MLKEM1024] = {&tb_wolf_kem, KYBER1024, 0},
#endif
};

/* ---------------------------------------------------------------- open, close */

static void tb_wolf_close(void *obj) {
    tb_wolf_obj *o = obj;
    if (o == NULL)
        return;
    if (o->kind)
        o->kind->close(o);
    if (o->rng_ready)
        wc_FreeRng(&o->rng);
    if (o->crypt_ready)
        wolfCrypt_Cleanup(); /* the last reference also frees the FP_ECC cache */
    free(o);
}

static void *tb_wolf_fail(tb_wolf_obj *o, char *err, size_t errlen, const char *what, int rc) {
    snprintf(err, errlen, "%s: %s (wolfCrypt %d: %s)", tb_prim_name(o->id), what, rc, wc_GetErrorString(rc));
    tb_wolf_close(o);
    return NULL;
}

static void *tb_wolf_open(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    const tb_wolf_kind *kind = id < TB_PRIM_COUNT ? tb_wolf_algs[id].kind : NULL;
    if (kind == NULL) {
        snprintf(err, errlen, "%s: not in this wolfSSL build", tb_prim_name(id));
        return NULL;
    }
    tb_wolf_obj *o = calloc(1, sizeof *o);
    if (o == NULL) {
        snprintf(err, errlen, "%s: out of memory", tb_prim_name(id));
        return NULL;
    }
    o->id = id;
    int rc = wolfCrypt_Init();
    if (rc != 0)
        return tb_wolf_fail(o, err, errlen, "wolfCrypt_Init failed", rc);
    o->crypt_ready = true;
    if ((rc = wc_InitRng(&o->rng)) != 0)
        return tb_wolf_fail(o, err, errlen, "seeding the RNG failed", rc);
    o->rng_ready = true;
    if ((rc = kind->open(o, &tb_wolf_algs[id], key, key_len)) != 0) {
        kind->close(o);
        return tb_wolf_fail(o, err, errlen, "setting up the key or context failed", rc);
    }
    o->kind = kind;
    return o;
}

/* ---------------------------------------------------------------- the measured calls */

static int tb_wolf_digest(void *obj, const uint8_t *in, size_t n, uint8_t *out) {
    tb_wolf_obj *o = obj;
    return o->kind->digest(o, in, n, out);
}
static int tb_wolf_seal(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                        uint8_t *tag) {
    tb_wolf_obj *o = obj;
    return o->kind->seal(o, m, in, n, out, tag);
}
static int tb_wolf_unseal(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, const uint8_t *tag,
                          uint8_t *out) {
    tb_wolf_obj *o = obj;
    return o->kind->unseal(o, m, in, n, tag, out);
}
static int tb_wolf_sign(void *obj, const uint8_t digest[32], uint8_t *sig, size_t *sig_len) {
    tb_wolf_obj *o = obj;
    return o->kind->sign(o, digest, sig, sig_len);
}
static int tb_wolf_verify(void *obj, const uint8_t digest[32], const uint8_t *sig, size_t sig_len) {
    tb_wolf_obj *o = obj;
    return o->kind->verify(o, digest, sig, sig_len);
}
static int tb_wolf_keygen(void *obj, int peer, uint8_t *pub, size_t *pub_len) {
    tb_wolf_obj *o = obj;
    return o->kind->keygen(o, peer, pub, pub_len);
}
static int tb_wolf_shared(void *obj, int peer, const uint8_t *peer_pub, size_t pub_len, uint8_t *secret,
                          size_t *secret_len) {
    tb_wolf_obj *o = obj;
    return o->kind->shared(o, peer, peer_pub, pub_len, secret, secret_len);
}

static int tb_wolf_kem_keygen_op(void *obj, uint8_t *pub, size_t *pub_len) {
    tb_wolf_obj *o = obj;
    return o->kind->kem_keygen(o, pub, pub_len);
}
static int tb_wolf_encapsulate(void *obj, const uint8_t *pub, size_t pub_len, uint8_t *ct, size_t *ct_len,
                               uint8_t *secret, size_t *secret_len) {
    tb_wolf_obj *o = obj;
    return o->kind->encapsulate(o, pub, pub_len, ct, ct_len, secret, secret_len);
}
static int tb_wolf_decapsulate(void *obj, const uint8_t *ct, size_t ct_len, uint8_t *secret, size_t *secret_len) {
    tb_wolf_obj *o = obj;
    return o->kind->decapsulate(o, ct, ct_len, secret, secret_len);
}

const tb_prim_ops tb_prim_library_ops = {
    .open = tb_wolf_open,
    .close = tb_wolf_close,
    .digest = tb_wolf_digest,
    .seal = tb_wolf_seal,
    .unseal = tb_wolf_unseal,
    .cbc_encrypt = tb_wolf_cbc_encrypt,
    .cbc_decrypt = tb_wolf_cbc_decrypt,
    .sign = tb_wolf_sign,
    .verify = tb_wolf_verify,
    .keygen = tb_wolf_keygen,
    .shared = tb_wolf_shared,
    .kem_keygen = tb_wolf_kem_keygen_op,
    .encapsulate = tb_wolf_encapsulate,
    .decapsulate = tb_wolf_decapsulate,
};

/* What this build has (docs/primitives.md, wolfSSL section). */
const tb_experiment *const tb_library_primitives[] = {
#if defined(TB_WOLF_SHA256)
    TB_PRIM(SHA256),
#endif
#if defined(TB_WOLF_SHA512)
    TB_PRIM(SHA512),
#endif
#if defined(TB_WOLF_SHA3_256)
    TB_PRIM(SHA3_256),
#endif
#if defined(TB_WOLF_HMAC)
    TB_PRIM(HMAC_SHA256),
#endif
#if defined(TB_WOLF_GCM)
    TB_PRIM(AES128_GCM),
    TB_PRIM(AES256_GCM),
#endif
#if defined(TB_WOLF_CCM)
    TB_PRIM(AES128_CCM),
    TB_PRIM(AES256_CCM),
#endif
#if defined(TB_WOLF_CBC)
    TB_PRIM(AES128_CBC),
    TB_PRIM(AES256_CBC),
#endif
#if defined(TB_WOLF_CHACHAPOLY)
    TB_PRIM(CHACHA20_POLY1305),
#endif
#if defined(TB_WOLF_RSA)
    TB_PRIM(RSA2048),
    TB_PRIM(RSA3072),
#endif
#if defined(TB_WOLF_ECDSA)
    TB_PRIM(ECDSA_P256),
#endif
#if defined(TB_WOLF_ECDSA_K256)
    TB_PRIM(ECDSA_SECP256K1),
#endif
#if defined(TB_WOLF_ED25519)
    TB_PRIM(ED25519),
#endif
#if defined(TB_WOLF_X25519)
    TB_PRIM(ECDH_X25519),
#endif
#if defined(TB_WOLF_ECDH_P256)
    TB_PRIM(ECDH_P256),
#endif
#if defined(TB_WOLF_ML_KEM)
    TB_PRIM(MLKEM512),
    TB_PRIM(MLKEM768),
    TB_PRIM(MLKEM1024),
#endif
#if defined(TB_WOLF_ECDSA)
    TB_PRIM(SENDER),
    TB_PRIM(RECEIVER),
#endif
#if defined(TB_WOLF_ECDSA_K256)
    TB_PRIM_SCENARIO(SHA256_K256),
#endif
#if defined(TB_WOLF_ED25519)
    TB_PRIM_SCENARIO(SHA256_ED25519),
#endif
#if defined(TB_WOLF_RSA)
    TB_PRIM_SCENARIO(SHA256_RSA2048),
#endif
#if defined(TB_WOLF_SHA3_256) && defined(TB_WOLF_ECDSA)
    TB_PRIM_SCENARIO(SHA3_P256),
#endif
#if defined(TB_WOLF_SHA3_256) && defined(TB_WOLF_ECDSA_K256)
    TB_PRIM_SCENARIO(SHA3_K256),
#endif
#if defined(TB_WOLF_SHA3_256) && defined(TB_WOLF_ED25519)
    TB_PRIM_SCENARIO(SHA3_ED25519),
#endif
    NULL,
};
