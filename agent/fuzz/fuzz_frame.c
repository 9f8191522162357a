/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the frame decoder over arbitrary bytes (a stream of frames), and the
 * RUN and REP payload decoders over whatever a frame carries. ASan/UBSan catch the rest. */
#include <stdlib.h>
#include <string.h>

#include "tlsbench/protocol.h"

/* What the decoder promises: a handshake RUN's record size is in range; an experiment RUN
 * (protocol 3) names no connection (its record size is ignored). */
static int tb_run_in_range(const tb_run_request *r) {
    if (r->repetitions == 0)
        return 0;
    if (r->experiment != 0)
        return r->suite_id == 0 && r->group == 0 && r->credential == 0 && r->direction == TB_DIRECTION_NONE &&
               r->transport == TB_TRANSPORT_MEMORY && r->role == TB_ROLE_BOTH;
    return r->record_size >= 1 && r->record_size <= TB_MAX_RECORD_SIZE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tb_frame f;
    size_t used = 0;
    char err[128];
    while (tb_frame_decode(data, size, &f, &used) == TB_FRAME_OK) {
        if (used < TB_FRAME_HEADER_SIZE + TB_FRAME_TRAILER_SIZE || used > size ||
            f.payload + f.length > data + size)
            abort(); /* the decoder must never point outside its input */
        tb_run_request r;
        if (tb_run_request_decode(f.payload, f.length, &r, err, sizeof err) == 0 && !tb_run_in_range(&r))
            abort(); /* a request that passed validation must be in range */
        tb_rep_result rep;
        uint32_t n, dropped;
        if (tb_rep_header_decode(f.payload, f.length, &rep, &n, &dropped) == 0 &&
            TB_REP_HEADER_SIZE + (size_t)n * sizeof(tb_record) + strlen(rep.reason) != f.length)
            abort(); /* header, records and reason account for every byte */
        data += used;
        size -= used;
    }
    /* The raw bytes as a RUN payload too: most inputs never form a valid frame. */
    tb_run_request r;
    (void)tb_run_request_decode(data, size, &r, err, sizeof err);
    return 0;
}
