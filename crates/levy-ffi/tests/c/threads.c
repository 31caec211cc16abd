/* One engine shared by four calculating threads while a fifth records sales through a
 * service: the engine needs no locking, and every answer is the same as on one thread.
 *
 * Usage: threads DIR LEDGER ROUNDS
 *   DIR holds fixture.levy (see tests/c_tests.rs); LEDGER is a new ledger path; ROUNDS is
 *   how many calculations each calculating thread makes. Expected values: engine.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levy.h"
#include "check.h"
#include "service_util.h"

#define CALCULATORS 4
#define SALES 8

static const LevyEngine *shared_engine;
static LevyService *shared_service;
static int rounds;

static void *calculate_many(void *arg) {
    (void)arg;
    LevyAddress addr;
    memset(&addr, 0, sizeof addr);
    addr.postal_code = "37203";
    addr.region = "TN";
    addr.country = "US";
    LevySaleLine lines[2] = {
        {1999, 1, "GENERAL_MERCHANDISE", NULL},
        {1000, 2, "CLOTHING", NULL},
    };
    LevySale sale;
    memset(&sale, 0, sizeof sale);
    sale.address = &addr;
    sale.transacted_at = 1772323200;
    sale.lines = lines;
    sale.line_count = 2;
    for (int i = 0; i < rounds; i++) {
        LevyResult *r = NULL;
        CHECK_STATUS(levy_calculate(shared_engine, &sale, &r), LEVY_OK);
        LevySummary s;
        CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 278); /* 185 + 93, as on one thread */
        LevyJurisdiction j;
        CHECK_STATUS(levy_result_jurisdiction(r, 0, 1, &j), LEVY_OK);
        CHECK_STR(j.tax_due, "44.9775");
        levy_result_free(r);
    }
    /* A failed call's message is per thread: another thread's errors do not replace it. */
    LevyResult *r = NULL;
    sale.currency = "XXX";
    CHECK_STATUS(levy_calculate(shared_engine, &sale, &r), LEVY_UNKNOWN_CURRENCY);
    CHECK(contains(levy_last_error_message(), "XXX"));
    return NULL;
}

static void *record_sales(void *arg) {
    (void)arg;
    for (int i = 0; i < SALES; i++) {
        LevyResponse *r = svc_request(shared_service, "POST", "/tax/calculations", CALCULATION_BODY);
        CHECK_I64(levy_response_status(r), 200);
        CHECK(contains(body_of(r), "\"total_tax_amount\":278"));
        char calc[128] = "";
        CHECK(find_id(body_of(r), "calc_", calc, sizeof calc));
        levy_response_free(r);

        char body[512];
        snprintf(body, sizeof body, "{\"calculation_id\":\"%s\",\"reference_order_id\":\"order-%d\"}",
                 calc, i);
        r = svc_request(shared_service, "POST", "/tax/transactions", body);
        CHECK_I64(levy_response_status(r), 200);
        char tx[128] = "";
        CHECK(find_id(body_of(r), "tr_", tx, sizeof tx));
        levy_response_free(r);

        char path[256];
        snprintf(path, sizeof path, "/tax/transactions/%s", tx);
        r = svc_request(shared_service, "GET", path, NULL);
        CHECK_I64(levy_response_status(r), 200); /* recorded, and readable at once */
        levy_response_free(r);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s DIR LEDGER ROUNDS\n", argv[0]);
        return 2;
    }
    char table[4096];
    snprintf(table, sizeof table, "%s/fixture.levy", argv[1]);
    rounds = atoi(argv[3]);

    LevyEngine *engine = NULL;
    CHECK_STATUS(levy_engine_open(table, &engine), LEVY_OK);
    LevyKey key = {"shop", TEST_KEY};
    LevyServiceConfig c;
    memset(&c, 0, sizeof c);
    c.table_path = table;
    c.ledger_path = argv[2];
    c.keys = &key;
    c.key_count = 1;
    CHECK_STATUS(levy_service_open(&c, &shared_service), LEVY_OK);
    if (engine == NULL || shared_service == NULL) return check_finish();
    shared_engine = engine;

    pthread_t threads[CALCULATORS + 1];
    for (int i = 0; i < CALCULATORS; i++) CHECK(pthread_create(&threads[i], NULL, calculate_many, NULL) == 0);
    CHECK(pthread_create(&threads[CALCULATORS], NULL, record_sales, NULL) == 0);
    for (int i = 0; i <= CALCULATORS; i++) pthread_join(threads[i], NULL);

    levy_service_free(shared_service);
    levy_engine_free(engine);
    return check_finish();
}
