// Checks a public fdk_config and resolves its defaults.
#pragma once
#include "fdk/core/reconstruction.hpp"

namespace fdk {

// Throws fdk::Error naming the first offending field.
Settings validate_config(const fdk_config& config);

}  // namespace fdk
