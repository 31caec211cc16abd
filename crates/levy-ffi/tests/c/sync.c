/* levy_sync: a till records sales and a refund offline, on its own ledger, then hands them
 * to a central levy; a second call sends nothing; errors are statuses with messages.
 *
 *   sync DIR LEDGER CENTRAL_URL CENTRAL_TEST_KEY
 *
 * DIR holds the fixture table; LEDGER is a ledger path that does not exist yet; the
 * central server (started by tests/c_tests.rs, over the same fixture table) answers at
 * CENTRAL_URL and takes CENTRAL_TEST_KEY. */
#include <stdlib.h>

#include "check.h"
#include "service_util.h"

static char path_buf[4096];
static const char *path_in(const char *dir, const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
    return path_buf;
}

/* Records a sale of the fixture calculation under `order`; writes its id. */
static void record_sale(LevyService *till, const char *order, char *id, size_t id_len) {
    LevyResponse *r = svc_request(till, "POST", "/tax/calculations", CALCULATION_BODY);
    CHECK_I64(levy_response_status(r), 200);
    char calc[64] = "";
    CHECK(find_id(body_of(r), "calc_", calc, sizeof calc));
    levy_response_free(r);
    char body[256];
    snprintf(body, sizeof body, "{\"calculation_id\":\"%s\",\"reference_order_id\":\"%s\"}", calc,
             order);
    r = svc_request(till, "POST", "/tax/transactions", body);
    CHECK_I64(levy_response_status(r), 200);
    CHECK(find_id(body_of(r), "tr_", id, id_len));
    levy_response_free(r);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s DIR LEDGER CENTRAL_URL CENTRAL_TEST_KEY\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1], *ledger = argv[2], *central = argv[3], *central_key = argv[4];

    /* The till, offline: two sales, the second refunded in full. */
    LevyKey key = {"shop", TEST_KEY};
    LevyServiceConfig c;
    memset(&c, 0, sizeof c);
    c.table_path = path_in(dir, "fixture.levy");
    c.ledger_path = ledger;
    c.keys = &key;
    c.key_count = 1;
    LevyService *till = NULL;
    CHECK_STATUS(levy_service_open(&c, &till), LEVY_OK);
    if (till == NULL) return check_finish();
    char first[64] = "", second[64] = "";
    record_sale(till, "c-sync-1", first, sizeof first);
    record_sale(till, "c-sync-2", second, sizeof second);
    char refund[128];
    snprintf(refund, sizeof refund, "{\"transaction_id\":\"%s\",\"type\":\"full\"}", second);
    LevyResponse *r = svc_request(till, "POST", "/tax/refunds", refund);
    CHECK_I64(levy_response_status(r), 200);
    levy_response_free(r);
    levy_service_free(till);

    /* Back online: 2 sales and 1 refund recorded centrally, with the table the central
     * server serves. */
    LevySyncConfig s;
    memset(&s, 0, sizeof s);
    s.ledger_path = ledger;
    s.base_url = central;
    s.key = central_key;
    LevySyncReport report;
    memset(&report, 0xff, sizeof report);
    CHECK_STATUS(levy_sync(&s, &report), LEVY_OK);
    CHECK_I64((int64_t)report.recorded, 3);
    CHECK_I64((int64_t)report.already_recorded, 0);
    CHECK_I64((int64_t)report.unknown_table, 0);
    CHECK_I64((int64_t)report.conflicts, 0);

    /* Again: nothing left to send. */
    CHECK_STATUS(levy_sync(&s, &report), LEVY_OK);
    CHECK_I64((int64_t)report.recorded, 0);
    CHECK_I64((int64_t)report.already_recorded, 0);

    /* Errors. */
    CHECK_STATUS(levy_sync(NULL, &report), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_sync(&s, NULL), LEVY_NULL_ARGUMENT);
    LevySyncConfig bad = s;
    bad.key = NULL;
    CHECK_STATUS(levy_sync(&bad, &report), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "config.key"));
    bad = s;
    bad.base_url = "http://\xff";
    CHECK_STATUS(levy_sync(&bad, &report), LEVY_INVALID_UTF8);
    bad = s;
    bad.batch = 1001;
    CHECK_STATUS(levy_sync(&bad, &report), LEVY_INVALID_ARGUMENT);
    /* Nothing listens on port 1: the sync stops, and says where. (The outbox is empty, so
     * a fresh sale gives it something to send.) */
    CHECK_STATUS(levy_service_open(&c, &till), LEVY_OK);
    if (till != NULL) {
        char third[64] = "";
        record_sale(till, "c-sync-3", third, sizeof third);
        levy_service_free(till);
    }
    bad = s;
    bad.base_url = "http://127.0.0.1:1";
    CHECK_STATUS(levy_sync(&bad, &report), LEVY_SYNC_ERROR);
    CHECK(contains(levy_last_error_message(), "127.0.0.1:1"));
    CHECK(strstr(levy_status_message(LEVY_SYNC_ERROR), "sync") != NULL);
    /* The central server still gets it afterwards. */
    CHECK_STATUS(levy_sync(&s, &report), LEVY_OK);
    CHECK_I64((int64_t)report.recorded, 1);
    return check_finish();
}
