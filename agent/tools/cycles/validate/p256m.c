/* SPDX-License-Identifier: Apache-2.0 */
/* p256-m's four public functions, as its README times them (3rdparty/p256-m of mbed TLS 3.6):
 * key generation, ECDH shared secret, ECDSA sign and verify, each TB_REPEAT times. */
#include <stddef.h>
#include <stdint.h>

#include "p256-m.h"
#include "validate.h"

#ifndef TB_REPEAT
#define TB_REPEAT 3
#endif

/* p256-m as mbed TLS 3.6 ships it draws its randomness from PSA: a fixed stream here. */
int32_t psa_generate_random(uint8_t *output, size_t output_size) {
    tb_fill(output, (unsigned)output_size);
    return 0; /* PSA_SUCCESS */
}

int main(void) {
    static uint8_t priv[32], pub[64], peer_priv[32], peer_pub[64], secret[32], hash[32], sig[64];
    tb_fill(hash, sizeof hash);
    if (p256_gen_keypair(peer_priv, peer_pub) != P256_SUCCESS)
        return 1;
    for (int i = 0; i < TB_REPEAT; i++) {
        TB_MEASURE("ecdh-p256/keygen", p256_gen_keypair(priv, pub));
        TB_MEASURE("ecdh-p256/shared-secret", p256_ecdh_shared_secret(secret, priv, peer_pub));
        TB_MEASURE("ecdsa-p256/sign", p256_ecdsa_sign(sig, priv, hash, sizeof hash));
        TB_MEASURE("ecdsa-p256/verify", p256_ecdsa_verify(sig, pub, hash, sizeof hash));
    }
    tb_print("done\n");
    return 0;
}

/* p256-m as mbed TLS 3.6 ships it zeroizes with mbed TLS's function. */
void mbedtls_platform_zeroize(void *buf, size_t len) {
    volatile unsigned char *p = buf;
    while (len--)
        *p++ = 0;
}
