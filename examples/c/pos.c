/* A small till on liblevy.
 *
 * Rings up three items at the Indiana Statehouse (200 W Washington St, Indianapolis, IN
 * 46204) with the engine over the rate table built into the library, prints a receipt
 * with the tax of every jurisdiction, then records the sale in the till's own ledger
 * through the in-process service and refunds one item. No network is used.
 *
 * Build against an installed liblevy (see crates/levy-ffi/README.md):
 *     cc -std=c11 -o pos pos.c $(pkg-config --cflags --libs levy)
 * Run:
 *     ./pos /path/to/ledger.sqlite
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <levy.h>

#define KEY "sk_test_pos_example_key_0001"

struct item {
    const char *id;       /* the till's line id, reference_line_item_id in the ledger */
    const char *name;
    const char *category; /* product_category */
    int64_t amount;       /* line total, cents */
    uint32_t quantity;
};

static const struct item basket[3] = {
    {"L1", "Desk lamp", "GENERAL_MERCHANDISE", 2499, 1},
    {"L2", "Notebook x2", "GENERAL_MERCHANDISE", 700, 2},
    {"L3", "Umbrella", "GENERAL_MERCHANDISE", 1200, 1},
};

static int fail(const char *what, LevyStatus s) {
    fprintf(stderr, "pos: %s failed: %s (%s)\n", what, levy_status_message(s), levy_last_error_message());
    return 1;
}

/* Prints cents as dollars: 2499 -> "24.99". */
static void money(char *out, size_t n, int64_t cents) {
    snprintf(out, n, "%s%lld.%02lld", cents < 0 ? "-" : "", (long long)(llabs(cents) / 100),
             (long long)(llabs(cents) % 100));
}

/* Sends one JSON request to the service. Returns the response, or NULL after printing why. */
static LevyResponse *request(const LevyService *service, const char *method, const char *path,
                             const char *body, int expect_status) {
    LevyHeader headers[2] = {{"Authorization", "Bearer " KEY}, {"X-API-Version", "2026-03-01"}};
    LevyResponse *response = NULL;
    LevyStatus s = levy_service_request(service, method, path, headers, 2, (const uint8_t *)body,
                                        body ? strlen(body) : 0, &response);
    if (s != LEVY_OK) {
        fail(path, s);
        return NULL;
    }
    const char *text = NULL;
    size_t len = 0;
    levy_response_body(response, &text, &len);
    if (levy_response_status(response) != expect_status) {
        fprintf(stderr, "pos: %s %s answered %u: %.*s\n", method, path, levy_response_status(response),
                (int)len, text);
        levy_response_free(response);
        return NULL;
    }
    return response;
}

/* Copies the first JSON string value that starts with `prefix` ("calc_", "tr_"). */
static int find_id(const LevyResponse *response, const char *prefix, char *out, size_t n) {
    const char *body = NULL;
    size_t len = 0;
    char pattern[32];
    if (levy_response_body(response, &body, &len) != LEVY_OK) return 0;
    snprintf(pattern, sizeof pattern, "\"%s", prefix);
    const char *p = strstr(body, pattern);
    if (p == NULL) return 0;
    size_t k = strcspn(++p, "\"");
    if (k + 1 > n) return 0;
    memcpy(out, p, k);
    out[k] = '\0';
    return 1;
}

static int ring_up(LevyEngine *engine, int64_t *line_tax) {
    LevyAddress addr = {"200 W Washington St", NULL, "Indianapolis", "IN", "46204", "US"};
    LevySaleLine lines[3];
    for (int i = 0; i < 3; i++) {
        lines[i].amount = basket[i].amount;
        lines[i].quantity = basket[i].quantity;
        lines[i].category = basket[i].category;
        lines[i].tax_code = NULL;
    }
    LevySale sale;
    memset(&sale, 0, sizeof sale);
    sale.address = &addr;
    sale.currency = "USD";
    sale.transacted_at = 0; /* now */
    sale.lines = lines;
    sale.line_count = 3;

    LevyResult *result = NULL;
    LevyStatus s = levy_calculate(engine, &sale, &result);
    if (s != LEVY_OK) return fail("levy_calculate", s);

    LevySummary sum;
    if ((s = levy_result_summary(result, &sum)) != LEVY_OK) return fail("levy_result_summary", s);
    char a[32], b[32];
    printf("================ RECEIPT ================\n");
    printf("200 W Washington St, Indianapolis IN 46204\n");
    printf("(location: %s, %s)\n\n", sum.address_resolution_status, sum.resolution_precision);
    for (size_t i = 0; i < sum.line_count; i++) {
        LevyLine line;
        if ((s = levy_result_line(result, i, &line)) != LEVY_OK) return fail("levy_result_line", s);
        line_tax[i] = line.tax_amount;
        money(a, sizeof a, line.amount_excluding_tax);
        printf("%-28s %12s\n", basket[i].name, a);
        for (size_t j = 0; j < line.jurisdiction_count; j++) {
            LevyJurisdiction jur;
            if ((s = levy_result_jurisdiction(result, i, j, &jur)) != LEVY_OK)
                return fail("levy_result_jurisdiction", s);
            money(b, sizeof b, jur.tax_due_minor);
            printf("   %-10s %-12s %7s %10s\n", jur.level, jur.name, jur.rate, b);
        }
    }
    money(a, sizeof a, sum.total_excluding_tax);
    printf("\n%-28s %12s\n", "Subtotal", a);
    money(a, sizeof a, sum.total_tax);
    printf("%-28s %12s\n", "Tax", a);
    money(a, sizeof a, sum.total_including_tax);
    printf("%-28s %12s\n", "TOTAL", a);
    printf("(rate table %.12s...)\n", sum.table_hash);
    printf("=========================================\n");
    levy_result_free(result);
    return 0;
}

static int record_and_refund(const char *ledger, const int64_t *line_tax) {
    LevyKey key = {"till", KEY};
    LevyServiceConfig config;
    memset(&config, 0, sizeof config);
    config.table_path = NULL; /* the table built into the library */
    config.ledger_path = ledger;
    config.keys = &key;
    config.key_count = 1;
    LevyService *service = NULL;
    LevyStatus s = levy_service_open(&config, &service);
    if (s != LEVY_OK) return fail("levy_service_open", s);

    char body[2048];
    int n = snprintf(body, sizeof body,
                     "{\"customer\":{\"address\":{\"address_line_1\":\"200 W Washington St\","
                     "\"address_city\":\"Indianapolis\",\"address_province\":\"IN\","
                     "\"address_postal_code\":\"46204\",\"address_country\":\"US\","
                     "\"address_type\":\"shipping\"}},\"origin_address\":{\"address_province\":\"IN\","
                     "\"address_postal_code\":\"46204\",\"address_country\":\"US\"},"
                     "\"order_details\":{\"customer_currency_code\":\"USD\","
                     "\"tax_included_in_amount\":false,\"line_items\":[");
    for (int i = 0; i < 3; i++)
        n += snprintf(body + n, sizeof body - n,
                      "%s{\"amount\":%lld,\"quantity\":%u,\"product_category\":\"%s\","
                      "\"reference_line_item_id\":\"%s\"}",
                      i ? "," : "", (long long)basket[i].amount, basket[i].quantity,
                      basket[i].category, basket[i].id);
    snprintf(body + n, sizeof body - n, "]}}");

    int rc = 1;
    char calc[128], tx[128], refund[128];
    LevyResponse *r = request(service, "POST", "/tax/calculations", body, 200);
    if (r == NULL || !find_id(r, "calc_", calc, sizeof calc)) goto out;
    levy_response_free(r);

    snprintf(body, sizeof body, "{\"calculation_id\":\"%s\",\"reference_order_id\":\"till-1-%s\"}",
             calc, calc);
    r = request(service, "POST", "/tax/transactions", body, 200);
    if (r == NULL || !find_id(r, "tr_", tx, sizeof tx)) goto out;
    levy_response_free(r);
    printf("recorded sale %s\n", tx);

    /* The umbrella comes back: refund its amount and the tax charged on it. */
    snprintf(body, sizeof body,
             "{\"transaction_id\":\"%s\",\"type\":\"partial\",\"line_items\":[{"
             "\"reference_line_item_id\":\"L3\",\"quantity\":1,\"sales_amount_refunded\":-%lld,"
             "\"tax_amount_refunded\":-%lld}]}",
             tx, (long long)basket[2].amount, (long long)line_tax[2]);
    r = request(service, "POST", "/tax/refunds", body, 200);
    if (r == NULL || !find_id(r, "ref_tr_", refund, sizeof refund)) goto out;
    char a[32];
    money(a, sizeof a, basket[2].amount + line_tax[2]);
    printf("refunded %s (%s) as %s\n", basket[2].name, a, refund);
    rc = 0;
out:
    levy_response_free(r);
    levy_service_free(service);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LEDGER_FILE\n", argv[0]);
        return 2;
    }
    printf("levy %s\n", levy_version());
    LevyEngine *engine = NULL;
    LevyStatus s = levy_engine_open_default(&engine);
    if (s != LEVY_OK) return fail("levy_engine_open_default", s);
    int64_t line_tax[3] = {0, 0, 0};
    int rc = ring_up(engine, line_tax);
    levy_engine_free(engine);
    if (rc != 0) return rc;
    return record_and_refund(argv[1], line_tax);
}
