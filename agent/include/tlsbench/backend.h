/* SPDX-License-Identifier: Apache-2.0 */
/* The interface every TLS library backend implements (one struct of function pointers).
 * One agent binary links exactly one backend, as one firmware links one library.
 *
 * Division of tracing work: the backend emits handshake steps (its state -> label table)
 * and crypto operations (link-time wrappers); the runner emits phases and records; the
 * tb_io callbacks the backend is given are already traced as I/O. */
#ifndef TLSBENCH_BACKEND_H
#define TLSBENCH_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tlsbench/json.h"

/* What tb_io send/recv return when the other side has nothing yet (never a byte count). */
#define TB_IO_WOULD_BLOCK (-2)

/* Byte I/O of one peer. send returns bytes accepted (>0), recv bytes delivered (>0);
 * either returns TB_IO_WOULD_BLOCK, or -1 on a transport error. */
typedef struct tb_io {
    int (*send)(void *ctx, const uint8_t *buf, size_t len);
    int (*recv)(void *ctx, uint8_t *buf, size_t len);
    void *ctx;
} tb_io;

#define TB_MAX_SUITE_CREDENTIALS 10

/* One cipher suite of the linked build. Strings are static. */
typedef struct tb_suite_info {
    uint16_t id;                /* IANA value */
    const char *name;           /* the library's name, e.g. TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256 */
    const char *min_version;    /* "TLS1.0" .. "TLS1.3" */
    const char *max_version;
    const char *key_exchange;   /* "ECDHE", "DHE", "RSA", "PSK", "ECDH", ... */
    const char *authentication; /* "ECDSA", "RSA", "PSK", ... */
    const char *cipher;         /* "AES-128-GCM", "CHACHA20-POLY1305", ... */
    const char *mac;            /* "SHA256", "SHA384", ... (the AEAD's PRF hash for AEAD suites) */
    bool dtls;                  /* usable over DTLS */
    /* TB_CREDENTIAL_* values this suite can run with here; [0] is what "auto" picks. */
    uint8_t credentials[TB_MAX_SUITE_CREDENTIALS];
    uint8_t n_credentials;      /* 0: the suite cannot run here; why_unsupported says why */
    const char *why_unsupported;
} tb_suite_info;

/* How to configure one connection (both peers get the same). */
typedef struct tb_conn_config {
    uint16_t suite_id;
    uint16_t group;       /* TB_GROUP_* (IANA), 0 = default for the suite */
    uint8_t credential;   /* TB_CREDENTIAL_*, never AUTO here: the runner resolved it */
    uint8_t transport;    /* TB_TRANSPORT_* */
    uint16_t options;     /* RUN options bit field (TB_OPTION_*: tb_run_request_options() of the RUN) */
    uint8_t protocol;     /* TB_PROTOCOL_KIND_TLS or _DTLS (DTLS 1.2 over datagrams) */
    uint8_t max_fragment; /* RFC 6066 max_fragment_length code, 0 = none */
    uint16_t dtls_timeout_min_ms; /* 0 = the library's default */
    uint16_t dtls_timeout_max_ms;
    uint16_t dtls_mtu;            /* 0 = the library's default */
    /* The client's transport address (DTLS server: cookies are bound to it). */
    uint8_t peer_id[20];
    uint8_t peer_id_len;
    /* The RUN's first connection. With TB_OPTION_RESUME it is the full handshake that makes
     * the session: the client forgets any session an earlier RUN left and keeps this one's;
     * every later connection resumes the session the previous one left. */
    bool first_connection;
} tb_conn_config;

typedef enum tb_step_result {
    TB_STEP_CONTINUE,  /* stepped one state; call again */
    TB_STEP_WANT_READ, /* needs bytes from the peer: give the other peer a turn */
    TB_STEP_DONE,      /* handshake complete */
    TB_STEP_ERROR      /* failed; *lib_error holds the library's code */
} tb_step_result;

typedef struct tb_session tb_session; /* one peer's connection; defined by the backend */

/* The RUN options every backend honours (the transport or the common code applies them). */
#define TB_OPTIONS_BASE (TB_OPTION_COLD_CACHES | TB_OPTION_NODELAY | TB_OPTION_QUICKACK | TB_OPTION_DTLS_COOKIES)

typedef struct tb_backend {
    const char *name;         /* "mbedtls": agent binary suffix, plan `library` value */
    const char *library_name; /* "mbed TLS" */
    const char *(*version)(void);
    const char *step_granularity; /* "state" (one library state per step) or "flight" */
    /* RUN options (TB_OPTION_*) the backend implements beyond TB_OPTIONS_BASE, which every
     * backend honours (caches, TCP, cookies); a RUN asking for another is refused. */
    uint16_t options;

    /* Adds build facts (enabled protocol versions, options) as members of an open JSON object. */
    void (*describe_build)(tb_json *out);

    /* Suites of the linked build, in the library's preference order. */
    size_t (*suite_count)(void);
    const tb_suite_info *(*suite_at)(size_t index);

    /* Once per process: RNG, credentials. Returns 0, or -1 with a message in err. */
    int (*init)(char *err, size_t errlen);
    void (*deinit)(void);

    /* Whether connections of this configuration can be made here: 0, or -1 with why (a suite,
     * credential or group the build lacks or that does not fit). The runner asks once per RUN
     * and refuses it ("unsupported") instead of failing every repetition's setup. May be
     * NULL: then only session_new says so. */
    int (*check)(const tb_conn_config *cfg, char *err, size_t errlen);
    /* A fresh connection for one peer (TB_PEER_CLIENT or TB_PEER_SERVER) over io.
     * Returns NULL with a message in err (e.g. "group x448 not in this build"). */
    tb_session *(*session_new)(uint8_t peer, const tb_conn_config *cfg, tb_io io, char *err, size_t errlen);
    /* Advances the handshake by one state, traced as one step span. */
    tb_step_result (*step)(tb_session *s, int32_t *lib_error);
    /* Application data: bytes written/read (>0), TB_IO_WOULD_BLOCK, or -1 with *lib_error. */
    int (*write)(tb_session *s, const uint8_t *buf, size_t len, int32_t *lib_error);
    int (*read)(tb_session *s, uint8_t *buf, size_t len, int32_t *lib_error);
    /* Sends close_notify. 0, TB_IO_WOULD_BLOCK, or -1 with *lib_error. */
    int (*close_notify)(tb_session *s, int32_t *lib_error);
    void (*session_free)(tb_session *s);

    /* Human text for a library error code. */
    void (*error_text)(int32_t code, char *buf, size_t len);

    /* DTLS: ms until the session's retransmission timer expires (0 = expired: step now),
     * or UINT32_MAX when no timer runs. TLS sessions return UINT32_MAX. */
    uint32_t (*timeout_ms)(tb_session *s);
    /* Flights this session has retransmitted so far (DTLS timer expiries); 0 for TLS. */
    uint32_t (*retransmissions)(tb_session *s);
    /* DTLS server, after its handshake and close_notify: from now on read() hands the
     * session one datagram of its client at a time, and a retransmission of the client's
     * last flight makes it resend its own (RFC 6347 4.2.4) until the client's close_notify
     * (read returns -1). May be NULL when the library does that without help. */
    void (*linger)(tb_session *s);
} tb_backend;

/* timeout_ms(): no retransmission timer runs (TLS, or DTLS between flights). */
#define TB_NO_TIMER UINT32_MAX

/* The backend this binary was linked with (defined in src/backends/<lib>.c). */
extern const tb_backend tb_linked_backend;

/* Lookups over the linked backend's suite table. */
const tb_suite_info *tb_suite_by_id(const tb_backend *b, uint16_t id);
const tb_suite_info *tb_suite_by_name(const tb_backend *b, const char *name);

#endif
