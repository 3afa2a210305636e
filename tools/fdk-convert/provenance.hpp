// fdk-convert's answer when a geometry value is refused: which flag or
// which file (and key or line) it came from, and so which exit code (2 a
// flag, 3 a file).
//
// Why: the library checks its configuration and names a field of a C
// struct ("scan.uniform: SID is 1e+308"). The readers already check the
// library's ranges where they read a value (geometry_io.cpp,
// stack_header.cpp), naming the file and key; what remains is what only the
// whole configuration shows (SDD / SID when sid and sdd come from two
// places, every view at one angle, a default volume derived from a pitch)
// and anything the library refuses that the readers did not foresee. For
// those, the values' sources (ScanDescription::sources) name what the user
// gave.
#pragma once

#include <fdk/adapters/geometry_io.hpp>
#include <fdk/fdk.h>

#include <string>

#include "options.hpp"

namespace fdk_convert {

// Where the configuration's geometry came from.
struct GeometryOrigins {
  // Every value's source by key ("scan.sid" -> "--sid" or "'scan.ini' line
  // 2, sid"; "detector.pixel_size" -> "'proj' (the TIFF resolution tags)").
  fdk::adapters::ScanDescription desc;
  std::string xml_file;  // the RTK XML file that gave the views, if any
  bool reshaped = false;  // --crop or --bin changed the detector the library sees
};

// A source is a flag ("--sid") or a file (anything else: it names one).
bool is_flag_source(const std::string& source);

// SDD / SID within the library's [1e-3, 1e6] when sid and sdd come from the
// description (flags, INI): checked here because they may come from two
// places, which the message names. Throws Failure (2 when a flag gave
// either, else 3).
void check_magnification(const fdk::adapters::ScanDescription& desc);

// fdk_create's failure `status` with the library's `message`, as fdk-convert
// reports it: FDK_ERROR_BUDGET is 7 (with the budget that would hold the
// scan), a refused value (INVALID_ARGUMENT, OUT_OF_RANGE) is 3 naming the
// file it came from, or 2 naming the flag (or the option it is not
// traceable to), anything else 5.
Failure setup_failure(fdk_status status, const std::string& message, const GeometryOrigins& origins,
                      const fdk_config& config);

}  // namespace fdk_convert
