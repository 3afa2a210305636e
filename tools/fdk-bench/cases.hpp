// The standard benchmark cases of design/BENCHMARKS.md, for fdk-bench and
// fdk-bench-mpi alike.
#pragma once

namespace fdk_bench {

struct Case {
  const char* name;
  int size, views, det_u, det_v;
};

inline constexpr Case kCases[] = {
    {"a", 512, 360, 512, 512},
    {"b", 1024, 1200, 1024, 1012},
    {"c", 2048, 1200, 2048, 2048},
    {"d", 4096, 2400, 4096, 4096},
    {"cpu", 256, 360, 256, 256},
};

}  // namespace fdk_bench
