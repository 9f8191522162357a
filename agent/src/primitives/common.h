/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto primitives as experiments (tlsbench/experiment.h), shared by every library.
 *
 * One declaration of every primitive experiment (TB_PRIMITIVES below), built from a few
 * generic kinds. common.c implements each kind once: setup, the measured block with its
 * groups, the known-answer checks between the groups, teardown. A library implements
 * only the crypto calls (tb_prim_ops, src/primitives/<library>.c) and lists the
 * experiments it has in tb_library_primitives:
 *
 *     const tb_prim_ops tb_prim_library_ops = {.open = ..., .close = ..., .digest = ...};
 *     const tb_experiment *const tb_library_primitives[] = {
 *         TB_PRIM(SHA256), TB_PRIM(SHA512), ... , NULL};
 *
 * Names, groups and sizes are identical across libraries so the host compares them side
 * by side; a library that lacks a primitive leaves it out (docs/primitives.md says why). */
#ifndef TLSBENCH_PRIMITIVES_COMMON_H
#define TLSBENCH_PRIMITIVES_COMMON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlsbench/experiment.h"

/* ---------------------------------------------------------------- the experiments */

#define TB_PRIM_UNPAREN(...) __VA_ARGS__

/* The sender and receiver scenarios beyond SHA-256 + ECDSA P-256 (`sender`, `receiver`):
 * S(X, ID, hash ID, signature ID, "hash-signature", hash text, signature text) makes
 * `sender-<hash>-<signature>` and `receiver-<hash>-<signature>`, so a plan picks them by
 * hash or signature (`include = ["sender-sha3-256-*"]`). The hash's digest (32 bytes) is what
 * the signature signs, as the sign experiments do. SHA-512 is not among them (a 64-byte
 * digest), nor RSA with SHA3-256 (the sign call's DigestInfo names SHA-256). */
#define TB_PRIM_SCENARIOS(S, X)                                                                     \
    S(X, SHA256_K256, SHA256, ECDSA_SECP256K1, "sha256-ecdsa-secp256k1", "SHA-256", "ECDSA secp256k1") \
    S(X, SHA256_ED25519, SHA256, ED25519, "sha256-ed25519", "SHA-256", "Ed25519")                    \
    S(X, SHA256_RSA2048, SHA256, RSA2048, "sha256-rsa2048", "SHA-256", "RSA-2048 PKCS#1 v1.5")       \
    S(X, SHA3_P256, SHA3_256, ECDSA_P256, "sha3-256-ecdsa-p256", "SHA3-256", "ECDSA P-256")          \
    S(X, SHA3_K256, SHA3_256, ECDSA_SECP256K1, "sha3-256-ecdsa-secp256k1", "SHA3-256", "ECDSA secp256k1") \
    S(X, SHA3_ED25519, SHA3_256, ED25519, "sha3-256-ed25519", "SHA3-256", "Ed25519")

/* One scenario pair as two TB_PRIMITIVES entries. */
#define TB_PRIM_SCENARIO_ENTRIES(X, id, hash, sig, suffix, hash_text, sig_text)                       \
    X(SENDER_##id, "sender-" suffix, SENDER, ("hash", "sign"), false,                                 \
      "Sender: " hash_text " of a 21-byte serialized message, then its " sig_text " signature")       \
    X(RECEIVER_##id, "receiver-" suffix, RECEIVER, ("hash", "verify"), false,                         \
      "Receiver: " hash_text " of a 21-byte serialized message, then verification of its " sig_text " signature")

/* X(ID, name, kind, (groups...), sized, description). `sized`: over payload sizes
 * (tb_prim_sizes); otherwise the RUN's size is 0. Sender and receiver use SHA256 and
 * ECDSA_P256's library objects; the scenarios of TB_PRIM_SCENARIOS theirs. */
#define TB_PRIMITIVES(X)                                                                               \
    X(SHA256, "sha256", HASH, ("hash"), true, "SHA-256 digest of the payload")                         \
    X(SHA512, "sha512", HASH, ("hash"), true, "SHA-512 digest of the payload")                         \
    X(SHA3_256, "sha3-256", HASH, ("hash"), true, "SHA3-256 digest of the payload")                    \
    X(HMAC_SHA256, "hmac-sha256", MAC, ("mac"), true, "HMAC-SHA256 of the payload, 32-byte key")      \
    X(AES128_GCM, "aes128-gcm", AEAD, ("encrypt", "decrypt"), true,                                    \
      "AES-128-GCM seal and open of the payload, 12-byte nonce, 13-byte AAD, 16-byte tag")             \
    X(AES256_GCM, "aes256-gcm", AEAD, ("encrypt", "decrypt"), true,                                    \
      "AES-256-GCM seal and open of the payload, 12-byte nonce, 13-byte AAD, 16-byte tag")             \
    X(AES128_CCM, "aes128-ccm", AEAD, ("encrypt", "decrypt"), true,                                    \
      "AES-128-CCM seal and open of the payload, 12-byte nonce, 13-byte AAD, 16-byte tag")             \
    X(AES256_CCM, "aes256-ccm", AEAD, ("encrypt", "decrypt"), true,                                    \
      "AES-256-CCM seal and open of the payload, 12-byte nonce, 13-byte AAD, 16-byte tag")             \
    X(AES128_CBC, "aes128-cbc", CBC, ("encrypt", "decrypt"), true,                                     \
      "AES-128-CBC encryption and decryption of the payload (PKCS#7-padded in setup)")                 \
    X(AES256_CBC, "aes256-cbc", CBC, ("encrypt", "decrypt"), true,                                     \
      "AES-256-CBC encryption and decryption of the payload (PKCS#7-padded in setup)")                 \
    X(CHACHA20_POLY1305, "chacha20-poly1305", AEAD, ("encrypt", "decrypt"), true,                      \
      "ChaCha20-Poly1305 seal and open of the payload, 12-byte nonce, 13-byte AAD, 16-byte tag")       \
    X(RSA2048, "rsa2048", SIGN, ("sign", "verify"), false,                                             \
      "RSA-2048 PKCS#1 v1.5 signature over a SHA-256 digest, and its verification")                    \
    X(RSA3072, "rsa3072", SIGN, ("sign", "verify"), false,                                             \
      "RSA-3072 PKCS#1 v1.5 signature over a SHA-256 digest, and its verification")                    \
    X(ECDSA_P256, "ecdsa-p256", SIGN, ("sign", "verify"), false,                                       \
      "ECDSA P-256 signature over a SHA-256 digest, and its verification")                             \
    X(ECDSA_SECP256K1, "ecdsa-secp256k1", SIGN, ("sign", "verify"), false,                             \
      "ECDSA secp256k1 signature over a SHA-256 digest, and its verification")                         \
    X(ED25519, "ed25519", SIGN, ("sign", "verify"), false,                                             \
      "Ed25519 (pure) signature over a 32-byte message, and its verification")                         \
    X(ECDH_X25519, "ecdh-x25519", ECDH, ("keygen", "shared-secret"), false,                            \
      "X25519: one peer's key pair generation, and its shared secret from the other's public key")     \
    X(ECDH_P256, "ecdh-p256", ECDH, ("keygen", "shared-secret"), false,                                \
      "ECDH P-256: one peer's key pair generation, and its shared secret from the other's public key") \
    X(MLDSA44, "mldsa44", SIGN, ("sign", "verify"), false,                                             \
      "ML-DSA-44 (FIPS 204, pure, hedged) signature over a 32-byte message, and its verification")     \
    X(MLDSA65, "mldsa65", SIGN, ("sign", "verify"), false,                                             \
      "ML-DSA-65 (FIPS 204, pure, hedged) signature over a 32-byte message, and its verification")     \
    X(MLDSA87, "mldsa87", SIGN, ("sign", "verify"), false,                                             \
      "ML-DSA-87 (FIPS 204, pure, hedged) signature over a 32-byte message, and its verification")     \
    X(MLKEM512, "mlkem512", KEM, ("keygen", "encapsulate", "decapsulate"), false,                      \
      "ML-KEM-512 (FIPS 203): a key pair, encapsulation to its public key, decapsulation")             \
    X(MLKEM768, "mlkem768", KEM, ("keygen", "encapsulate", "decapsulate"), false,                      \
      "ML-KEM-768 (FIPS 203): a key pair, encapsulation to its public key, decapsulation")             \
    X(MLKEM1024, "mlkem1024", KEM, ("keygen", "encapsulate", "decapsulate"), false,                    \
      "ML-KEM-1024 (FIPS 203): a key pair, encapsulation to its public key, decapsulation")            \
    X(SENDER, "sender", SENDER, ("hash", "sign"), false,                                               \
      "Sender: SHA-256 of a 21-byte serialized message, then its ECDSA P-256 signature")               \
    X(RECEIVER, "receiver", RECEIVER, ("hash", "verify"), false,                                       \
      "Receiver: SHA-256 of a 21-byte serialized message, then verification of its ECDSA P-256 signature") \
    TB_PRIM_SCENARIOS(TB_PRIM_SCENARIO_ENTRIES, X)

typedef enum tb_prim_id {
#define TB_PRIM_ENUM(id, name, kind, groups, sized, desc) TB_PRIM_##id,
    TB_PRIMITIVES(TB_PRIM_ENUM)
#undef TB_PRIM_ENUM
    TB_PRIM_COUNT
} tb_prim_id;

typedef enum tb_prim_kind {
    TB_PRIM_KIND_HASH,     /* group hash: digest(payload) */
    TB_PRIM_KIND_MAC,      /* group mac: mac(key, payload) */
    TB_PRIM_KIND_AEAD,     /* groups encrypt, decrypt (tag verified) */
    TB_PRIM_KIND_CBC,      /* groups encrypt, decrypt of the padded payload */
    TB_PRIM_KIND_SIGN,     /* groups sign, verify (a SHA-256 digest) */
    TB_PRIM_KIND_ECDH,     /* groups keygen, shared-secret (one peer) */
    TB_PRIM_KIND_SENDER,   /* groups hash, sign */
    TB_PRIM_KIND_RECEIVER, /* groups hash, verify */
    TB_PRIM_KIND_KEM,      /* groups keygen, encapsulate, decapsulate */
} tb_prim_kind;

/* Every primitive experiment, indexed by tb_prim_id (common.c). */
extern const tb_experiment tb_prim_experiments[TB_PRIM_COUNT];
#define TB_PRIM(id) (&tb_prim_experiments[TB_PRIM_##id])

/* The kind of each id, and the experiment's name ("sha256"). */
tb_prim_kind tb_prim_kind_of(tb_prim_id id);
const char *tb_prim_name(tb_prim_id id);

/* What a measured block returns: 0, or why the repetition is discarded. */
enum {
    TB_PRIM_OK = 0,
    TB_PRIM_ERR_CALL = 1, /* a library call failed */
    TB_PRIM_ERR_KAT = 2,  /* a known answer did not match (wrong digest, round trip, verify) */
};

/* ---------------------------------------------------------------- payloads and messages */

/* Default payload sizes (bytes), 0-terminated; a RUN accepts any size 1..TB_PRIM_MAX_SIZE. */
extern const uint32_t tb_prim_sizes[];
#define TB_PRIM_MAX_SIZE 16384u

/* The deterministic payload: byte i = (i * 31 + (i >> 8) + 7) mod 256. The KAT generator
 * (agent/tools/gen_kat.py) computes its digests from the same formula. */
void tb_prim_fill(uint8_t *buf, size_t n);

/* The 21-byte serialized message of the sender and receiver scenarios: a sensor reading,
 * big-endian: version (1), device id (4), sequence (4), Unix time in ms (8), value in
 * milli-degrees Celsius (4, signed). Declared once in gen_kat.py, generated as C. */
#define TB_PRIM_MESSAGE_LEN 21
extern const uint8_t tb_prim_message[TB_PRIM_MESSAGE_LEN];

/* Known answers computed independently (Python's hashlib/hmac at build time) for every
 * default size: the expected digest of `id` (a HASH or MAC) over tb_prim_fill(size), or
 * NULL (not a default size, or no such primitive). HMAC's key is tb_prim_hmac_key. */
const uint8_t *tb_prim_known_digest(tb_prim_id id, uint32_t size);
extern const uint8_t tb_prim_hmac_key[32];
/* SHA-256 and SHA3-256 of tb_prim_message (the sender's and receiver's hash group). */
extern const uint8_t tb_prim_message_sha256[32];
extern const uint8_t tb_prim_message_sha3_256[32];

/* A scenario's (sender, receiver) hash and signature primitives: SHA256 and ECDSA_P256 for
 * `sender` and `receiver`, TB_PRIM_SCENARIOS' for the others; false for another kind. */
bool tb_prim_scenario_parts(tb_prim_id id, tb_prim_id *hash, tb_prim_id *sign);

/* Both scenario experiments (sender, receiver) of a TB_PRIM_SCENARIOS pair, for a library's list. */
#define TB_PRIM_SCENARIO(id) TB_PRIM(SENDER_##id), TB_PRIM(RECEIVER_##id)

/* The generated table behind tb_prim_known_digest (primitives_kat_gen.c). */
typedef struct tb_prim_kat {
    uint32_t size;
    uint8_t sha256[32], sha512[64], sha3_256[32], hmac_sha256[32];
} tb_prim_kat;
extern const tb_prim_kat tb_prim_kats[];
extern const size_t tb_prim_kat_count;

/* Digest length of a HASH or MAC id (32 or 64), else 0. */
size_t tb_prim_digest_len(tb_prim_id id);

/* ---------------------------------------------------------------- what a library implements */

#define TB_PRIM_TAG_LEN 16
#define TB_PRIM_NONCE_LEN 12
#define TB_PRIM_AAD_LEN 13
#define TB_PRIM_MAX_SIG 4700 /* ML-DSA-87: 4627; RSA-3072: 384 */
#define TB_PRIM_MAX_PUB 133  /* an uncompressed P-521 point; P-256: 65, X25519: 32 */
#define TB_PRIM_MAX_SECRET 66
#define TB_PRIM_MAX_KEM 1600 /* ML-KEM-1024: 1568-byte encapsulation key and ciphertext */

/* One AEAD message (nonce and tag lengths vary only for published test vectors). */
typedef struct tb_prim_aead_msg {
    const uint8_t *nonce;
    size_t nonce_len;
    const uint8_t *aad;
    size_t aad_len;
    size_t tag_len;
} tb_prim_aead_msg;

/* The crypto calls of one library. `obj` is the library's per-RUN object for one primitive,
 * made by open() in setup (keys loaded or generated, contexts allocated): what the groups
 * time is only the calls below. Every call returns 0 on success; open returns NULL with a
 * message in err. Only the calls of the kinds a library lists need to be set. */
typedef struct tb_prim_ops {
    /* key: the symmetric key (MAC, AEAD, CBC; key_len bytes), NULL for the others. */
    void *(*open)(tb_prim_id id, const uint8_t *key, size_t key_len, char *err, size_t errlen);
    void (*close)(void *obj);

    /* HASH, MAC: out gets tb_prim_digest_len(id) bytes. One complete computation
     * (init/starts, update, finish) on a context made by open(). */
    int (*digest)(void *obj, const uint8_t *in, size_t n, uint8_t *out);

    /* AEAD: out gets n bytes of ciphertext and tag m->tag_len bytes; open_ verifies the tag
     * (nonzero if it does not match) and writes n bytes of plaintext. */
    int (*seal)(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n, uint8_t *out,
                uint8_t *tag);
    int (*unseal)(void *obj, const tb_prim_aead_msg *m, const uint8_t *in, size_t n,
                  const uint8_t *tag, uint8_t *out);

    /* CBC: n is a multiple of 16, no padding (common.c pads in setup); iv 16 bytes. */
    int (*cbc_encrypt)(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out);
    int (*cbc_decrypt)(void *obj, const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out);

    /* SIGN: sign a 32-byte SHA-256 digest (RSA: PKCS#1 v1.5 with the SHA-256 DigestInfo;
     * ECDSA: the digest as e; Ed25519, ML-DSA: the 32 bytes as the message). *sig_len: in, the room
     * in sig (TB_PRIM_MAX_SIG); out, the signature's length. verify returns 0 only for a
     * valid signature. */
    int (*sign)(void *obj, const uint8_t digest[32], uint8_t *sig, size_t *sig_len);
    int (*verify)(void *obj, const uint8_t digest[32], const uint8_t *sig, size_t sig_len);

    /* ECDH: the object holds two peers (0, 1). keygen makes peer's fresh key pair and
     * writes its public key as sent on the wire (X25519: 32 bytes; P-256: uncompressed
     * point); shared computes peer's secret from the other peer's public key (parsing and
     * validating it included). Lengths in/out as for sign (TB_PRIM_MAX_PUB, _SECRET). */
    int (*keygen)(void *obj, int peer, uint8_t *pub, size_t *pub_len);
    int (*shared)(void *obj, int peer, const uint8_t *peer_pub, size_t pub_len, uint8_t *secret,
                  size_t *secret_len);

    /* KEM: kem_keygen makes the object's fresh key pair and writes its encapsulation key;
     * encapsulate writes a ciphertext and the shared secret for an encapsulation key (parsing
     * it included: what a TLS server does with a key share); decapsulate the shared secret of
     * a ciphertext with the key pair's decapsulation key. Lengths in/out as for sign
     * (TB_PRIM_MAX_KEM, TB_PRIM_MAX_SECRET). */
    int (*kem_keygen)(void *obj, uint8_t *pub, size_t *pub_len);
    int (*encapsulate)(void *obj, const uint8_t *pub, size_t pub_len, uint8_t *ct, size_t *ct_len, uint8_t *secret,
                       size_t *secret_len);
    int (*decapsulate)(void *obj, const uint8_t *ct, size_t ct_len, uint8_t *secret, size_t *secret_len);
} tb_prim_ops;

/* Defined by src/primitives/<library>.c. */
extern const tb_prim_ops tb_prim_library_ops;

/* ---------------------------------------------------------------- tests */

/* Corrupts the expected answer of a RUN's state (a setup's *state), so its next measure
 * must return TB_PRIM_ERR_KAT: the check that the checks check. Tests only. */
void tb_prim_corrupt_expected(void *state);

#endif
