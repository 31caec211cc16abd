/* Helpers shared by the C tests of the service path. */
#ifndef LEVY_TEST_SERVICE_UTIL_H
#define LEVY_TEST_SERVICE_UTIL_H

#include <stdio.h>
#include <string.h>

#include "levy.h"

#define TEST_KEY "sk_test_c_tests_0123456789"

/* Sends a request with the test key and version 2026-03-01; NULL body for none. Returns
 * the response (or NULL when the call itself failed, after printing why). */
static LevyResponse *svc_request(const LevyService *service, const char *method, const char *path,
                          const char *body) {
    LevyHeader headers[3] = {
        {"Authorization", "Bearer " TEST_KEY},
        {"X-API-Version", "2026-03-01"},
        {"Content-Type", "application/json"},
    };
    LevyResponse *response = NULL;
    LevyStatus s = levy_service_request(service, method, path, headers, 3,
                                        (const uint8_t *)body, body ? strlen(body) : 0, &response);
    if (s != LEVY_OK) {
        fprintf(stderr, "levy_service_request %s %s: %d %s\n", method, path, (int)s,
                levy_last_error_message());
        return NULL;
    }
    return response;
}

/* The response body as a C string ("" when unavailable). */
__attribute__((unused)) static const char *body_of(const LevyResponse *response) {
    const char *body = NULL;
    size_t len = 0;
    if (levy_response_body(response, &body, &len) != LEVY_OK) return "";
    return body;
}

/* Copies the first identifier starting with `prefix` (such as "calc_") found as a JSON
 * string value in `json` into `out`. Returns 1 when found. */
__attribute__((unused)) static int find_id(const char *json, const char *prefix, char *out, size_t out_len) {
    char pattern[32];
    snprintf(pattern, sizeof pattern, "\"%s", prefix);
    const char *p = strstr(json, pattern);
    if (p == NULL) return 0;
    p++;
    size_t n = strcspn(p, "\"");
    if (n + 1 > out_len) return 0;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

/* A calculation at Nashville 37203 on 2026-03-01 for the fixture: 1999 of general
 * merchandise and 2 x 500 of clothing. */
#define CALCULATION_BODY                                                                    \
    "{\"customer\":{\"address\":{\"address_line_1\":\"\",\"address_city\":\"Nashville\","   \
    "\"address_province\":\"TN\",\"address_postal_code\":\"37203\",\"address_country\":"    \
    "\"US\",\"address_type\":\"shipping\"}},"                                               \
    "\"origin_address\":{\"address_province\":\"TN\",\"address_postal_code\":\"37203\","    \
    "\"address_country\":\"US\"},"                                                          \
    "\"order_details\":{\"customer_currency_code\":\"USD\",\"tax_included_in_amount\":false," \
    "\"line_items\":[{\"amount\":1999,\"quantity\":1,\"product_category\":"                 \
    "\"GENERAL_MERCHANDISE\",\"reference_line_item_id\":\"L1\"},{\"amount\":1000,"          \
    "\"quantity\":2,\"product_category\":\"CLOTHING\",\"reference_line_item_id\":\"L2\"}]}," \
    "\"transacted_at\":1772323200}"

#endif
