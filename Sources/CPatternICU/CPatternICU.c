#include "CPatternICU.h"
#include <stddef.h>

// The few functions of ICU's C API used here, as exported by Foundation's ICU
// (lib_FoundationICU, built with the `swift_` rename prefix).
typedef int32_t UErrorCode;
typedef int8_t UBool;
typedef UBool URegexMatchCallback(const void *context, int32_t steps);

URegularExpression *swift_uregex_open(const uint16_t *pattern, int32_t length, uint32_t flags, void *parseError,
                                      UErrorCode *status);
URegularExpression *swift_uregex_clone(const URegularExpression *regex, UErrorCode *status);
void swift_uregex_close(URegularExpression *regex);
void swift_uregex_setText(URegularExpression *regex, const uint16_t *text, int32_t length, UErrorCode *status);
void swift_uregex_setTimeLimit(URegularExpression *regex, int32_t limit, UErrorCode *status);
void swift_uregex_setMatchCallback(URegularExpression *regex, URegexMatchCallback *callback, const void *context,
                                   UErrorCode *status);
UBool swift_uregex_find(URegularExpression *regex, int32_t startIndex, UErrorCode *status);

URegularExpression *pattern_icu_open(const uint16_t *pattern, int32_t length) {
    UErrorCode status = 0;
    URegularExpression *regex = swift_uregex_open(pattern, length, 0, NULL, &status);
    if (status > 0) {
        if (regex != NULL) swift_uregex_close(regex);
        return NULL;
    }
    return regex;
}

void pattern_icu_close(URegularExpression *regex) {
    swift_uregex_close(regex);
}

/// Called by ICU once per tick with the ticks spent so far; records them, never stops.
static UBool record_ticks(const void *context, int32_t steps) {
    *(int32_t *)context = steps;
    return 1;
}

int pattern_icu_find(const URegularExpression *regex, const uint16_t *text, int32_t length, int32_t tick_limit,
                     int32_t *ticks_used) {
    static const uint16_t empty = 0;
    UErrorCode status = 0;
    *ticks_used = 0;
    URegularExpression *clone = swift_uregex_clone(regex, &status);
    if (status > 0 || clone == NULL) return -1;
    swift_uregex_setText(clone, text != NULL ? text : &empty, length, &status);
    swift_uregex_setTimeLimit(clone, tick_limit > 0 ? tick_limit : 1, &status);
    swift_uregex_setMatchCallback(clone, record_ticks, ticks_used, &status);
    UBool found = status > 0 ? 0 : swift_uregex_find(clone, 0, &status);
    swift_uregex_close(clone);
    if (status > 0) return -1;
    return found ? 1 : 0;
}
