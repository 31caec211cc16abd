/* The service path of levy.h: open, requests as `levy serve` answers them, responses,
 * and every error.
 *
 * Usage: service DIR LEDGER
 *   DIR holds the fixture tables written by tests/c_tests.rs; LEDGER is a ledger path
 *   that does not exist yet. The fixture's rates (Tennessee 7%, Davidson county 2.25% in
 *   37203) give the expected numbers, worked out in engine.c. */
#define _DEFAULT_SOURCE /* strcasecmp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "levy.h"
#include "check.h"
#include "service_util.h"

static char path_buf[4096];
static const char *path_in(const char *dir, const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
    return path_buf;
}

static void test_open_errors(const char *dir, const char *ledger) {
    LevyKey key = {"shop", TEST_KEY};
    LevyServiceConfig c;
    LevyService *sentinel = (LevyService *)(uintptr_t)0x1;
    LevyService *service = sentinel;
    char table[4096];
    snprintf(table, sizeof table, "%s", path_in(dir, "fixture.levy"));

    CHECK_STATUS(levy_service_open(NULL, &service), LEVY_NULL_ARGUMENT);
    memset(&c, 0, sizeof c);
    c.table_path = table;
    c.ledger_path = ledger;
    c.keys = &key;
    c.key_count = 1;
    CHECK_STATUS(levy_service_open(&c, NULL), LEVY_NULL_ARGUMENT);

    LevyServiceConfig bad = c;
    bad.ledger_path = NULL;
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "ledger_path"));
    bad = c;
    bad.ledger_path = "/tmp/\xff.sqlite";
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_INVALID_UTF8);

    bad = c;
    bad.keys = NULL;
    bad.key_count = 0;
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_INVALID_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "keys"));
    bad = c;
    bad.keys_path = path_in(dir, "keys.toml");
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_INVALID_ARGUMENT);
    bad = c;
    bad.keys = NULL; /* one key promised, none given */
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_NULL_ARGUMENT);
    LevyKey bad_key = {"shop", "sk_test_\xff"};
    bad = c;
    bad.keys = &bad_key;
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_INVALID_UTF8);
    CHECK(contains(levy_last_error_message(), "key"));

    bad = c;
    bad.keys = NULL;
    bad.key_count = 0;
    bad.keys_path = path_in(dir, "no-such-keys.toml");
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_SERVICE_ERROR);

    bad = c;
    bad.table_path = path_in(dir, "flipped.levy");
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_INVALID_TABLE);
    bad.table_path = path_in(dir, "not-a-table.levy");
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_INVALID_TABLE);
    CHECK(contains(levy_last_error_message(), "not a levy table"));
    bad.table_path = path_in(dir, "missing.levy");
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_IO_ERROR);

    bad = c;
    bad.ledger_path = "/nonexistent-levy-dir/deeper/ledger.sqlite";
    CHECK_STATUS(levy_service_open(&bad, &service), LEVY_SERVICE_ERROR);

    CHECK(service == sentinel); /* never written by a failed call */
    levy_service_free(NULL);
    levy_response_free(NULL);
}

static void test_request_errors(LevyService *service) {
    LevyResponse *sentinel = (LevyResponse *)(uintptr_t)0x1;
    LevyResponse *r = sentinel;
    LevyHeader h = {"Authorization", "Bearer " TEST_KEY};

    CHECK_STATUS(levy_service_request(NULL, "GET", "/tax/ping", &h, 1, NULL, 0, &r),
                 LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_service_request(service, NULL, "/tax/ping", &h, 1, NULL, 0, &r),
                 LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "method"));
    CHECK_STATUS(levy_service_request(service, "GET", NULL, &h, 1, NULL, 0, &r),
                 LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_service_request(service, "GET", "/tax/ping", &h, 1, NULL, 0, NULL),
                 LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_service_request(service, "GET", "/tax/ping", NULL, 1, NULL, 0, &r),
                 LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_service_request(service, "POST", "/tax/customers", &h, 1, NULL, 5, &r),
                 LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "body"));
    CHECK_STATUS(levy_service_request(service, "GET", "/tax/\xfe", &h, 1, NULL, 0, &r),
                 LEVY_INVALID_UTF8);
    LevyHeader bad = {"Authorization", "Bearer \xff"};
    CHECK_STATUS(levy_service_request(service, "GET", "/tax/ping", &bad, 1, NULL, 0, &r),
                 LEVY_INVALID_UTF8);
    CHECK(contains(levy_last_error_message(), "headers"));
    CHECK(r == sentinel);

    /* Answers with an HTTP error status are still LEVY_OK: the status tells. */
    LevyHeader unknown = {"Authorization", "Bearer sk_test_nobody_has_this_key"};
    r = NULL;
    CHECK_STATUS(levy_service_request(service, "GET", "/tax/ping", &unknown, 1, NULL, 0, &r),
                 LEVY_OK);
    CHECK_I64(levy_response_status(r), 401);
    levy_response_free(r);
    r = NULL;
    CHECK_STATUS(levy_service_request(service, "GET", "/tax/ping", NULL, 0, NULL, 0, &r), LEVY_OK);
    CHECK_I64(levy_response_status(r), 401); /* no key at all */
    levy_response_free(r);

    r = svc_request(service, "POST", "/tax/customers", "{\"name\": \"Ada\",");
    CHECK_I64(levy_response_status(r), 400); /* malformed JSON */
    CHECK(contains(body_of(r), "\"type\""));  /* the flat error format of 2026-03-01 */
    levy_response_free(r);

    r = svc_request(service, "GET", "/tax/no-such-endpoint", NULL);
    CHECK_I64(levy_response_status(r), 404);
    levy_response_free(r);
}

static void test_responses(LevyService *service) {
    LevyResponse *r = svc_request(service, "GET", "/tax/ping", NULL);
    CHECK_I64(levy_response_status(r), 200);
    const char *body = NULL;
    size_t len = 0;
    CHECK_STATUS(levy_response_body(r, &body, &len), LEVY_OK);
    CHECK(body != NULL && strlen(body) == len); /* NUL-terminated, length without it */
    CHECK(contains(body, "\"status\":\"ok\""));
    CHECK(contains(body, "\"env\":\"test\"")); /* an sk_test_ key is test mode */
    CHECK(contains(body, "\"api_version\":\"2026-03-01\""));

    size_t n = levy_response_header_count(r);
    CHECK(n >= 1);
    int json = 0;
    for (size_t i = 0; i < n; i++) {
        LevyHeader h;
        CHECK_STATUS(levy_response_header(r, i, &h), LEVY_OK);
        if (strcasecmp(h.name, "content-type") == 0 && contains(h.value, "application/json")) json = 1;
    }
    CHECK(json);
    LevyHeader h;
    CHECK_STATUS(levy_response_header(r, n, &h), LEVY_INDEX_OUT_OF_RANGE);
    CHECK_STATUS(levy_response_header(NULL, 0, &h), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_response_header(r, 0, NULL), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_response_body(NULL, &body, &len), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_response_body(r, NULL, &len), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_response_body(r, &body, NULL), LEVY_NULL_ARGUMENT);
    CHECK_I64(levy_response_status(NULL), 0);
    CHECK_I64(levy_response_header_count(NULL), 0);
    levy_response_free(r);
}

/* A request with `Idempotency-Key: key`, as svc_request sends it. */
static LevyResponse *svc_keyed(const LevyService *service, const char *path, const char *body,
                               const char *key) {
    LevyHeader headers[4] = {
        {"Authorization", "Bearer " TEST_KEY},
        {"X-API-Version", "2026-03-01"},
        {"Content-Type", "application/json"},
        {"Idempotency-Key", key},
    };
    LevyResponse *response = NULL;
    CHECK_STATUS(levy_service_request(service, "POST", path, headers, 4, (const uint8_t *)body,
                                      strlen(body), &response),
                 LEVY_OK);
    return response;
}

/* The value of header `name` of a response ("" when absent). */
static const char *header_of(const LevyResponse *r, const char *name) {
    size_t n = levy_response_header_count(r);
    for (size_t i = 0; i < n; i++) {
        LevyHeader h;
        if (levy_response_header(r, i, &h) == LEVY_OK && strcasecmp(h.name, name) == 0) return h.value;
    }
    return "";
}

/* A refund sent twice under one Idempotency-Key (its first answer lost, say) is made once:
 * the second answer is the first, marked Idempotent-Replayed. */
static void test_idempotency(LevyService *service, const char *tx) {
    char body[512];
    snprintf(body, sizeof body,
             "{\"transaction_id\":\"%s\",\"type\":\"partial\",\"line_items\":[{"
             "\"reference_line_item_id\":\"L1\",\"sales_amount_refunded\":-100,"
             "\"tax_amount_refunded\":-9}]}",
             tx);
    LevyResponse *first = svc_keyed(service, "/tax/refunds", body, "till-7-refund-1");
    CHECK_I64(levy_response_status(first), 200);
    CHECK(strcmp(header_of(first, "Idempotent-Replayed"), "") == 0);
    LevyResponse *again = svc_keyed(service, "/tax/refunds", body, "till-7-refund-1");
    CHECK_I64(levy_response_status(again), 200);
    CHECK(strcmp(header_of(again, "Idempotent-Replayed"), "true") == 0);
    CHECK(strcmp(body_of(first), body_of(again)) == 0);
    char refund[128] = "";
    CHECK(find_id(body_of(first), "ref_tr_", refund, sizeof refund));
    levy_response_free(first);
    levy_response_free(again);

    /* The same key with another body: 409, nothing done. */
    LevyResponse *other = svc_keyed(service, "/tax/refunds", "{\"transaction_id\":\"x\",\"type\":\"full\"}",
                                    "till-7-refund-1");
    CHECK_I64(levy_response_status(other), 409);
    CHECK(contains(body_of(other), "IDEMPOTENCY_KEY_REUSED"));
    levy_response_free(other);

    /* The sale lists the refund once. */
    char list_path[256], listed_id[192];
    snprintf(list_path, sizeof list_path, "/tax/transactions/%s/refunds", tx);
    snprintf(listed_id, sizeof listed_id, "\"id\":\"%s\"", refund);
    LevyResponse *list = svc_request(service, "GET", list_path, NULL);
    const char *at = strstr(body_of(list), listed_id);
    CHECK(at != NULL && strstr(at + strlen(listed_id), listed_id) == NULL);
    levy_response_free(list);
}

/* A till's day: a customer, a calculation, the sale recorded, one item refunded. */
static void test_ledger(LevyService *service) {
    LevyResponse *r = svc_request(service, "POST", "/tax/customers",
                                  "{\"name\":\"Ada\",\"email\":\"ada@example.com\","
                                  "\"reference_customer_id\":\"till-7\"}");
    CHECK_I64(levy_response_status(r), 200);
    char customer[128] = "";
    CHECK(find_id(body_of(r), "cus_", customer, sizeof customer));
    levy_response_free(r);

    r = svc_request(service, "POST", "/tax/calculations", CALCULATION_BODY);
    CHECK_I64(levy_response_status(r), 200);
    /* 185 + 93 = 278 (see engine.c); 2999 + 278 = 3277. */
    CHECK(contains(body_of(r), "\"total_tax_amount\":278"));
    CHECK(contains(body_of(r), "\"total_amount_including_tax\":3277"));
    CHECK(contains(body_of(r), "\"tax_amount\":185"));
    CHECK(contains(body_of(r), "\"tax_amount\":93"));
    char calc[128] = "";
    CHECK(find_id(body_of(r), "calc_", calc, sizeof calc));
    levy_response_free(r);

    char tx_body[512];
    snprintf(tx_body, sizeof tx_body,
             "{\"calculation_id\":\"%s\",\"reference_order_id\":\"till-7-order-1\"}", calc);
    r = svc_request(service, "POST", "/tax/transactions", tx_body);
    CHECK_I64(levy_response_status(r), 200);
    char tx[128] = "";
    CHECK(find_id(body_of(r), "tr_", tx, sizeof tx));
    levy_response_free(r);

    /* The same order id from the same calculation is the sale recorded: its id again (a
     * till that sends it again after its answer was lost records nothing twice). */
    r = svc_request(service, "POST", "/tax/transactions", tx_body);
    CHECK_I64(levy_response_status(r), 200);
    CHECK(contains(body_of(r), tx));
    levy_response_free(r);

    /* Another sale under that order id is refused: reference_order_id is unique. */
    r = svc_request(service, "POST", "/tax/calculations", CALCULATION_BODY);
    char calc2[128] = "";
    CHECK(find_id(body_of(r), "calc_", calc2, sizeof calc2));
    levy_response_free(r);
    char tx2_body[512];
    snprintf(tx2_body, sizeof tx2_body,
             "{\"calculation_id\":\"%s\",\"reference_order_id\":\"till-7-order-1\"}", calc2);
    r = svc_request(service, "POST", "/tax/transactions", tx2_body);
    CHECK_I64(levy_response_status(r), 409);
    CHECK(contains(body_of(r), "DUPLICATE_REFERENCE_ORDER_ID"));
    levy_response_free(r);

    /* A calculation that does not exist. */
    r = svc_request(service, "POST", "/tax/transactions",
                    "{\"calculation_id\":\"calc_missing\",\"reference_order_id\":\"x\"}");
    CHECK_I64(levy_response_status(r), 404);
    CHECK(contains(body_of(r), "CALCULATION_NOT_FOUND"));
    levy_response_free(r);

    /* Refund the clothing line: 1000 and its 93 of tax. */
    char refund_body[512];
    snprintf(refund_body, sizeof refund_body,
             "{\"transaction_id\":\"%s\",\"type\":\"partial\",\"line_items\":[{"
             "\"reference_line_item_id\":\"L2\",\"quantity\":2,\"sales_amount_refunded\":-1000,"
             "\"tax_amount_refunded\":-93}]}",
             tx);
    r = svc_request(service, "POST", "/tax/refunds", refund_body);
    CHECK_I64(levy_response_status(r), 200);
    char refund[128] = "";
    CHECK(find_id(body_of(r), "ref_tr_", refund, sizeof refund));
    levy_response_free(r);

    char list_path[256];
    snprintf(list_path, sizeof list_path, "/tax/transactions/%s/refunds", tx);
    r = svc_request(service, "GET", list_path, NULL);
    CHECK_I64(levy_response_status(r), 200);
    CHECK(refund[0] != '\0' && contains(body_of(r), refund));
    levy_response_free(r);

    test_idempotency(service, tx);

    /* A query string travels with the path. */
    r = svc_request(service, "GET", "/tax/products?cursor=", NULL);
    CHECK_I64(levy_response_status(r), 200);
    CHECK(contains(body_of(r), "\"has_more\":false"));
    levy_response_free(r);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR LEDGER\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1], *ledger = argv[2];
    test_open_errors(dir, ledger);

    LevyKey key = {"shop", TEST_KEY};
    LevyServiceConfig c;
    memset(&c, 0, sizeof c);
    c.table_path = path_in(dir, "fixture.levy");
    c.ledger_path = ledger;
    c.keys = &key;
    c.key_count = 1;
    LevyService *service = NULL;
    CHECK_STATUS(levy_service_open(&c, &service), LEVY_OK);
    if (service == NULL) return check_finish();
    test_request_errors(service);
    test_responses(service);
    test_ledger(service);
    levy_service_free(service);
    return check_finish();
}
