/* SPDX-License-Identifier: Apache-2.0 */
/* What the mbed TLS 2.28 and 3.6 backends (mbedtls.c, mbedtls3.c) share: the calls that
 * are the same in both versions. Compiled into each agent against its own library's
 * headers; nothing here reads a private member of the library's structures.
 *
 *   process      the DRBG and the test credentials, set up once per process
 *   suites       what a TLS 1.2 key exchange of mbed TLS's suite table means here
 *   link         a session's I/O callbacks, DTLS retransmission timer, cookies, MTU
 *   credentials  who sends and who verifies which chain
 *   sessions     allocation and the configuration calls both versions make, the end of the
 *                client's handshake, application data and close_notify
 *   resumption   RESUME: the server's ticket key or session cache, the client's saved session */
#ifndef TLSBENCH_BACKENDS_MBEDTLS_SHARED_H
#define TLSBENCH_BACKENDS_MBEDTLS_SHARED_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl_ciphersuites.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"

#include "tlsbench/backend.h"
#include "tlsbench/credentials.h"
#include "tlsbench/json.h"

/* ---------------------------------------------------------------- process */

/* One credential's chains and keys, parsed once at init and shared read-only by every
 * session (mbed TLS's configuration calls take them without const). */
typedef struct tb_mbed_cred {
    bool ready;
    char why[128]; /* why it is not ready */
    mbedtls_x509_crt ca, server_chain, client_chain;
    mbedtls_pk_context server_key, client_key;
} tb_mbed_cred;

/* mbedtls_pk_parse_key of the linked version (3.x takes an RNG). */
typedef int (*tb_mbed_key_parser)(mbedtls_pk_context *pk, const char *pem);

/* Once per process: the CTR_DRBG seeded from mbedtls_entropy, then the test credentials
 * (one the build lacks the algorithms for is not parsed; one that fails to parse is not
 * ready, with the parser's words). 0, or -1 with why in err. */
int tb_mbed_process_init(const char *personalization, tb_mbed_key_parser parse_key, char *err, size_t errlen);
/* Frees the credentials, RESUME's state and the DRBG. */
void tb_mbed_process_free(void);
mbedtls_ctr_drbg_context *tb_mbed_drbg(void);
/* A parsed credential (after init), or NULL for slots without certificates (psk, unused). */
const tb_mbed_cred *tb_mbed_cred_at(uint8_t credential);
/* Whether the linked build has what a credential needs (its key's curve; RSA where used).
 * A stripped build offers only these, so a plan's `auto` never picks one it cannot parse. */
bool tb_mbed_cred_usable(uint8_t credential);
/* Why a parsed credential cannot be used (tb_backend_rules.credential_why), NULL when it can. */
const char *tb_mbed_credential_why(uint8_t credential);

/* ---------------------------------------------------------------- suites */

/* A TLS 1.2 key exchange: its SUITES names, whether the pre-shared key is configured on
 * both peers, the credentials it runs with (which groups it takes is the spec's
 * [key_exchange], by name). */
typedef struct tb_mbed_kex {
    const char *key_exchange;
    const char *authentication;
    bool psk;
    uint8_t credentials[TB_MAX_SUITE_CREDENTIALS];
    uint8_t n_credentials;
    const char *why_unsupported;
} tb_mbed_kex;

/* The row of an mbedtls_key_exchange_type_t (MBEDTLS_KEY_EXCHANGE_NONE's for an unknown one). */
const tb_mbed_kex *tb_mbed_kex_find(int key_exchange);
/* A suite's credentials: the key exchange's that this build can use; why not when none. */
void tb_mbed_suite_credentials(tb_suite_info *info, const tb_mbed_kex *kex);
/* The suite's cipher as SUITES names it: mbed TLS's name, "-8" for 8-byte-tag CCM (mbed
 * TLS names CCM and CCM_8 alike; the tag length is in the suite's flags). */
void tb_mbed_cipher_name(char *buf, size_t len, const char *name, bool short_tag);

/* ---------------------------------------------------------------- link */

/* The transport side of one session. */
typedef struct tb_mbed_link {
    mbedtls_ssl_context *ssl;
    tb_io io;
    bool dtls, server;
    /* Set by the backend's step when the handshake is over: later timer expiries resend
     * nothing of this handshake (a lingering DTLS server answers its client instead). */
    bool handshake_over;
    /* DTLS: the timer mbed TLS asks for (mbedtls_ssl_set_timer_cb), on the port's monotonic
     * clock; 0 = not armed. */
    uint64_t timer_int_ns, timer_fin_ns;
    bool timer_fired;         /* this arming's expiry was already counted */
    uint32_t retransmissions; /* expiries during the handshake: each resends a flight */
    uint8_t peer_id[20];      /* the client's transport id (server cookies) */
    uint8_t peer_id_len;
} tb_mbed_link;

/* A DTLS server that sent a HelloVerifyRequest keeps no state: reset, and wait for the
 * client's second ClientHello (with the cookie) from the same transport id. Returns
 * MBEDTLS_ERR_SSL_WANT_READ, or the library's code. */
int tb_mbed_after_hello_verify(tb_mbed_link *l);

/* ---------------------------------------------------------------- groups */

/* An RFC 7919 group: the prime a TLS 1.2 DHE server sends (the generator is 2). */
typedef struct tb_mbed_ffdhe {
    uint16_t group; /* TB_GROUP_FFDHE* */
    const uint8_t *p;
    size_t p_len;
} tb_mbed_ffdhe;

/* The FFDHE group of an IANA id, NULL for any other group. */
const tb_mbed_ffdhe *tb_mbed_ffdhe_find(uint16_t group);
/* A TLS 1.2 DHE server's parameters. 0 or the library's code (no DHM in the build). */
int tb_mbed_conf_dh(mbedtls_ssl_config *c, const tb_mbed_ffdhe *dh);
/* Whether the linked build has the elliptic curve of an IANA group id. */
bool tb_mbed_curve_built(uint16_t group);

/* ---------------------------------------------------------------- sessions */

/* The start of both versions' sessions: each backend's struct tb_session begins with it, so
 * the calls below take the backend's sessions as they are. */
typedef struct tb_mbed_session {
    mbedtls_ssl_context ssl;
    mbedtls_ssl_config conf;
    tb_mbed_link link;
    int ciphersuites[2];  /* the forced suite, 0-terminated */
    bool resume;          /* client, RESUME: keep the session after the handshake */
    bool offered;         /* client: a saved session was offered */
    bool full_handshake;  /* client: not a resumption (the version's witness state was stepped) */
} tb_mbed_session;

#define TB_MBED_SESSION(s) ((tb_mbed_session *)(void *)(s))

/* The version's own configuration calls, between the shared start (defaults for the role and
 * transport, the link, the RNG, the forced suite) and end (setup, host name, the offered
 * session, the I/O and timer callbacks). 0 or the library's code. */
typedef int (*tb_mbed_configure_fn)(tb_session *s, uint8_t peer, const void *suite, const tb_conn_config *cfg,
                                    uint16_t group);

/* backend.h's session_new after tb_backend_check: a zeroed session of `size` bytes, set up
 * and configured; NULL with the reason in err. */
tb_session *tb_mbed_session_open(size_t size, uint8_t peer, const tb_conn_config *cfg, tb_io io,
                                 const tb_suite_info *suite, uint16_t group, tb_mbed_configure_fn configure,
                                 char *err, size_t errlen);

/* The client's handshake is over: a session offered must have been resumed, and RESUME keeps
 * the session for the next connection when keep says it is complete (TLS 1.3 keeps it when
 * its ticket comes). TB_STEP_DONE, or TB_STEP_ERROR with the code in *lib_error. */
tb_step_result tb_mbed_finish(tb_session *s, bool keep, int32_t *lib_error);

/* backend.h's calls that are the same in both versions. */
void tb_mbed_session_free(tb_session *s);
int tb_mbed_write(tb_session *s, const uint8_t *buf, size_t len, int32_t *lib_error);
int tb_mbed_read(tb_session *s, uint8_t *buf, size_t len, int32_t *lib_error);
int tb_mbed_close_notify(tb_session *s, int32_t *lib_error);
uint32_t tb_mbed_timeout_ms(tb_session *s);
uint32_t tb_mbed_retransmissions(tb_session *s);

/* ---------------------------------------------------------------- credentials */

/* Who authenticates: the client verifies the server's chain (certificate credentials);
 * with MUTUAL_AUTH the server requires the client's chain too. cred NULL: no certificates
 * (psk). 0 or the library's code. */
int tb_mbed_conf_credentials(mbedtls_ssl_config *c, bool server, const tb_mbed_cred *cred, bool mutual);

/* ---------------------------------------------------------------- resumption */

/* RESUME keeps, per process: the server's ticket key and session-ID cache (set up on first
 * use) and the client's saved session (replaced after every handshake). */
/* The server resumes by ticket or (by_id) from its session cache. 0 or the library's code. */
int tb_mbed_conf_resume_server(mbedtls_ssl_config *c, bool by_id);
/* The client asks for a TLS 1.2 ticket unless it resumes by session ID; without RESUME it
 * asks for none. */
void tb_mbed_conf_client_tickets(mbedtls_ssl_config *c, bool on);
/* The client's connection: the RUN's first forgets the saved session; later ones offer it.
 * 0, or the library's code (the first handshake left no session: TB_MBED_ERR_NO_SESSION). */
int tb_mbed_resume_offer(mbedtls_ssl_context *ssl, bool first_connection);
/* After the client's handshake (TLS 1.3: once its ticket arrived): keep its session. */
int tb_mbed_resume_keep(mbedtls_ssl_context *ssl);

/* The RESUME options this build can honour (backend.h's tb_backend.options): tickets need
 * the ticket module, resumption by ID the server's session cache. A stripped build without
 * them refuses the RUN instead of failing every repetition. */
#if defined(MBEDTLS_SSL_TICKET_C) && defined(MBEDTLS_SSL_SESSION_TICKETS)
#define TB_MBED_RESUME_OPTIONS (TB_OPTION_RESUME | (TB_MBED_CACHE_BUILT ? TB_OPTION_RESUME_ID : 0))
#else
#define TB_MBED_RESUME_OPTIONS 0
#endif
/* CONNECTION_ID: DTLS 1.2 connection IDs (RFC 9146) where the build has them (3.6's default). */
#if defined(MBEDTLS_SSL_DTLS_CONNECTION_ID)
#define TB_MBED_CID_OPTION TB_OPTION_CONNECTION_ID
#else
#define TB_MBED_CID_OPTION 0
#endif
#if defined(MBEDTLS_SSL_CACHE_C)
#define TB_MBED_CACHE_BUILT 1
#else
#define TB_MBED_CACHE_BUILT 0
#endif

/* Agent codes next to mbed TLS's (its codes are -0x0001 .. -0x7FFF). */
#define TB_MBED_ERR_NO_SESSION (-0x10001)  /* RESUME: no session to offer */
#define TB_MBED_ERR_NOT_RESUMED (-0x10002) /* RESUME: the server answered with a full handshake */

/* ---------------------------------------------------------------- library facts */

/* The linked library's version text and number, whether a build option is in it (0 yes,
 * -1 no, -2 the feature list is compiled out) and an error's text: a stripped config may
 * leave out the version and error modules. */
const char *tb_mbed_version(void);
unsigned tb_mbed_version_number(void);
int tb_mbed_feature(const char *feature);
/* backend.h's error_text: mbed TLS's text, or the agent's for its own codes. */
void tb_mbed_error_text(int32_t code, char *buf, size_t len);

/* A HELLO build key and the build option it reports (true when the linked library has it). */
typedef struct tb_mbed_feature_key {
    const char *key;
    const char *feature;
} tb_mbed_feature_key;

/* HELLO's build facts both versions give: version, version number, the build options both
 * versions have and then `features` (the version's own), read from the linked library
 * itself (MBEDTLS_VERSION_FEATURES) so they describe the library that runs, not the headers
 * it was compiled against; record buffer sizes; how sessions are configured. */
void tb_mbed_describe_library(tb_json *out, const tb_mbed_feature_key *features, size_t n);
/* The config header the library was built with (what an experiment measured), and per
 * credential "ready" or why this build cannot use it. */
void tb_mbed_describe_config(tb_json *out);
void tb_mbed_describe_credentials(tb_json *out);

/* The config header the linked library was built with (generated by tools/embed_config.py):
 * origin "custom" (tlsbench build; text embedded) or "library" (its own config header). */
extern const char tb_mbedtls_config_origin[];
extern const char tb_mbedtls_config_name[];
extern const char tb_mbedtls_config_sha256[];
extern const char tb_mbedtls_config_text[];

/* mbed TLS's byte count / WANT_* / error -> the backend contract (bytes, TB_IO_WOULD_BLOCK, -1). */
int tb_mbed_io_result(int ret, int32_t *lib_error);

#endif
