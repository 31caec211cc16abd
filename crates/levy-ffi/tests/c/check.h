/* Minimal test helpers for levy's C tests: each CHECK counts one assertion, and the
 * program ends with the line "N passed, N failed" and exit status 0 only when none
 * failed. */
#ifndef LEVY_TEST_CHECK_H
#define LEVY_TEST_CHECK_H

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int check_passed;
static atomic_int check_failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            atomic_fetch_add(&check_passed, 1);                                       \
        } else {                                                                      \
            atomic_fetch_add(&check_failed, 1);                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
        }                                                                             \
    } while (0)

#define CHECK_STATUS(call, expected)                                                  \
    do {                                                                              \
        LevyStatus check_s_ = (call);                                                 \
        if (check_s_ == (expected)) {                                                 \
            atomic_fetch_add(&check_passed, 1);                                       \
        } else {                                                                      \
            atomic_fetch_add(&check_failed, 1);                                       \
            fprintf(stderr, "%s:%d: %s returned %d, expected %s (%d): %s\n", __FILE__, \
                    __LINE__, #call, (int)check_s_, #expected, (int)(expected),       \
                    levy_last_error_message());                                       \
        }                                                                             \
    } while (0)

#define CHECK_STR(actual, expected)                                                   \
    do {                                                                              \
        const char *check_a_ = (actual);                                              \
        const char *check_e_ = (expected);                                            \
        if (check_a_ != NULL && strcmp(check_a_, check_e_) == 0) {                    \
            atomic_fetch_add(&check_passed, 1);                                       \
        } else {                                                                      \
            atomic_fetch_add(&check_failed, 1);                                       \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__,       \
                    __LINE__, #actual, check_a_ ? check_a_ : "(null)", check_e_);     \
        }                                                                             \
    } while (0)

#define CHECK_I64(actual, expected)                                                   \
    do {                                                                              \
        int64_t check_a_ = (int64_t)(actual);                                         \
        int64_t check_e_ = (int64_t)(expected);                                       \
        if (check_a_ == check_e_) {                                                   \
            atomic_fetch_add(&check_passed, 1);                                       \
        } else {                                                                      \
            atomic_fetch_add(&check_failed, 1);                                       \
            fprintf(stderr, "%s:%d: %s is %" PRId64 ", expected %" PRId64 "\n",       \
                    __FILE__, __LINE__, #actual, check_a_, check_e_);                 \
        }                                                                             \
    } while (0)

/* Whether `haystack` contains `needle`. */
static int contains(const char *haystack, const char *needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

static int check_finish(void) {
    int p = atomic_load(&check_passed), f = atomic_load(&check_failed);
    printf("%d passed, %d failed\n", p, f);
    return f == 0 ? 0 : 1;
}

#endif
