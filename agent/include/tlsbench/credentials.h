/* SPDX-License-Identifier: Apache-2.0 */
/* Test credentials shared by every backend, embedded as PEM text at build time
 * (agent/creds/embed_creds.py), so a device build without a filesystem and every TLS
 * library use the same certificates and keys. Library-neutral: no TLS library types here.
 * The keys are committed test-only keys (agent/creds/fixed/, made once by gen_creds.sh):
 * every build embeds the same ones, so counts do not move from build to build. */
#ifndef TLSBENCH_CREDENTIALS_H
#define TLSBENCH_CREDENTIALS_H
#include <stddef.h>
#include <stdint.h>

/* Host name in every leaf's subjectAltName; clients verify it. */
#define TB_CREDENTIAL_HOSTNAME "tlsbench.test"

/* One certificate credential. Every string is NUL-terminated PEM (mbed TLS wants
 * strlen + 1 as the length of a PEM buffer). */
typedef struct tb_credential_pem {
    uint8_t credential;       /* TB_CREDENTIAL_* */
    const char *ca;           /* trust anchor: the CA certificate */
    const char *server_chain; /* server leaf (the CA is the trust anchor, not sent) */
    const char *server_key;   /* PKCS#8 */
    const char *client_chain; /* client leaf */
    const char *client_key;   /* PKCS#8 */
    const char *server_public; /* the server leaf's SubjectPublicKeyInfo (PEM): a raw public key */
    const char *client_public; /* the client leaf's */
} tb_credential_pem;

/* The PEMs of a certificate credential, or NULL (auto, psk, unknown). */
const tb_credential_pem *tb_credential_pem_find(uint8_t credential);

/* TB_CREDENTIAL_PSK: a fixed test key and its identity. */
#define TB_PSK_LEN 32
extern const uint8_t tb_psk_key[TB_PSK_LEN];
extern const char tb_psk_identity[]; /* NUL-terminated */

#endif
