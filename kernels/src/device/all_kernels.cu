// The one translation unit of device code: nvcc compiles it into the fatbin
// libfdk carries (kernels/CMakeLists.txt). Host code never includes it.
#include "backprojection.cu"
#include "filter_kernels.cu"
#include "preview.cu"
#include "probe.cu"
#include "store_rounding.cu"
