/* SPDX-License-Identifier: Apache-2.0 */
/* The wolfSSL/wolfCrypt functions traced as crypto operations: the ONE list. wolfssl_crypto.c
 * expands it into __wrap_ functions; wolfssl.cmake reads the symbol names from it for the
 * linker's --wrap flags. One line per function, always starting with "TB_WRAP(":
 *   TB_WRAP(symbol, label (TB_L_ without prefix), (parameters), (arguments))
 * Every symbol here is defined in one object of libwolfssl.a and called from another
 * (internal.o, tls.o, tls13.o, asn.o: checked with `nm -A libwolfssl.a`), so --wrap sees
 * the call; calls inside one object file are not wrapped. Not wrappable in 5.5.4:
 * ProcessPeerCerts (called inside internal.o for TLS 1.2), the SP/FP scalar multiplications
 * (inside ecc.o). ParseCertRelative (asn.o) parses AND verifies one received certificate
 * against the trust store: it is traced as CHAIN_VERIFY, with its signature check
 * (wc_ecc_verify_hash, wc_RsaSSL_VerifyInline... from asn.o) nested as PK_VERIFY.
 * What changed between versions is in wolfssl_wrap_5_5.h / wolfssl_wrap_5_7.h (the same
 * format; wolfssl_crypto.c expands the one of the linked version, each agent's .cmake reads
 * its list). */
/* no include guard: an X-macro list, expanded once per definition of TB_WRAP */
TB_WRAP(wc_ecc_make_key_ex, KEY_GENERATE, (WC_RNG *rng, int keysize, ecc_key *key, int curve_id), (rng, keysize, key, curve_id))
TB_WRAP(wc_ecc_shared_secret, SHARED_SECRET, (ecc_key *private_key, ecc_key *public_key, byte *out, word32 *outlen), (private_key, public_key, out, outlen))
TB_WRAP(wc_ecc_sign_hash, PK_SIGN, (const byte *in, word32 inlen, byte *out, word32 *outlen, WC_RNG *rng, ecc_key *key), (in, inlen, out, outlen, rng, key))
TB_WRAP(wc_ecc_verify_hash, PK_VERIFY, (const byte *sig, word32 siglen, const byte *hash, word32 hashlen, int *res, ecc_key *key), (sig, siglen, hash, hashlen, res, key))
TB_WRAP(wc_curve25519_make_key, KEY_GENERATE, (WC_RNG *rng, int keysize, curve25519_key *key), (rng, keysize, key))
TB_WRAP(wc_curve25519_shared_secret_ex, SHARED_SECRET, (curve25519_key *private_key, curve25519_key *public_key, byte *out, word32 *outlen, int endian), (private_key, public_key, out, outlen, endian))
TB_WRAP(wc_curve448_make_key, KEY_GENERATE, (WC_RNG *rng, int keysize, curve448_key *key), (rng, keysize, key))
TB_WRAP(wc_curve448_shared_secret_ex, SHARED_SECRET, (curve448_key *private_key, curve448_key *public_key, byte *out, word32 *outlen, int endian), (private_key, public_key, out, outlen, endian))
TB_WRAP(wc_ed25519_sign_msg, PK_SIGN, (const byte *in, word32 inLen, byte *out, word32 *outLen, ed25519_key *key), (in, inLen, out, outLen, key))
TB_WRAP(wc_ed25519_verify_msg, PK_VERIFY, (const byte *sig, word32 sigLen, const byte *msg, word32 msgLen, int *res, ed25519_key *key), (sig, sigLen, msg, msgLen, res, key))
TB_WRAP(wc_RsaSSL_Sign, PK_SIGN, (const byte *in, word32 inLen, byte *out, word32 outLen, RsaKey *key, WC_RNG *rng), (in, inLen, out, outLen, key, rng))
TB_WRAP(wc_RsaSSL_VerifyInline, PK_VERIFY, (byte *in, word32 inLen, byte **out, RsaKey *key), (in, inLen, out, key))
TB_WRAP(wc_RsaPSS_Sign, PK_SIGN, (const byte *in, word32 inLen, byte *out, word32 outLen, enum wc_HashType hash, int mgf, RsaKey *key, WC_RNG *rng), (in, inLen, out, outLen, hash, mgf, key, rng))
TB_WRAP(wc_RsaPSS_VerifyInline, PK_VERIFY, (byte *in, word32 inLen, byte **out, enum wc_HashType hash, int mgf, RsaKey *key), (in, inLen, out, hash, mgf, key))
TB_WRAP(wc_RsaPSS_VerifyInline_ex, PK_VERIFY, (byte *in, word32 inLen, byte **out, enum wc_HashType hash, int mgf, int saltLen, RsaKey *key), (in, inLen, out, hash, mgf, saltLen, key))
TB_WRAP(wc_RsaPublicEncrypt, PK_ENCRYPT, (const byte *in, word32 inLen, byte *out, word32 outLen, RsaKey *key, WC_RNG *rng), (in, inLen, out, outLen, key, rng))
TB_WRAP(wc_RsaPrivateDecryptInline, PK_DECRYPT, (byte *in, word32 inLen, byte **out, RsaKey *key), (in, inLen, out, key))
TB_WRAP(wc_DhGenerateKeyPair, KEY_GENERATE, (DhKey *key, WC_RNG *rng, byte *priv, word32 *privSz, byte *pub, word32 *pubSz), (key, rng, priv, privSz, pub, pubSz))
TB_WRAP(wc_DhAgree, SHARED_SECRET, (DhKey *key, byte *agree, word32 *agreeSz, const byte *priv, word32 privSz, const byte *otherPub, word32 pubSz), (key, agree, agreeSz, priv, privSz, otherPub, pubSz))
TB_WRAP(wc_PRF_TLS, KDF, (byte *digest, word32 digLen, const byte *secret, word32 secLen, const byte *label, word32 labLen, const byte *seed, word32 seedLen, int useAtLeastSha256, int hash_type, void *heap, int devId), (digest, digLen, secret, secLen, label, labLen, seed, seedLen, useAtLeastSha256, hash_type, heap, devId))
