/* SPDX-License-Identifier: Apache-2.0 */
/* Lookups over a backend's suite table (a linear scan: ~100 suites, called per RUN). */
#include <ctype.h>

#include "tlsbench/backend.h"

const tb_suite_info *tb_suite_by_id(const tb_backend *b, uint16_t id) {
    for (size_t i = 0, n = b->suite_count(); i < n; i++) {
        const tb_suite_info *s = b->suite_at(i);
        if (s->id == id)
            return s;
    }
    return NULL;
}

/* Case-insensitive: users type suite names by hand. */
static int tb_name_eq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

const tb_suite_info *tb_suite_by_name(const tb_backend *b, const char *name) {
    for (size_t i = 0, n = b->suite_count(); i < n; i++) {
        const tb_suite_info *s = b->suite_at(i);
        if (tb_name_eq(s->name, name))
            return s;
    }
    return NULL;
}
