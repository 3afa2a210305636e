#include "fdk/adapters/sample_type.hpp"

#include <limits>

namespace fdk {
namespace adapters {

const char* sample_type_name(SampleType type) {
  switch (type) {
    case SampleType::kUInt8: return "uint8";
    case SampleType::kUInt16: return "uint16";
    case SampleType::kUInt32: return "uint32";
    case SampleType::kFloat32: return "float32";
    case SampleType::kInt8: return "int8";
    case SampleType::kInt16: return "int16";
    case SampleType::kInt32: return "int32";
    case SampleType::kFloat64: return "float64";
  }
  return "?";
}

double saturation_level(SampleType type) {
  switch (type) {
    case SampleType::kUInt8: return 255.0;
    case SampleType::kUInt16: return 65535.0;
    case SampleType::kUInt32: return 4294967295.0;
    case SampleType::kInt8: return 127.0;
    case SampleType::kInt16: return 32767.0;
    case SampleType::kInt32: return 2147483647.0;
    case SampleType::kFloat32:
    case SampleType::kFloat64: return std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::infinity();
}

size_t sample_bytes(SampleType type) {
  switch (type) {
    case SampleType::kUInt8:
    case SampleType::kInt8: return 1;
    case SampleType::kUInt16:
    case SampleType::kInt16: return 2;
    case SampleType::kUInt32:
    case SampleType::kInt32:
    case SampleType::kFloat32: return 4;
    case SampleType::kFloat64: return 8;
  }
  return 4;
}

bool is_float(SampleType type) {
  return type == SampleType::kFloat32 || type == SampleType::kFloat64;
}

}  // namespace adapters
}  // namespace fdk
