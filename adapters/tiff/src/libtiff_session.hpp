// One libtiff file's plumbing shared by the TIFF reader and writer: its
// error messages collected per file instead of printed (the library must
// not print), the client-open call that works with old and new libtiff,
// and the conversion of stored samples to float.
#pragma once
#include <cstddef>
#include <string>

#include <tiffio.h>

#include "fdk/adapters/tiff_io.hpp"

namespace fdk {
namespace adapters {
namespace tiff_detail {

// Collects libtiff's messages for one file; the first error is the one
// reported (later ones are usually its consequences).
struct MessageSink {
  std::string first_error;
  void reset() { first_error.clear(); }
};

TIFF* client_open(const char* name, const char* mode, thandle_t handle, TIFFReadWriteProc rd,
                  TIFFReadWriteProc wr, TIFFSeekProc sk, TIFFCloseProc cl, TIFFSizeProc sz,
                  TIFFMapFileProc mp, TIFFUnmapFileProc um, MessageSink* sink);
// The first error libtiff reported for the file (then forgotten).
std::string take_message(MessageSink& sink);

size_t bytes_of(SampleType t);
int map_nothing(thandle_t, void**, toff_t*);
void unmap_nothing(thandle_t, void*, toff_t);
void convert_samples(SampleType type, const unsigned char* src, size_t count, float* dst);

}  // namespace tiff_detail
}  // namespace adapters
}  // namespace fdk
