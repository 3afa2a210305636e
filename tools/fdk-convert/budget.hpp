// fdk-convert's host memory advice: the budget that would hold a scan,
// found by asking the library's own planner (fdk_create's plan), and the
// words that offer it.
#pragma once

#include <fdk/fdk.h>

#include <cstdint>
#include <string>

namespace fdk_convert {

// A --host-memory value of at least `bytes`, rounded up to two significant
// figures in MiB or GiB ("47M", "1.5G").
std::string size_flag(uint64_t bytes);

// The smallest host budget, within 2 %, whose plan reaches `fit` (the
// library's fdk_store_fit: FITS or LIKELY) for `config`; 0 when none below
// 64 TiB does (or the library refuses the configuration for another reason).
uint64_t smallest_fitting_host_budget(fdk_config config, int32_t fit);

// "; --host-memory A holds every view for certain (as float16 where
// needed), --host-memory B every view as float32; or make the views smaller
// (--bin, --crop)".
std::string budget_advice(const fdk_config& config);

}  // namespace fdk_convert
