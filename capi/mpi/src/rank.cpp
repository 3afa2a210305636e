#include "rank.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <new>

#include "backend_choice.hpp"
#include "capacity.hpp"
#include "fdk/core/checked.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/pixel_check.hpp"
#include "fingerprint.hpp"
#include "host_cores.hpp"
#include "verdicts.hpp"
#include "wire.hpp"

namespace fdk::mpi {

namespace {

std::string status_text(const Error& e) { return std::string(status_name(e.code())) + ": " + e.what(); }

// Runs `step`, turning its failure into this rank's verdict.
template <class Step>
Verdict verdict_of(Step&& step) {
  Verdict v;
  try {
    step(v);
  } catch (const Error& e) {
    v.status = e.code();
    v.message = status_text(e);
  } catch (const std::bad_alloc&) {
    v.status = FDK_ERROR_OUT_OF_MEMORY;
    v.message = "FDK_ERROR_OUT_OF_MEMORY: out of host memory";
  } catch (const std::exception& e) {
    // Any failure must reach the exchange: a rank that left it would make
    // the others wait for their timeout.
    v.status = FDK_ERROR_INTERNAL;
    v.message = std::string("FDK_ERROR_INTERNAL: internal error: ") + e.what();
  }
  return v;
}

// The communicator duplicate, freed if construction fails half way.
struct CommGuard {
  MPI_Comm* comm;
  bool keep = false;
  ~CommGuard() {
    if (!keep && *comm != MPI_COMM_NULL) MPI_Comm_free(comm);
  }
};

}  // namespace

Rank::Rank(const fdk_config* given, const fdk_mpi_config& mpi, MPI_Comm comm, const Error* early) : mpi_(mpi) {
  int flag = 0;
  MPI_Initialized(&flag);
  if (!flag) fail(FDK_ERROR_INVALID_STATE, "MPI is not initialised: call MPI_Init before fdk_mpi_create");
  MPI_Finalized(&flag);
  if (flag) fail(FDK_ERROR_INVALID_STATE, "MPI is already finalised");
  if (comm == MPI_COMM_NULL) fail(FDK_ERROR_INVALID_ARGUMENT, "comm is MPI_COMM_NULL");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  std::vector<MPI_Request> request(1);
  check_mpi(MPI_Comm_idup(comm, &comm_, &request[0]), "MPI_Comm_idup");
  CommGuard guard{&comm_};
  wait_all(request, mpi_.timeout_s, "fdk_mpi_create");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);

  // 1. Each rank's configuration checked, its capacity, and what must agree.
  Verdict mine = verdict_of([&](Verdict& v) {
    if (early) throw *early;
    if (!given) fail(FDK_ERROR_INVALID_ARGUMENT, "config is NULL");
    if (mpi_.root != FDK_MPI_EVERY_RANK && (mpi_.root < 0 || mpi_.root >= size_))
      fail(FDK_ERROR_INVALID_ARGUMENT, "fdk_mpi_config.root " + std::to_string(mpi_.root) + " is not a rank of the " +
                                           std::to_string(size_) + " (or FDK_MPI_EVERY_RANK)");
    rows_ = std::make_unique<ScanRows>(*given);
    v.data = fingerprint(rows_->settings().config, given->scan, mpi_);
    // After the fingerprint: the capacity (2 words), the host (2), whether
    // the capacity counts the host's cores by default (then it becomes the
    // rank's share of them, once the ranks on each host are known), and
    // the cores this rank is bound to.
    const MeasuredCapacity measured = mpi_.capacity == 0 ? measured_capacity(rows_->settings()) : MeasuredCapacity{};
    const double capacity = mpi_.capacity > 0 ? mpi_.capacity : mpi_.capacity < 0 ? 0 : measured.value;
    int32_t words[2];
    std::memcpy(words, &capacity, sizeof capacity);
    v.data.push_back(words[0]);
    v.data.push_back(words[1]);
    for (int32_t w : host_identity()) v.data.push_back(w);
    v.data.push_back(measured.default_cpu_threads ? 1 : 0);
    v.data.push_back(bound_cores());
  });
  auto verdicts = gather_verdicts(comm_, mine, mpi_.timeout_s, "fdk_mpi_create");
  throw_if_any_failed(verdicts);
  const auto& groups = fingerprint_groups();
  for (int r = 1; r < size_; ++r)
    for (size_t g = 0; g < groups.size(); ++g)
      if (verdicts[static_cast<size_t>(r)].data[g] != verdicts[0].data[g])
        fail(FDK_ERROR_INVALID_ARGUMENT,
             "rank " + std::to_string(r) + "'s " + groups[g] +
                 " differs from rank 0's: every rank must pass the same volume, detector, scan, filter and "
                 "precision, slab_thickness and fdk_mpi_config.root (budgets, backend, devices and threads may "
                 "differ); or the ranks passed different communicators");
  std::vector<double> capacity(static_cast<size_t>(size_));
  const size_t at_host = groups.size() + 2, at_cores = at_host + 2;
  for (int r = 0; r < size_; ++r)
    if (verdicts[static_cast<size_t>(r)].data.size() != at_cores + 2)
      fail(FDK_ERROR_INVALID_ARGUMENT, "rank " + std::to_string(r) + " runs another version of libfdk_mpi (its " +
                                           "exchange at fdk_mpi_create has " +
                                           std::to_string(verdicts[static_cast<size_t>(r)].data.size()) +
                                           " words, not " + std::to_string(at_cores + 2) + ")");
  const auto host_of = [&](int r) {
    const auto& d = verdicts[static_cast<size_t>(r)].data;
    return std::make_pair(d[at_host], d[at_host + 1]);
  };
  std::map<std::pair<int32_t, int32_t>, int> ranks_on;
  for (int r = 0; r < size_; ++r) ++ranks_on[host_of(r)];
  for (int r = 0; r < size_; ++r) {
    const auto& d = verdicts[static_cast<size_t>(r)].data;
    double& cap = capacity[static_cast<size_t>(r)];
    std::memcpy(&cap, &d[groups.size()], sizeof(double));
    if (d[at_cores]) cap = share_of_host(static_cast<int>(cap), d[at_cores + 1], ranks_on[host_of(r)]);
  }
  const int ranks_here = ranks_on[host_of(rank_)];
  fdk_config config = *given;
  if (config.num_threads == 0) config.num_threads = default_threads(ranks_here);
  const fdk_config& c = rows_->settings().config;
  // Ranges start on multiples of the slab thickness (so that the slabs, and
  // the bits, are one process's), or of 16 planes: the CUDA backend's
  // resident chunks tile a range only on multiples of 16.
  constexpr int kAutomaticUnit = 16;
  const int unit = c.slab_thickness > 0 ? c.slab_thickness : kAutomaticUnit;
  // 2. Each rank's reconstruction of its planes, and its slabs. A rank
  // whose budget cannot hold its share (BUDGET at create, or a store that
  // would not hold every view at the configured precision, which would
  // reduce views to float16 and so change the bits) gets half its share
  // and the others take the rest, while their room allows; then a store
  // that may reduce is accepted as on one machine, and BUDGET fails the
  // create naming the ranks.
  constexpr int kMaxRebalances = 12;
  std::vector<int> cap(static_cast<size_t>(size_), std::numeric_limits<int>::max());
  std::vector<std::array<int, 2>> planes;
  std::vector<Verdict> verdicts_2;
  for (int attempt = 0;; ++attempt) {
    planes = split_planes(c.volume.size[1], unit, capacity, cap);
    const auto& my = planes[static_cast<size_t>(rank_)];
    local_.reset();
    Verdict second = verdict_of([&](Verdict& v) {
      v.data.push_back(1);  // holds every view
      if (my[0] < my[1]) {
        local_ = std::make_unique<Reconstruction>(config, capi::choose_backend, Part{my[0], my[1]});
        v.data[0] = local_->store_holds_every_view() ? 1 : 0;
        for (const auto& slab : local_->model().slabs) {
          v.data.push_back(slab[0]);
          v.data.push_back(slab[1]);
        }
      }
    });
    verdicts_2 = gather_verdicts(comm_, second, mpi_.timeout_s, "fdk_mpi_create");
    std::vector<int> wants_less;
    bool other = false;
    for (int r = 0; r < size_; ++r) {
      const Verdict& v = verdicts_2[static_cast<size_t>(r)];
      other |= v.status != FDK_OK && v.status != FDK_ERROR_BUDGET;
      if (v.status == FDK_ERROR_BUDGET || (v.status == FDK_OK && !v.data.empty() && v.data[0] == 0))
        wants_less.push_back(r);
    }
    if (wants_less.empty() || other || attempt == kMaxRebalances) break;
    std::vector<int> next = cap;
    bool shrunk = false;
    for (int r : wants_less) {
      const int had = planes[static_cast<size_t>(r)][1] - planes[static_cast<size_t>(r)][0];
      const int halved = had / 2 / unit * unit;
      if (halved >= unit) {
        next[static_cast<size_t>(r)] = halved;
        shrunk = true;
      }
    }
    long long room = 0;
    for (int r = 0; r < size_; ++r)
      if (capacity[static_cast<size_t>(r)] > 0)
        room += std::min<long long>(next[static_cast<size_t>(r)], c.volume.size[1]);
    if (!shrunk || room < c.volume.size[1]) break;
    cap = next;
  }
  // The verdicts' first word was the store's fit; the slabs follow.
  for (auto& v : verdicts_2)
    if (!v.data.empty()) v.data.erase(v.data.begin());
  verdicts = verdicts_2;
  throw_if_any_failed(verdicts);
  shares_.resize(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    RankShare& s = shares_[static_cast<size_t>(r)];
    s.planes = planes[static_cast<size_t>(r)];
    s.capacity = capacity[static_cast<size_t>(r)];
    s.rows = rows_->rows(s.planes[0], s.planes[1]);
    s.slab_begin = static_cast<int>(slabs_.size());
    const auto& d = verdicts[static_cast<size_t>(r)].data;
    for (size_t i = 0; i + 1 < d.size(); i += 2) {
      slabs_.push_back({d[i], d[i + 1]});
      slab_owner_.push_back(r);
    }
    s.slab_end = static_cast<int>(slabs_.size());
  }
  delivered_.assign(static_cast<size_t>(rows_->num_views()), std::vector<unsigned char>(static_cast<size_t>(size_), 0));
  ended_.assign(static_cast<size_t>(size_), 0);
  left_.assign(static_cast<size_t>(size_), 0);
  pool_ = std::make_unique<ThreadPool>(std::min(8, std::max(1, config.num_threads)));
  share_memory();
  guard.keep = true;
}

void Rank::share_memory() {
  // A rank that pushes sends each other rank its rows: its slots hold the
  // largest band of the configured geometry (a larger one, from a measured
  // view geometry, travels as a message), as many as the in-flight bytes
  // allow, and at least one for every other rank.
  const bool sends = size_ > 1 && (mpi_.root == FDK_MPI_EVERY_RANK || mpi_.root == rank_);
  const char* setting = std::getenv("FDK_MPI_SHARED_MEMORY");
  const bool wanted = !(setting && std::strcmp(setting, "0") == 0);
  const size_t row_bytes = this->row_bytes();
  size_t largest = 0;
  for (int r = 0; r < size_; ++r) {
    const auto& rows = shares_[static_cast<size_t>(r)].rows;
    if (r != rank_ && rows[1] > rows[0]) largest = std::max(largest, row_bytes * static_cast<size_t>(rows[1] - rows[0]));
  }
  int slots = 0;
  if (sends && wanted && largest > 0)
    slots = std::max(size_ - 1, static_cast<int>(std::min<uint64_t>(64, mpi_.max_in_flight_bytes / largest)));
  Verdict described = verdict_of([&](Verdict& v) {
    shared_ = std::make_unique<SharedBands>(size_, largest, slots);
    v.data = shared_->describe();
  });
  const auto descriptions = gather_verdicts(comm_, described, mpi_.timeout_s, "fdk_mpi_create");
  throw_if_any_failed(descriptions);
  Verdict mapped = verdict_of([&](Verdict& v) {
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && wanted && shared_->map(r, descriptions[static_cast<size_t>(r)].data)) v.data.push_back(r);
  });
  const auto maps = gather_verdicts(comm_, mapped, mpi_.timeout_s, "fdk_mpi_create");
  throw_if_any_failed(maps);
  for (int r = 0; r < size_; ++r)
    for (int32_t source : maps[static_cast<size_t>(r)].data) {
      if (source >= 0 && source < size_) ++shares_[static_cast<size_t>(source)].shared_memory_ranks;
      if (source == rank_) shared_->set_reaches(r);
    }
  shared_->unlink_own();
}

Rank::~Rank() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || comm_ == MPI_COMM_NULL) return;
  // A rank that goes because another left passes that one on (the LEAVE's
  // index is the culprit), so that no rank blames a consequence.
  if (!round_done_)
    for (int r = 0; r < size_; ++r)
      if (r != rank_)
        notify(r, kTagLeave, culprit_ >= 0 ? culprit_ : rank_, FDK_ERROR_INVALID_STATE,
               culprit_ >= 0 ? culprit_message_ : "its context was destroyed before fdk_mpi_finish succeeded");
  // Sends nobody will receive are cancelled; a buffer whose send neither
  // completes nor cancels within a second is left allocated (MPI may still
  // read it) rather than freed under it.
  for (auto& s : sending_) MPI_Cancel(&s.request);
  const auto until = Clock::now() + std::chrono::seconds(1);
  while (!sending_.empty() && Clock::now() < until) {
    reap_sends();
    pause_briefly();
  }
  for (auto& s : sending_) new std::vector<char>(std::move(s.bytes));  // deliberately leaked, see above
  sending_.clear();
  MPI_Comm_free(&comm_);
}

void Rank::report_remote_failures() {
  if (culprit_ >= 0) fail_left();
  if (remote_failures_.empty()) return;
  std::string message;
  fdk_status status = FDK_OK;
  for (const auto& [f, text] : remote_failures_) {
    if (!message.empty()) message += "; ";
    message += "projection " + std::to_string(f.view) + " was not stored on rank " + std::to_string(f.rank) + ": " + text;
    if (status == FDK_OK) status = f.status;
  }
  remote_failures_.clear();
  fail(status, message);
}

void Rank::push(int index, const float* pixels, size_t pitch_bytes, const fdk_view* view) {
  if (mpi_.root != FDK_MPI_EVERY_RANK && rank_ != mpi_.root)
    fail(FDK_ERROR_INVALID_STATE, "fdk_mpi_push_projection on rank " + std::to_string(rank_) +
                                      ": projections enter on rank " + std::to_string(mpi_.root) +
                                      " (fdk_mpi_config.root)");
  if (round_done_) fail(FDK_ERROR_INVALID_STATE, "fdk_mpi_push_projection after fdk_mpi_finish");
  drain_incoming();
  reap_sends();
  report_remote_failures();
  const fdk_config& c = rows_->settings().config;
  if (index < 0 || index >= rows_->num_views())
    fail(FDK_ERROR_OUT_OF_RANGE, "projection index " + std::to_string(index) + " is outside [0, " +
                                     std::to_string(rows_->num_views()) + ")");
  if (!pixels) fail(FDK_ERROR_INVALID_ARGUMENT, "pixels is NULL");
  const int nu = c.detector.size[0], nv = c.detector.size[1];
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(nu);
  if (pitch_bytes < row_bytes || pitch_bytes % sizeof(float) != 0 ||
      !strided_span_fits(pixels, static_cast<size_t>(nv), pitch_bytes, row_bytes))
    fail(FDK_ERROR_INVALID_ARGUMENT, "row_pitch_bytes " + std::to_string(pitch_bytes) +
                                         " must be a multiple of 4, at least 4 * " + std::to_string(nu) +
                                         ", and keep the last row within the address space");
  const IndexMatrix m = view ? rows_->matrix(*view) : rows_->configured(index);
  // Who still needs this view (a view pushed again goes where it failed).
  auto& delivered = delivered_[static_cast<size_t>(index)];
  if (local_ && delivered[static_cast<size_t>(rank_)]) {
    const fdk_view_state state = local_->view_state(index, nullptr);
    if (state == FDK_VIEW_ABSENT || state == FDK_VIEW_FAILED) delivered[static_cast<size_t>(rank_)] = 0;
  }
  struct Target {
    int rank;
    std::array<int, 2> rows;
    bool shared;  // through a shared slot, not a message
  };
  std::vector<Target> targets;
  uint64_t remote_bytes = 0;
  int slots = 0;
  for (int r = 0; r < size_; ++r) {
    const RankShare& s = shares_[static_cast<size_t>(r)];
    if (delivered[static_cast<size_t>(r)] || s.planes[0] >= s.planes[1]) continue;
    const auto rows = rows_->rows(m, s.planes[0], s.planes[1]);
    if (rows[0] >= rows[1]) continue;
    const bool shared = r != rank_ && travels_shared(r, rows[1] - rows[0]);
    targets.push_back({r, rows, shared});
    if (shared)
      ++slots;
    else if (r != rank_)
      remote_bytes += sizeof(ViewHeader) + row_bytes * static_cast<size_t>(rows[1] - rows[0]);
  }
  if (targets.empty())
    fail(FDK_ERROR_DUPLICATE, "projection " + std::to_string(index) + " was already pushed (every rank that needs it has it)");
  if (remote_bytes + sizeof(ViewHeader) > (uint64_t{1} << 31) - 1)
    fail(FDK_ERROR_UNSUPPORTED, "a band of projection " + std::to_string(index) + " exceeds 2 GiB, more than one MPI message carries");
  // The rows other ranks get are checked here, before anything leaves: a
  // band with a bad pixel must not reach a rank (this rank's own band is
  // checked by its push). They are checked as they are copied out: one
  // read of them, where a check before the copy took as long as the copy
  // (docs/PERFORMANCE.md, session 42).
  std::array<int, 2> own{0, 0};
  for (const Target& t : targets)
    if (t.rank == rank_) own = t.rows;
  make_room(remote_bytes, slots);
  // Nothing leaves until this rank's own band is in: when either fails,
  // the bands copied out are dropped unsent.
  std::vector<Outgoing> out;
  try {
    int bad_row = -1;
    for (const Target& t : targets)
      if (t.rank != rank_) {
        out.push_back(prepare_band(t.rank, t.shared, index, view, t.rows));
        const int bad = copy_rows(out.back().rows, pixels, pitch_bytes, t.rows, own);
        if (bad >= 0 && (bad_row < 0 || bad < bad_row)) bad_row = bad;
      }
    if (bad_row >= 0) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const char*>(pixels) + pitch_bytes * static_cast<size_t>(bad_row));
      for (int i = 0; i < nu; ++i)
        if (!acceptable(row[i])) fail_bad_pixel(index, row[i], i, bad_row);
    }
    for (const Target& t : targets)
      if (t.rank == rank_) {
        local_->push_rows(index, t.rows[0], t.rows[1],
                          reinterpret_cast<const float*>(reinterpret_cast<const char*>(pixels) + pitch_bytes * static_cast<size_t>(t.rows[0])),
                          pitch_bytes, view);
        delivered[static_cast<size_t>(t.rank)] = 1;
      }
  } catch (...) {
    for (Outgoing& o : out) drop(o);
    throw;
  }
  for (Outgoing& o : out) {
    send(o);
    delivered[static_cast<size_t>(o.to)] = 1;
  }
}

// ---- receiving ----------------------------------------------------------------

bool Rank::drain_incoming() {
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &status), "MPI_Iprobe");
    if (!flag) return any;
    any = true;
    last_news_ = Clock::now();
    int bytes = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
    std::vector<char>& message = incoming_;
    message.resize(static_cast<size_t>(std::max(bytes, 0)));
    check_mpi(MPI_Recv(message.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
    switch (status.MPI_TAG) {
      case kTagView: handle_view(status.MPI_SOURCE, message); break;
      case kTagSharedView: handle_shared_view(status.MPI_SOURCE, message); break;
      case kTagSlotFree: {
        SlotHeader h;
        if (message.size() >= sizeof h) {
          std::memcpy(&h, message.data(), sizeof h);
          shared_->give_back(h.slot);
        }
        break;
      }
      case kTagFail: handle_fail(status.MPI_SOURCE, message, false); break;
      case kTagLeave: handle_fail(status.MPI_SOURCE, message, true); break;
      case kTagEnd: {
        EndHeader h;
        if (message.size() >= sizeof h) {
          std::memcpy(&h, message.data(), sizeof h);
          ended_[static_cast<size_t>(status.MPI_SOURCE)] = h.round;
        }
        break;
      }
      default: break;
    }
  }
}

void Rank::handle_view(int source, const std::vector<char>& message) {
  ViewHeader h;
  if (message.size() < sizeof h) return;
  std::memcpy(&h, message.data(), sizeof h);
  store_band(source, h, reinterpret_cast<const float*>(message.data() + sizeof h));
}

void Rank::handle_shared_view(int source, const std::vector<char>& message) {
  SharedViewHeader h;
  if (message.size() < sizeof h) return;
  std::memcpy(&h, message.data(), sizeof h);
  const int count = h.band.row_end - h.band.row_begin;
  const char* rows = count > 0 ? shared_->received(source, h.slot, h.stamp, row_bytes() * static_cast<size_t>(count)) : nullptr;
  if (rows) {
    store_band(source, h.band, reinterpret_cast<const float*>(rows));
  } else {
    // Never seen: the stamp is written after the rows, before the message.
    const std::string text = "FDK_ERROR_INTERNAL: internal error: rank " + std::to_string(rank_) +
                             " could not read the band of projection " + std::to_string(h.band.index) +
                             " from rank " + std::to_string(source) + "'s shared memory";
    received_.push_back(h.band.index);
    local_failures_.push_back({{h.band.index, rank_, FDK_ERROR_INTERNAL}, text});
    notify(source, kTagFail, h.band.index, FDK_ERROR_INTERNAL, text);
  }
  SlotHeader back;
  back.slot = h.slot;
  std::vector<char> bytes(sizeof back);
  std::memcpy(bytes.data(), &back, sizeof back);
  post(source, kTagSlotFree, std::move(bytes));
}

void Rank::store_band(int source, const ViewHeader& h, const float* rows) {
  received_.push_back(h.index);
  const fdk_view* view = h.has_view ? &h.view : nullptr;
  const size_t pitch = row_bytes();
  auto push = [&] {
    if (!local_) fail(FDK_ERROR_INTERNAL, "a band reached a rank without planes");
    local_->push_rows(h.index, h.row_begin, h.row_end, rows, pitch, view);
  };
  try {
    push();
    return;
  } catch (const Error& e) {
    local_failures_.push_back({{h.index, rank_, e.code()}, status_text(e)});
    // The push that reports earlier views' failures does nothing else:
    // this one then goes in again.
    if (local_ && local_->view_state(h.index, nullptr) != FDK_VIEW_ABSENT) return;
    if (e.code() == FDK_ERROR_INVALID_ARGUMENT || e.code() == FDK_ERROR_DUPLICATE || e.code() == FDK_ERROR_OUT_OF_RANGE) {
      notify(source, kTagFail, h.index, e.code(), status_text(e));
      return;
    }
  }
  try {
    push();
  } catch (const Error& e) {
    local_failures_.push_back({{h.index, rank_, e.code()}, status_text(e)});
    notify(source, kTagFail, h.index, e.code(), status_text(e));
  }
}

void Rank::handle_fail(int source, const std::vector<char>& message, bool leave) {
  FailHeader h;
  if (message.size() < sizeof h) return;
  std::memcpy(&h, message.data(), sizeof h);
  const std::string text(message.data() + sizeof h, std::min<size_t>(message.size() - sizeof h, static_cast<size_t>(std::max(0, h.length))));
  if (leave) {
    left_[static_cast<size_t>(source)] = 1;
    if (culprit_ < 0) {
      culprit_ = h.index >= 0 && h.index < size_ ? h.index : source;
      culprit_message_ = text;
    }
    return;
  }
  if (h.index >= 0 && h.index < rows_->num_views()) delivered_[static_cast<size_t>(h.index)][static_cast<size_t>(source)] = 0;
  if (reported_.insert({h.index, source}).second) remote_failures_.push_back({{h.index, source, static_cast<fdk_status>(h.status)}, text});
}

// ---- the collective end of a round ----------------------------------------------

void Rank::fail_left() const {
  fail(FDK_ERROR_INVALID_STATE, "rank " + std::to_string(culprit_) + " left: " + culprit_message_);
}

void Rank::fail_timeout(const std::string& what, const std::vector<int>& missing) const {
  std::string names;
  for (int r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
  fail(FDK_ERROR_INVALID_STATE, what + ": rank" + (missing.size() > 1 ? "s " : " ") + names +
                                    " did not reach fdk_mpi_finish within " +
                                    std::to_string(static_cast<long long>(mpi_.timeout_s)) +
                                    " s of the last message (stopped, crashed or called something else); end "
                                    "the job (MPI_Abort)");
}

void Rank::finish() {
  if (round_done_) fail(FDK_ERROR_INVALID_STATE, "fdk_mpi_finish was already called");
  ++round_;
  EndHeader end;
  end.round = round_;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    Sending s;
    s.bytes.resize(sizeof end);
    std::memcpy(s.bytes.data(), &end, sizeof end);
    check_mpi(MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, r, kTagEnd, comm_, &s.request),
              "MPI_Isend");
    in_flight_ += s.bytes.size();
    sending_.push_back(std::move(s));
  }
  // Every band sent to this rank comes before its sender's end.
  last_news_ = Clock::now();
  const auto timeout = std::chrono::duration<double>(mpi_.timeout_s);
  for (;;) {
    drain_incoming();
    reap_sends();
    std::vector<int> missing;
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && ended_[static_cast<size_t>(r)] < round_ && !left_[static_cast<size_t>(r)]) missing.push_back(r);
    if (culprit_ >= 0) fail_left();
    if (missing.empty() && sending_.empty()) break;
    if (Clock::now() - last_news_ > timeout) {
      if (missing.empty()) missing.push_back(-1);
      fail_timeout("fdk_mpi_finish", missing);
    }
    pause_briefly();
  }
  // 1. Is every band stored everywhere? No rank finishes while one lacks a view.
  Verdict first = verdict_of([&](Verdict&) {
    if (local_) local_->settle();
  });
  for (const auto& [f, text] : local_failures_) {
    if (first.status == FDK_OK) first.status = f.status;
    first.message += (first.message.empty() ? "" : "; ") + std::string("projection ") + std::to_string(f.view) +
                     " was not stored: " + text;
  }
  if (first.status != FDK_OK && local_)
    for (int v : received_) {
      const fdk_view_state state = local_->view_state(v, nullptr);
      if (state != FDK_VIEW_STORED && state != FDK_VIEW_PENDING) first.data.push_back(v);
    }
  local_failures_.clear();
  received_.clear();
  auto verdicts = gather_verdicts(comm_, first, mpi_.timeout_s, "fdk_mpi_finish");
  for (int r = 0; r < size_; ++r)
    for (int32_t v : verdicts[static_cast<size_t>(r)].data)
      if (v >= 0 && v < rows_->num_views()) {
        delivered_[static_cast<size_t>(v)][static_cast<size_t>(r)] = 0;
        reported_.insert({v, r});
      }
  remote_failures_.clear();
  throw_if_any_failed(verdicts);
  // 2. Every rank finishes its own part.
  Verdict second = verdict_of([&](Verdict&) {
    if (local_ && !local_->finished()) local_->finish();
  });
  verdicts = gather_verdicts(comm_, second, mpi_.timeout_s, "fdk_mpi_finish");
  throw_if_any_failed(verdicts);
  round_done_ = true;
}

// ---- the volume ---------------------------------------------------------------

void Rank::check_index(int slab) const {
  if (slab < 0 || slab >= slab_count())
    fail(FDK_ERROR_OUT_OF_RANGE, "slab " + std::to_string(slab) + " is outside [0, " + std::to_string(slab_count()) + ")");
}

fdk_slab_info Rank::slab_info(int slab) const {
  check_index(slab);
  const fdk_config& c = rows_->settings().config;
  fdk_slab_info info{};
  info.struct_size = sizeof info;
  info.y_begin = slabs_[static_cast<size_t>(slab)][0];
  info.y_end = slabs_[static_cast<size_t>(slab)][1];
  info.byte_size = 4ull * static_cast<uint64_t>(c.volume.size[0]) * static_cast<uint64_t>(c.volume.size[2]) *
                   static_cast<uint64_t>(info.y_end - info.y_begin);
  return info;
}

int Rank::owner(int slab) const {
  check_index(slab);
  return slab_owner_[static_cast<size_t>(slab)];
}

fdk_mpi_rank_info Rank::rank_info(int rank) const {
  if (rank < 0 || rank >= size_)
    fail(FDK_ERROR_OUT_OF_RANGE, "rank " + std::to_string(rank) + " is outside [0, " + std::to_string(size_) + ")");
  const RankShare& s = shares_[static_cast<size_t>(rank)];
  fdk_mpi_rank_info info{};
  info.struct_size = sizeof info;
  info.plane_begin = s.planes[0];
  info.plane_end = s.planes[1];
  info.slab_begin = s.slab_begin;
  info.slab_end = s.slab_end;
  info.row_begin = s.rows[0];
  info.row_end = s.rows[1];
  info.capacity = s.capacity;
  info.shared_memory_ranks = s.shared_memory_ranks;
  return info;
}

void Rank::read_slab(int slab, float* buffer, size_t buffer_bytes) {
  const int owner_rank = owner(slab);
  if (owner_rank != rank_)
    fail(FDK_ERROR_INVALID_STATE, "slab " + std::to_string(slab) + " belongs to rank " + std::to_string(owner_rank) +
                                      " (fdk_mpi_slab_owner), not to rank " + std::to_string(rank_));
  if (!round_done_) fail(FDK_ERROR_INVALID_STATE, "fdk_mpi_read_slab before fdk_mpi_finish succeeded");
  local_->read_slab(slab - shares_[static_cast<size_t>(rank_)].slab_begin, buffer, buffer_bytes);
}

fdk_progress Rank::progress() const {
  if (local_) return local_->progress();
  fdk_progress p{};
  p.struct_size = sizeof p;
  p.views_total = rows_->num_views();
  p.phase = round_done_ ? FDK_PHASE_DONE : FDK_PHASE_ACQUIRING;
  return p;
}

void Rank::cancel() {
  if (local_) local_->cancel();
}

}  // namespace fdk::mpi
