// One rank's part of a distributed reconstruction: the composition root
// behind an fdk_mpi_context. It holds the rank's own Reconstruction (its
// planes, its band of rows), the layout every rank agreed on, and the
// exchange of row bands with the other ranks.
#pragma once
#include <fdk/fdk_mpi.h>

#include <array>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fdk/core/error.hpp"
#include "fdk/core/partition.hpp"
#include "deadline.hpp"
#include "fdk/core/reconstruction.hpp"
#include "fdk/core/thread_pool.hpp"
#include "shared_bands.hpp"
#include "wire.hpp"

namespace fdk::mpi {

// What every rank knows about every rank, fixed by fdk_mpi_create.
struct RankShare {
  std::array<int, 2> planes{0, 0};
  int slab_begin = 0, slab_end = 0;
  std::array<int, 2> rows{0, 0};  // for the configured geometry
  double capacity = 0;
  int shared_memory_ranks = 0;  // its bands reach them through shared memory
};

class Rank {
 public:
  // Collective; throws fdk::Error (the same on every rank when any fails).
  // `early`: this rank's argument error found before (a NULL config or
  // out, a bad fdk_mpi_config), which still joins the first exchange, so
  // that the other ranks fail at once naming it instead of waiting for it.
  Rank(const fdk_config* config, const fdk_mpi_config& mpi, MPI_Comm comm, const Error* early);
  ~Rank();  // tells the others when it leaves before a finished round
  Rank(const Rank&) = delete;
  Rank& operator=(const Rank&) = delete;

  void push(int index, const float* pixels, size_t pitch_bytes, const fdk_view* view);
  void finish();  // collective

  int rank() const { return rank_; }
  int slab_count() const { return static_cast<int>(slabs_.size()); }
  fdk_slab_info slab_info(int slab) const;
  int owner(int slab) const;
  fdk_mpi_rank_info rank_info(int rank) const;
  void read_slab(int slab, float* buffer, size_t buffer_bytes);
  fdk_progress progress() const;
  void cancel();

 private:
  struct Sending {
    std::vector<char> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  struct Failure {
    int view, rank;
    fdk_status status;
  };

  void check_index(int slab) const;
  // At create: the shared-memory slots of the ranks on this host
  // (shared_bands.hpp), collective.
  void share_memory();
  // Receives whatever has arrived (bands pushed into the local
  // reconstruction, failure notices, ends of rounds); true when something did.
  bool drain_incoming();
  void handle_view(int source, const std::vector<char>& message);
  void handle_shared_view(int source, const std::vector<char>& message);
  // Pushes a band another rank sent into the local reconstruction; a
  // failure is kept for fdk_mpi_finish and told to the sender.
  void store_band(int source, const ViewHeader& h, const float* rows);
  std::vector<char> take_buffer(size_t bytes);
  void handle_fail(int source, const std::vector<char>& message, bool leave);
  // Frees the sends that completed; their bytes leave the in-flight count.
  void reap_sends();
  // Waits (receiving meanwhile) until `bytes` more fit in flight, or nothing
  // is in flight, and `slots` shared slots are free; throws INVALID_STATE
  // after the timeout without news.
  void make_room(uint64_t bytes, int slots);
  size_t row_bytes() const { return sizeof(float) * static_cast<size_t>(rows_->settings().config.detector.size[0]); }
  // Whether a band of `rows` rows to `to` goes through shared memory.
  bool travels_shared(int to, int rows) const;
  // A band for another rank, copied out of a pushed view, not sent yet:
  // in a shared slot, or in a message's buffer after its header.
  struct Outgoing {
    int to = 0;
    int slot = -1;  // -1: a message
    ViewHeader band;
    std::vector<char> bytes;  // the message (slot < 0)
    char* rows = nullptr;     // where its rows go
  };
  Outgoing prepare_band(int to, bool shared, int index, const fdk_view* view, std::array<int, 2> rows);
  void send(Outgoing& band);
  void drop(Outgoing& band);  // unsent: its slot or buffer is free again
  // Copies rows [rows[0], rows[1]) of a pushed view to `to`, side by side,
  // checking as it goes those outside `own` (this rank's band, which its
  // own push checks); the first bad row, or -1.
  int copy_rows(char* to, const float* pixels, size_t pitch_bytes, std::array<int, 2> rows, std::array<int, 2> own);
  ViewHeader band_header(int index, const fdk_view* view, std::array<int, 2> rows) const;
  void post(int to, int tag, std::vector<char> bytes);
  void notify(int to, int tag, int view, fdk_status status, const std::string& message);
  // The failures other ranks sent about this rank's bands, not yet
  // reported; throws them (the call then did nothing else).
  void report_remote_failures();
  [[noreturn]] void fail_timeout(const std::string& what, const std::vector<int>& missing) const;

  fdk_mpi_config mpi_{};
  MPI_Comm comm_ = MPI_COMM_NULL;  // our duplicate
  int rank_ = 0, size_ = 1;
  int round_ = 0;
  bool round_done_ = false;  // the last fdk_mpi_finish succeeded
  std::unique_ptr<ScanRows> rows_;
  std::vector<RankShare> shares_;
  std::vector<std::array<int, 2>> slabs_;  // the global list
  std::vector<int> slab_owner_;
  std::unique_ptr<Reconstruction> local_;  // null for a rank without planes

  // Checks and copies of a pushed view's rows, side by side: one thread
  // reads a 16 MiB view at a few GB/s, which took as long as the push.
  std::unique_ptr<ThreadPool> pool_;
  // Sending; buffers of completed sends are kept for the next ones (fresh
  // pages cost as much as the copy).
  std::deque<Sending> sending_;
  std::vector<std::vector<char>> spare_;
  uint64_t in_flight_ = 0;
  std::vector<std::vector<unsigned char>> delivered_;  // [view][rank]: sent and not reported failed
  std::unique_ptr<SharedBands> shared_;  // after create: never null

  // Receiving, into one buffer reused (the local push copies out of it).
  std::vector<char> incoming_;
  std::vector<int> ended_;  // per rank: the round it last ended
  std::vector<int> left_;   // per rank: its context is gone
  // The rank whose leaving started it (a rank that goes because another
  // left names that one), and its reason: every rank reports the same.
  int culprit_ = -1;
  std::string culprit_message_;
  [[noreturn]] void fail_left() const;
  Clock::time_point last_news_;
  std::vector<std::pair<Failure, std::string>> remote_failures_;  // about this rank's bands, unreported
  std::set<std::pair<int, int>> reported_;                         // (view, rank) already reported
  std::vector<std::pair<Failure, std::string>> local_failures_;    // bands this rank failed to store, this round
  std::vector<int> received_;  // views received this round
};

}  // namespace fdk::mpi
