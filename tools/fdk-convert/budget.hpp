// fdk-convert's host memory advice: the budget that would hold a scan,
// found by asking the library's own planner (fdk_create's plan), and the
// words that offer it.
#pragma once

#include <fdk/fdk.h>

#include <cstdint>
#include <string>

namespace fdk_convert {

// A --host-memory value of at least `bytes`, rounded up to two significant
// figures in KiB, MiB or GiB ("88K", "47M", "1.5G"); read back by
// --host-memory it is never below `bytes`.
std::string size_flag(uint64_t bytes);

// A budget or byte count as messages state it: as given ("1 KiB", "1.5
// GiB", "1000 bytes"), with the exact bytes after it when four figures do
// not say it exactly ("12.35 MiB (12949504 bytes)"). As the library's
// messages write it (core byte_text.hpp).
std::string budget_text(uint64_t bytes);

// The smallest host budget, within 2 %, whose plan reaches `fit` (the
// library's fdk_store_fit: FITS or LIKELY) for `config`; 0 when none below
// 64 TiB does (or the library refuses the configuration for another reason).
uint64_t smallest_fitting_host_budget(fdk_config config, int32_t fit);

// "; --host-memory A holds every view for certain (as float16 where
// needed), --host-memory B every view as float32; or make the views smaller
// (--bin, --crop)".
std::string budget_advice(const fdk_config& config);

}  // namespace fdk_convert
