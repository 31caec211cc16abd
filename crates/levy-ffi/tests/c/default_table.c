/* The table built into the library: levy_engine_open_default, and a service opened
 * without a table path.
 *
 * Usage: default_table LEDGER
 *
 * Expected values come from data/us-states.toml, the source of the embedded table:
 * Indiana's state rate is 7% since 2008-04-01, and the default table has no local US
 * rates, so general merchandise in Indiana is taxed 7% by the state alone. */
#include <stdio.h>
#include <string.h>

#include "levy.h"
#include "check.h"
#include "service_util.h"

/* Calculates `sale` on `engine` and checks the sale's total tax, in minor units. */
static void check_total_tax(const LevyEngine *engine, const LevySale *sale, int64_t expected) {
    LevyResult *r = NULL;
    CHECK_STATUS(levy_calculate(engine, sale, &r), LEVY_OK);
    if (r != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
        CHECK_I64(s.total_tax, expected);
        levy_result_free(r);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LEDGER\n", argv[0]);
        return 2;
    }
    CHECK_STATUS(levy_engine_open_default(NULL), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "out_engine"));

    LevyEngine *engine = NULL;
    CHECK_STATUS(levy_engine_open_default(&engine), LEVY_OK);
    if (engine == NULL) return check_finish();

    /* The Indiana Statehouse. */
    LevyAddress addr = {"200 W Washington St", NULL, "Indianapolis", "IN", "46204", "US"};
    LevySaleLine lines[3] = {
        {2499, 1, "GENERAL_MERCHANDISE", NULL},
        {700, 2, "GENERAL_MERCHANDISE", NULL},
        {1200, 1, "GENERAL_MERCHANDISE", NULL},
    };
    LevySale sale;
    memset(&sale, 0, sizeof sale);
    sale.address = &addr;
    sale.transacted_at = 1772323200; /* 2026-03-01 */
    sale.lines = lines;
    sale.line_count = 3;
    LevyResult *r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    if (r != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
        /* 2499 x 7% = 174.93 -> 175; 700 x 7% = 49; 1200 x 7% = 84; 175 + 49 + 84 = 308. */
        CHECK_I64(s.total_tax, 308);
        CHECK_I64(s.total_excluding_tax, 4399);
        CHECK_I64(s.total_including_tax, 4707);
        CHECK(strlen(s.table_hash) == 64);
        /* Indiana levies no local sales tax (data/us-local-taxes.toml, IC 6-2.5-2-2), so
         * the state-only default is complete there. */
        CHECK_STR(s.coverage, "FULL");
        /* General merchandise is known everywhere. */
        CHECK_STR(s.taxability, "KNOWN");
        LevyLine l;
        CHECK_STATUS(levy_result_line(r, 0, &l), LEVY_OK);
        CHECK_I64(l.tax_amount, 175);
        CHECK_STR(l.taxability, "KNOWN");
        CHECK_I64(l.jurisdiction_count, 1);
        LevyJurisdiction j;
        CHECK_STATUS(levy_result_jurisdiction(r, 0, 0, &j), LEVY_OK);
        CHECK_STR(j.name, "INDIANA");
        CHECK_STR(j.code, "18"); /* Indiana's FIPS state code */
        CHECK_STR(j.level, "STATE");
        CHECK_STR(j.authority, "INDIANA DEPARTMENT OF REVENUE");
        CHECK_STR(j.rate, "0.07");
        CHECK_STR(j.tax_due, "174.93");
        levy_result_free(r);
    }
    /* Memphis (Tennessee has county and city taxes): the default holds no rate of
     * Shelby County, only the state's 7%, and the result says so. 1000 x 7% = 70. */
    LevyAddress tn = {NULL, NULL, NULL, "TN", "38103", "US"};
    LevySaleLine one[1] = {{1000, 1, "GENERAL_MERCHANDISE", NULL}};
    LevySale tn_sale;
    memset(&tn_sale, 0, sizeof tn_sale);
    tn_sale.address = &tn;
    tn_sale.transacted_at = 1772323200; /* 2026-03-01 */
    tn_sale.lines = one;
    tn_sale.line_count = 1;
    LevyResult *tr = NULL;
    CHECK_STATUS(levy_calculate(engine, &tn_sale, &tr), LEVY_OK);
    if (tr != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(tr, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 70);
        CHECK_STR(s.coverage, "STATE_ONLY");
        levy_result_free(tr);
    }
    /* Yen in Nashville: Tennessee's single-article band is $1,600, an amount in dollars, so
     * without an exchange rate the sale is refused (it was once taxed against the band
     * read in yen). At 0.0067 dollars a yen, 10,000 yen are $67.00: 7% is $4.69, 700 yen;
     * the band ($1,600 to $3,200 of an item) holds none of it. */
    LevySaleLine yen[1] = {{10000, 1, "GENERAL_MERCHANDISE", NULL}};
    tn_sale.lines = yen;
    tn_sale.currency = "JPY";
    tr = NULL;
    CHECK_STATUS(levy_calculate(engine, &tn_sale, &tr), LEVY_EXCHANGE_RATE_REQUIRED);
    CHECK_STR(levy_last_error_kind(), "EXCHANGE_RATE_REQUIRED");
    CHECK(tr == NULL);
    tn_sale.exchange_rate = "0.0067";
    CHECK_STATUS(levy_calculate(engine, &tn_sale, &tr), LEVY_OK);
    if (tr != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(tr, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 700);
        CHECK_STR(s.currency, "JPY");
        levy_result_free(tr);
    }
    tn_sale.exchange_rate = "-1";
    CHECK_STATUS(levy_calculate(engine, &tn_sale, &tr), LEVY_EXCHANGE_RATE_REQUIRED);
    CHECK_STR(levy_last_error_kind(), "INVALID_EXCHANGE_RATE");
    /* Los Angeles 90012 on CDTFA's list effective 2026-01-01 (9.75%): 1000 x 9.75% =
     * 97.5 -> 98. The list holds its quarter (levy_build::horizon: to 2026-03-31); a sale
     * dated after it says the table is stale, and one before California's 7.25% began in
     * the table (2017-01-01, data/us-states.toml) is refused. */
    LevyAddress la = {NULL, NULL, NULL, "CA", "90012", "US"};
    LevySale la_sale;
    memset(&la_sale, 0, sizeof la_sale);
    la_sale.address = &la;
    la_sale.lines = one;
    la_sale.line_count = 1;
    la_sale.transacted_at = 1774915200; /* 2026-03-31 */
    tr = NULL;
    CHECK_STATUS(levy_calculate(engine, &la_sale, &tr), LEVY_OK);
    if (tr != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(tr, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 98);
        CHECK(s.stale_table == NULL);
        levy_result_free(tr);
    }
    la_sale.transacted_at = 1775001600; /* 2026-04-01 */
    tr = NULL;
    CHECK_STATUS(levy_calculate(engine, &la_sale, &tr), LEVY_OK);
    if (tr != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(tr, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 98);
        CHECK_STR(s.coverage, "PARTIAL");
        CHECK(s.stale_table != NULL && contains(s.stale_table, "STALE_TABLE: cdtfa ca-cdtfa-1-1-26.csv"));
        levy_result_free(tr);
    }
    /* The engine lists its inputs with their horizons; its own horizon is the list's. */
    size_t n_sources = levy_engine_source_count(engine);
    CHECK(n_sources > 0);
    int cdtfa_seen = 0;
    for (size_t i = 0; i < n_sources; i++) {
        LevySource src;
        CHECK_STATUS(levy_engine_source(engine, i, &src), LEVY_OK);
        if (strcmp(src.kind, "cdtfa") == 0) {
            CHECK_STR(src.name, "ca-cdtfa-1-1-26.csv");
            CHECK_STR(src.period, "2026-01-01");
            CHECK_STR(src.horizon, "2026-03-31");
            cdtfa_seen = 1;
        }
        if (strcmp(src.kind, "ip-country") == 0) CHECK(src.horizon == NULL);
    }
    CHECK(cdtfa_seen);
    LevySource past;
    CHECK_STATUS(levy_engine_source(engine, n_sources, &past), LEVY_INDEX_OUT_OF_RANGE);
    size_t first = 0;
    LevySource earliest;
    CHECK_STATUS(levy_engine_horizon(engine, &first, &earliest), LEVY_OK);
    CHECK(first < n_sources);
    CHECK_STR(earliest.horizon, "2026-03-31");
    CHECK_STR(earliest.name, "ca-cdtfa-1-1-26.csv");
    LevySale la_two[2];
    la_two[0] = la_sale;
    la_two[1] = la_sale;
    la_two[1].transacted_at = 1774915200;
    LevyBatchResult la_out[2];
    CHECK_STATUS(levy_calculate_batch(engine, la_two, 2, la_out), LEVY_OK);
    CHECK(la_out[0].stale_table);
    CHECK(!la_out[1].stale_table);
    CHECK_STR(la_out[0].coverage, "PARTIAL");
    la_sale.transacted_at = 1483142400; /* 2016-12-31 */
    tr = NULL;
    CHECK_STATUS(levy_calculate(engine, &la_sale, &tr), LEVY_INVALID_SALE);
    CHECK_STR(levy_last_error_kind(), "DATE_BEFORE_TABLE");
    CHECK(contains(levy_last_error_message(), "2017-01-01"));
    CHECK(tr == NULL);
    /* A US ZIP given with country CA is no Canadian postal code: refused, not answered
     * with Canada's 5% GST. */
    LevyAddress us_zip_in_ca = {NULL, NULL, NULL, NULL, "37203", "CA"};
    tn_sale.address = &us_zip_in_ca;
    tn_sale.currency = NULL;
    tn_sale.exchange_rate = NULL;
    tn_sale.lines = one;
    CHECK_STATUS(levy_calculate(engine, &tn_sale, &tr), LEVY_RESOLUTION_FAILED);
    CHECK_STR(levy_last_error_kind(), "MALFORMED_ADDRESS");
    tn_sale.address = &tn;
    /* Missouri prepared food: the default's matrix leaves the state's treatment unknown
     * (RSMo 144.014: a sandwich is food at 1.225% from a grocery, 4.225% from a
     * restaurant), so the line is taxed at the rule it inherits, 4.225% of 1000 = 42.25 ->
     * 42, and both the line and the summary say UNKNOWN. */
    LevyAddress mo = {NULL, NULL, NULL, "MO", "63101", "US"};
    LevySaleLine food[1] = {{1000, 1, "PREPARED_FOOD", NULL}};
    LevySale mo_sale;
    memset(&mo_sale, 0, sizeof mo_sale);
    mo_sale.address = &mo;
    mo_sale.transacted_at = 1772323200; /* 2026-03-01 */
    mo_sale.lines = food;
    mo_sale.line_count = 1;
    LevyResult *mr = NULL;
    CHECK_STATUS(levy_calculate(engine, &mo_sale, &mr), LEVY_OK);
    if (mr != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(mr, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 42);
        CHECK_STR(s.taxability, "UNKNOWN");
        CHECK_STR(s.coverage, "STATE_ONLY");
        LevyLine l;
        CHECK_STATUS(levy_result_line(mr, 0, &l), LEVY_OK);
        CHECK_STR(l.taxability, "UNKNOWN");
        levy_result_free(mr);
    }
    /* Shipped from San Jose to Mountain View, within California: its modified origin rule
     * takes the state and uniform local tax (6% + 1.25%) from the origin and the district
     * tax (Mountain View 1.875%, CDTFA list of 2026-01-01) from the destination:
     * 10000 x 9.125% = 912.5 -> 913. */
    LevyAddress mv = {NULL, NULL, NULL, "CA", "94043", "US"};
    LevyAddress sj = {NULL, NULL, NULL, "CA", "95132", "US"};
    LevySaleLine hundred[1] = {{10000, 1, "GENERAL_MERCHANDISE", NULL}};
    LevySale ca_sale;
    memset(&ca_sale, 0, sizeof ca_sale);
    ca_sale.address = &mv;
    ca_sale.origin = &sj;
    ca_sale.transacted_at = 1772323200; /* 2026-03-01 */
    ca_sale.lines = hundred;
    ca_sale.line_count = 1;
    LevyResult *cr = NULL;
    CHECK_STATUS(levy_calculate(engine, &ca_sale, &cr), LEVY_OK);
    if (cr != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(cr, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 913);
        CHECK_STR(s.sourcing, "MODIFIED_ORIGIN");
        LevyJurisdiction first;
        CHECK_STATUS(levy_result_jurisdiction(cr, 0, 0, &first), LEVY_OK);
        CHECK_STR(first.code, "06");
        CHECK_STR(first.sourced, "ORIGIN");
        levy_result_free(cr);
    }
    /* A retail delivery to Denver 80202 on 2025-07-01: Colorado's 2.9% on $50.00 (145
     * cents) and its retail delivery fee, $0.28 from July 2025 (Colorado Department of
     * Revenue, Retail Delivery Fee Rates): 173 cents. A seller with $500,000 of Colorado
     * sales in 2024 is a small seller (SB 23-143, "$500,000 or less"): 145 cents. */
    LevyAddress denver = {NULL, NULL, NULL, "CO", "80202", "US"};
    LevySaleLine fifty[1] = {{5000, 1, "GENERAL_MERCHANDISE", NULL}};
    LevySale co_sale;
    memset(&co_sale, 0, sizeof co_sale);
    co_sale.address = &denver;
    co_sale.transacted_at = 1751328000; /* 2025-07-01 */
    co_sale.lines = fifty;
    co_sale.line_count = 1;
    co_sale.flags = LEVY_SALE_RETAIL_DELIVERY;
    check_total_tax(engine, &co_sale, 173);
    co_sale.flags = LEVY_SALE_RETAIL_DELIVERY | LEVY_SALE_SELLER_SALES;
    co_sale.seller_sales_previous_year = 50000000; /* $500,000.00 */
    check_total_tax(engine, &co_sale, 145);
    /* Not delivered (no flag): no fee. */
    co_sale.flags = 0;
    check_total_tax(engine, &co_sale, 145);
    /* Ohio (a Streamlined state, SSUTA s. 324): Columbus 43215 in Franklin County, 5.75%
     * state + 2.25% county (Ohio Department of Taxation, 2025 2nd quarter rate changes:
     * Franklin 8% from 2025-04-01). Three 10-cent lines owe 0.8 cents each; rounded once
     * for the invoice, 2.4 -> 2 cents (line by line: 3). */
    LevyAddress oh = {NULL, NULL, NULL, "OH", "43215", "US"};
    LevySaleLine dimes[3] = {
        {10, 1, "GENERAL_MERCHANDISE", NULL},
        {10, 1, "GENERAL_MERCHANDISE", NULL},
        {10, 1, "GENERAL_MERCHANDISE", NULL},
    };
    LevySale oh_sale;
    memset(&oh_sale, 0, sizeof oh_sale);
    oh_sale.address = &oh;
    oh_sale.transacted_at = 1772323200; /* 2026-03-01 */
    oh_sale.lines = dimes;
    oh_sale.line_count = 3;
    oh_sale.flags = LEVY_SALE_INVOICE_ROUNDING;
    LevyResult *orr = NULL;
    CHECK_STATUS(levy_calculate(engine, &oh_sale, &orr), LEVY_OK);
    if (orr != NULL) {
        LevySummary s;
        CHECK_STATUS(levy_result_summary(orr, &s), LEVY_OK);
        CHECK_I64(s.total_tax, 2);
        CHECK_STR(s.rounding, "INVOICE");
        levy_result_free(orr);
    }
    /* An origin that cannot be resolved is an error, never a silent guess. */
    LevyAddress nowhere = {NULL, NULL, NULL, "XX", "99999", "US"};
    ca_sale.origin = &nowhere;
    LevyResult *bad = NULL;
    CHECK_STATUS(levy_calculate(engine, &ca_sale, &bad), LEVY_RESOLUTION_FAILED);
    CHECK(bad == NULL);
    levy_engine_free(engine);

    /* A service over the embedded table answers the same total. */
    LevyKey key = {"till", TEST_KEY};
    LevyServiceConfig c;
    memset(&c, 0, sizeof c);
    c.ledger_path = argv[1];
    c.keys = &key;
    c.key_count = 1;
    LevyService *service = NULL;
    CHECK_STATUS(levy_service_open(&c, &service), LEVY_OK);
    if (service == NULL) return check_finish();
    LevyResponse *resp = svc_request(
        service, "POST", "/tax/calculations",
        "{\"customer\":{\"address\":{\"address_line_1\":\"200 W Washington St\","
        "\"address_city\":\"Indianapolis\",\"address_province\":\"IN\",\"address_postal_code\":"
        "\"46204\",\"address_country\":\"US\",\"address_type\":\"shipping\"}},\"origin_address\":"
        "{\"address_province\":\"IN\",\"address_postal_code\":\"46204\",\"address_country\":\"US\"},"
        "\"order_details\":{\"customer_currency_code\":\"USD\",\"tax_included_in_amount\":false,"
        "\"line_items\":[{\"amount\":2499,\"quantity\":1,\"product_category\":\"GENERAL_MERCHANDISE\"},"
        "{\"amount\":700,\"quantity\":2,\"product_category\":\"GENERAL_MERCHANDISE\"},"
        "{\"amount\":1200,\"quantity\":1,\"product_category\":\"GENERAL_MERCHANDISE\"}]},"
        "\"transacted_at\":1772323200}");
    CHECK_I64(levy_response_status(resp), 200);
    CHECK(contains(body_of(resp), "\"total_tax_amount\":308"));
    levy_response_free(resp);
    levy_service_free(service);
    return check_finish();
}
