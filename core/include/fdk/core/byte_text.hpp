// Byte counts as messages write them: "1 KiB", "1.5 GiB", "1000 bytes".
//
// Why not whole MiB rounded up (as the budget messages once did): a
// budget of 1 KiB then read "1 MiB", so the message contradicted what the
// caller gave. A count is written in the largest binary unit it reaches,
// to four significant figures; when that is not the exact count, the
// exact count follows in bytes ("12.35 MiB (12949504 bytes)").
#pragma once
#include <cstdint>
#include <string>

namespace fdk {

std::string byte_text(uint64_t bytes);

}  // namespace fdk
