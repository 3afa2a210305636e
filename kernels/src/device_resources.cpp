#include "device_resources.hpp"

namespace fdk::cuda {

void copy_2d_async(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width_bytes,
                   size_t height, CUstream stream, const char* what) {
  if (!width_bytes || !height) return;
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  c.srcDevice = dptr(src);
  c.srcPitch = src_pitch;
  c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  c.dstDevice = dptr(dst);
  c.dstPitch = dst_pitch;
  c.WidthInBytes = width_bytes;
  c.Height = height;
  check(cu().cuMemcpy2DAsync(&c, stream), what);
}

void copy_now(void* dst, const void* src, size_t bytes, const char* what) {
  if (!bytes) return;
  Stream stream;
  copy_async(dst, src, bytes, stream.get(), what);
  stream.synchronize();
}

void TextureObject::make_pitch2d(void* data, TexelLayout texel, size_t width, size_t height, size_t pitch_bytes) {
  reset();
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_PITCH2D;
  res.res.pitch2D.devPtr = dptr(data);
  res.res.pitch2D.format = texel.format;
  res.res.pitch2D.numChannels = texel.channels;
  res.res.pitch2D.width = width;
  res.res.pitch2D.height = height;
  res.res.pitch2D.pitchInBytes = pitch_bytes;
  CUDA_TEXTURE_DESC td{};
  td.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP;
  td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  td.filterMode = CU_TR_FILTER_MODE_LINEAR;
  td.flags = 0;  // unnormalised coordinates; reads as float
  check(cu().cuTexObjectCreate(&tex_, &res, &td, nullptr), "cuTexObjectCreate");
  context_ = current_context();
}

}  // namespace fdk::cuda
