/* SPDX-License-Identifier: Apache-2.0 */
/* wolfCrypt's P-256 operations as its benchmark times them (wolfcrypt/benchmark/benchmark.c,
 * bench_ecc): a key made (free, init, make), a shared secret, a signature and its
 * verification, each TB_REPEAT times. The build options are the published row's
 * (user_settings.h and the -D flags the builder passes: docs/cycles.md). */
#include <stddef.h>
#include <stdint.h>

#include <wolfssl/wolfcrypt/settings.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/random.h>

#include "validate.h"

#ifndef TB_REPEAT
#define TB_REPEAT 3
#endif

/* CUSTOM_RAND_GENERATE_SEED: the DRBG's seed from a fixed stream. NOT random. */
int tb_seed(unsigned char *output, unsigned int size) {
    tb_fill(output, size);
    return 0;
}

static WC_RNG rng;
static ecc_key key, peer;

static int make_key(void) {
    wc_ecc_free(&key);
    int ret = wc_ecc_init_ex(&key, NULL, INVALID_DEVID);
    return ret ? ret : wc_ecc_make_key_ex(&rng, 32, &key, ECC_SECP256R1);
}

int main(void) {
    static byte digest[32], shared[32], sig[ECC_MAX_SIG_SIZE];
    word32 shared_len, sig_len;
    int verified = 0;
    tb_fill(digest, sizeof digest);
    if (wc_InitRng(&rng) || wc_ecc_init_ex(&key, NULL, INVALID_DEVID) || wc_ecc_init_ex(&peer, NULL, INVALID_DEVID) ||
        wc_ecc_make_key_ex(&rng, 32, &peer, ECC_SECP256R1))
        return 1;
    for (int i = 0; i < TB_REPEAT; i++) {
        TB_MEASURE("ecdh-p256/keygen", make_key());
        (void)wc_ecc_set_rng(&key, &rng);
        shared_len = sizeof shared;
        TB_MEASURE("ecdh-p256/shared-secret", wc_ecc_shared_secret(&key, &peer, shared, &shared_len));
        sig_len = sizeof sig;
        TB_MEASURE("ecdsa-p256/sign", wc_ecc_sign_hash(digest, sizeof digest, sig, &sig_len, &rng, &key));
        TB_MEASURE("ecdsa-p256/verify", wc_ecc_verify_hash(sig, sig_len, digest, sizeof digest, &verified, &key));
        if (!verified)
            return 1;
    }
    tb_print("done\n");
    return 0;
}
