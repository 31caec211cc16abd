/* Registrations through levy.h: levy_registration_add, levy_registrations_list and
 * levy_registration_expire, and how they gate what `automatic_tax: auto` collects; then
 * what the sales owe and how near the state's threshold they are, through
 * levy_service_request (`GET /tax/reports/liability`, `GET /tax/nexus`).
 *
 * Usage: registrations DIR LEDGER
 *   DIR holds the fixture tables written by tests/c_tests.rs; LEDGER is a ledger path
 *   that does not exist yet (or a PostgreSQL database). The fixture's rates: Tennessee 7%
 *   and Davidson county 2.25% in 37203, so $100.00 (10000 cents) owes 700 + 225 = 925
 *   cents where the account collects, 0 where it does not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levy.h"
#include "check.h"
#include "service_util.h"

/* 2026-03-15T00:00:00Z, and the last second before it. */
#define MARCH_15 1773532800
#define MARCH_14_LAST 1773532799
/* 2026-03-20T00:00:00Z. */
#define MARCH_20 1773964800

static char path_buf[4096];
static const char *path_in(const char *dir, const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
    return path_buf;
}

/* The tax of $100.00 of general merchandise in Nashville 37203 sold at `at`, or -1. */
static long tax_at(const LevyService *service, long at, char *body_out, size_t body_len) {
    char body[1024];
    snprintf(body, sizeof body,
             "{\"customer\":{\"address\":{\"address_province\":\"TN\","
             "\"address_postal_code\":\"37203\",\"address_country\":\"US\"}},"
             "\"origin_address\":{\"address_province\":\"TN\",\"address_postal_code\":\"37203\","
             "\"address_country\":\"US\"},"
             "\"order_details\":{\"customer_currency_code\":\"USD\",\"automatic_tax\":\"auto\","
             "\"line_items\":[{\"amount\":10000,\"quantity\":1,"
             "\"product_category\":\"GENERAL_MERCHANDISE\"}]},\"transacted_at\":%ld}",
             at);
    LevyResponse *r = svc_request(service, "POST", "/tax/calculations", body);
    if (r == NULL) return -1;
    long tax = -1;
    const char *json = body_of(r);
    if (levy_response_status(r) == 200) {
        const char *t = strstr(json, "\"total_tax_amount\":");
        if (t != NULL) tax = strtol(t + strlen("\"total_tax_amount\":"), NULL, 10);
    }
    if (body_out != NULL) snprintf(body_out, body_len, "%s", json);
    levy_response_free(r);
    return tax;
}

/* Adds a test-mode registration of account "shop"; returns the response (NULL when the
 * call failed). */
static LevyResponse *add(const LevyService *service, const char *country, const char *region,
                         long active_from) {
    LevyRegistrationSpec spec;
    memset(&spec, 0, sizeof spec);
    spec.country = country;
    spec.region = region;
    spec.active_from = active_from;
    spec.expires_at = -1;
    LevyResponse *r = NULL;
    LevyStatus s = levy_registration_add(service, "shop", false, &spec, &r);
    CHECK_STATUS(s, LEVY_OK);
    return s == LEVY_OK ? r : NULL;
}

static void test_gate(const LevyService *service) {
    char body[8192];
    /* No registration: collected everywhere, as before. */
    CHECK_I64(tax_at(service, MARCH_15, NULL, 0), 925);

    /* Registered in Texas only: Tennessee's entries stay, at zero, saying why. */
    LevyResponse *tx = add(service, "US", "TX", 0);
    if (tx == NULL) return;
    CHECK_I64(levy_response_status(tx), 200);
    CHECK(contains(body_of(tx), "\"object\":\"tax.registration\""));
    CHECK(contains(body_of(tx), "\"region\":\"TX\""));
    levy_response_free(tx);
    CHECK_I64(tax_at(service, MARCH_15, body, sizeof body), 0);
    CHECK(contains(body, "\"rate_type\":\"NO COLLECTION; NO STATE NEXUS\""));
    CHECK(contains(body, "NOT_REGISTERED: not registered in US-TN on 2026-03-15"));

    /* Registered in Tennessee from the 15th: not on the 14th, from the 15th on. */
    LevyResponse *tn = add(service, "us", "tn", MARCH_15);
    if (tn == NULL) return;
    CHECK_I64(levy_response_status(tn), 200);
    char id[64] = "";
    CHECK(find_id(body_of(tn), "reg_", id, sizeof id));
    levy_response_free(tn);
    CHECK_I64(tax_at(service, MARCH_14_LAST, NULL, 0), 0);
    CHECK_I64(tax_at(service, MARCH_15, NULL, 0), 925);

    /* Both are listed. */
    LevyResponse *list = NULL;
    CHECK_STATUS(levy_registrations_list(service, "shop", false, &list), LEVY_OK);
    if (list != NULL) {
        CHECK_I64(levy_response_status(list), 200);
        CHECK(contains(body_of(list), id));
        CHECK(contains(body_of(list), "\"region\":\"TX\""));
        levy_response_free(list);
    }
    /* The live mode has none. */
    CHECK_STATUS(levy_registrations_list(service, "shop", true, &list), LEVY_OK);
    if (list != NULL) {
        CHECK(contains(body_of(list), "\"registrations\":[]"));
        levy_response_free(list);
    }

    /* Expired from the 20th: a sale of the 20th is not collected, one of the 15th still
     * is; expiring again is refused. */
    LevyResponse *e = NULL;
    CHECK_STATUS(levy_registration_expire(service, "shop", false, id, MARCH_20, &e), LEVY_OK);
    if (e != NULL) {
        CHECK_I64(levy_response_status(e), 200);
        CHECK(contains(body_of(e), "\"expires_at\":1773964800"));
        levy_response_free(e);
    }
    CHECK_I64(tax_at(service, MARCH_20, NULL, 0), 0);
    CHECK_I64(tax_at(service, MARCH_15, NULL, 0), 925);
    CHECK_STATUS(levy_registration_expire(service, "shop", false, id, -1, &e), LEVY_OK);
    if (e != NULL) {
        CHECK_I64(levy_response_status(e), 409);
        CHECK(contains(body_of(e), "REGISTRATION_ALREADY_EXPIRED"));
        levy_response_free(e);
    }
}

/* Records the sale of $100.00 in Nashville 37203 calculated at `at` as a transaction made
 * at `at`. Returns 1 when it is stored. */
static int record(const LevyService *service, long at, const char *order) {
    char body[1024];
    snprintf(body, sizeof body,
             "{\"customer\":{\"address\":{\"address_province\":\"TN\","
             "\"address_postal_code\":\"37203\",\"address_country\":\"US\"}},"
             "\"origin_address\":{\"address_province\":\"TN\",\"address_postal_code\":\"37203\","
             "\"address_country\":\"US\"},"
             "\"order_details\":{\"customer_currency_code\":\"USD\",\"automatic_tax\":\"auto\","
             "\"line_items\":[{\"amount\":10000,\"quantity\":1,"
             "\"product_category\":\"GENERAL_MERCHANDISE\"}]},\"transacted_at\":%ld}",
             at);
    LevyResponse *c = svc_request(service, "POST", "/tax/calculations", body);
    if (c == NULL) return 0;
    char id[64] = "";
    int found = find_id(body_of(c), "calc_", id, sizeof id);
    levy_response_free(c);
    CHECK(found);
    if (!found) return 0;
    snprintf(body, sizeof body,
             "{\"calculation_id\":\"%s\",\"reference_order_id\":\"%s\","
             "\"transaction_processed_at\":%ld}",
             id, order, at);
    LevyResponse *t = svc_request(service, "POST", "/tax/transactions", body);
    if (t == NULL) return 0;
    int ok = levy_response_status(t) == 200;
    CHECK(ok);
    levy_response_free(t);
    return ok;
}

/* After test_gate (Tennessee registered from March 15 to March 20): a sale on the 15th
 * collected 700 + 225 = 925 cents, one on the 14th nothing. March's report of Tennessee
 * has both sales' $200.00 gross in each jurisdiction's row, $100.00 taxable and $100.00 not
 * collected; the state's row 700 of tax, and the state total 2 transactions, 925
 * collected. The nexus of April 15 measures the 12 months before April (Tennessee's
 * period): $200.00 of the $100,000 threshold, below it, the registration expired. */
static void test_after_the_sale(const LevyService *service) {
    if (!record(service, MARCH_15, "o-15") || !record(service, MARCH_14_LAST, "o-14")) return;
    LevyResponse *r = svc_request(service, "GET",
                                  "/tax/reports/liability?from=2026-03-01&to=2026-03-31&region=TN",
                                  NULL);
    if (r == NULL) return;
    CHECK_I64(levy_response_status(r), 200);
    const char *report = body_of(r);
    CHECK(contains(report, "\"object\":\"tax.liability_report\""));
    CHECK(contains(report, "\"gross_sales\":20000"));
    CHECK(contains(report, "\"taxable_sales\":10000"));
    CHECK(contains(report, "\"not_collected_sales\":10000"));
    CHECK(contains(report, "\"tax\":700"));
    CHECK(contains(report, "\"tax\":225"));
    CHECK(contains(report, "\"transactions\":2"));
    CHECK(contains(report, "\"collected\":925"));
    levy_response_free(r);
    r = svc_request(service, "GET", "/tax/nexus?region=TN&date=2026-04-15", NULL);
    if (r == NULL) return;
    CHECK_I64(levy_response_status(r), 200);
    const char *nexus = body_of(r);
    CHECK(contains(nexus, "\"object\":\"tax.nexus\""));
    CHECK(contains(nexus, "\"region\":\"TN\""));
    CHECK(contains(nexus, "\"sales\":\"200.00\""));
    CHECK(contains(nexus, "\"status\":\"below\""));
    levy_response_free(r);
}

static void test_errors(const LevyService *service) {
    LevyRegistrationSpec spec;
    memset(&spec, 0, sizeof spec);
    spec.country = "US";
    spec.region = "ON";
    spec.active_from = -1;
    spec.expires_at = -1;
    LevyResponse *r = NULL;
    /* A refusal is an answer: its status and error body. */
    CHECK_STATUS(levy_registration_add(service, "shop", false, &spec, &r), LEVY_OK);
    if (r != NULL) {
        CHECK_I64(levy_response_status(r), 400);
        CHECK(contains(body_of(r), "\"type\":\"INVALID_REGION\""));
        levy_response_free(r);
        r = NULL;
    }
    spec.region = "TX";
    spec.kind = "vat";
    CHECK_STATUS(levy_registration_add(service, "shop", false, &spec, &r), LEVY_OK);
    if (r != NULL) {
        CHECK_I64(levy_response_status(r), 400);
        CHECK(contains(body_of(r), "INCORRECT_TYPE"));
        levy_response_free(r);
        r = NULL;
    }
    spec.kind = NULL;
    CHECK_STATUS(levy_registration_add(service, "nobody", false, &spec, &r), LEVY_OK);
    if (r != NULL) {
        CHECK(contains(body_of(r), "INVALID_ACCOUNT"));
        levy_response_free(r);
        r = NULL;
    }
    CHECK_STATUS(levy_registration_expire(service, "shop", false, "reg_nope", -1, &r), LEVY_OK);
    if (r != NULL) {
        CHECK_I64(levy_response_status(r), 404);
        levy_response_free(r);
        r = NULL;
    }
    /* Errors of the call itself, with nothing written. */
    CHECK_STATUS(levy_registration_add(NULL, "shop", false, &spec, &r), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_registration_add(service, NULL, false, &spec, &r), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_registration_add(service, "shop", false, NULL, &r), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_registration_add(service, "shop", false, &spec, NULL), LEVY_NULL_ARGUMENT);
    spec.local_count = 2;
    CHECK_STATUS(levy_registration_add(service, "shop", false, &spec, &r), LEVY_NULL_ARGUMENT);
    const char *locals[2] = {"47037", NULL};
    spec.local_jurisdictions = locals;
    CHECK_STATUS(levy_registration_add(service, "shop", false, &spec, &r), LEVY_NULL_ARGUMENT);
    spec.local_count = 0;
    spec.country = "U\xff";
    CHECK_STATUS(levy_registration_add(service, "shop", false, &spec, &r), LEVY_INVALID_UTF8);
    CHECK(r == NULL);
    CHECK_STATUS(levy_registrations_list(service, NULL, false, &r), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_registration_expire(service, "shop", false, NULL, -1, &r),
                 LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_registration_expire(service, "shop", false, "reg_\xff", -1, &r),
                 LEVY_INVALID_UTF8);
    CHECK(r == NULL);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR LEDGER\n", argv[0]);
        return 2;
    }
    LevyKey key = {"shop", TEST_KEY};
    LevyServiceConfig c;
    memset(&c, 0, sizeof c);
    c.table_path = path_in(argv[1], "fixture.levy");
    c.ledger_path = argv[2];
    c.keys = &key;
    c.key_count = 1;
    LevyService *service = NULL;
    CHECK_STATUS(levy_service_open(&c, &service), LEVY_OK);
    if (service == NULL) return check_finish();
    test_gate(service);
    test_after_the_sale(service);
    test_errors(service);
    levy_service_free(service);
    return check_finish();
}
