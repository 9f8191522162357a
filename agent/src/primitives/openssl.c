/* SPDX-License-Identifier: Apache-2.0 */
/* OpenSSL 3's crypto calls for the primitive experiments (common.h), through EVP as TLS
 * reaches them. Algorithms are fetched and contexts keyed in open(), so the groups time
 * neither the provider lookup nor the key schedule. Every experiment of common.h is here;
 * ML-KEM and ML-DSA are listed where the library has them (3.5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "common.h"
#include "tlsbench/credentials.h"
#include "tlsbench/spec_gen.h"

/* ---------------------------------------------------------------- calls past the wrappers */

/* The backend's link-time wrappers (backends/openssl_wrap.h) would trace some calls below again,
 * as crypto spans nested in the groups: in a primitive the group is the span, and a nested
 * one would only add tracer events to it. With ld --wrap=X, __real_X is X itself; without
 * the flag __real_X stays undefined and, declared weak, null: then X is untraced anyway. */
#define TB_REAL(sym) extern __typeof__(sym) __real_##sym __attribute__((weak));
#define TB_UNTRACED(sym) (__real_##sym ? __real_##sym : sym)
TB_REAL(EVP_PKEY_keygen)
TB_REAL(EVP_PKEY_derive)
TB_REAL(EVP_DigestSign)
TB_REAL(EVP_DigestVerify)
TB_REAL(EVP_PKEY_encapsulate)
TB_REAL(EVP_PKEY_decapsulate)

/* The experiments only OpenSSL >= 3.5 has (the calls below compile against 3.0 too). */
#if OPENSSL_VERSION_PREREQ(3, 5)
#define TB_OSSL_PQ_PRIMITIVES                                                                        \
    TB_PRIM(MLDSA44), TB_PRIM(MLDSA65), TB_PRIM(MLDSA87), TB_PRIM(MLKEM512), TB_PRIM(MLKEM768), \
        TB_PRIM(MLKEM1024),
#else
#define TB_OSSL_PQ_PRIMITIVES
#endif


/* ---------------------------------------------------------------- per-primitive parameters */

typedef struct tb_ossl_alg {
    const char *name;       /* HASH: digest; AEAD, CBC: cipher; SIGN, ECDH: key type */
    const char *group;      /* ECDSA, ECDH on EC: the curve */
    uint8_t credential;     /* RSA: the embedded key (server key of this credential) */
    bool ccm;               /* CCM wants the message length first and verifies in update */
    bool prehashed;         /* SIGN: EVP_PKEY_sign on the digest; else EVP_DigestSign (Ed25519, ML-DSA) */
} tb_ossl_alg;

static const tb_ossl_alg tb_ossl_algs[TB_PRIM_COUNT] = {
    [TB_PRIM_SHA256] = {.name = "SHA256"},
    [TB_PRIM_SHA512] = {.name = "SHA512"},
    [TB_PRIM_SHA3_256] = {.name = "SHA3-256"},
    [TB_PRIM_HMAC_SHA256] = {.name = "SHA256"},
    [TB_PRIM_AES128_GCM] = {.name = "AES-128-GCM"},
    [TB_PRIM_AES256_GCM] = {.name = "AES-256-GCM"},
    [TB_PRIM_AES128_CCM] = {.name = "AES-128-CCM", .ccm = true},
    [TB_PRIM_AES256_CCM] = {.name = "AES-256-CCM", .ccm = true},
    [TB_PRIM_AES128_CBC] = {.name = "AES-128-CBC"},
    [TB_PRIM_AES256_CBC] = {.name = "AES-256-CBC"},
    [TB_PRIM_CHACHA20_POLY1305] = {.name = "ChaCha20-Poly1305"},
    [TB_PRIM_RSA2048] = {.name = "RSA", .credential = TB_CREDENTIAL_RSA2048, .prehashed = true},
    [TB_PRIM_RSA3072] = {.name = "RSA", .credential = TB_CREDENTIAL_RSA3072, .prehashed = true},
    [TB_PRIM_ECDSA_P256] = {.name = "EC", .group = "P-256", .prehashed = true},
    [TB_PRIM_ECDSA_SECP256K1] = {.name = "EC", .group = "secp256k1", .prehashed = true},
    [TB_PRIM_ED25519] = {.name = "ED25519"},
    [TB_PRIM_ECDH_X25519] = {.name = "X25519"},
    [TB_PRIM_ECDH_P256] = {.name = "EC", .group = "P-256"},
    [TB_PRIM_MLDSA44] = {.name = "ML-DSA-44"},
    [TB_PRIM_MLDSA65] = {.name = "ML-DSA-65"},
    [TB_PRIM_MLDSA87] = {.name = "ML-DSA-87"},
    [TB_PRIM_MLKEM512] = {.name = "ML-KEM-512"},
    [TB_PRIM_MLKEM768] = {.name = "ML-KEM-768"},
    [TB_PRIM_MLKEM1024] = {.name = "ML-KEM-1024"},
};

/* ---------------------------------------------------------------- objects */

/* Every object starts with its id, so close() finds its kind. */
typedef struct tb_ossl_md {
    tb_prim_id id;
    EVP_MD *md;
    EVP_MD_CTX *ctx;
    EVP_MAC *mac;
    EVP_MAC_CTX *mac_ctx;
} tb_ossl_md;

typedef struct tb_ossl_cipher {
    tb_prim_id id;
    const tb_ossl_alg *alg;
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *enc, *dec;
    size_t iv_len[2], tag_len[2]; /* what enc (0) and dec (1) are set to: set again only on change */
    uint8_t key[32];              /* CCM: re-keyed when the shape changes */
    size_t key_len;
} tb_ossl_cipher;

typedef struct tb_ossl_pk {
    tb_prim_id id;
    const tb_ossl_alg *alg;
    EVP_PKEY *key;
    EVP_PKEY_CTX *sign, *verify; /* prehashed */
    EVP_MD_CTX *dsign, *dverify; /* Ed25519 */
} tb_ossl_pk;

typedef struct tb_ossl_ecdh {
    tb_prim_id id;
    const tb_ossl_alg *alg;
    EVP_PKEY_CTX *keygen;   /* keygen-initialized, reused for every key pair */
    EVP_PKEY_CTX *fromdata; /* imports a peer's public key */
    EVP_PKEY *key[2];       /* KEM: [0] the key pair */
} tb_ossl_ecdh;

static void tb_ossl_close(void *obj);
static int tb_ossl_aead_shape(tb_ossl_cipher *o, EVP_CIPHER_CTX *c, int dir, const tb_prim_aead_msg *m);

static void *tb_ossl_fail(void *obj, char *err, size_t errlen, tb_prim_id id, const char *what) {
    snprintf(err, errlen, "%s: %s", tb_prim_name(id), what);
    tb_ossl_close(obj);
    return NULL;
}

/* ---------------------------------------------------------------- HASH, MAC */

static void *tb_ossl_open_md(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    tb_ossl_md *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    if (key == NULL) {
        o->md = EVP_MD_fetch(NULL, tb_ossl_algs[id].name, NULL);
        o->ctx = EVP_MD_CTX_new();
        return o->md && o->ctx ? o : tb_ossl_fail(o, err, errlen, id, "fetching the digest failed");
    }
    /* HMAC: keyed here, once; each digest re-initializes with the same key. */
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)tb_ossl_algs[id].name, 0),
        OSSL_PARAM_construct_end()};
    o->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    o->mac_ctx = o->mac ? EVP_MAC_CTX_new(o->mac) : NULL;
    if (o->mac_ctx == NULL || EVP_MAC_init(o->mac_ctx, key, key_len, params) != 1)
        return tb_ossl_fail(o, err, errlen, id, "setting up HMAC failed");
    return o;
}

static void tb_ossl_close_md(void *obj) {
    tb_ossl_md *o = obj;
    EVP_MD_CTX_free(o->ctx);
    EVP_MD_free(o->md);
    EVP_MAC_CTX_free(o->mac_ctx);
    EVP_MAC_free(o->mac);
}

static int tb_ossl_digest(void *obj, const uint8_t *in, size_t n, uint8_t *out) {
    tb_ossl_md *o = obj;
    if (o->mac_ctx) {
        size_t len;
        bool ok = EVP_MAC_init(o->mac_ctx, NULL, 0, NULL) == 1 && EVP_MAC_update(o->mac_ctx, in, n) == 1 &&
                  EVP_MAC_final(o->mac_ctx, out, &len, 64) == 1;
        return ok ? 0 : -1;
    }
    bool ok = EVP_DigestInit_ex2(o->ctx, o->md, NULL) == 1 && EVP_DigestUpdate(o->ctx, in, n) == 1 &&
              EVP_DigestFinal_ex(o->ctx, out, NULL) == 1;
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- AEAD, CBC */

static void *tb_ossl_open_cipher(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    tb_ossl_cipher *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    o->alg = &tb_ossl_algs[id];
    o->cipher = EVP_CIPHER_fetch(NULL, o->alg->name, NULL);
    o->enc = EVP_CIPHER_CTX_new();
    o->dec = EVP_CIPHER_CTX_new();
    if (o->cipher == NULL || o->enc == NULL || o->dec == NULL)
        return tb_ossl_fail(o, err, errlen, id, "fetching the cipher failed");
    if ((size_t)EVP_CIPHER_get_key_length(o->cipher) != key_len || key_len > sizeof o->key)
        return tb_ossl_fail(o, err, errlen, id, "wrong key length");
    memcpy(o->key, key, key_len);
    o->key_len = key_len;
    /* CCM binds the nonce and tag lengths at key time: keyed below, for the measured shape. */
    const uint8_t *now = o->alg->ccm ? NULL : key;
    if (EVP_EncryptInit_ex2(o->enc, o->cipher, now, NULL, NULL) != 1 ||
        EVP_DecryptInit_ex2(o->dec, o->cipher, now, NULL, NULL) != 1)
        return tb_ossl_fail(o, err, errlen, id, "setting the key failed");
    /* CBC: common.c pads; the library must not add a block of its own. */
    if (tb_prim_kind_of(id) == TB_PRIM_KIND_CBC) {
        EVP_CIPHER_CTX_set_padding(o->enc, 0);
        EVP_CIPHER_CTX_set_padding(o->dec, 0);
        return o;
    }
    const tb_prim_aead_msg shape = {.nonce_len = TB_PRIM_NONCE_LEN, .tag_len = TB_PRIM_TAG_LEN};
    if (tb_ossl_aead_shape(o, o->enc, 0, &shape) != 0 || tb_ossl_aead_shape(o, o->dec, 1, &shape) != 0)
        return tb_ossl_fail(o, err, errlen, id, "setting the nonce length failed");
    return o;
}

static void tb_ossl_close_cipher(void *obj) {
    tb_ossl_cipher *o = obj;
    EVP_CIPHER_CTX_free(o->enc);
    EVP_CIPHER_CTX_free(o->dec);
    EVP_CIPHER_free(o->cipher);
}

/* Nonce length (and CCM's tag length, then its key) are context settings: set in open()
 * for the measured messages, again only when a message's shape differs (test vectors). */
static int tb_ossl_aead_shape(tb_ossl_cipher *o, EVP_CIPHER_CTX *c, int dir, const tb_prim_aead_msg *m) {
    if (o->iv_len[dir] == m->nonce_len && (!o->alg->ccm || o->tag_len[dir] == m->tag_len))
        return 0;
    if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)m->nonce_len, NULL) != 1)
        return -1;
    if (o->alg->ccm && (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)m->tag_len, NULL) != 1 ||
                        EVP_CipherInit_ex2(c, NULL, o->key, NULL, -1, NULL) != 1))
        return -1;
    o->iv_len[dir] = m->nonce_len;
    o->tag_len[dir] = m->tag_len;
    return 0;
}

static int tb_ossl_seal(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                        uint8_t *tag) {
    tb_ossl_cipher *o = obj;
    EVP_CIPHER_CTX *c = o->enc;
    int len = 0, fin = 0;
    bool ok = tb_ossl_aead_shape(o, c, 0, m) == 0 && EVP_EncryptInit_ex2(c, NULL, NULL, m->nonce, NULL) == 1 &&
              (!o->alg->ccm || EVP_EncryptUpdate(c, NULL, &len, NULL, (int)n) == 1) &&
              EVP_EncryptUpdate(c, NULL, &len, m->aad, (int)m->aad_len) == 1 &&
              EVP_EncryptUpdate(c, out, &len, in, (int)n) == 1 && EVP_EncryptFinal_ex(c, out + len, &fin) == 1 &&
              EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)m->tag_len, tag) == 1;
    return ok ? 0 : -1;
}

/* Nonzero when the tag does not verify: CCM says so in the update, the others in final. */
static int tb_ossl_unseal(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, const uint8_t *tag,
                          uint8_t *out) {
    tb_ossl_cipher *o = obj;
    EVP_CIPHER_CTX *c = o->dec;
    int len = 0, fin = 0;
    bool ok = tb_ossl_aead_shape(o, c, 1, m) == 0 && EVP_DecryptInit_ex2(c, NULL, NULL, m->nonce, NULL) == 1 &&
              EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)m->tag_len, (void *)tag) == 1 &&
              (!o->alg->ccm || EVP_DecryptUpdate(c, NULL, &len, NULL, (int)n) == 1) &&
              EVP_DecryptUpdate(c, NULL, &len, m->aad, (int)m->aad_len) == 1 &&
              EVP_DecryptUpdate(c, out, &len, in, (int)n) == 1 &&
              (o->alg->ccm || EVP_DecryptFinal_ex(c, out + len, &fin) == 1);
    return ok ? 0 : -1;
}

static int tb_ossl_cbc(EVP_CIPHER_CTX *c, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out) {
    int len = 0, fin = 0;
    bool ok = EVP_CipherInit_ex2(c, NULL, NULL, iv, -1, NULL) == 1 && EVP_CipherUpdate(c, out, &len, in, (int)n) == 1 &&
              EVP_CipherFinal_ex(c, out + len, &fin) == 1 && (size_t)(len + fin) == n;
    return ok ? 0 : -1;
}

static int tb_ossl_cbc_encrypt(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out) {
    return tb_ossl_cbc(((tb_ossl_cipher *)obj)->enc, iv, in, n, out);
}

static int tb_ossl_cbc_decrypt(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out) {
    return tb_ossl_cbc(((tb_ossl_cipher *)obj)->dec, iv, in, n, out);
}

/* ---------------------------------------------------------------- SIGN */

/* RSA: the build's embedded server key. ECDSA, Ed25519: a fresh key pair. */
static EVP_PKEY *tb_ossl_pk_key(const tb_ossl_alg *alg) {
    if (alg->credential) {
        const tb_credential_pem *pem = tb_credential_pem_find(alg->credential);
        BIO *bio = pem ? BIO_new_mem_buf(pem->server_key, -1) : NULL;
        EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
        return key;
    }
    return alg->group ? EVP_PKEY_Q_keygen(NULL, NULL, alg->name, alg->group) : EVP_PKEY_Q_keygen(NULL, NULL, alg->name);
}

/* The pre-hashed path: a context per direction, told SHA-256 (and RSA's PKCS#1 v1.5) once. */
static EVP_PKEY_CTX *tb_ossl_pk_ctx(EVP_PKEY *key, bool rsa, int (*init)(EVP_PKEY_CTX *)) {
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    if (c && init(c) == 1 && EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()) == 1 &&
        (!rsa || EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PADDING) == 1))
        return c;
    EVP_PKEY_CTX_free(c);
    return NULL;
}

static void *tb_ossl_open_pk(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    (void)key, (void)key_len;
    tb_ossl_pk *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    o->alg = &tb_ossl_algs[id];
    if ((o->key = tb_ossl_pk_key(o->alg)) == NULL)
        return tb_ossl_fail(o, err, errlen, id, "loading or generating the key failed");
    bool ok;
    if (o->alg->prehashed) {
        bool rsa = o->alg->credential != 0;
        o->sign = tb_ossl_pk_ctx(o->key, rsa, EVP_PKEY_sign_init);
        o->verify = tb_ossl_pk_ctx(o->key, rsa, EVP_PKEY_verify_init);
        ok = o->sign && o->verify;
    } else {
        o->dsign = EVP_MD_CTX_new();
        o->dverify = EVP_MD_CTX_new();
        ok = o->dsign && o->dverify;
    }
    return ok ? o : tb_ossl_fail(o, err, errlen, id, "setting up signing failed");
}

static void tb_ossl_close_pk(void *obj) {
    tb_ossl_pk *o = obj;
    EVP_PKEY_CTX_free(o->sign);
    EVP_PKEY_CTX_free(o->verify);
    EVP_MD_CTX_free(o->dsign);
    EVP_MD_CTX_free(o->dverify);
    EVP_PKEY_free(o->key);
}

/* Ed25519, ML-DSA: one-shot EVP_DigestSign/Verify, initialized for every message as TLS
 * does (OpenSSL >= 3.2 finalizes a one-shot context: it cannot sign twice). */
static int tb_ossl_sign(void *obj, const uint8_t digest[32], uint8_t *sig, size_t *sig_len) {
    tb_ossl_pk *o = obj;
    if (o->sign)
        return EVP_PKEY_sign(o->sign, sig, sig_len, digest, 32) == 1 ? 0 : -1;
    return EVP_DigestSignInit_ex(o->dsign, NULL, NULL, NULL, NULL, o->key, NULL) == 1 &&
                   TB_UNTRACED(EVP_DigestSign)(o->dsign, sig, sig_len, digest, 32) == 1
               ? 0
               : -1;
}

static int tb_ossl_verify(void *obj, const uint8_t digest[32], const uint8_t *sig, size_t sig_len) {
    tb_ossl_pk *o = obj;
    if (o->verify)
        return EVP_PKEY_verify(o->verify, sig, sig_len, digest, 32) == 1 ? 0 : -1;
    return EVP_DigestVerifyInit_ex(o->dverify, NULL, NULL, NULL, NULL, o->key, NULL) == 1 &&
                   TB_UNTRACED(EVP_DigestVerify)(o->dverify, sig, sig_len, digest, 32) == 1
               ? 0
               : -1;
}

/* ---------------------------------------------------------------- ECDH */

static void *tb_ossl_open_ecdh(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    (void)key, (void)key_len;
    tb_ossl_ecdh *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->id = id;
    o->alg = &tb_ossl_algs[id];
    o->keygen = EVP_PKEY_CTX_new_from_name(NULL, o->alg->name, NULL);
    o->fromdata = EVP_PKEY_CTX_new_from_name(NULL, o->alg->name, NULL);
    bool ok = o->keygen && o->fromdata && EVP_PKEY_keygen_init(o->keygen) == 1 &&
              (!o->alg->group || EVP_PKEY_CTX_set_group_name(o->keygen, o->alg->group) == 1) &&
              EVP_PKEY_fromdata_init(o->fromdata) == 1;
    return ok ? o : tb_ossl_fail(o, err, errlen, id, "setting up key generation failed");
}

static void tb_ossl_close_ecdh(void *obj) {
    tb_ossl_ecdh *o = obj;
    EVP_PKEY_CTX_free(o->keygen);
    EVP_PKEY_CTX_free(o->fromdata);
    EVP_PKEY_free(o->key[0]);
    EVP_PKEY_free(o->key[1]);
}

/* A fresh key pair (the previous one freed) and its encoded public key, as TLS 1.3 sends it. */
static int tb_ossl_keygen(void *obj, int peer, uint8_t *pub, size_t *pub_len) {
    tb_ossl_ecdh *o = obj;
    EVP_PKEY_free(o->key[peer]);
    o->key[peer] = NULL;
    if (TB_UNTRACED(EVP_PKEY_keygen)(o->keygen, &o->key[peer]) != 1)
        return -1;
    size_t room = *pub_len;
    return EVP_PKEY_get_octet_string_param(o->key[peer], OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pub, room,
                                           pub_len) == 1 ? 0 : -1;
}

/* The peer's key imported, checked (EVP_PKEY_derive_set_peer validates it), then derived. */
static int tb_ossl_shared(void *obj, int peer, const uint8_t *peer_pub, size_t pub_len, uint8_t *secret,
                          size_t *secret_len) {
    tb_ossl_ecdh *o = obj;
    OSSL_PARAM params[3], *p = params;
    if (o->alg->group)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)o->alg->group, 0);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)peer_pub, pub_len);
    *p = OSSL_PARAM_construct_end();
    EVP_PKEY *other = NULL;
    EVP_PKEY_CTX *c = NULL;
    bool ok = EVP_PKEY_fromdata(o->fromdata, &other, EVP_PKEY_PUBLIC_KEY, params) == 1 &&
              (c = EVP_PKEY_CTX_new_from_pkey(NULL, o->key[peer], NULL)) != NULL && EVP_PKEY_derive_init(c) == 1 &&
              EVP_PKEY_derive_set_peer(c, other) == 1 && TB_UNTRACED(EVP_PKEY_derive)(c, secret, secret_len) == 1;
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(other);
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- KEM */

/* The ECDH object serves: its keygen context makes the key pair (key[0]), its fromdata
 * context imports the encapsulation key each time (a TLS server does so from the key share). */
static int tb_ossl_kem_keygen(void *obj, uint8_t *pub, size_t *pub_len) { return tb_ossl_keygen(obj, 0, pub, pub_len); }

static int tb_ossl_encapsulate(void *obj, const uint8_t *pub, size_t pub_len, uint8_t *ct, size_t *ct_len,
                               uint8_t *secret, size_t *secret_len) {
    tb_ossl_ecdh *o = obj;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)pub, pub_len),
                           OSSL_PARAM_construct_end()};
    EVP_PKEY *peer = NULL;
    EVP_PKEY_CTX *c = NULL;
    bool ok = EVP_PKEY_fromdata(o->fromdata, &peer, EVP_PKEY_PUBLIC_KEY, params) == 1 &&
              (c = EVP_PKEY_CTX_new_from_pkey(NULL, peer, NULL)) != NULL && EVP_PKEY_encapsulate_init(c, NULL) == 1 &&
              TB_UNTRACED(EVP_PKEY_encapsulate)(c, ct, ct_len, secret, secret_len) == 1;
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(peer);
    return ok ? 0 : -1;
}

static int tb_ossl_decapsulate(void *obj, const uint8_t *ct, size_t ct_len, uint8_t *secret, size_t *secret_len) {
    tb_ossl_ecdh *o = obj;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, o->key[0], NULL);
    bool ok = c && EVP_PKEY_decapsulate_init(c, NULL) == 1 &&
              TB_UNTRACED(EVP_PKEY_decapsulate)(c, secret, secret_len, ct, ct_len) == 1;
    EVP_PKEY_CTX_free(c);
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- kinds */

typedef struct tb_ossl_kind {
    void *(*open)(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen);
    void (*close)(void *obj);
} tb_ossl_kind;

static const tb_ossl_kind tb_ossl_kinds[] = {
    [TB_PRIM_KIND_HASH] = {tb_ossl_open_md, tb_ossl_close_md},
    [TB_PRIM_KIND_MAC] = {tb_ossl_open_md, tb_ossl_close_md},
    [TB_PRIM_KIND_AEAD] = {tb_ossl_open_cipher, tb_ossl_close_cipher},
    [TB_PRIM_KIND_CBC] = {tb_ossl_open_cipher, tb_ossl_close_cipher},
    [TB_PRIM_KIND_SIGN] = {tb_ossl_open_pk, tb_ossl_close_pk},
    [TB_PRIM_KIND_ECDH] = {tb_ossl_open_ecdh, tb_ossl_close_ecdh},
    [TB_PRIM_KIND_KEM] = {tb_ossl_open_ecdh, tb_ossl_close_ecdh},
};

static void *tb_ossl_open(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    tb_prim_kind kind = tb_prim_kind_of(id);
    if (kind >= sizeof tb_ossl_kinds / sizeof tb_ossl_kinds[0] || tb_ossl_algs[id].name == NULL) {
        snprintf(err, errlen, "%s: not a library primitive", tb_prim_name(id));
        return NULL;
    }
    return tb_ossl_kinds[kind].open(id, key, key_len, err, errlen);
}

static void tb_ossl_close(void *obj) {
    if (obj == NULL)
        return;
    tb_ossl_kinds[tb_prim_kind_of(*(tb_prim_id *)obj)].close(obj);
    free(obj);
}

const tb_prim_ops tb_prim_library_ops = {
    .open = tb_ossl_open,
    .close = tb_ossl_close,
    .digest = tb_ossl_digest,
    .seal = tb_ossl_seal,
    .unseal = tb_ossl_unseal,
    .cbc_encrypt = tb_ossl_cbc_encrypt,
    .cbc_decrypt = tb_ossl_cbc_decrypt,
    .sign = tb_ossl_sign,
    .verify = tb_ossl_verify,
    .keygen = tb_ossl_keygen,
    .shared = tb_ossl_shared,
    .kem_keygen = tb_ossl_kem_keygen,
    .encapsulate = tb_ossl_encapsulate,
    .decapsulate = tb_ossl_decapsulate,
};

const tb_experiment *const tb_library_primitives[] = {
    TB_PRIM(SHA256),           TB_PRIM(SHA512),     TB_PRIM(SHA3_256),   TB_PRIM(HMAC_SHA256),
    TB_PRIM(AES128_GCM),       TB_PRIM(AES256_GCM), TB_PRIM(AES128_CCM), TB_PRIM(AES256_CCM),
    TB_PRIM(AES128_CBC),       TB_PRIM(AES256_CBC), TB_PRIM(CHACHA20_POLY1305),
    TB_PRIM(RSA2048),          TB_PRIM(RSA3072),    TB_PRIM(ECDSA_P256), TB_PRIM(ECDSA_SECP256K1),
    TB_PRIM(ED25519),          TB_PRIM(ECDH_X25519), TB_PRIM(ECDH_P256),
    TB_OSSL_PQ_PRIMITIVES
    TB_PRIM(SENDER),           TB_PRIM(RECEIVER),
    TB_PRIM_SCENARIO(SHA256_K256), TB_PRIM_SCENARIO(SHA256_ED25519), TB_PRIM_SCENARIO(SHA256_RSA2048),
    TB_PRIM_SCENARIO(SHA3_P256), TB_PRIM_SCENARIO(SHA3_K256), TB_PRIM_SCENARIO(SHA3_ED25519),
    NULL,
};
