#pragma once
// `bk u limits`: the fair-share limits and each scope's use of them.

#include "base/result.h"
#include "cli/context.h"

namespace bk::cli {

// Prints the report as text, or as the gpubk.limits.v1 document.
Result<int> ShowLimits(Context& ctx, bool as_json, bool compact);

}  // namespace bk::cli
