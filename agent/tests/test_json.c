/* SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <string.h>

#include "tb_test.h"
#include "tlsbench/json.h"

static void test_nesting_and_commas(void) {
    char buf[256];
    tb_json j;
    tb_json_init(&j, buf, sizeof buf);
    tb_json_begin_object(&j);
    tb_json_kv_uint(&j, "a", 1);
    tb_json_key(&j, "b");
    tb_json_begin_array(&j);
    tb_json_int(&j, -2);
    tb_json_begin_object(&j);
    tb_json_end_object(&j);
    tb_json_bool(&j, false);
    tb_json_end_array(&j);
    tb_json_key(&j, "c");
    tb_json_begin_object(&j);
    tb_json_kv_bool(&j, "d", true);
    tb_json_kv_string(&j, "e", NULL);
    tb_json_end_object(&j);
    tb_json_kv_double(&j, "f", 21.4);
    tb_json_kv_int(&j, "g", INT64_MIN);
    tb_json_end_object(&j);
    CHECK(!j.overflow);
    CHECK(strcmp(buf, "{\"a\":1,\"b\":[-2,{},false],\"c\":{\"d\":true,\"e\":null},\"f\":21.4,"
                      "\"g\":-9223372036854775808}") == 0);
    CHECK_EQ_U(j.len, strlen(buf));
}

static void test_escaping(void) {
    char buf[128];
    tb_json j;
    tb_json_init(&j, buf, sizeof buf);
    tb_json_string(&j, "q\"b\\n\n\x01\xc3\xa9");
    CHECK(strcmp(buf, "\"q\\\"b\\\\n\\n\\u0001\xc3\xa9\"") == 0);
}

static void test_non_finite_is_null(void) {
    char buf[64];
    tb_json j;
    tb_json_init(&j, buf, sizeof buf);
    tb_json_begin_array(&j);
    tb_json_double(&j, NAN);
    tb_json_double(&j, INFINITY);
    tb_json_uint(&j, UINT64_MAX);
    tb_json_end_array(&j);
    CHECK(strcmp(buf, "[null,null,18446744073709551615]") == 0);
}

static void test_overflow_stops(void) {
    char buf[8];
    tb_json j;
    tb_json_init(&j, buf, sizeof buf);
    tb_json_begin_object(&j);
    tb_json_kv_string(&j, "long", "value");
    CHECK(j.overflow);
    CHECK(j.len < sizeof buf);
    CHECK(buf[j.len] == '\0');
    size_t len = j.len;
    tb_json_end_object(&j); /* nothing more is written after an overflow */
    CHECK_EQ_U(j.len, len);
    tb_json_init(&j, buf, 0);
    tb_json_bool(&j, true);
    CHECK(j.overflow);
}

int main(void) {
    RUN_TEST(test_nesting_and_commas);
    RUN_TEST(test_escaping);
    RUN_TEST(test_non_finite_is_null);
    RUN_TEST(test_overflow_stops);
    return tb_test_report();
}
