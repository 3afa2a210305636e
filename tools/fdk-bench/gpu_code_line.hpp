// The benchmark's "gpu code" line: which code of the library each GPU ran
// (fdk_get_backend_info), so a figure says whether it measured the machine
// code built for the GPU or PTX the driver compiled.
#pragma once
#include <fdk/fdk.h>

#include <string>

inline std::string gpu_code_line() {
  fdk_backend_info info{};
  info.struct_size = sizeof info;
  if (fdk_get_backend_info(&info) != FDK_OK) return std::string("unknown: ") + fdk_last_create_error();
  std::string text;
  for (int d = 0; d < info.num_devices && d < FDK_MAX_DEVICES; ++d) {
    const int cc = info.compute_capability[d];
    text += (d ? "; " : "") + std::to_string(d) + ": ";
    text += info.code[d] == FDK_GPU_CODE_SASS  ? "SASS sm_" + std::to_string(info.code_arch[d])
            : info.code[d] == FDK_GPU_CODE_JIT ? "JIT from compute_" + std::to_string(info.code_arch[d])
                                               : std::string("none");
    text += " on " + std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  }
  std::string sass;
  for (int i = 0; i < info.num_sass; ++i) sass += (i ? "," : "") + std::to_string(info.sass[i]);
  return text + " (library: SASS " + (sass.empty() ? "none" : sass) + ", PTX " +
         (info.ptx ? std::to_string(info.ptx) : std::string("none")) + ")";
}
