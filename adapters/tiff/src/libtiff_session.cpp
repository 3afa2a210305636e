// libtiff plumbing shared by the TIFF reader and writer
// (libtiff_session.hpp).
#include "libtiff_session.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#if defined(TIFFLIB_VERSION) && TIFFLIB_VERSION >= 20221213
#define FDK_TIFF_PER_FILE_HANDLERS 1
#else
#define FDK_TIFF_PER_FILE_HANDLERS 0
#endif

namespace fdk {
namespace adapters {
namespace tiff_detail {
namespace {

std::string vformat(const char* module, const char* fmt, va_list ap) {
  char buffer[1024];
  std::vsnprintf(buffer, sizeof buffer, fmt, ap);
  std::string text = buffer;
  if (module && *module && text.find(module) == std::string::npos) {
    text = std::string(module) + ": " + text;
  }
  return text;
}

#if FDK_TIFF_PER_FILE_HANDLERS
int error_handler(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* sink = static_cast<MessageSink*>(user);
  if (sink && sink->first_error.empty()) sink->first_error = vformat(module, fmt, ap);
  return 1;  // handled: libtiff prints nothing
}
int warning_handler(TIFF*, void*, const char*, const char*, va_list) { return 1; }
#else
// Older libtiff has only process-wide handlers: silence them (the library
// must not print) and keep the last error per thread.
thread_local std::string g_last_error;
void global_error(const char* module, const char* fmt, va_list ap) {
  if (g_last_error.empty()) g_last_error = vformat(module, fmt, ap);
}
void global_warning(const char*, const char*, va_list) {}
void install_global_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    TIFFSetErrorHandler(global_error);
    TIFFSetWarningHandler(global_warning);
  });
}
#endif

struct TiffOptions {
#if FDK_TIFF_PER_FILE_HANDLERS
  explicit TiffOptions(MessageSink* sink) : opts(TIFFOpenOptionsAlloc()) {
    TIFFOpenOptionsSetErrorHandlerExtR(opts, error_handler, sink);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, warning_handler, nullptr);
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, tmsize_t(1) << 31);
  }
  ~TiffOptions() { TIFFOpenOptionsFree(opts); }
  TIFFOpenOptions* opts;
#else
  explicit TiffOptions(MessageSink*) { install_global_handlers(); }
#endif
};

}  // namespace

TIFF* client_open(const char* name, const char* mode, thandle_t handle, TIFFReadWriteProc rd,
                  TIFFReadWriteProc wr, TIFFSeekProc sk, TIFFCloseProc cl, TIFFSizeProc sz,
                  TIFFMapFileProc mp, TIFFUnmapFileProc um, MessageSink* sink) {
  TiffOptions options(sink);
#if FDK_TIFF_PER_FILE_HANDLERS
  return TIFFClientOpenExt(name, mode, handle, rd, wr, sk, cl, sz, mp, um, options.opts);
#else
  g_last_error.clear();
  TIFF* t = TIFFClientOpen(name, mode, handle, rd, wr, sk, cl, sz, mp, um);
  if (sink) sink->first_error = g_last_error;
  return t;
#endif
}

std::string take_message(MessageSink& sink) {
#if !FDK_TIFF_PER_FILE_HANDLERS
  if (sink.first_error.empty()) sink.first_error = g_last_error;
  g_last_error.clear();
#endif
  std::string m = sink.first_error.empty() ? std::string("libtiff reported no reason")
                                           : sink.first_error;
  sink.reset();
  return m;
}

size_t bytes_of(SampleType t) {
  switch (t) {
    case SampleType::kUInt8: return 1;
    case SampleType::kUInt16: return 2;
    default: return 4;
  }
}

int map_nothing(thandle_t, void**, toff_t*) { return 0; }
void unmap_nothing(thandle_t, void*, toff_t) {}

template <typename T>
void convert(const unsigned char* src, size_t count, float* dst) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<float>(v);
  }
}

void convert_samples(SampleType type, const unsigned char* src, size_t count, float* dst) {
  switch (type) {
    case SampleType::kUInt8: convert<uint8_t>(src, count, dst); break;
    case SampleType::kUInt16: convert<uint16_t>(src, count, dst); break;
    case SampleType::kUInt32: convert<uint32_t>(src, count, dst); break;
    case SampleType::kFloat32: convert<float>(src, count, dst); break;
    default: break;  // page_info() yields no other type
  }
}

}  // namespace tiff_detail
}  // namespace adapters
}  // namespace fdk
