// A kernel that does nothing, compiled for exactly the architectures the
// others are (one fatbin): what the driver loads for it on a device is what
// they get there (gpu_code.cpp asks).
extern "C" __global__ void fdk_code_probe(int* out) {
  if (out) *out = 1;
}
