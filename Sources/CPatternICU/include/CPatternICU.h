#ifndef C_PATTERN_ICU_H
#define C_PATTERN_ICU_H

#include <stdint.h>

/// A pattern compiled by ICU (Foundation's copy, whose functions carry a `swift_` prefix).
typedef struct URegularExpression URegularExpression;

/// Compiles an ICU pattern (UTF-16) with no flags; NULL when ICU refuses it.
URegularExpression *_Nullable pattern_icu_open(const uint16_t *_Nonnull pattern, int32_t length);

/// Frees a pattern from `pattern_icu_open`.
void pattern_icu_close(URegularExpression *_Nonnull regex);

/// Searches `text` (UTF-16) for the pattern anywhere, on a clone of `regex` (so that any
/// number of threads may share one compiled pattern), with ICU's step limit set to
/// `tick_limit` ticks of 10,000 backtracking steps (at least 1).
/// Returns 1 for a match, 0 for none, -1 when the limit was reached (or ICU failed, e.g. its
/// backtracking stack is full). `ticks_used` receives the ticks spent.
int pattern_icu_find(const URegularExpression *_Nonnull regex, const uint16_t *_Nullable text, int32_t length,
                     int32_t tick_limit, int32_t *_Nonnull ticks_used);

#endif
