/* The engine path of levy.h: open, calculate, read the result, free, and every error.
 *
 * Usage: engine DIR HASH
 *   DIR holds the fixture tables written by tests/c_tests.rs (fixture.levy and damaged
 *   copies); HASH is fixture.levy's content hash as levy-core reports it.
 *
 * The fixture (see fixture_table in tests/c_tests.rs) taxes general merchandise in
 * Tennessee at 7% (state, "GENERAL STATE SALES TAX") and, in ZIP 37203, also 2.25%
 * (DAVIDSON county, "GENERAL COUNTY LOCAL SALES TAX"). CLOTHING maps to CLOTHING_GENERAL,
 * a child of GENERAL_MERCHANDISE with no rules of its own, so it is taxed the same.
 * IPv4 192.0.2.0/24 is placed in Nashville, TN 37203. Every expected number below is
 * worked out by hand from those rates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levy.h"
#include "check.h"

/* 2026-03-01T00:00:00Z. */
#define MARCH_2026 1772323200

static char dir_buf[4096];
static const char *path_in(const char *dir, const char *name) {
    snprintf(dir_buf, sizeof dir_buf, "%s/%s", dir, name);
    return dir_buf;
}

static LevyAddress nashville(void) {
    LevyAddress a = {0};
    a.postal_code = "37203";
    a.region = "TN";
    a.country = "US";
    return a;
}

static LevySale sale_of(const LevyAddress *address, const LevySaleLine *lines, size_t n) {
    LevySale s;
    memset(&s, 0, sizeof s);
    s.address = address;
    s.currency = "USD";
    s.transacted_at = MARCH_2026;
    s.lines = lines;
    s.line_count = n;
    return s;
}

static void test_version(void) {
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", LEVY_VERSION_MAJOR, LEVY_VERSION_MINOR,
             LEVY_VERSION_PATCH);
    /* The header's macros and the library's runtime version come from one Cargo.toml. */
    CHECK_STR(levy_version(), expected);
}

static void test_status_messages(void) {
    CHECK_STR(levy_status_message(LEVY_OK), "ok");
    CHECK(contains(levy_status_message(LEVY_NULL_ARGUMENT), "NULL"));
    CHECK(contains(levy_status_message(LEVY_INVALID_UTF8), "UTF-8"));
    CHECK_STR(levy_status_message(9999), "unknown status");
    CHECK_STR(levy_status_message(-1), "unknown status");
}

static void test_open_errors(const char *dir) {
    LevyEngine *sentinel = (LevyEngine *)(uintptr_t)0x1;
    LevyEngine *engine = sentinel;

    CHECK_STATUS(levy_engine_open(NULL, &engine), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "path"));
    CHECK(engine == sentinel); /* out-pointers are written only on success */
    CHECK_STATUS(levy_engine_open(path_in(dir, "fixture.levy"), NULL), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "out_engine"));

    CHECK_STATUS(levy_engine_open("/tmp/\xff\xfe.levy", &engine), LEVY_INVALID_UTF8);
    CHECK(contains(levy_last_error_message(), "UTF-8"));

    CHECK_STATUS(levy_engine_open(path_in(dir, "missing.levy"), &engine), LEVY_IO_ERROR);
    CHECK(contains(levy_last_error_message(), "cannot read table"));

    CHECK_STATUS(levy_engine_open(path_in(dir, "not-a-table.levy"), &engine), LEVY_INVALID_TABLE);
    CHECK(contains(levy_last_error_message(), "not a levy table"));

    CHECK_STATUS(levy_engine_open(path_in(dir, "truncated.levy"), &engine), LEVY_INVALID_TABLE);
    CHECK(contains(levy_last_error_message(), "truncated"));

    CHECK_STATUS(levy_engine_open(path_in(dir, "flipped.levy"), &engine), LEVY_INVALID_TABLE);
    CHECK(engine == sentinel);

    /* NULL is accepted by every free function. */
    levy_engine_free(NULL);
    levy_result_free(NULL);
}

/* Two lines at Nashville 37203: state 7% + county 2.25%. */
static void test_calculate(LevyEngine *engine, const char *hash) {
    LevyAddress addr = nashville();
    LevySaleLine lines[2] = {
        {1999, 1, NULL, "GENERAL_MERCHANDISE"},
        {1000, 2, "CLOTHING", NULL},
    };
    LevySale sale = sale_of(&addr, lines, 2);
    LevyResult *r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    if (r == NULL) return;

    LevySummary s;
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    /* Line 0: 1999 x 7% = 139.93, x 2.25% = 44.9775, sum 184.9075 -> 185.
     * Line 1: 1000 x 7% = 70, x 2.25% = 22.5, sum 92.5 -> 93 (half away from zero).
     * Totals: 185 + 93 = 278 tax; 1999 + 1000 = 2999 excluding; 3277 including. */
    CHECK_I64(s.total_tax, 278);
    CHECK_I64(s.total_excluding_tax, 2999);
    CHECK_I64(s.total_including_tax, 3277);
    CHECK_I64(s.line_count, 2);
    CHECK_STR(s.currency, "USD");
    /* ZIP given, no street line: POSTAL_ONLY at POSTAL precision, decided by the address. */
    CHECK_STR(s.address_resolution_status, "POSTAL_ONLY");
    CHECK_STR(s.resolution_precision, "POSTAL");
    CHECK_STR(s.location_source, "address");
    CHECK(s.zero_reason == NULL);
    CHECK_STR(s.table_hash, hash);
    /* The fixture assigns ZIP 37203 its county: every local jurisdiction is known. */
    CHECK_STR(s.coverage, "FULL");

    LevyAddress used;
    CHECK_STATUS(levy_result_address_used(r, &used), LEVY_OK);
    CHECK_STR(used.postal_code, "37203");
    CHECK_STR(used.city, "NASHVILLE"); /* filled in from the fixture's ZIP record */
    CHECK_STR(used.region, "TN");
    CHECK_STR(used.country, "US");
    CHECK_STR(used.line1, "");

    LevyLine l0, l1;
    CHECK_STATUS(levy_result_line(r, 0, &l0), LEVY_OK);
    CHECK_STR(l0.tax_code, "GENERAL_MERCHANDISE");
    CHECK_I64(l0.quantity, 1);
    CHECK_I64(l0.tax_amount, 185);
    CHECK_STR(l0.tax_amount_decimal, "185");
    CHECK_I64(l0.amount_excluding_tax, 1999);
    CHECK_I64(l0.amount_including_tax, 2184);
    CHECK_I64(l0.jurisdiction_count, 2);

    LevyJurisdiction j;
    CHECK_STATUS(levy_result_jurisdiction(r, 0, 0, &j), LEVY_OK);
    CHECK_STR(j.name, "TENNESSEE");
    CHECK_STR(j.code, "47");
    CHECK_STR(j.level, "STATE");
    CHECK_STR(j.authority, "TENNESSEE DEPARTMENT OF REVENUE");
    CHECK_STR(j.tax_type, "SALES");
    CHECK_STR(j.rate_type, "GENERAL STATE SALES TAX");
    CHECK_STR(j.note, "RATE_FRAC");
    CHECK_STR(j.rate, "0.07");
    CHECK_STR(j.taxable_base, "1999");
    CHECK_STR(j.tax_due, "139.93");
    CHECK_STR(j.fee, "0");
    CHECK_I64(j.tax_due_minor, 140);

    CHECK_STATUS(levy_result_jurisdiction(r, 0, 1, &j), LEVY_OK);
    CHECK_STR(j.name, "DAVIDSON");
    CHECK_STR(j.level, "COUNTY");
    CHECK_STR(j.rate_type, "GENERAL COUNTY LOCAL SALES TAX");
    CHECK_STR(j.rate, "0.0225");
    CHECK_STR(j.tax_due, "44.9775");
    CHECK_I64(j.tax_due_minor, 45);

    CHECK_STATUS(levy_result_line(r, 1, &l1), LEVY_OK);
    CHECK_STR(l1.tax_code, "CLOTHING_GENERAL"); /* the CLOTHING category's code */
    CHECK_I64(l1.quantity, 2);
    CHECK_I64(l1.tax_amount, 93);
    CHECK_I64(l1.amount_including_tax, 1093);
    CHECK_STATUS(levy_result_jurisdiction(r, 1, 1, &j), LEVY_OK);
    CHECK_STR(j.tax_due, "22.5");
    CHECK_I64(j.tax_due_minor, 23);

    /* Index and argument errors leave the out struct alone. */
    LevyLine untouched;
    memset(&untouched, 0x5a, sizeof untouched);
    CHECK_STATUS(levy_result_line(r, 2, &untouched), LEVY_INDEX_OUT_OF_RANGE);
    CHECK(contains(levy_last_error_message(), "line index 2"));
    CHECK_I64(untouched.quantity, 0x5a5a5a5a);
    CHECK_STATUS(levy_result_jurisdiction(r, 0, 2, &j), LEVY_INDEX_OUT_OF_RANGE);
    CHECK_STATUS(levy_result_jurisdiction(r, 5, 0, &j), LEVY_INDEX_OUT_OF_RANGE);
    CHECK_STATUS(levy_result_line(NULL, 0, &l0), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_result_line(r, 0, NULL), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_result_jurisdiction(NULL, 0, 0, &j), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_result_jurisdiction(r, 0, 0, NULL), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_result_summary(NULL, &s), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_result_summary(r, NULL), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_result_address_used(NULL, &used), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_result_address_used(r, NULL), LEVY_NULL_ARGUMENT);

    levy_result_free(r);
}

/* Flags: tax included, exempt, automatic tax disabled, per-unit amounts. */
static void test_flags(LevyEngine *engine) {
    /* Region alone: the state's jurisdictions only (7%). */
    LevyAddress tn = {0};
    tn.region = "TN";
    tn.country = "US";
    LevySaleLine line = {10700, 1, "GENERAL_MERCHANDISE", NULL};
    LevySale sale = sale_of(&tn, &line, 1);
    sale.flags = LEVY_SALE_TAX_INCLUDED;
    LevyResult *r = NULL;
    LevySummary s;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    /* 10700 including 7%: 10700 / 1.07 = 10000 excluding, 700 tax. */
    CHECK_I64(s.total_excluding_tax, 10000);
    CHECK_I64(s.total_tax, 700);
    CHECK_I64(s.total_including_tax, 10700);
    CHECK_STR(s.effective_rate, "0.07"); /* 700 / 10000 */
    CHECK_STR(s.resolution_precision, "PROVINCE");
    levy_result_free(r);

    LevyAddress addr = nashville();
    line.amount = 1999;
    sale = sale_of(&addr, &line, 1);
    sale.flags = LEVY_SALE_CUSTOMER_EXEMPT;
    r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    CHECK_I64(s.total_tax, 0); /* an exempt customer owes nothing */
    CHECK_I64(s.total_including_tax, 1999);
    CHECK_STR(s.zero_reason, "CUSTOMER_EXEMPT");
    LevyJurisdiction j;
    CHECK_STATUS(levy_result_jurisdiction(r, 0, 0, &j), LEVY_OK);
    CHECK_STR(j.note, "CUSTOMER_EXEMPT");
    CHECK_STR(j.tax_due, "0");
    levy_result_free(r);

    sale.flags = LEVY_SALE_AUTOMATIC_TAX_DISABLED;
    r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    CHECK_I64(s.total_tax, 0);
    CHECK_STR(s.zero_reason, "AUTOMATIC_TAX_DISABLED");
    levy_result_free(r);

    /* Per unit: 500 each x 2 = a 1000 base; 70 + 22.5 = 92.5 -> 93. */
    LevySaleLine unit = {500, 2, NULL, NULL}; /* no category or code: general merchandise */
    sale = sale_of(&addr, &unit, 1);
    sale.flags = LEVY_SALE_PER_UNIT;
    r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    CHECK_I64(s.total_tax, 93);
    CHECK_I64(s.total_excluding_tax, 1000);
    LevyLine l;
    CHECK_STATUS(levy_result_line(r, 0, &l), LEVY_OK);
    CHECK_STR(l.tax_code, "GENERAL_MERCHANDISE");
    levy_result_free(r);

    /* No lines at all: a valid, empty sale. */
    sale = sale_of(&addr, NULL, 0);
    r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    CHECK_I64(s.line_count, 0);
    CHECK_I64(s.total_tax, 0);
    CHECK_STR(s.effective_rate, "0");
    levy_result_free(r);
}

static void test_ip(LevyEngine *engine) {
    LevySaleLine line = {1999, 1, "GENERAL_MERCHANDISE", NULL};
    LevySale sale = sale_of(NULL, &line, 1);
    LevyResult *r = NULL;
    LevySummary s;

    /* 192.0.2.10 is placed at 37203: the same 185 as the address path. */
    sale.ip = "192.0.2.10";
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    CHECK_I64(s.total_tax, 185);
    CHECK_STR(s.location_source, "ip");
    CHECK_STR(s.resolution_precision, "POSTAL");
    levy_result_free(r);

    /* An IP outside every range: strict fails, zero answers a zero-rate result. */
    sale.ip = "198.51.100.7";
    r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_RESOLUTION_FAILED);
    CHECK(contains(levy_last_error_message(), "IP_RESOLUTION_FAILED"));
    CHECK(r == NULL);
    CHECK_STR(levy_last_error_kind(), "IP_RESOLUTION_FAILED");
    sale.ip_mode = LEVY_IP_ZERO;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    CHECK_I64(s.total_tax, 0);
    CHECK_STR(s.zero_reason, "ZERO_RATE");
    levy_result_free(r);

    sale.ip = "not-an-ip";
    sale.ip_mode = LEVY_IP_STRICT;
    r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_RESOLUTION_FAILED);
    CHECK(contains(levy_last_error_message(), "INVALID_IP_FORMAT"));

    /* The address comes first; when it fails (37203 is not in CA) the IP decides. */
    LevyAddress wrong = nashville();
    wrong.region = "CA";
    sale.address = &wrong;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_RESOLUTION_FAILED);
    CHECK(contains(levy_last_error_message(), "ZIP_STATE_MISMATCH"));
    sale.ip = "192.0.2.10";
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    CHECK_STATUS(levy_result_summary(r, &s), LEVY_OK);
    CHECK_STR(s.location_source, "ip");
    CHECK_I64(s.total_tax, 185);
    levy_result_free(r);
}

static void test_calculate_errors(LevyEngine *engine) {
    LevyAddress addr = nashville();
    LevySaleLine line = {1999, 1, "GENERAL_MERCHANDISE", NULL};
    LevySale sale = sale_of(&addr, &line, 1);
    LevyResult *sentinel = (LevyResult *)(uintptr_t)0x1;
    LevyResult *r = sentinel;

    CHECK_STATUS(levy_calculate(NULL, &sale, &r), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "engine"));
    CHECK_STATUS(levy_calculate(engine, NULL, &r), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_calculate(engine, &sale, NULL), LEVY_NULL_ARGUMENT);

    LevySale bad = sale;
    bad.lines = NULL; /* two lines promised, none given */
    bad.line_count = 2;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "sale.lines"));

    bad = sale;
    bad.flags = 0x100;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_ARGUMENT);
    bad = sale;
    bad.ip_mode = 9;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_ARGUMENT);
    bad = sale;
    bad.address = NULL;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "neither an address nor an IP"));

    bad = sale;
    bad.currency = "XXX";
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_UNKNOWN_CURRENCY);
    bad.currency = "usd";
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_UNKNOWN_CURRENCY);
    bad.currency = "\xc3\x28";
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_UTF8);
    CHECK(contains(levy_last_error_message(), "sale.currency"));

    LevyAddress bad_addr = nashville();
    bad_addr.city = "Nash\xffville";
    bad = sale;
    bad.address = &bad_addr;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_UTF8);
    CHECK(contains(levy_last_error_message(), "address.city"));

    LevySaleLine bl = line;
    bad = sale;
    bad.lines = &bl;
    bl.category = "NO_SUCH_CATEGORY";
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_UNKNOWN_TAX_CODE);
    CHECK(contains(levy_last_error_message(), "NO_SUCH_CATEGORY"));
    bl.category = NULL;
    bl.tax_code = "NO_SUCH_CODE";
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_UNKNOWN_TAX_CODE);
    bl.tax_code = "\xff";
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_UTF8);

    bl = line;
    bl.quantity = 0;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_SALE);
    CHECK(contains(levy_last_error_message(), "quantity"));
    bl = line;
    bl.amount = -1;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_SALE);
    CHECK(contains(levy_last_error_message(), "amount"));
    bl.amount = 1000000000000001LL; /* one past the 10^15 maximum */
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_INVALID_SALE);

    LevyAddress nowhere = {0};
    nowhere.country = "ZZZ";
    bad = sale;
    bad.address = &nowhere;
    CHECK_STATUS(levy_calculate(engine, &bad, &r), LEVY_RESOLUTION_FAILED);

    CHECK(r == sentinel); /* never written by a failed call */
}

/* A result keeps its table alive: it can be read after its engine is freed. */
static void test_freed_results_are_refilled(LevyEngine *engine) {
    /* A result freed on this thread is filled again by its next calculation: the same
     * pointer comes back, holding only the new sale. */
    LevyAddress addr = nashville();
    LevySaleLine lines[2] = {
        {1999, 1, NULL, "GENERAL_MERCHANDISE"},
        {1000, 2, "CLOTHING", NULL},
    };
    LevySale sale = sale_of(&addr, lines, 2);
    LevyResult *first = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &first), LEVY_OK);
    LevyJurisdiction j;
    CHECK_STATUS(levy_result_jurisdiction(first, 1, 1, &j), LEVY_OK);
    CHECK_STR(j.name, "DAVIDSON");
    levy_result_free(first);

    LevyAddress tn = {0};
    tn.region = "TN";
    tn.country = "US";
    LevySaleLine one = {10000, 1, "GENERAL_MERCHANDISE", NULL};
    LevySale state_only = sale_of(&tn, &one, 1);
    LevyResult *second = NULL;
    CHECK_STATUS(levy_calculate(engine, &state_only, &second), LEVY_OK);
    CHECK(second == first);
    LevySummary s;
    CHECK_STATUS(levy_result_summary(second, &s), LEVY_OK);
    /* 7% of 10000 in the state alone; one line, nothing left of the first sale's two. */
    CHECK_I64(s.total_tax, 700);
    CHECK_I64(s.line_count, 1);
    CHECK_STR(s.resolution_precision, "PROVINCE");
    CHECK_STR(s.effective_rate, "0.07");
    LevyLine l;
    CHECK_STATUS(levy_result_line(second, 1, &l), LEVY_INDEX_OUT_OF_RANGE);
    CHECK_STATUS(levy_result_jurisdiction(second, 0, 1, &j), LEVY_INDEX_OUT_OF_RANGE);

    /* Two results alive at once are two results. */
    LevyResult *third = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &third), LEVY_OK);
    CHECK(third != second);
    CHECK_STATUS(levy_result_summary(third, &s), LEVY_OK);
    CHECK_I64(s.total_tax, 278); /* as in test_calculate */
    levy_result_free(second);
    levy_result_free(third);
}

/* levy_calculate_batch: each sale's status and totals, a failing sale failing alone, and
 * every sale of a long batch equal to what levy_calculate gives it. */
static void test_batch(LevyEngine *engine) {
    LevyAddress addr = nashville();
    LevySaleLine two[2] = {
        {1999, 1, NULL, "GENERAL_MERCHANDISE"},
        {1000, 2, "CLOTHING", NULL},
    };
    LevySaleLine unknown = {500, 1, "NO_SUCH_CATEGORY", NULL};
    LevySaleLine one = {1000, 1, "GENERAL_MERCHANDISE", NULL};
    LevySale sales[5];
    sales[0] = sale_of(&addr, two, 2);
    sales[1] = sale_of(&addr, &unknown, 1);
    sales[2] = sale_of(&addr, &one, 1);
    sales[3] = sale_of(NULL, &two[0], 1);
    sales[3].ip = "192.0.2.7";
    sales[4] = sale_of(&addr, &one, 1);
    sales[4].flags = 0x100;
    LevyBatchResult out[5];
    memset(out, 0xAB, sizeof out);
    /* The first sale that fails decides the status, and the message names it. */
    CHECK_STATUS(levy_calculate_batch(engine, sales, 5, out), LEVY_UNKNOWN_TAX_CODE);
    CHECK(contains(levy_last_error_message(), "sales[1]"));
    CHECK(contains(levy_last_error_message(), "NO_SUCH_CATEGORY"));
    /* As test_calculate: 185 + 93 = 278 tax on 2999. */
    CHECK_STATUS(out[0].status, LEVY_OK);
    CHECK_I64(out[0].total_tax, 278);
    CHECK_I64(out[0].total_excluding_tax, 2999);
    CHECK_I64(out[0].total_including_tax, 3277);
    CHECK_STR(out[0].coverage, "FULL");
    /* The unknown category fails its sale alone: zero totals, no coverage. */
    CHECK_STATUS(out[1].status, LEVY_UNKNOWN_TAX_CODE);
    CHECK_I64(out[1].total_tax, 0);
    CHECK_I64(out[1].total_including_tax, 0);
    CHECK(out[1].coverage == NULL);
    /* 1000 x 7% = 70, x 2.25% = 22.5: 92.5 -> 93 (half away from zero). */
    CHECK_STATUS(out[2].status, LEVY_OK);
    CHECK_I64(out[2].total_tax, 93);
    CHECK_I64(out[2].total_including_tax, 1093);
    /* By IP, placed in 37203: 1999 x 9.25% = 184.9075 -> 185. */
    CHECK_STATUS(out[3].status, LEVY_OK);
    CHECK_I64(out[3].total_tax, 185);
    CHECK_I64(out[3].total_including_tax, 2184);
    CHECK_STATUS(out[4].status, LEVY_INVALID_ARGUMENT);
    CHECK(out[4].coverage == NULL);

    /* A category is read again on each call: the same buffer holding other text in the
     * next call names the other category. */
    char category[32];
    LevySaleLine mutable_line = {1000, 1, category, NULL};
    LevySale twice[2] = {sale_of(&addr, &mutable_line, 1), sale_of(&addr, &mutable_line, 1)};
    LevyBatchResult twice_out[2];
    strcpy(category, "CLOTHING");
    CHECK_STATUS(levy_calculate_batch(engine, twice, 2, twice_out), LEVY_OK);
    CHECK_I64(twice_out[1].total_tax, 93);
    strcpy(category, "NO_SUCH");
    CHECK_STATUS(levy_calculate_batch(engine, twice, 2, twice_out), LEVY_UNKNOWN_TAX_CODE);
    /* Both sales naming it fail, not only the first. */
    CHECK_STATUS(twice_out[0].status, LEVY_UNKNOWN_TAX_CODE);
    CHECK_STATUS(twice_out[1].status, LEVY_UNKNOWN_TAX_CODE);

    /* A sale the calculation refuses (quantity 0) before one refused when read (an
     * unknown category): the call names the first by index, whichever is found first. */
    LevySaleLine zero_quantity = {1000, 0, "GENERAL_MERCHANDISE", NULL};
    LevySale order[2] = {sale_of(&addr, &zero_quantity, 1), sale_of(&addr, &unknown, 1)};
    LevyBatchResult order_out[2];
    CHECK_STATUS(levy_calculate_batch(engine, order, 2, order_out), LEVY_INVALID_SALE);
    CHECK(contains(levy_last_error_message(), "sales[0]"));
    CHECK(contains(levy_last_error_message(), "quantity"));
    CHECK_STATUS(order_out[1].status, LEVY_UNKNOWN_TAX_CODE);

    /* Totals past int64_t: 10^15 cents a unit x 10^9 units is 10^24 cents. The sale
     * fails with LEVY_INVALID_SALE, as levy_calculate refuses it. */
    LevySaleLine huge = {1000000000000000LL, 1000000000u, "GENERAL_MERCHANDISE", NULL};
    LevySale too_large[2] = {sale_of(&addr, &one, 1), sale_of(&addr, &huge, 1)};
    too_large[1].flags = LEVY_SALE_PER_UNIT;
    LevyBatchResult too_large_out[2];
    LevyResult *none = NULL;
    CHECK_STATUS(levy_calculate(engine, &too_large[1], &none), LEVY_INVALID_SALE);
    CHECK_STATUS(levy_calculate_batch(engine, too_large, 2, too_large_out), LEVY_INVALID_SALE);
    CHECK(contains(levy_last_error_message(), "sales[1]"));
    CHECK(contains(levy_last_error_message(), "int64_t"));
    CHECK_STATUS(too_large_out[0].status, LEVY_OK);
    CHECK_I64(too_large_out[0].total_tax, 93);
    CHECK_STATUS(too_large_out[1].status, LEVY_INVALID_SALE);

    /* Argument errors write nothing. */
    LevyBatchResult untouched;
    memset(&untouched, 0xAB, sizeof untouched);
    LevyBatchResult probe = untouched;
    CHECK_STATUS(levy_calculate_batch(NULL, sales, 1, &probe), LEVY_NULL_ARGUMENT);
    CHECK_STATUS(levy_calculate_batch(engine, NULL, 1, &probe), LEVY_NULL_ARGUMENT);
    CHECK(contains(levy_last_error_message(), "sales"));
    CHECK_STATUS(levy_calculate_batch(engine, sales, 1, NULL), LEVY_NULL_ARGUMENT);
    CHECK(memcmp(&probe, &untouched, sizeof probe) == 0);
    /* An empty batch is a batch. */
    CHECK_STATUS(levy_calculate_batch(engine, NULL, 0, &probe), LEVY_OK);

    /* A long batch (longer than the eight sales the batch fetches ahead), amounts from 1
     * cent up, every fifth sale by IP, every seventh shipped from an origin (calculated on
     * its own): each equals levy_calculate on the same sale. */
    enum { N = 1000 };
    static LevySale many[N];
    static LevySaleLine many_lines[N];
    static LevyBatchResult many_out[N];
    LevyAddress origin = nashville();
    for (int i = 0; i < N; i++) {
        many_lines[i].amount = 1 + (int64_t)i * 997;
        many_lines[i].quantity = 1 + (uint32_t)(i % 3);
        many_lines[i].category = (i % 2) ? "CLOTHING" : "GENERAL_MERCHANDISE";
        many_lines[i].tax_code = NULL;
        many[i] = sale_of(&addr, &many_lines[i], 1);
        if (i % 5 == 0) {
            many[i].address = NULL;
            many[i].ip = "192.0.2.9";
        }
        if (i % 7 == 0) many[i].origin = &origin;
    }
    CHECK_STATUS(levy_calculate_batch(engine, many, N, many_out), LEVY_OK);
    int same = 0;
    for (int i = 0; i < N; i++) {
        LevyResult *r = NULL;
        if (levy_calculate(engine, &many[i], &r) != LEVY_OK) continue;
        LevySummary s;
        levy_result_summary(r, &s);
        same += many_out[i].status == LEVY_OK && many_out[i].total_tax == s.total_tax &&
                many_out[i].total_excluding_tax == s.total_excluding_tax &&
                many_out[i].total_including_tax == s.total_including_tax &&
                strcmp(many_out[i].coverage, s.coverage) == 0;
        levy_result_free(r);
    }
    CHECK(same == N);
    /* Sale 999: 1 + 999 x 997 = 996,004 cents of CLOTHING (taxed as general
     * merchandise), by address: x 9.25% = 92,130.37 -> 92,130. */
    CHECK_I64(many_out[999].total_tax, 92130);
}

static void test_result_outlives_engine(const char *dir) {
    LevyEngine *engine = NULL;
    CHECK_STATUS(levy_engine_open(path_in(dir, "fixture.levy"), &engine), LEVY_OK);
    LevyAddress addr = nashville();
    LevySaleLine line = {1999, 1, "GENERAL_MERCHANDISE", NULL};
    LevySale sale = sale_of(&addr, &line, 1);
    LevyResult *r = NULL;
    CHECK_STATUS(levy_calculate(engine, &sale, &r), LEVY_OK);
    levy_engine_free(engine);
    LevyJurisdiction j;
    CHECK_STATUS(levy_result_jurisdiction(r, 0, 1, &j), LEVY_OK);
    CHECK_STR(j.name, "DAVIDSON");
    levy_result_free(r);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR HASH\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1], *hash = argv[2];
    test_version();
    test_status_messages();
    test_open_errors(dir);

    LevyEngine *engine = NULL;
    CHECK_STATUS(levy_engine_open(path_in(dir, "fixture.levy"), &engine), LEVY_OK);
    if (engine == NULL) return check_finish();
    test_calculate(engine, hash);
    test_flags(engine);
    test_ip(engine);
    test_calculate_errors(engine);
    test_freed_results_are_refilled(engine);
    test_batch(engine);
    levy_engine_free(engine);
    test_result_outlives_engine(dir);

    /* The same table mapped instead of read: the same answer (test_calculate's). */
    LevyEngine *mapped = NULL;
    CHECK_STATUS(levy_engine_open_mapped(path_in(dir, "fixture.levy"), &mapped), LEVY_OK);
    if (mapped != NULL) test_calculate(mapped, hash);
    levy_engine_free(mapped);
    CHECK_STATUS(levy_engine_open_mapped(path_in(dir, "truncated.levy"), &mapped),
                 LEVY_INVALID_TABLE);
    CHECK_STATUS(levy_engine_open_mapped(NULL, &mapped), LEVY_NULL_ARGUMENT);
    CHECK_STR(levy_last_error_kind(), ""); /* no sale was refused */
    return check_finish();
}
