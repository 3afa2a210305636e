// fdk-bench-mpi: a standard case (design/BENCHMARKS.md) reconstructed by the
// ranks of an mpirun through libfdk_mpi, end to end: from a barrier before
// the first push to the last slab read on every rank (the slowest rank's
// time). Each rank pushes its share of the views from its own memory (as if
// read from a shared file system), or rank 0 pushes them all (--root 0).
// Compare with fdk-bench's one process on the same GPUs.
//   mpirun -n 2 --bind-to none fdk-bench-mpi --case c [--precision f16]
//          [--root -1|0] [--gpu-of-rank same|own] [--budget-host BYTES]
//          [--budget-gpu BYTES] [--repeats R] [--warmup W] [--pool P] [--idle-rank R]
//          [--threads N]  (fdk_config.num_threads of each rank; 0: the library's choice)
#include <fdk/fdk.h>
#include <fdk/fdk_mpi.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../fdk-bench/cases.hpp"
#include "../fdk-bench/synthetic_projections.hpp"

namespace {

int g_rank = 0, g_size = 1;

struct Options {
  std::string name = "c";
  fdk_bench::Case c{};
  int precision = FDK_PRECISION_FLOAT32;
  int root = FDK_MPI_EVERY_RANK;
  bool own_gpu = true;  // rank r uses GPU r (else every rank GPU 0)
  uint64_t budget_host = 0, budget_gpu = 0;
  int repeats = 3, warmup = 1, pool = 64;
  int idle_rank = -1;  // this rank owns no planes (it only pushes its share)
  int threads = 0;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "fdk-bench-mpi (rank %d): %s\n", g_rank, message.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

uint64_t bytes_of(const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  const std::string unit = end ? end : "";
  const double scale = unit == "GiB" ? 1073741824.0 : unit == "MiB" ? 1048576.0 : 1.0;
  return static_cast<uint64_t>(v * scale);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--case") o.name = next, ++i;
    else if (a == "--precision") o.precision = std::string(next) == "f16" ? FDK_PRECISION_FLOAT16 : FDK_PRECISION_FLOAT32, ++i;
    else if (a == "--root") o.root = std::atoi(next), ++i;
    else if (a == "--gpu-of-rank") o.own_gpu = std::string(next) != "same", ++i;
    else if (a == "--budget-host") o.budget_host = bytes_of(next), ++i;
    else if (a == "--budget-gpu") o.budget_gpu = bytes_of(next), ++i;
    else if (a == "--repeats") o.repeats = std::atoi(next), ++i;
    else if (a == "--warmup") o.warmup = std::atoi(next), ++i;
    else if (a == "--pool") o.pool = std::atoi(next), ++i;
    else if (a == "--idle-rank") o.idle_rank = std::atoi(next), ++i;
    else if (a == "--threads") o.threads = std::atoi(next), ++i;
    else die("unknown option " + a);
  }
  bool found = false;
  for (const auto& c : fdk_bench::kCases)
    if (o.name == c.name) o.c = c, found = true;
  if (!found) die("unknown case " + o.name);
  return o;
}

fdk_config make_config(const Options& o) {
  fdk_config config = fdk_bench::case_geometry(o.c.size, o.c.views, o.c.det_u, o.c.det_v);
  config.precision = o.precision;
  config.host_memory_budget = o.budget_host;
  config.gpu_memory_budget = o.budget_gpu;
  config.num_threads = o.threads;
  config.num_devices = 1;
  config.devices[0] = o.own_gpu ? g_rank : 0;
  return config;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double slowest(double mine) {
  double worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const Options o = parse(argc, argv);
  const fdk_config config = make_config(o);
  fdk_mpi_config mpi;
  fdk_mpi_config_init(&mpi);
  mpi.root = o.root;
  if (g_rank == o.idle_rank) mpi.capacity = -1;

  // The pool of distinct views each pushing rank cycles through.
  const size_t floats = static_cast<size_t>(o.c.det_u) * static_cast<size_t>(o.c.det_v);
  std::vector<std::unique_ptr<float[]>> views;
  const bool pushing = o.root == FDK_MPI_EVERY_RANK || o.root == g_rank;
  for (int p = 0; pushing && p < o.pool; ++p) {
    views.emplace_back(new float[floats]);
    fdk_bench::make_projection(p, o.c.views, o.c.det_u, o.c.det_v, views.back().get());
  }
  std::vector<double> totals;
  for (int run = 0; run < o.warmup + o.repeats; ++run) {
    fdk_mpi_context* ctx = nullptr;
    if (fdk_mpi_create(&config, &mpi, MPI_COMM_WORLD, &ctx) != FDK_OK) die(std::string("create: ") + fdk_mpi_last_create_error());
    fdk_mpi_rank_info info{};
    info.struct_size = sizeof info;
    fdk_mpi_get_rank_info(ctx, g_rank, &info);
    int32_t slabs = 0;
    fdk_mpi_slab_count(ctx, &slabs);
    uint64_t largest = 0;
    for (int32_t s = info.slab_begin; s < info.slab_end; ++s) {
      fdk_slab_info si{};
      si.struct_size = sizeof si;
      fdk_mpi_get_slab_info(ctx, s, &si);
      largest = std::max(largest, si.byte_size);
    }
    void* buffer = nullptr;
    if (largest && fdk_alloc_host(largest, &buffer) != FDK_OK) die("fdk_alloc_host");
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    for (int v = 0; v < o.c.views; ++v)
      if (o.root == g_rank || (o.root == FDK_MPI_EVERY_RANK && v % g_size == g_rank))
        if (fdk_mpi_push_projection(ctx, v, views[static_cast<size_t>(v % o.pool)].get(), 4u * o.c.det_u, nullptr) != FDK_OK)
          die(std::string("push: ") + fdk_mpi_last_error(ctx));
    const double pushed = seconds_since(t0);
    if (fdk_mpi_finish(ctx) != FDK_OK) die(std::string("finish: ") + fdk_mpi_last_error(ctx));
    const double finished = seconds_since(t0);
    for (int32_t s = info.slab_begin; s < info.slab_end; ++s)
      if (fdk_mpi_read_slab(ctx, s, static_cast<float*>(buffer), largest) != FDK_OK)
        die(std::string("read: ") + fdk_mpi_last_error(ctx));
    const double total = seconds_since(t0);
    const double worst = slowest(total), worst_push = slowest(pushed), worst_finish = slowest(finished);
    if (g_rank == 0)
      std::printf("%s run %d: end to end %.3f s (slowest rank; pushes %.3f s, finish returned %.3f s), %d ranks, %d slabs\n",
                  run < o.warmup ? "warm-up" : "timed", run, worst, worst_push, worst_finish, g_size, slabs);
    std::printf("  rank %d: planes [%d, %d) rows [%d, %d) of %d, bands to %d rank(s) through shared memory, own end to "
                "end %.3f s\n",
                g_rank, info.plane_begin, info.plane_end, info.row_begin, info.row_end, o.c.det_v,
                info.shared_memory_ranks, total);
    std::fflush(stdout);
    if (run >= o.warmup) totals.push_back(worst);
    fdk_free_host(buffer);
    fdk_mpi_destroy(ctx);
  }
  if (g_rank == 0 && !totals.empty()) {
    std::sort(totals.begin(), totals.end());
    std::printf("fdk-bench-mpi case %s %s, %d ranks (%s GPU), root %d: median end to end %.3f s over %zu runs\n",
                o.name.c_str(), o.precision == FDK_PRECISION_FLOAT16 ? "f16" : "f32", g_size,
                o.own_gpu ? "own" : "shared", o.root, totals[totals.size() / 2], totals.size());
  }
  MPI_Finalize();
  return 0;
}
