/* SPDX-License-Identifier: Apache-2.0 */
/* The backend session tests' in-memory pair (pair.h). */
#include "pair.h"

#include <stdbool.h>
#include <string.h>

#include "tlsbench/runner.h"
#include "tlsbench/trace.h"

static const tb_backend *b = &tb_linked_backend;

static int tb_pair_open_io(tb_pair *p, const tb_conn_config *cfg, bool traced) {
    memset(p, 0, sizeof *p);
    p->t = tb_memory_transport.open(0, p->err, sizeof p->err);
    for (uint8_t peer = 0; p->t && peer < 2; peer++) {
        tb_trace_set_peer(peer); /* the session's setup crypto belongs to its peer */
        p->raw[peer] = tb_memory_transport.endpoint(p->t, peer);
        tb_io io = traced ? tb_traced_io(&p->raw[peer]) : p->raw[peer];
        p->peer[peer] = b->session_new(peer, cfg, io, p->err, sizeof p->err);
        if (!p->peer[peer])
            return -1;
    }
    return p->t ? 0 : -1;
}

int tb_pair_open(tb_pair *p, const tb_conn_config *cfg) { return tb_pair_open_io(p, cfg, false); }

int tb_pair_open_traced(tb_pair *p, const tb_conn_config *cfg) { return tb_pair_open_io(p, cfg, true); }

void tb_pair_close(tb_pair *p) {
    for (int peer = 0; peer < 2; peer++)
        b->session_free(p->peer[peer]);
    if (p->t)
        tb_memory_transport.close(p->t);
}

int tb_pair_handshake(tb_pair *p, int32_t *lib_error) {
    int done[2] = {0, 0};
    for (int turns = 0; turns < 64 && !(done[0] && done[1]); turns++) {
        uint8_t peer = (uint8_t)(turns % 2);
        tb_trace_set_peer(peer);
        for (tb_step_result r = TB_STEP_CONTINUE; !done[peer] && r == TB_STEP_CONTINUE;) {
            r = b->step(p->peer[peer], lib_error);
            if (r == TB_STEP_ERROR)
                return -1;
            done[peer] = r == TB_STEP_DONE;
        }
    }
    return done[0] && done[1] ? 0 : -1;
}

int tb_pair_echo(tb_pair *p, uint8_t w, const uint8_t *out, size_t len) {
    uint8_t in[200]; /* room for more than was sent: a longer record would show */
    int32_t e = 0;
    if (len > sizeof in / 2 || b->write(p->peer[w], out, len, &e) != (int)len)
        return -1;
    return b->read(p->peer[1 - w], in, sizeof in, &e) == (int)len && memcmp(in, out, len) == 0 ? 0 : -1;
}
