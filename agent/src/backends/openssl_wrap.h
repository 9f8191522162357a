/* SPDX-License-Identifier: Apache-2.0 */
/* The OpenSSL functions traced as crypto operations: the ONE list. openssl_crypto.c expands
 * it into __wrap_ functions; openssl.cmake reads the symbol names from it for the linker's
 * --wrap flags. One line per function, always starting with "TB_WRAP(":
 *   TB_WRAP(symbol, label (TB_L_ without prefix), (parameters), (arguments), traced-when)
 * traced-when is an expression of the parameters: OpenSSL calls EVP_PKEY_derive,
 * EVP_DigestSign, EVP_PKEY_encrypt/decrypt, EVP_PKEY_encapsulate/decapsulate first with a
 * NULL output buffer to ask for the size (no computation); only the call that computes is
 * traced. ML-KEM (3.5): the key share is EVP_PKEY_keygen, the server's EVP_PKEY_encapsulate,
 * the client's EVP_PKEY_decapsulate; a hybrid group's provider calls them again for its
 * ML-KEM half (libcrypto: mlx_kem.o -> kem.o), nested, beside its ECDH half's keygen and
 * derive. ML-DSA signs and verifies through EVP_DigestSign/Verify.
 * Every symbol is called across object files of the static libraries (checked with nm -A):
 * libssl -> libcrypto for all of them, and inside libcrypto a_verify.o -> EVP_DigestVerify,
 * which is why PK_VERIFY also appears nested inside CHAIN_VERIFY. Calls inside one object
 * file are not wrapped: EVP_PKEY_keygen -> EVP_PKEY_generate (both pmeth_gn.c) shows once. */
/* no include guard: an X-macro list, expanded once per definition of TB_WRAP */
TB_WRAP(EVP_PKEY_keygen, KEY_GENERATE, (EVP_PKEY_CTX *ctx, EVP_PKEY **ppkey), (ctx, ppkey), 1)
TB_WRAP(EVP_PKEY_derive, SHARED_SECRET, (EVP_PKEY_CTX *ctx, unsigned char *key, size_t *keylen), (ctx, key, keylen), key != NULL)
TB_WRAP(EVP_DigestSign, PK_SIGN, (EVP_MD_CTX *ctx, unsigned char *sigret, size_t *siglen, const unsigned char *tbs, size_t tbslen), (ctx, sigret, siglen, tbs, tbslen), sigret != NULL)
TB_WRAP(EVP_DigestVerify, PK_VERIFY, (EVP_MD_CTX *ctx, const unsigned char *sigret, size_t siglen, const unsigned char *tbs, size_t tbslen), (ctx, sigret, siglen, tbs, tbslen), 1)
TB_WRAP(X509_verify_cert, CHAIN_VERIFY, (X509_STORE_CTX *ctx), (ctx), 1)
TB_WRAP(EVP_PKEY_encrypt, PK_ENCRYPT, (EVP_PKEY_CTX *ctx, unsigned char *out, size_t *outlen, const unsigned char *in, size_t inlen), (ctx, out, outlen, in, inlen), out != NULL)
TB_WRAP(EVP_PKEY_decrypt, PK_DECRYPT, (EVP_PKEY_CTX *ctx, unsigned char *out, size_t *outlen, const unsigned char *in, size_t inlen), (ctx, out, outlen, in, inlen), out != NULL)
TB_WRAP(EVP_KDF_derive, KDF, (EVP_KDF_CTX *ctx, unsigned char *key, size_t keylen, const OSSL_PARAM params[]), (ctx, key, keylen, params), 1)
TB_WRAP(EVP_PKEY_encapsulate, KEM_ENCAPSULATE, (EVP_PKEY_CTX *ctx, unsigned char *wrappedkey, size_t *wrappedkeylen, unsigned char *genkey, size_t *genkeylen), (ctx, wrappedkey, wrappedkeylen, genkey, genkeylen), wrappedkey != NULL)
TB_WRAP(EVP_PKEY_decapsulate, KEM_DECAPSULATE, (EVP_PKEY_CTX *ctx, unsigned char *unwrapped, size_t *unwrappedlen, const unsigned char *wrapped, size_t wrappedlen), (ctx, unwrapped, unwrappedlen, wrapped, wrappedlen), unwrapped != NULL)
