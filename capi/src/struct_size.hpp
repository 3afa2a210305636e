// Structs the caller fills in and the library writes out, checked by their
// struct_size: the current layout, or an older, shorter one a caller built
// against an earlier version passes (fields are only ever appended).
// Shared by libfdk's and libfdk_mpi's C APIs.
#pragma once
#include <fdk/fdk.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "fdk/core/error.hpp"

namespace fdk::capi {

// Accepts sizeof(Info) and any of `older`; INVALID_ARGUMENT for NULL.
template <class Info>
void check_out_struct_sizes(const Info* info, const char* name, std::initializer_list<size_t> older = {}) {
  if (!info) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  if (info->struct_size == sizeof(Info)) return;
  for (size_t size : older)
    if (info->struct_size == size) return;
  fdk::fail(FDK_ERROR_STRUCT_SIZE, std::string(name) + "->struct_size must be sizeof(" + name + ")");
}

// Copies the first struct_size bytes of `full` (whose struct_size is
// sizeof) into the caller's struct, which may have an older layout.
template <class Info>
void copy_out(const Info& full, Info* info) {
  const uint32_t size = info->struct_size;
  std::memcpy(info, &full, size);
  info->struct_size = size;
}

}  // namespace fdk::capi
