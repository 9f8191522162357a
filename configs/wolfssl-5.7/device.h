/* SPDX-License-Identifier: Apache-2.0 */
/* wolfSSL 5.7 for the bare-metal agent (agent/firmware; docs/porting.md), as its user_settings.h
 * (WOLFSSL_USER_SETTINGS: wolfSSL's way for an embedded build, its IDE/GCC-ARM port's): what
 * the host's wolfssl@5.7 offers the agent (TLS 1.2 and 1.3, DTLS 1.2 and 1.3, PSK, ECDSA
 * P-256/P-384, RSA-2048/3072, Ed25519, X25519, X448, FFDHE, Kyber computed as ML-KEM, AES-GCM,
 * AES-CCM, AES-CBC, ChaCha20-Poly1305, SHA-2, SHA-3, tickets), minus what a device has not: no
 * file system, no sockets (the agent's memory transport), no threads, no clock (certificate
 * dates are not checked; tickets age by the port's counter, agent/src/backends/wolfssl_device.c),
 * no platform entropy (the port's tb_port_entropy() seeds the Hash DRBG), no x86 code. Also
 * left out of the host's: the OpenSSL compatibility layer and the ciphers nothing on a device
 * negotiates (Camellia, 3DES, RC4, NULL, MD5, TLS 1.0/1.1), certificate writing, CRL, OCSP.
 * Math: wolfSSL's single-precision code (SP) for RSA, DH and ECC at the sizes TLS uses, in C
 * (sp_c32.c); device-sp-asm.h adds its Cortex-M assembly. WOLFSSL_SMALL_STACK: big temporaries
 * on the heap, as wolfSSL's embedded ports build.
 *   spec/libraries.toml [device."wolfssl@5.7"] (make firmware, tlsbench run) */
#ifndef TLSBENCH_WOLFSSL57_DEVICE_H
#define TLSBENCH_WOLFSSL57_DEVICE_H

/* Platform */
#define WOLFSSL_GENERAL_ALIGNMENT 4
/* Byte stores for big-endian writes: GCC merges two word stores into STRD, which faults on an
 * unaligned address on every Cortex-M (DTLS 1.2 sequence numbers in WriteSEQ did). */
#define WOLFSSL_USE_ALIGN
#define SIZEOF_LONG_LONG 8
#define SINGLE_THREADED
#define NO_FILESYSTEM
#define NO_WRITEV
#define WOLFSSL_USER_IO
#define WOLFSSL_NO_SOCK
#define NO_DEV_RANDOM
#define NO_ASN_TIME
#define USER_TICKS
#define WOLFSSL_SMALL_STACK
#define WOLFSSL_IGNORE_FILE_WARN
#define NO_MAIN_DRIVER
/* The Hash DRBG's seed: the port's entropy source (wolfssl_device.c). */
extern int tb_wolfssl_seed(unsigned char *output, unsigned int size);
#define CUSTOM_RAND_GENERATE_SEED tb_wolfssl_seed

/* Math: SP for the sizes TLS uses, the generic SP code for the rest */
#define WOLFSSL_SP_MATH_ALL
#define WOLFSSL_HAVE_SP_RSA
#define WOLFSSL_HAVE_SP_DH
#define WOLFSSL_HAVE_SP_ECC
#define WOLFSSL_SP_384
#define WOLFSSL_SP_521
#define WOLFSSL_SP_4096
#define SP_INT_BITS 4096
#define TFM_TIMING_RESISTANT
#define ECC_TIMING_RESISTANT
#define WC_RSA_BLINDING

/* Public key */
#define HAVE_ECC
#define ECC_SHAMIR
#define USE_ECC_B_PARAM /* a peer's point checked on the curve (the host builds get it from OPENSSL_EXTRA) */
#define ECC_MIN_KEY_SZ 192 /* secp192r1, as the host's --with-eccminsz=192 */
#define WOLFSSL_CUSTOM_CURVES
#define HAVE_ECC_KOBLITZ
#define HAVE_ECC_BRAINPOOL
#define HAVE_CURVE25519
#define HAVE_ED25519
#define HAVE_CURVE448
#define HAVE_ED448
#define WC_RSA_PSS
#define HAVE_FFDHE_2048
#define HAVE_FFDHE_3072
#define NO_DSA

/* Post-quantum: Kyber computed as FIPS 203 ML-KEM (5.7.2: experimental) */
#define WOLFSSL_EXPERIMENTAL_SETTINGS
#define WOLFSSL_HAVE_KYBER
#define WOLFSSL_WC_KYBER
#define WOLFSSL_ML_KEM

/* Symmetric and hashes */
#define HAVE_AESGCM
#define GCM_TABLE_4BIT
#define HAVE_AESCCM
#define WOLFSSL_AES_DIRECT
#define HAVE_AES_ECB
#define HAVE_CHACHA
#define HAVE_POLY1305
#define HAVE_ONE_TIME_AUTH
#define WOLFSSL_SHA224
#define WOLFSSL_SHA384
#define WOLFSSL_SHA512
#define WOLFSSL_SHA3
#define WOLFSSL_SHAKE128
#define WOLFSSL_SHAKE256
#define HAVE_HKDF
#define HAVE_HASHDRBG
#define NO_MD4
#define NO_MD5
#define NO_DES3
#define NO_RC4
#define NO_OLD_TLS

/* TLS and DTLS */
#define WOLFSSL_TLS13
#define HAVE_TLS_EXTENSIONS
#define HAVE_SUPPORTED_CURVES
#define HAVE_SNI
#define HAVE_MAX_FRAGMENT
#define HAVE_ENCRYPT_THEN_MAC
#define HAVE_EXTENDED_MASTER
#define HAVE_SERVER_RENEGOTIATION_INFO
#define HAVE_SESSION_TICKET
#define WOLFSSL_TICKET_HAVE_ID
#define WOLFSSL_TICKET_NONCE_MALLOC /* as configure sets it: TLS 1.3 tickets call the HKDF _Alloc form */
#define SMALL_SESSION_CACHE
#define KEEP_PEER_CERT
#define WOLFSSL_DTLS
#define WOLFSSL_DTLS13
#define WOLFSSL_DTLS_CH_FRAG
#define WOLFSSL_SEND_HRR_COOKIE
#define WOLFSSL_DTLS_CID       /* connection IDs (RFC 9147; wolfSSL 5.7: DTLS 1.3 only) */
#define HAVE_RPK               /* raw public keys (RFC 7250) */
#define WOLFSSL_PUB_PEM_TO_DER /* the agent reads a raw public key from its PEM */
#define WOLFSSL_W64_WRAPPER
#define WOLFSSL_ASN_TEMPLATE
#define HAVE_EX_DATA /* the agent keeps its session in ex_data slot 0 (wolfssl.c) */

#endif /* TLSBENCH_WOLFSSL57_DEVICE_H */
