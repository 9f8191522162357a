/* SPDX-License-Identifier: Apache-2.0 */
/* wolfCrypt for a validation program: P-256 over single-precision math, bare metal, one
 * thread. The math backend (sp_cortexm.c or sp_armthumb.c, small or not) comes as -D flags
 * from the published row's build options (spec/cycles/builds.toml). */
#ifndef TB_USER_SETTINGS_H
#define TB_USER_SETTINGS_H
#define WOLFCRYPT_ONLY
#define SINGLE_THREADED
#define NO_FILESYSTEM
#define NO_WRITEV
#define NO_DEV_RANDOM
#define NO_ERROR_STRINGS
#define NO_MAIN_DRIVER
#define WOLFSSL_NO_SOCK
#define WOLFSSL_IGNORE_FILE_WARN
#define HAVE_ECC
#define ECC_TIMING_RESISTANT
#define TFM_TIMING_RESISTANT
#define WC_RSA_BLINDING
#define WOLFSSL_HAVE_SP_ECC
#define WOLFSSL_SP_MATH
#define WOLFSSL_SP_NO_MALLOC
#define HAVE_HASHDRBG
#define NO_RSA
#define NO_DH
#define NO_DSA
#define NO_MD4
#define NO_MD5
#define NO_SHA
#define NO_DES3
#define NO_RC4
#define NO_PWDBASED
#define NO_OLD_TLS
#define WOLFSSL_SHA256
#define NO_AES_CBC
int tb_seed(unsigned char *output, unsigned int size);
#define CUSTOM_RAND_GENERATE_SEED tb_seed
#define CUSTOM_RAND_TYPE unsigned char
#endif
