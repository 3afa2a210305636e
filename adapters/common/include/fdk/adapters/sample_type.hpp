// fdk/adapters/sample_type.hpp — the sample types of projection files (TIFF
// pages, MetaImage/NRRD/raw stacks), shared so that every source can say
// what it read and where its samples saturate.
#ifndef FDK_ADAPTERS_SAMPLE_TYPE_HPP
#define FDK_ADAPTERS_SAMPLE_TYPE_HPP

#include <cstddef>

namespace fdk {
namespace adapters {

// TIFF yields the first four; the stacks all of them.
enum class SampleType { kUInt8, kUInt16, kUInt32, kFloat32, kInt8, kInt16, kInt32, kFloat64 };

const char* sample_type_name(SampleType type);  // "uint16", "float32", ...
// The largest value of an integer type (a saturated pixel); +inf for float.
double saturation_level(SampleType type);
size_t sample_bytes(SampleType type);
bool is_float(SampleType type);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_SAMPLE_TYPE_HPP
