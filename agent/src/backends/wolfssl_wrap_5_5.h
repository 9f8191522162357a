/* SPDX-License-Identifier: Apache-2.0 */
/* The wrapped wolfSSL functions whose prototypes are wolfSSL 5.5's (Debian 12's 5.5.4), in
 * wolfssl_wrap.h's format; 5.7 changed them (wolfssl_wrap_5_7.h). */
/* no include guard: an X-macro list, expanded once per definition of TB_WRAP */
TB_WRAP(ParseCertRelative, CHAIN_VERIFY, (DecodedCert *cert, int type, int verify, void *cm), (cert, type, verify, cm))
TB_WRAP(wc_Tls13_HKDF_Extract, KDF, (byte *prk, const byte *salt, int saltLen, byte *ikm, int ikmLen, int digest), (prk, salt, saltLen, ikm, ikmLen, digest))
TB_WRAP(wc_Tls13_HKDF_Expand_Label, KDF, (byte *okm, word32 okmLen, const byte *prk, word32 prkLen, const byte *protocol, word32 protocolLen, const byte *label, word32 labelLen, const byte *info, word32 infoLen, int digest), (okm, okmLen, prk, prkLen, protocol, protocolLen, label, labelLen, info, infoLen, digest))
