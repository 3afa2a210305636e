// fdk-convert over MPI ranks (see distributed.hpp). libfdk_mpi splits the
// volume and routes each view's row bands; here each rank reads its share of
// the views (view i on rank i % size), the owners of slabs write their TIFF
// slices, single-file formats go through rank 0 slab by slab, and the ranks
// meet at fixed points to agree on one exit code.
#include "distributed.hpp"

#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk_mpi.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "budget.hpp"
#include "ordered_reader.hpp"
#include "outputs.hpp"
#include "inputs.hpp"
#include "preview.hpp"
#include "result_folder.hpp"
#include "progress.hpp"
#include "rank_agreement.hpp"
#include "status_text.hpp"

namespace ad = fdk::adapters;

namespace fdk_convert {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSlabTag = 29;
// MPI counts are int: a slab travels in pieces of at most this many bytes.
constexpr size_t kPieceBytes = size_t(1) << 28;
// How long a rank waits at a meeting for the others (libfdk_mpi's default
// for its own collective calls).
constexpr double kMeetingTimeoutS = 120;

// This rank's first failure; the ranks settle it at their next meeting.
// Not primary: this rank only saw another rank's failure (through the
// library), which that rank reports with its own code.
struct Own {
  int code = 0;
  std::string message;
  bool primary = true;
  void set(int c, const std::string& m, bool first_hand = true) {
    if (code) return;
    code = c;
    message = m;
    primary = first_hand;
  }
  void from_current_exception() {  // inside a catch
    std::string m;
    const int c = exit_code_of_current_exception(&m);
    set(c, with_final_names(m));
  }
};

struct Context {
  fdk_mpi_context* ctx = nullptr;
  ~Context() { fdk_mpi_destroy(ctx); }
};

// A library call that cannot fail unless fdk-convert is wrong.
// `text` as rank `from` has it, on every rank of `comm`.
void broadcast_string(std::string* text, int from, MPI_Comm comm) {
  int length = static_cast<int>(text->size());
  MPI_Bcast(&length, 1, MPI_INT, from, comm);
  text->resize(static_cast<size_t>(length));
  MPI_Bcast(&(*text)[0], length, MPI_CHAR, from, comm);
}

void check(fdk_status s, const char* what, const fdk_mpi_context* ctx) {
  if (s != FDK_OK) {
    throw Failure{kExitInternal, std::string(what) + " failed: " +
                                     fdk_tools::status_text(s, fdk_mpi_last_error(ctx))};
  }
}

class MpiRanks final : public Ranks {
 public:
  explicit MpiRanks(std::string launcher) : launcher_(std::move(launcher)) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);  // the meetings never mix with the caller's traffic
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiRanks() override {
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const { return size_; }
  int run(const Job& job) override;
  int fail(int code, std::string* message) override;

 private:
  void wait_at_meeting(MPI_Request* request, const Own& own);
  void meet(const Own& own);
  void first_meeting(const Own& own, const Job* job);
  [[noreturn]] void settle(const Own& own, int kind, int from);
  std::vector<std::string> gather_text(const std::string& text, const Own& own);
  void send_slab(const std::vector<float>& buffer);
  void receive_slab(std::vector<float>* buffer, int from);

  std::string launcher_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  bool met_ = false;  // past the first meeting: between meetings a failure aborts the job
  bool settled_ = false;
  int settled_code_ = 0, settled_rank_ = -1;
  bool settled_primary_ = false;
  std::string settled_message_;
};

// Waits for `request` at a meeting. A rank that does not come within
// kMeetingTimeoutS ends the job (MPI_Abort): the others cannot know what it
// does.
void MpiRanks::wait_at_meeting(MPI_Request* request, const Own& own) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kMeetingTimeoutS));
  for (int done = 0;;) {
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "fdk-convert: rank %d: the other ranks did not arrive within %g s; ending the job\n",
                   rank_, kMeetingTimeoutS);
      MPI_Abort(MPI_COMM_WORLD, own.code ? own.code : kExitReconstruction);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Every rank says how it fared; when any failed, the lowest rank among those
// that failed on their own (before those that only saw another's failure
// through the library) gives every rank its code and message, and this
// throws that failure.
void MpiRanks::meet(const Own& own) {
  met_ = true;
  int in[2] = {own.code == 0 ? 2 : own.primary ? 0 : 1, rank_};
  int out[2] = {2, 0};
  MPI_Request request;
  MPI_Iallreduce(in, out, 1, MPI_2INT, MPI_MINLOC, comm_, &request);
  wait_at_meeting(&request, own);
  if (out[0] == 2) return;
  settle(own, out[0], out[1]);
}

// After a meeting where rank `from` failed (kind 0: on its own, 1: through
// another's failure): its code and message become every rank's.
void MpiRanks::settle(const Own& own, int kind, int from) {
  int code = own.code;
  MPI_Bcast(&code, 1, MPI_INT, from, comm_);
  std::string message = own.message;
  broadcast_string(&message, from, comm_);
  settled_ = true;
  settled_code_ = code;
  settled_rank_ = from;
  settled_primary_ = kind == 0;
  settled_message_ = message;
  throw Failure{code, message};
}

// The first meeting, before any work: as meet(), and the ranks compare their
// arguments (rank_agreement.hpp). Every rank comes here first, from run()
// with its job or from fail() with its failure (job null), so the first
// collective call is the same on all of them. Each sends one record: how it
// fared, then one digest per argument. A difference is every rank's usage
// error (exit 2) at once; rank 0 fetches the differing values to name them.
void MpiRanks::first_meeting(const Own& given, const Job* job) {
  constexpr int kWords = 1 + kAgreedCount;
  Own own = given;
  std::vector<AgreedValue> values;
  std::vector<uint64_t> mine(kWords, 0), all(static_cast<size_t>(kWords) * size_, 0);
  if (job && !own.code) {
    try {
      values = agreed_values(*job);
      for (int a = 0; a < kAgreedCount; ++a) mine[1 + a] = digest(values[a].text);
    } catch (...) {
      own.from_current_exception();  // told at this meeting like any failure
    }
  }
  mine[0] = own.code == 0 ? 2 : own.primary ? 0 : 1;
  met_ = true;
  MPI_Request request;
  MPI_Iallgather(mine.data(), kWords, MPI_UINT64_T, all.data(), kWords, MPI_UINT64_T, comm_, &request);
  wait_at_meeting(&request, own);
  auto word = [&](int r, int i) { return all[static_cast<size_t>(r) * kWords + i]; };
  int failed = -1;  // as meet's MINLOC: the lowest kind, then the lowest rank
  for (int r = 0; r < size_; ++r) {
    if (word(r, 0) < 2 && (failed < 0 || word(r, 0) < word(failed, 0))) failed = r;
  }
  if (failed >= 0) settle(own, static_cast<int>(word(failed, 0)), failed);

  std::vector<int> differing;
  for (int a = 0; a < kAgreedCount; ++a) {
    for (int r = 1; r < size_; ++r) {
      if (word(r, 1 + a) != word(0, 1 + a)) {
        differing.push_back(a);
        break;
      }
    }
  }
  if (differing.empty()) return;
  const int first = differing[0];
  std::vector<uint64_t> digests(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) digests[r] = word(r, 1 + first);
  const std::vector<std::string> shown = gather_text(values[first].shown, own);
  const std::string message =
      rank_ == 0 ? disagreement_message(first, digests, shown, std::vector<int>(differing.begin() + 1, differing.end()))
                 : std::string("ranks disagree on ") + agreed_name(first);
  settled_ = true;
  settled_code_ = kExitUsage;
  settled_rank_ = 0;
  settled_primary_ = false;  // the job's failure, not rank 0's
  settled_message_ = message;
  throw Failure{kExitUsage, message};
}

// Every rank's `text`, on rank 0 (empty elsewhere), within the meeting's
// time limit.
std::vector<std::string> MpiRanks::gather_text(const std::string& text, const Own& own) {
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(rank_ == 0 ? size_ : 0), offsets(rank_ == 0 ? size_ : 0);
  MPI_Request request;
  MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_, &request);
  wait_at_meeting(&request, own);
  int total = 0;
  for (int r = 0; r < static_cast<int>(lengths.size()); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string joined(static_cast<size_t>(total), '\0');
  MPI_Igatherv(text.data(), length, MPI_CHAR, &joined[0], lengths.data(), offsets.data(), MPI_CHAR, 0, comm_,
               &request);
  wait_at_meeting(&request, own);
  std::vector<std::string> out;
  for (int r = 0; r < static_cast<int>(lengths.size()); ++r) {
    out.push_back(joined.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
  }
  return out;
}

int MpiRanks::fail(int code, std::string* message) {
  if (!settled_ && !met_) {  // before the first meeting: the others are on their way to it
    try {
      Own own;
      own.set(code, *message);
      first_meeting(own, nullptr);
    } catch (const Failure&) {
    }
  }
  if (!settled_) {  // between meetings: the others cannot learn it, the launcher ends them
    std::fprintf(stderr, "fdk-convert: rank %d: %s\n", rank_, message->c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    return code;
  }
  // Rank 0 says it for the job, once (a failure that the library reported
  // on every rank names the rank itself).
  *message = rank_ != 0          ? std::string()
             : settled_primary_ ? "rank " + std::to_string(settled_rank_) + ": " + settled_message_
                                : settled_message_;
  return settled_code_;
}

void MpiRanks::send_slab(const std::vector<float>& buffer) {
  const char* p = reinterpret_cast<const char*>(buffer.data());
  for (size_t left = buffer.size() * sizeof(float); left > 0;) {
    const size_t n = std::min(left, kPieceBytes);
    MPI_Send(p, static_cast<int>(n), MPI_BYTE, 0, kSlabTag, comm_);
    p += n;
    left -= n;
  }
}

void MpiRanks::receive_slab(std::vector<float>* buffer, int from) {
  char* p = reinterpret_cast<char*>(buffer->data());
  for (size_t left = buffer->size() * sizeof(float); left > 0;) {
    const size_t n = std::min(left, kPieceBytes);
    MPI_Recv(p, static_cast<int>(n), MPI_BYTE, from, kSlabTag, comm_, MPI_STATUS_IGNORE);
    p += n;
    left -= n;
  }
}

int MpiRanks::run(const Job& job) {
  const Options& o = job.o;
  const fdk_config& config = job.config;
  const fdk_volume& volume = config.volume;
  auto say = [&](const std::string& text) {
    if (!o.quiet) std::fprintf(stderr, "%s\n", text.c_str());
  };
  first_meeting(Own{}, &job);  // every rank set up alike, with the same arguments

  // ---- the library: one collective create, the same verdict everywhere ----
  fdk_mpi_config mpi_config;
  fdk_mpi_config_init(&mpi_config);
  mpi_config.root = FDK_MPI_EVERY_RANK;
  Context lib;
  if (const fdk_status s = fdk_mpi_create(&config, &mpi_config, MPI_COMM_WORLD, &lib.ctx); s != FDK_OK) {
    // As one process says it: a refused value named by where it came from.
    const Failure f = setup_failure(s, fdk_mpi_last_create_error(), job.origins, config);
    Own failed;
    failed.set(f.code, f.message, /*first_hand=*/false);
    meet(failed);
  }
  int32_t slabs = 0;
  check(fdk_mpi_slab_count(lib.ctx, &slabs), "fdk_mpi_slab_count", lib.ctx);
  std::vector<fdk_mpi_rank_info> ranks(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    ranks[r].struct_size = sizeof ranks[r];
    check(fdk_mpi_get_rank_info(lib.ctx, r, &ranks[r]), "fdk_mpi_get_rank_info", lib.ctx);
  }
  std::vector<fdk_slab_info> slab_info(static_cast<size_t>(slabs));
  std::vector<int32_t> owner(static_cast<size_t>(slabs));
  for (int32_t k = 0; k < slabs; ++k) {
    slab_info[k].struct_size = sizeof slab_info[k];
    check(fdk_mpi_get_slab_info(lib.ctx, k, &slab_info[k]), "fdk_mpi_get_slab_info", lib.ctx);
    check(fdk_mpi_slab_owner(lib.ctx, k, &owner[k]), "fdk_mpi_slab_owner", lib.ctx);
  }
  const int thickness = slabs ? slab_info[0].y_end - slab_info[0].y_begin : 0;
  {
    say("plan: " + std::to_string(size_) + " ranks (" + launcher_ + "), view i read by rank i mod " +
        std::to_string(size_) + "; " + std::to_string(slabs) + " slabs of " + std::to_string(thickness) +
        " planes" + (o.slab_thickness ? " (--slab-thickness)" : " (each rank's own plan)"));
    std::string json_ranks;
    for (int r = 0; r < size_; ++r) {
      const fdk_mpi_rank_info& i = ranks[r];
      say("  rank " + std::to_string(r) + ": planes [" + std::to_string(i.plane_begin) + ", " +
          std::to_string(i.plane_end) + "), slabs [" + std::to_string(i.slab_begin) + ", " +
          std::to_string(i.slab_end) + "), detector rows [" + std::to_string(i.row_begin) + ", " +
          std::to_string(i.row_end) + "), capacity " + fmt("%.3g", i.capacity));
      json_ranks += std::string(r ? "," : "") + "{\"planes\":[" + std::to_string(i.plane_begin) + "," +
                    std::to_string(i.plane_end) + "],\"slabs\":[" + std::to_string(i.slab_begin) + "," +
                    std::to_string(i.slab_end) + "],\"rows\":[" + std::to_string(i.row_begin) + "," +
                    std::to_string(i.row_end) + "],\"capacity\":" + fdk_tools::json_number(i.capacity) + "}";
    }
    if (o.progress == fdk_tools::ProgressStyle::kJson) {
      std::printf("{\"event\":\"plan\",\"ranks\":%d,\"views\":%d,\"detector\":[%d,%d],\"volume\":[%d,%d,%d],"
                  "\"slabs\":%d,\"slab_planes\":%d,\"rank_plans\":[%s]}\n",
                  size_, job.source.count(), config.detector.size[0], config.detector.size[1], volume.size[0],
                  volume.size[1], volume.size[2], slabs, thickness, json_ranks.c_str());
      std::fflush(stdout);
    }
  }

  // ---- outputs: rank 0 checks the folder, then each opens its writer ----
  // TIFF slices: every rank writes its own planes. One file: rank 0 writes
  // it all, the owners sending their slabs in order (one slab in flight per
  // rank), since the TIFF writers lay out strips and directories as they go
  // and cannot take planes out of order.
  const bool single_file = o.format != "tiff";
  const fdk_mpi_rank_info& mine = ranks[rank_];
  Own own;
  OutputSetup output;
  // Rank 0 checks the folder (no input under an output name, one result per
  // folder) and makes the staging folder every rank writes into; it alone
  // publishes the result once every rank has written its part.
  std::unique_ptr<ResultFolder> result;
  try {
    if (rank_ == 0) result = std::make_unique<ResultFolder>(o, output_names(o, volume), InputSet::of(o));
  } catch (...) {
    own.from_current_exception();
  }
  meet(own);
  std::string staging = result ? result->staging() : std::string();
  broadcast_string(&staging, 0, comm_);
  if (!staging.empty()) note_staging(staging, o.output);
  std::unique_ptr<ad::VolumeWriter> writer;
  try {
    prepare_output(o, volume, staging, &output);
    if (!single_file && mine.plane_end > mine.plane_begin) {
      writer = open_writer(o, volume, output, mine.plane_begin, mine.plane_end);
    } else if (single_file && rank_ == 0) {
      writer = open_writer(o, volume, output);
    }
  } catch (...) {
    own.from_current_exception();
  }
  meet(own);

  // ---- this rank's views in; signals cancel this rank's part ----
  std::atomic<bool> stop{false};
  std::thread watchdog([&] {
    while (!stop.load()) {
      if (job.signal.load() || fdk_tools::stdout_lost().load()) {
        fdk_mpi_cancel(lib.ctx);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Joiner() {
      stop = true;
      t.join();
    }
  } joiner{stop, watchdog};
  fdk_tools::Progress progress(o.progress);
  const int count = job.source.count();
  const int share = count > rank_ ? (count - rank_ + size_ - 1) / size_ : 0;
  unsigned long long clamped[2] = {0, 0};  // pixels, views
  try {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const int workers = o.read_threads > 0 ? o.read_threads : static_cast<int>(std::min(4u, hw));
    OrderedReader reader(job.source, workers, workers + 2, rank_, size_);
    progress.stage("projections", "views", share);  // rank 0's share (the names wrappers know)
    const size_t pitch = static_cast<size_t>(config.detector.size[0]) * sizeof(float);
    for (int k = 0; k < share; ++k) {
      if (job.signal.load()) throw Failure{kExitInterrupted, "interrupted"};
      const int i = rank_ + k * size_;
      size_t n = 0;
      const float* pixels = reader.get(k, &n);
      clamped[0] += n;
      clamped[1] += n ? 1 : 0;
      const fdk_status s = fdk_mpi_push_projection(lib.ctx, i, pixels, pitch, nullptr);
      if (s != FDK_OK) {
        const std::string why = fdk_tools::status_text(s, fdk_mpi_last_error(lib.ctx));
        if (s == FDK_ERROR_INVALID_ARGUMENT) throw Failure{kExitInput, job.source.describe(i) + ": " + why};
        if (s == FDK_ERROR_BUDGET) {
          throw Failure{kExitBudget, "pushing " + job.source.describe(i) + " failed: " + why + budget_advice(config)};
        }
        if (s == FDK_ERROR_CANCELLED && !job.signal.load()) {  // another rank stopped
          own.set(kExitReconstruction, "pushing " + job.source.describe(i) + " failed: " + why, false);
          break;
        }
        throw Failure{job.signal.load() ? kExitInterrupted : kExitReconstruction,
                      "pushing " + job.source.describe(i) + " failed: " + why};
      }
      reader.release(k);
      progress.add();
    }
    progress.end_stage();
  } catch (...) {
    own.from_current_exception();
  }
  if (own.code) fdk_mpi_cancel(lib.ctx);  // the others learn it in fdk_mpi_finish
  if (const fdk_status s = fdk_mpi_finish(lib.ctx); s != FDK_OK && !own.code) {
    Own failed;  // another rank's failure, or the library's on every rank
    failed.set(s == FDK_ERROR_CANCELLED && job.signal.load() ? kExitInterrupted
               : s == FDK_ERROR_BUDGET                       ? kExitBudget
                                                             : kExitReconstruction,
               "fdk_mpi_finish failed: " + fdk_tools::status_text(s, fdk_mpi_last_error(lib.ctx)),
               /*first_hand=*/false);
    meet(failed);
  }
  meet(own);
  unsigned long long clamped_all[2] = {0, 0};
  MPI_Reduce(clamped, clamped_all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm_);
  if (clamped_all[0]) {
    progress.message("note: " + std::to_string(clamped_all[0]) + " pixels in " + std::to_string(clamped_all[1]) +
                     " projections had a transmission below the clamp (" +
                     fmt("%g", o.folder.preprocess.min_transmission) + ") and were clamped");
  }

  // ---- slabs out ----
  fdk_tools::PreviewCollector preview(volume, preview_voxel(o, volume));
  std::vector<float> buffer;
  const long long planes_here = single_file ? (rank_ == 0 ? volume.size[1] : 0) : mine.plane_end - mine.plane_begin;
  progress.stage("volume", "planes", planes_here);
  for (int32_t k = 0; k < slabs; ++k) {
    const bool owned = owner[k] == rank_;
    if (!owned && !(single_file && rank_ == 0)) continue;
    const fdk_slab_info& info = slab_info[k];
    buffer.resize(static_cast<size_t>(info.byte_size / sizeof(float)));
    if (owned && !own.code) {
      if (const fdk_status s = fdk_mpi_read_slab(lib.ctx, k, buffer.data(), buffer.size() * sizeof(float));
          s != FDK_OK) {
        own.set(s == FDK_ERROR_CANCELLED && job.signal.load() ? kExitInterrupted : kExitReconstruction,
                "fdk_mpi_read_slab failed: " + fdk_tools::status_text(s, fdk_mpi_last_error(lib.ctx)));
      } else if (o.preview) {
        preview.add_planes(info.y_begin, info.y_end, buffer.data());
      }
    }
    // The slab travels even after a failure, so rank 0 is never left waiting.
    if (single_file && owned && rank_ != 0) send_slab(buffer);
    if (single_file && !owned && rank_ == 0) receive_slab(&buffer, owner[k]);
    if (writer && !own.code) {
      try {
        writer->write_planes(info.y_begin, info.y_end, buffer.data());
      } catch (...) {
        own.from_current_exception();
      }
    }
    if (writer) progress.add(info.y_end - info.y_begin);
  }
  progress.end_stage();
  if (o.preview) {  // each rank's part of the three slices, summed on rank 0
    for (std::vector<float>* panel : preview.panels()) {
      MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : panel->data(), rank_ == 0 ? panel->data() : nullptr,
                 static_cast<int>(panel->size()), MPI_FLOAT, MPI_SUM, 0, comm_);
    }
  }
  if (job.signal.load()) own.set(kExitInterrupted, "interrupted");
  if (fdk_tools::stdout_lost().load()) own.set(kExitOutput, "stdout was closed (its reader went away): the run stopped");
  meet(own);  // every part written: now the files, still in the staging folder
  try {
    if (writer) writer->commit();
  } catch (...) {
    own.from_current_exception();
  }
  std::string preview_path;
  if (o.preview && rank_ == 0 && !own.code) {  // after the volume, as one process writes it
    try {
      CaptionFacts facts;
      fdk_backend_info backends{};
      backends.struct_size = sizeof backends;
      facts.cuda = config.backend == FDK_BACKEND_CUDA ||
                   (config.backend == FDK_BACKEND_AUTO && fdk_get_backend_info(&backends) == FDK_OK &&
                    backends.cuda_usable);
      facts.short_scan = config.short_scan == FDK_ON;
      facts.half_fan = config.offset_detector == FDK_ON;
      facts.have_xml = job.have_xml;
      facts.views = count;
      facts.first_view = job.first_view;
      facts.seconds = std::chrono::duration<double>(Clock::now() - job.start).count();
      std::vector<std::string> caption = preview_caption(o, config, facts);
      caption.back() += ", " + std::to_string(size_) + " ranks";
      const fdk_tools::PreviewWritten written =
          preview.write(ad::join_path(staging, "preview"), o.have_window ? o.window_lo : 0,
                        o.have_window ? o.window_hi : 0, caption, output.preview_fault);
      preview_path = ad::join_path(o.output, fdk_tools::preview_file_name());
      const std::array<double, 3> at = preview.crossing_mm();
      if (!o.quiet) {
        progress.message("preview: '" + preview_path + "', slices crossing at (" + fmt("%.4g", at[0]) + ", " +
                         fmt("%.4g", at[1]) + ", " + fmt("%.4g", at[2]) + ") mm, window [" +
                         fmt("%.4g", written.lo) + ", " + fmt("%.4g", written.hi) + "] per mm");
      }
    } catch (...) {
      own.from_current_exception();
    }
  }
  meet(own);
  // Every file is complete: now, and only now, the final names.
  std::vector<std::string> removed;
  if (rank_ == 0 && fdk_tools::stdout_lost().load()) {
    own.set(kExitOutput, "stdout was closed (its reader went away): the run stopped");
  }
  if (rank_ == 0 && !own.code) {
    try {
      removed = result->publish();
    } catch (...) {
      own.from_current_exception();
    }
  }
  meet(own);
  progress.stop();
  if (!removed.empty() && (!o.quiet || progress.json())) {
    progress.message(removed_message(o.output, removed));
  }
  const std::vector<std::string> outputs = final_outputs(o, volume);
  if (rank_ == 0) {
    const double seconds = std::chrono::duration<double>(Clock::now() - job.start).count();
    std::string files;
    for (const std::string& f : outputs) files += (files.empty() ? "" : ",") + fdk_tools::json_string(f);
    progress.event("{\"event\":\"done\",\"seconds\":" + fdk_tools::json_number(seconds) + ",\"ranks\":" +
                   std::to_string(size_) + ",\"outputs\":[" + files + "],\"preview\":" +
                   (preview_path.empty() ? std::string("null") : fdk_tools::json_string(preview_path)) + "}");
    say("done in " + fmt("%.1f", seconds) + " s on " + std::to_string(size_) + " ranks: " +
        (outputs.size() > 1 ? "'" + outputs.front() + "' .. '" + outputs.back() + "'" : "'" + outputs.front() + "'") +
        (preview_path.empty() ? "" : ", preview '" + preview_path + "'"));
  }
  return kExitOk;
}

}  // namespace

std::unique_ptr<Ranks> join_ranks(const Launch& launch) {
  if (launch.launcher.empty() || launch.size == 1) return nullptr;
  auto ranks = std::make_unique<MpiRanks>(launch.launcher);
  if (ranks->size() == 1) return nullptr;  // a PMIx launch of one rank: MPI finalised, a plain run
  return ranks;
}

}  // namespace fdk_convert
