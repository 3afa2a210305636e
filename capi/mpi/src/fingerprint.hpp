// What every rank's fdk_config must agree on, as one hash per group of
// fields, so that a mismatch is named ("rank 2's detector differs").
#pragma once
#include <fdk/fdk_mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fdk::mpi {

// The groups' names, in the order of fingerprint()'s words.
const std::vector<std::string>& fingerprint_groups();
// One word per group, from the validated configuration (defaults resolved,
// so an older struct_size hashes as the defaults it gets) and the caller's
// scan, whose arrays the validated copy no longer points to.
std::vector<int32_t> fingerprint(const fdk_config& validated, const fdk_scan& caller_scan, const fdk_mpi_config& mpi);

}  // namespace fdk::mpi
