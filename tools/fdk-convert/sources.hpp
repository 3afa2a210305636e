// fdk-convert's projection sources (sources.cpp).
#pragma once

#include <fdk/adapters/projection_source.hpp>

#include <memory>
#include <string>

#include "options.hpp"

namespace fdk_convert {

// The reader PROJECTIONS needs: a raw file (--raw), a folder of TIFF files,
// a DXchange HDF5 file (.h5, .hdf5, .hdf, .nxs; refused as unsupported
// without HDF5), a MetaImage/NRRD stack (.mha, .mhd, .nrrd, .nhdr), or one
// (multi-page) TIFF file. Dark/flat/bad-pixel files of any supported kind
// work with every source. Throws Failure (kExitInput) for a missing or
// unrecognised file, fdk::adapters::Error for what the readers refuse.
std::unique_ptr<fdk::adapters::ProjectionSource> open_projections(const Options& o);

// Whether `name` ends in `suffix` (lower case), ignoring case: ".TIF" is ".tif".
bool ends_with(const std::string& name, const char* suffix);

}  // namespace fdk_convert
