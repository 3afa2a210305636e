// Which hostile rows run: a row that states a defect not yet fixed
// ("defect: ...") is skipped unless the environment sets
// FDK_HOSTILE_RUN_PENDING=1 (to try a fix before its rows are enabled).
// Rows marked "pending: (x) ..." name the fix of issue 26 that made them
// pass, and run.
#pragma once
#include <cstdlib>
#include <string>

namespace hostile {

inline bool run_pending() {
  const char* v = std::getenv("FDK_HOSTILE_RUN_PENDING");
  return v && std::string(v) == "1";
}

inline bool skipped(const std::string& pending) { return pending.rfind("defect:", 0) == 0 && !run_pending(); }

}  // namespace hostile
