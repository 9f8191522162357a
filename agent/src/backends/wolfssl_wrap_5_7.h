/* SPDX-License-Identifier: Apache-2.0 */
/* The wrapped wolfSSL functions whose prototypes are wolfSSL 5.7's, in wolfssl_wrap.h's
 * format: ParseCertRelative gained an extra CA argument; tls13.o calls the HKDF's _ex and
 * _Alloc forms (heap and device arguments; checked with nm -A); and
 * the Kyber/ML-KEM calls of a build with --enable-kyber (tls.o -> wc_kyber.o): the key share's
 * key pair, the server's encapsulation, the client's decapsulation. In a hybrid group the ECC
 * half is the usual wc_ecc_make_key_ex / wc_ecc_shared_secret beside them. */
/* no include guard: an X-macro list, expanded once per definition of TB_WRAP */
TB_WRAP(ParseCertRelative, CHAIN_VERIFY, (DecodedCert *cert, int type, int verify, void *cm, Signer *extraCa), (cert, type, verify, cm, extraCa))
TB_WRAP(wc_Tls13_HKDF_Extract_ex, KDF, (byte *prk, const byte *salt, word32 saltLen, byte *ikm, word32 ikmLen, int digest, void *heap, int devId), (prk, salt, saltLen, ikm, ikmLen, digest, heap, devId))
TB_WRAP(wc_Tls13_HKDF_Expand_Label_ex, KDF, (byte *okm, word32 okmLen, const byte *prk, word32 prkLen, const byte *protocol, word32 protocolLen, const byte *label, word32 labelLen, const byte *info, word32 infoLen, int digest, void *heap, int devId), (okm, okmLen, prk, prkLen, protocol, protocolLen, label, labelLen, info, infoLen, digest, heap, devId))
TB_WRAP(wc_Tls13_HKDF_Expand_Label_Alloc, KDF, (byte *okm, word32 okmLen, const byte *prk, word32 prkLen, const byte *protocol, word32 protocolLen, const byte *label, word32 labelLen, const byte *info, word32 infoLen, int digest, void *heap), (okm, okmLen, prk, prkLen, protocol, protocolLen, label, labelLen, info, infoLen, digest, heap))
TB_WRAP(wc_KyberKey_MakeKey, KEY_GENERATE, (KyberKey *key, WC_RNG *rng), (key, rng))
TB_WRAP(wc_KyberKey_Encapsulate, KEM_ENCAPSULATE, (KyberKey *key, unsigned char *ct, unsigned char *ss, WC_RNG *rng), (key, ct, ss, rng))
TB_WRAP(wc_KyberKey_Decapsulate, KEM_DECAPSULATE, (KyberKey *key, unsigned char *ss, const unsigned char *ct, word32 len), (key, ss, ct, len))
