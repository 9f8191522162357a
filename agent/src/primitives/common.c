/* SPDX-License-Identifier: Apache-2.0 */
/* The primitive experiments, each kind implemented once for every library: setup (keys,
 * buffers, the one-time checks against published vectors), the measured block (groups
 * around the library's calls only, known-answer checks between and after them), teardown.
 * The calls themselves come from tb_prim_library_ops (src/primitives/<library>.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/common.h" /* TB_COUNT, tb_fail */
#include "common.h"

const uint32_t tb_prim_sizes[] = {16, 64, 256, 1024, 4096, TB_PRIM_MAX_SIZE, 0};

void tb_prim_fill(uint8_t *buf, size_t n) {
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)(i * 31u + (i >> 8) + 7u);
}

/* ---------------------------------------------------------------- per-id tables */

static const tb_prim_kind tb_prim_kinds[TB_PRIM_COUNT] = {
#define TB_PRIM_KIND_ENTRY(id, name, kind, groups, sized, desc) [TB_PRIM_##id] = TB_PRIM_KIND_##kind,
    TB_PRIMITIVES(TB_PRIM_KIND_ENTRY)
#undef TB_PRIM_KIND_ENTRY
};

static const size_t tb_prim_digest_lens[TB_PRIM_COUNT] = {
    [TB_PRIM_SHA256] = 32, [TB_PRIM_SHA512] = 64, [TB_PRIM_SHA3_256] = 32, [TB_PRIM_HMAC_SHA256] = 32};

/* Where each HASH/MAC's answer sits in a generated tb_prim_kat (0: none). */
static const size_t tb_prim_kat_field[TB_PRIM_COUNT] = {
    [TB_PRIM_SHA256] = offsetof(tb_prim_kat, sha256),
    [TB_PRIM_SHA512] = offsetof(tb_prim_kat, sha512),
    [TB_PRIM_SHA3_256] = offsetof(tb_prim_kat, sha3_256),
    [TB_PRIM_HMAC_SHA256] = offsetof(tb_prim_kat, hmac_sha256),
};

/* Symmetric key lengths; the measured runs use the first bytes of tb_prim_cipher_key. */
static const size_t tb_prim_key_lens[TB_PRIM_COUNT] = {
    [TB_PRIM_HMAC_SHA256] = 32, [TB_PRIM_AES128_GCM] = 16, [TB_PRIM_AES256_GCM] = 32,
    [TB_PRIM_AES128_CCM] = 16,  [TB_PRIM_AES256_CCM] = 32, [TB_PRIM_AES128_CBC] = 16,
    [TB_PRIM_AES256_CBC] = 32,  [TB_PRIM_CHACHA20_POLY1305] = 32};

/* Fixed, public test values: a key, a nonce and a 13-byte AAD shaped like TLS 1.2's
 * (sequence number, record type, version, length). Reusing the nonce across repetitions
 * is harmless here: nothing is secret, and each repetition checks its own round trip. */
static const uint8_t tb_prim_cipher_key[32] = {
    0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
    0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f};
static const uint8_t tb_prim_nonce[TB_PRIM_NONCE_LEN] = {0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce,
                                                         0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88};
static const uint8_t tb_prim_aad[TB_PRIM_AAD_LEN] = {0, 0, 0, 0, 0, 0, 0, 1, 0x17, 0x03, 0x03, 0, 0};
static const uint8_t tb_prim_iv[16] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                                       0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};

tb_prim_kind tb_prim_kind_of(tb_prim_id id) { return tb_prim_kinds[id]; }
const char *tb_prim_name(tb_prim_id id) { return tb_prim_experiments[id].name; }
size_t tb_prim_digest_len(tb_prim_id id) { return id < TB_PRIM_COUNT ? tb_prim_digest_lens[id] : 0; }

const uint8_t *tb_prim_known_digest(tb_prim_id id, uint32_t size) {
    if (id >= TB_PRIM_COUNT || tb_prim_kat_field[id] == 0)
        return NULL;
    for (size_t i = 0; i < tb_prim_kat_count; i++)
        if (tb_prim_kats[i].size == size)
            return (const uint8_t *)&tb_prim_kats[i] + tb_prim_kat_field[id];
    return NULL;
}

/* ---------------------------------------------------------------- published vectors */

/* Checked once per RUN in setup, through the same calls the measured block makes. */
typedef struct tb_prim_vector {
    tb_prim_id id;
    const char *source, *key, *nonce, *aad, *plain, *cipher, *tag; /* hex */
} tb_prim_vector;

#define TB_GCM_SPEC_IV "cafebabefacedbaddecaf888"
#define TB_GCM_SPEC_AAD "feedfacedeadbeeffeedfacedeadbeefabaddad2"
#define TB_GCM_SPEC_PLAIN                                                                          \
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e24" \
    "49a6b525b16aedf5aa0de657ba637b39"
#define TB_SP800_38A_IV "000102030405060708090a0b0c0d0e0f"
#define TB_SP800_38A_PLAIN                                                                         \
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc119" \
    "1a0a52eff69f2445df4f9b17ad2b417be66c3710"

static const tb_prim_vector tb_prim_vectors[] = {
    {TB_PRIM_AES128_GCM, "GCM specification (McGrew, Viega), test case 4", "feffe9928665731c6d6a8f9467308308",
     TB_GCM_SPEC_IV, TB_GCM_SPEC_AAD, TB_GCM_SPEC_PLAIN,
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5a"
     "ac84aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
    {TB_PRIM_AES256_GCM, "GCM specification (McGrew, Viega), test case 16",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", TB_GCM_SPEC_IV, TB_GCM_SPEC_AAD,
     TB_GCM_SPEC_PLAIN,
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b10"
     "56828838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"},
    {TB_PRIM_AES128_CCM, "NIST CAVP CCM VTT, AES-128 (P=24, N=13, A=32, T=16)", "4189351b5caea375a0299e81c621bf43",
     "48c0906930561e0ab0ef4cd972", "40a27c1d1e23ea3dbe8056b2774861a4a201cce49f19997d19206d8c8a343951",
     "4535d12b4377928a7c0a61c9f825a48671ea05910748c8ef", "26c56961c035a7e452cce61bc6ee220d77b3f94d18fd10b6",
     "d80e8bf80f4a46cab06d4313f0db9be9"},
    {TB_PRIM_AES256_CCM, "NIST CAVP CCM VTT, AES-256 (P=24, N=13, A=32, T=16)",
     "60823b64e0b2da3a7eb772bd5941c534e6ff94ea96b564e2b38f82c78bb54522", "48526f1bffc97dd65e42906983",
     "fab62b3e5deda7a9c1128663cc81c44b74ab1bfe70bc1c9dec7c7fd08173b80a",
     "a8be794613835c4366e75817d228438f011a2ec8a86f9797", "cc3efe04d84a4ec5cb6a6c28dc2c2d386a359d9550dbdec9",
     "63ddd56464aed6d0613159d1aa181dcb"},
    {TB_PRIM_CHACHA20_POLY1305, "RFC 8439, section 2.8.2",
     "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f", "070000004041424344454647",
     "50515253c0c1c2c3c4c5c6c7",
     "4c616469657320616e642047656e746c656d656e206f662074686520636c617373206f66202739393a204966"
     "204920636f756c64206f6666657220796f75206f6e6c79206f6e652074697020666f7220746865206675747572"
     "652c2073756e73637265656e20776f756c642062652069742e",
     "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69"
     "da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad67594"
     "5585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116",
     "1ae10b594f09e26a7e902ecbd0600691"},
    {TB_PRIM_AES128_CBC, "NIST SP 800-38A, F.2.1", "2b7e151628aed2a6abf7158809cf4f3c", TB_SP800_38A_IV, "",
     TB_SP800_38A_PLAIN,
     "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e"
     "222295163ff1caa1681fac09120eca307586e1a7",
     ""},
    {TB_PRIM_AES256_CBC, "NIST SP 800-38A, F.2.5", "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     TB_SP800_38A_IV, "", TB_SP800_38A_PLAIN,
     "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d39f23369a9d9bacfa530e263"
     "04231461b2eb05e2c39be9fcda6c19078c6a9d1b",
     ""},
};

#define TB_VEC_MAX 128

typedef struct tb_prim_vec_bytes {
    uint8_t key[TB_VEC_MAX], nonce[TB_VEC_MAX], aad[TB_VEC_MAX], plain[TB_VEC_MAX], cipher[TB_VEC_MAX],
        tag[TB_VEC_MAX];
    size_t key_len, nonce_len, aad_len, plain_len, cipher_len, tag_len;
} tb_prim_vec_bytes;

static size_t tb_unhex(const char *hex, uint8_t *out) {
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n && i < TB_VEC_MAX; i++) {
        unsigned b;
        sscanf(hex + 2 * i, "%2x", &b);
        out[i] = (uint8_t)b;
    }
    return n < TB_VEC_MAX ? n : TB_VEC_MAX;
}

static void tb_vec_decode(const tb_prim_vector *v, tb_prim_vec_bytes *b) {
    b->key_len = tb_unhex(v->key, b->key);
    b->nonce_len = tb_unhex(v->nonce, b->nonce);
    b->aad_len = tb_unhex(v->aad, b->aad);
    b->plain_len = tb_unhex(v->plain, b->plain);
    b->cipher_len = tb_unhex(v->cipher, b->cipher);
    b->tag_len = tb_unhex(v->tag, b->tag);
}

static const tb_prim_vector *tb_vector_for(tb_prim_id id) {
    for (size_t i = 0; i < TB_COUNT(tb_prim_vectors); i++)
        if (tb_prim_vectors[i].id == id)
            return &tb_prim_vectors[i];
    return NULL;
}

/* ---------------------------------------------------------------- RUN state */

typedef struct tb_prim_run {
    tb_prim_id id;
    tb_prim_kind kind;
    const tb_prim_ops *ops;
    void *obj;  /* the primitive's library object; sender, receiver: the scenario's signer */
    void *hash; /* sender, receiver: the scenario's hash object */
    size_t n;   /* bytes processed per repetition (CBC: the padded payload) */
    uint8_t *in, *ref, *out, *back; /* payload, expected plaintext, ciphertext, decrypted */
    uint8_t expected[64]; /* HASH, MAC: the digest; SIGN, SENDER, RECEIVER: the digest verified */
    uint8_t digest[64];   /* this repetition's digest */
    uint8_t tag[TB_PRIM_TAG_LEN];
    uint8_t sig[TB_PRIM_MAX_SIG];
    size_t sig_len;
    uint8_t pub[2][TB_PRIM_MAX_PUB];
    size_t pub_len[2];
    uint8_t secret[2][TB_PRIM_MAX_SECRET];
    size_t secret_len[2];
    uint8_t *kem_pub, *kem_ct; /* KEM: the encapsulation key and ciphertext (TB_PRIM_MAX_KEM) */
    size_t kem_pub_len, kem_ct_len;
    uint8_t flip; /* XORed into peer 1's ECDH (KEM: the decapsulated) secret before the comparison (tests only) */
    tb_prim_aead_msg msg;
} tb_prim_run;

static int tb_check(const uint8_t *got, const uint8_t *want, size_t n) {
    return memcmp(got, want, n) == 0 ? TB_PRIM_OK : TB_PRIM_ERR_KAT;
}

static void *tb_open(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen) {
    void *obj = tb_prim_library_ops.open(id, key, key_len, err, errlen);
    if (obj == NULL && err[0] == '\0')
        snprintf(err, errlen, "%s: the library could not set it up", tb_prim_name(id));
    return obj;
}

/* n payload bytes of tb_prim_fill, room for `extra` more, and three work buffers. */
static int tb_alloc_payload(tb_prim_run *r, size_t n, size_t extra, char *err, size_t errlen) {
    r->n = n;
    uint8_t **bufs[] = {&r->in, &r->ref, &r->out, &r->back};
    for (size_t i = 0; i < TB_COUNT(bufs); i++)
        if ((*bufs[i] = calloc(1, n + extra)) == NULL)
            return tb_fail(err, errlen, "out of memory for %zu bytes", n + extra);
    tb_prim_fill(r->in, n);
    return 0;
}

/* ---------------------------------------------------------------- HASH, MAC */

static int tb_setup_digest(tb_prim_run *r, uint32_t size, char *err, size_t errlen) {
    const uint8_t *key = r->kind == TB_PRIM_KIND_MAC ? tb_prim_hmac_key : NULL;
    if (!(r->obj = tb_open(r->id, key, key ? sizeof tb_prim_hmac_key : 0, err, errlen)) ||
        tb_alloc_payload(r, size, 0, err, errlen) != 0)
        return -1;
    /* Default sizes: the answer Python computed. Others: the library's own answer, so the
     * measured block still checks that every repetition computes the same digest. */
    const uint8_t *known = tb_prim_known_digest(r->id, size);
    if (known)
        memcpy(r->expected, known, tb_prim_digest_len(r->id));
    else if (tb_prim_library_ops.digest(r->obj, r->in, r->n, r->expected) != 0)
        return tb_fail(err, errlen, "%s: digest failed in setup", tb_prim_name(r->id));
    return 0;
}

static int tb_measure_digest(tb_prim_run *r) {
    memset(r->digest, 0, sizeof r->digest);
    tb_group_begin(0);
    int rc = tb_prim_library_ops.digest(r->obj, r->in, r->n, r->digest);
    tb_group_end(0);
    return rc ? TB_PRIM_ERR_CALL : tb_check(r->digest, r->expected, tb_prim_digest_len(r->id));
}

/* ---------------------------------------------------------------- AEAD */

/* The published vector: exact ciphertext and tag, the round trip, and a forged tag refused. */
static int tb_aead_vector(tb_prim_id id, char *err, size_t errlen) {
    const tb_prim_vector *v = tb_vector_for(id);
    tb_prim_vec_bytes b;
    uint8_t ct[TB_VEC_MAX], tag[TB_VEC_MAX], pt[TB_VEC_MAX];
    if (v == NULL)
        return tb_fail(err, errlen, "%s: no published test vector", tb_prim_name(id));
    tb_vec_decode(v, &b);
    void *obj = tb_open(id, b.key, b.key_len, err, errlen);
    if (obj == NULL)
        return -1;
    tb_prim_aead_msg m = {b.nonce, b.nonce_len, b.aad, b.aad_len, b.tag_len};
    const char *what = NULL;
    if (tb_prim_library_ops.seal(obj, &m, b.plain, b.plain_len, ct, tag) != 0)
        what = "encryption failed";
    else if (memcmp(ct, b.cipher, b.cipher_len) != 0 || memcmp(tag, b.tag, b.tag_len) != 0)
        what = "wrong ciphertext or tag";
    else if (tb_prim_library_ops.unseal(obj, &m, ct, b.cipher_len, tag, pt) != 0 ||
             memcmp(pt, b.plain, b.plain_len) != 0)
        what = "decryption failed";
    else if ((tag[0] ^= 1, tb_prim_library_ops.unseal(obj, &m, ct, b.cipher_len, tag, pt) == 0))
        what = "a forged tag was accepted";
    tb_prim_library_ops.close(obj);
    return what ? tb_fail(err, errlen, "%s: %s: %s", tb_prim_name(id), v->source, what) : 0;
}

static int tb_setup_aead(tb_prim_run *r, uint32_t size, char *err, size_t errlen) {
    if (tb_aead_vector(r->id, err, errlen) != 0 ||
        !(r->obj = tb_open(r->id, tb_prim_cipher_key, tb_prim_key_lens[r->id], err, errlen)) ||
        tb_alloc_payload(r, size, 0, err, errlen) != 0)
        return -1;
    memcpy(r->ref, r->in, r->n);
    r->msg = (tb_prim_aead_msg){tb_prim_nonce, sizeof tb_prim_nonce, tb_prim_aad, sizeof tb_prim_aad,
                                TB_PRIM_TAG_LEN};
    return 0;
}

static int tb_measure_aead(tb_prim_run *r) {
    memset(r->back, 0, r->n);
    tb_group_begin(0);
    int rc = tb_prim_library_ops.seal(r->obj, &r->msg, r->in, r->n, r->out, r->tag);
    tb_group_end(0);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    tb_group_begin(1);
    rc = tb_prim_library_ops.unseal(r->obj, &r->msg, r->out, r->n, r->tag, r->back);
    tb_group_end(1);
    return rc ? TB_PRIM_ERR_KAT : tb_check(r->back, r->ref, r->n);
}

/* ---------------------------------------------------------------- CBC */

static int tb_cbc_vector(tb_prim_id id, char *err, size_t errlen) {
    const tb_prim_vector *v = tb_vector_for(id);
    tb_prim_vec_bytes b;
    uint8_t ct[TB_VEC_MAX], pt[TB_VEC_MAX];
    if (v == NULL)
        return tb_fail(err, errlen, "%s: no published test vector", tb_prim_name(id));
    tb_vec_decode(v, &b);
    void *obj = tb_open(id, b.key, b.key_len, err, errlen);
    if (obj == NULL)
        return -1;
    const char *what = NULL;
    if (tb_prim_library_ops.cbc_encrypt(obj, b.nonce, b.plain, b.plain_len, ct) != 0 ||
        memcmp(ct, b.cipher, b.cipher_len) != 0)
        what = "wrong ciphertext";
    else if (tb_prim_library_ops.cbc_decrypt(obj, b.nonce, ct, b.cipher_len, pt) != 0 ||
             memcmp(pt, b.plain, b.plain_len) != 0)
        what = "decryption failed";
    tb_prim_library_ops.close(obj);
    return what ? tb_fail(err, errlen, "%s: %s: %s", tb_prim_name(id), v->source, what) : 0;
}

/* The payload PKCS#7-padded here, once: the groups time the cipher, not the padding. */
static int tb_setup_cbc(tb_prim_run *r, uint32_t size, char *err, size_t errlen) {
    size_t pad = 16 - size % 16;
    if (tb_cbc_vector(r->id, err, errlen) != 0 ||
        !(r->obj = tb_open(r->id, tb_prim_cipher_key, tb_prim_key_lens[r->id], err, errlen)) ||
        tb_alloc_payload(r, size, pad, err, errlen) != 0)
        return -1;
    memset(r->in + size, (int)pad, pad);
    r->n = size + pad;
    memcpy(r->ref, r->in, r->n);
    return 0;
}

static int tb_measure_cbc(tb_prim_run *r) {
    memset(r->back, 0, r->n);
    tb_group_begin(0);
    int rc = tb_prim_library_ops.cbc_encrypt(r->obj, tb_prim_iv, r->in, r->n, r->out);
    tb_group_end(0);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    tb_group_begin(1);
    rc = tb_prim_library_ops.cbc_decrypt(r->obj, tb_prim_iv, r->out, r->n, r->back);
    tb_group_end(1);
    return rc ? TB_PRIM_ERR_CALL : tb_check(r->back, r->ref, r->n);
}

/* ---------------------------------------------------------------- SIGN, SENDER, RECEIVER */

static int tb_sign(void *obj, const uint8_t *digest, uint8_t *sig, size_t *sig_len) {
    *sig_len = TB_PRIM_MAX_SIG;
    return tb_prim_library_ops.sign(obj, digest, sig, sig_len);
}

/* A fresh signature verifies, and the same signature on another digest does not. */
static int tb_sign_check(void *obj, tb_prim_id id, char *err, size_t errlen) {
    uint8_t sig[TB_PRIM_MAX_SIG], other[32];
    size_t len;
    memcpy(other, tb_prim_message_sha256, sizeof other);
    other[31] ^= 0x80;
    if (tb_sign(obj, tb_prim_message_sha256, sig, &len) != 0)
        return tb_fail(err, errlen, "%s: signing failed in setup", tb_prim_name(id));
    if (tb_prim_library_ops.verify(obj, tb_prim_message_sha256, sig, len) != 0)
        return tb_fail(err, errlen, "%s: a fresh signature does not verify", tb_prim_name(id));
    if (tb_prim_library_ops.verify(obj, other, sig, len) == 0)
        return tb_fail(err, errlen, "%s: a signature verifies on a tampered digest", tb_prim_name(id));
    return 0;
}

static int tb_setup_sign(tb_prim_run *r, uint32_t size, char *err, size_t errlen) {
    (void)size;
    if (!(r->obj = tb_open(r->id, NULL, 0, err, errlen)))
        return -1;
    memcpy(r->expected, tb_prim_message_sha256, 32);
    return tb_sign_check(r->obj, r->id, err, errlen);
}

static int tb_measure_sign(tb_prim_run *r) {
    tb_group_begin(0);
    int rc = tb_sign(r->obj, tb_prim_message_sha256, r->sig, &r->sig_len);
    tb_group_end(0);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    tb_group_begin(1);
    rc = tb_prim_library_ops.verify(r->obj, r->expected, r->sig, r->sig_len);
    tb_group_end(1);
    return rc ? TB_PRIM_ERR_KAT : TB_PRIM_OK;
}

/* Each scenario's hash and signature primitives (a kind other than SENDER, RECEIVER has none). */
typedef struct tb_prim_scenario {
    tb_prim_id hash, sign;
} tb_prim_scenario;

static const tb_prim_scenario tb_prim_scenarios[TB_PRIM_COUNT] = {
    [TB_PRIM_SENDER] = {TB_PRIM_SHA256, TB_PRIM_ECDSA_P256},
    [TB_PRIM_RECEIVER] = {TB_PRIM_SHA256, TB_PRIM_ECDSA_P256},
#define TB_PRIM_SCENARIO_PARTS(X, id, hash_, sign_, suffix, hash_text, sign_text)       \
    [TB_PRIM_SENDER_##id] = {.hash = TB_PRIM_##hash_, .sign = TB_PRIM_##sign_}, \
    [TB_PRIM_RECEIVER_##id] = {.hash = TB_PRIM_##hash_, .sign = TB_PRIM_##sign_},
    TB_PRIM_SCENARIOS(TB_PRIM_SCENARIO_PARTS, _)
#undef TB_PRIM_SCENARIO_PARTS
};

bool tb_prim_scenario_parts(tb_prim_id id, tb_prim_id *hash, tb_prim_id *sign) {
    if (id >= TB_PRIM_COUNT || (tb_prim_kinds[id] != TB_PRIM_KIND_SENDER && tb_prim_kinds[id] != TB_PRIM_KIND_RECEIVER))
        return false;
    *hash = tb_prim_scenarios[id].hash;
    *sign = tb_prim_scenarios[id].sign;
    return true;
}

/* The message's digest by a scenario's hash, generated by gen_kat.py (hashlib). */
static const uint8_t *tb_message_digest(tb_prim_id hash) {
    return hash == TB_PRIM_SHA3_256 ? tb_prim_message_sha3_256 : tb_prim_message_sha256;
}

/* Sender and receiver: the library's objects of the scenario's hash and signature. The
 * receiver's signature is the sender's, made once here. */
static int tb_setup_scenario(tb_prim_run *r, uint32_t size, char *err, size_t errlen) {
    (void)size;
    tb_prim_id hash = TB_PRIM_SHA256, sign = TB_PRIM_ECDSA_P256;
    tb_prim_scenario_parts(r->id, &hash, &sign);
    if (!(r->hash = tb_open(hash, NULL, 0, err, errlen)) || !(r->obj = tb_open(sign, NULL, 0, err, errlen)) ||
        tb_sign_check(r->obj, sign, err, errlen) != 0)
        return -1;
    memcpy(r->expected, tb_message_digest(hash), 32);
    if (r->kind == TB_PRIM_KIND_RECEIVER && tb_sign(r->obj, r->expected, r->sig, &r->sig_len) != 0)
        return tb_fail(err, errlen, "receiver: signing failed in setup");
    return 0;
}

/* Group 0 of both scenarios: hash the message, then check the digest (outside the group). */
static int tb_hash_message(tb_prim_run *r) {
    memset(r->digest, 0, 32);
    tb_group_begin(0);
    int rc = tb_prim_library_ops.digest(r->hash, tb_prim_message, TB_PRIM_MESSAGE_LEN, r->digest);
    tb_group_end(0);
    return rc ? TB_PRIM_ERR_CALL : tb_check(r->digest, r->expected, 32);
}

static int tb_measure_sender(tb_prim_run *r) {
    int rc = tb_hash_message(r);
    if (rc != 0)
        return rc;
    tb_group_begin(1);
    rc = tb_sign(r->obj, r->digest, r->sig, &r->sig_len);
    tb_group_end(1);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    return tb_prim_library_ops.verify(r->obj, r->digest, r->sig, r->sig_len) ? TB_PRIM_ERR_KAT : TB_PRIM_OK;
}

static int tb_measure_receiver(tb_prim_run *r) {
    int rc = tb_hash_message(r);
    if (rc != 0)
        return rc;
    tb_group_begin(1);
    rc = tb_prim_library_ops.verify(r->obj, r->digest, r->sig, r->sig_len);
    tb_group_end(1);
    return rc ? TB_PRIM_ERR_KAT : TB_PRIM_OK;
}

/* ---------------------------------------------------------------- ECDH */

static int tb_keygen(tb_prim_run *r, int peer) {
    r->pub_len[peer] = TB_PRIM_MAX_PUB;
    return tb_prim_library_ops.keygen(r->obj, peer, r->pub[peer], &r->pub_len[peer]);
}

static int tb_shared(tb_prim_run *r, int peer) {
    int other = 1 - peer;
    r->secret_len[peer] = TB_PRIM_MAX_SECRET;
    return tb_prim_library_ops.shared(r->obj, peer, r->pub[other], r->pub_len[other], r->secret[peer],
                                      &r->secret_len[peer]);
}

static int tb_secrets_agree(const tb_prim_run *r) {
    return r->secret_len[0] == r->secret_len[1] && r->secret_len[0] > 0 &&
           memcmp(r->secret[0], r->secret[1], r->secret_len[0]) == 0;
}

/* Peer 0 is the device measured, peer 1 the other side; setup runs one whole exchange. */
static int tb_setup_ecdh(tb_prim_run *r, uint32_t size, char *err, size_t errlen) {
    (void)size;
    if (!(r->obj = tb_open(r->id, NULL, 0, err, errlen)))
        return -1;
    if (tb_keygen(r, 1) != 0 || tb_keygen(r, 0) != 0 || tb_shared(r, 0) != 0 || tb_shared(r, 1) != 0)
        return tb_fail(err, errlen, "%s: key agreement failed in setup", tb_prim_name(r->id));
    if (!tb_secrets_agree(r))
        return tb_fail(err, errlen, "%s: the two peers' secrets differ", tb_prim_name(r->id));
    return 0;
}

/* Peer 1's key pair is fresh in every repetition too, before the groups: a fixed peer point
 * would let a library reuse per-point work across repetitions (wolfCrypt's FP_ECC caches a
 * point's table after two uses), which no handshake with ephemeral keys gets. */
static int tb_measure_ecdh(tb_prim_run *r) {
    if (tb_keygen(r, 1) != 0)
        return TB_PRIM_ERR_CALL;
    tb_group_begin(0);
    int rc = tb_keygen(r, 0);
    tb_group_end(0);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    tb_group_begin(1);
    rc = tb_shared(r, 0);
    tb_group_end(1);
    if (rc != 0 || tb_shared(r, 1) != 0)
        return TB_PRIM_ERR_CALL;
    r->secret[1][0] ^= r->flip;
    return tb_secrets_agree(r) ? TB_PRIM_OK : TB_PRIM_ERR_KAT;
}

/* ---------------------------------------------------------------- KEM */

/* The encapsulator's secret goes to secret[0], the decapsulated one to secret[1]. */
static int tb_kem_keygen(tb_prim_run *r) {
    r->kem_pub_len = TB_PRIM_MAX_KEM;
    return tb_prim_library_ops.kem_keygen(r->obj, r->kem_pub, &r->kem_pub_len);
}

static int tb_kem_encapsulate(tb_prim_run *r) {
    r->kem_ct_len = TB_PRIM_MAX_KEM;
    r->secret_len[0] = TB_PRIM_MAX_SECRET;
    return tb_prim_library_ops.encapsulate(r->obj, r->kem_pub, r->kem_pub_len, r->kem_ct, &r->kem_ct_len,
                                           r->secret[0], &r->secret_len[0]);
}

static int tb_kem_decapsulate(tb_prim_run *r) {
    r->secret_len[1] = TB_PRIM_MAX_SECRET;
    return tb_prim_library_ops.decapsulate(r->obj, r->kem_ct, r->kem_ct_len, r->secret[1], &r->secret_len[1]);
}

/* One whole exchange agrees, and a tampered ciphertext decapsulates to another secret
 * (ML-KEM's implicit rejection), not to the encapsulated one. */
static int tb_setup_kem(tb_prim_run *r, uint32_t size, char *err, size_t errlen) {
    (void)size;
    if (!(r->obj = tb_open(r->id, NULL, 0, err, errlen)))
        return -1;
    if (!(r->kem_pub = calloc(1, TB_PRIM_MAX_KEM)) || !(r->kem_ct = calloc(1, TB_PRIM_MAX_KEM)))
        return tb_fail(err, errlen, "out of memory");
    if (tb_kem_keygen(r) != 0 || tb_kem_encapsulate(r) != 0 || tb_kem_decapsulate(r) != 0)
        return tb_fail(err, errlen, "%s: key encapsulation failed in setup", tb_prim_name(r->id));
    if (!tb_secrets_agree(r))
        return tb_fail(err, errlen, "%s: the decapsulated secret differs from the encapsulated one", tb_prim_name(r->id));
    r->kem_ct[0] ^= 1;
    if (tb_kem_decapsulate(r) != 0 || tb_secrets_agree(r))
        return tb_fail(err, errlen, "%s: a tampered ciphertext decapsulates to the same secret", tb_prim_name(r->id));
    return 0;
}

/* A fresh key pair every repetition, as every TLS 1.3 key share is. */
static int tb_measure_kem(tb_prim_run *r) {
    tb_group_begin(0);
    int rc = tb_kem_keygen(r);
    tb_group_end(0);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    tb_group_begin(1);
    rc = tb_kem_encapsulate(r);
    tb_group_end(1);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    tb_group_begin(2);
    rc = tb_kem_decapsulate(r);
    tb_group_end(2);
    if (rc != 0)
        return TB_PRIM_ERR_CALL;
    r->secret[1][0] ^= r->flip;
    return tb_secrets_agree(r) ? TB_PRIM_OK : TB_PRIM_ERR_KAT;
}

/* ---------------------------------------------------------------- kinds */

typedef struct tb_prim_kind_impl {
    int (*setup)(tb_prim_run *r, uint32_t size, char *err, size_t errlen);
    int (*measure)(tb_prim_run *r);
} tb_prim_kind_impl;

static const tb_prim_kind_impl tb_prim_kind_impls[] = {
    [TB_PRIM_KIND_HASH] = {tb_setup_digest, tb_measure_digest},
    [TB_PRIM_KIND_MAC] = {tb_setup_digest, tb_measure_digest},
    [TB_PRIM_KIND_AEAD] = {tb_setup_aead, tb_measure_aead},
    [TB_PRIM_KIND_CBC] = {tb_setup_cbc, tb_measure_cbc},
    [TB_PRIM_KIND_SIGN] = {tb_setup_sign, tb_measure_sign},
    [TB_PRIM_KIND_ECDH] = {tb_setup_ecdh, tb_measure_ecdh},
    [TB_PRIM_KIND_SENDER] = {tb_setup_scenario, tb_measure_sender},
    [TB_PRIM_KIND_RECEIVER] = {tb_setup_scenario, tb_measure_receiver},
    [TB_PRIM_KIND_KEM] = {tb_setup_kem, tb_measure_kem},
};

static void tb_prim_teardown(void *state) {
    tb_prim_run *r = state;
    if (r == NULL)
        return;
    if (r->obj)
        tb_prim_library_ops.close(r->obj);
    if (r->hash)
        tb_prim_library_ops.close(r->hash);
    free(r->kem_pub);
    free(r->kem_ct);
    free(r->in);
    free(r->ref);
    free(r->out);
    free(r->back);
    free(r);
}

static int tb_prim_setup(tb_prim_id id, void **state, uint32_t size, char *err, size_t errlen) {
    bool sized = tb_prim_experiments[id].sizes != NULL;
    *state = NULL;
    if (errlen > 0)
        err[0] = '\0';
    if (sized ? size < 1 || size > TB_PRIM_MAX_SIZE : size != 0)
        return tb_fail(err, errlen, "%s: size %u not accepted (%s)", tb_prim_name(id), (unsigned)size,
                       sized ? "1 to 16384 bytes" : "it takes no size");
    tb_prim_run *r = calloc(1, sizeof *r);
    if (r == NULL)
        return tb_fail(err, errlen, "out of memory");
    r->id = id;
    r->kind = tb_prim_kinds[id];
    if (tb_prim_kind_impls[r->kind].setup(r, size, err, errlen) != 0) {
        tb_prim_teardown(r);
        return -1;
    }
    *state = r;
    return 0;
}

static int tb_prim_measure(void *state) {
    tb_prim_run *r = state;
    return tb_prim_kind_impls[r->kind].measure(r);
}

void tb_prim_corrupt_expected(void *state) {
    tb_prim_run *r = state;
    if (r->kind == TB_PRIM_KIND_AEAD || r->kind == TB_PRIM_KIND_CBC)
        r->ref[0] ^= 1;
    else if (r->kind == TB_PRIM_KIND_ECDH || r->kind == TB_PRIM_KIND_KEM)
        r->flip = 1;
    else
        r->expected[0] ^= 1;
}

/* ---------------------------------------------------------------- the experiments */

/* setup takes no experiment argument: one small function per id binds it. */
#define TB_PRIM_SETUP_FN(id, name, kind, groups, sized, desc)                                   \
    static int tb_prim_setup_##id(void **state, uint32_t size, char *err, size_t errlen) { \
        return tb_prim_setup(TB_PRIM_##id, state, size, err, errlen);                     \
    }
TB_PRIMITIVES(TB_PRIM_SETUP_FN)
#undef TB_PRIM_SETUP_FN

#define TB_PRIM_SIZES_true tb_prim_sizes
#define TB_PRIM_SIZES_false NULL
#define TB_PRIM_EXPERIMENT(id, name_, kind, groups_, sized, desc) \
    [TB_PRIM_##id] = {.name = name_,                              \
                      .description = desc,                        \
                      .groups = {TB_PRIM_UNPAREN groups_},        \
                      .sizes = TB_PRIM_SIZES_##sized,             \
                      .setup = tb_prim_setup_##id,                \
                      .measure = tb_prim_measure,                 \
                      .teardown = tb_prim_teardown},

const tb_experiment tb_prim_experiments[TB_PRIM_COUNT] = {TB_PRIMITIVES(TB_PRIM_EXPERIMENT)};
#undef TB_PRIM_EXPERIMENT
