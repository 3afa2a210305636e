// A rank's sending side: the bands of a pushed view copied out for the
// other ranks (into shared slots or messages) and checked as they are,
// sent once this rank's own band is in, and the room they take in flight.
#include <algorithm>
#include <cstring>
#include <string>

#include "deadline.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/pixel_check.hpp"
#include "rank.hpp"

namespace fdk::mpi {

void Rank::reap_sends() {
  while (!sending_.empty()) {
    int done = 0;
    MPI_Test(&sending_.front().request, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    in_flight_ -= sending_.front().bytes.size();
    if (spare_.size() < 8) spare_.push_back(std::move(sending_.front().bytes));
    sending_.pop_front();
  }
}

std::vector<char> Rank::take_buffer(size_t bytes) {
  std::vector<char> buffer;
  for (size_t i = 0; i < spare_.size(); ++i)
    if (spare_[i].capacity() >= bytes) {
      buffer = std::move(spare_[i]);
      spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  buffer.resize(bytes);
  return buffer;
}

void Rank::post(int to, int tag, std::vector<char> bytes) {
  Sending s;
  s.bytes = std::move(bytes);
  check_mpi(MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, to, tag, comm_, &s.request),
            "MPI_Isend");
  in_flight_ += s.bytes.size();
  sending_.push_back(std::move(s));
}

void Rank::notify(int to, int tag, int view, fdk_status status, const std::string& message) {
  FailHeader h;
  h.index = view;
  h.status = status;
  h.length = static_cast<int32_t>(message.size());
  std::vector<char> bytes(sizeof h + message.size());
  std::memcpy(bytes.data(), &h, sizeof h);
  std::memcpy(bytes.data() + sizeof h, message.data(), message.size());
  post(to, tag, std::move(bytes));
}

void Rank::make_room(uint64_t bytes, int slots) {
  const uint64_t limit = mpi_.max_in_flight_bytes;
  auto news = Clock::now();
  for (;;) {
    reap_sends();
    if ((in_flight_ == 0 || in_flight_ + bytes <= limit) && shared_->free_slots() >= slots) return;
    const uint64_t before = in_flight_;
    const int free_before = shared_->free_slots();
    if (drain_incoming()) news = Clock::now();
    reap_sends();
    if (in_flight_ < before || shared_->free_slots() > free_before) news = Clock::now();
    if (Clock::now() - news > std::chrono::duration<double>(mpi_.timeout_s)) {
      fail(FDK_ERROR_INVALID_STATE, "fdk_mpi_push_projection: the bands already sent have not been received for " +
                                        std::to_string(static_cast<long long>(mpi_.timeout_s)) +
                                        " s (the other ranks must be inside fdk_mpi_finish or "
                                        "fdk_mpi_push_projection to receive); nothing of this view was sent");
    }
    pause_briefly();
  }
}

ViewHeader Rank::band_header(int index, const fdk_view* view, std::array<int, 2> rows) const {
  ViewHeader h;
  h.index = index;
  h.row_begin = rows[0];
  h.row_end = rows[1];
  h.has_view = view ? 1 : 0;
  if (view) h.view = *view;
  return h;
}

int Rank::copy_rows(char* to, const float* pixels, size_t pitch_bytes, std::array<int, 2> rows,
                    std::array<int, 2> own) {
  const size_t row_bytes = this->row_bytes();
  const int nu = static_cast<int>(row_bytes / sizeof(float));
  const int count = rows[1] - rows[0];
  const int tasks = std::min(count, 4 * pool_->size());
  std::vector<int> bad(static_cast<size_t>(std::max(tasks, 0)), -1);
  pool_->parallel_for(tasks, [&](int task, int) {
    for (int j = rows[0] + count * task / tasks; j < rows[0] + count * (task + 1) / tasks; ++j) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const char*>(pixels) + pitch_bytes * static_cast<size_t>(j));
      std::memcpy(to + row_bytes * static_cast<size_t>(j - rows[0]), row, row_bytes);
      // Checked in the copy, still in cache.
      if (bad[static_cast<size_t>(task)] < 0 && (j < own[0] || j >= own[1]) &&
          !all_acceptable(reinterpret_cast<const float*>(to + row_bytes * static_cast<size_t>(j - rows[0])), nu))
        bad[static_cast<size_t>(task)] = j;
    }
  });
  for (int j : bad)
    if (j >= 0) return j;
  return -1;
}

bool Rank::travels_shared(int to, int rows) const {
  return shared_->reaches(to) && shared_->fits(row_bytes() * static_cast<size_t>(rows));
}

Rank::Outgoing Rank::prepare_band(int to, bool shared, int index, const fdk_view* view, std::array<int, 2> rows) {
  Outgoing o;
  o.to = to;
  o.band = band_header(index, view, rows);
  o.slot = shared ? shared_->take() : -1;  // make_room saw one free; else a message
  if (o.slot >= 0) {
    o.rows = shared_->rows(o.slot);
  } else {
    o.bytes = take_buffer(sizeof o.band + row_bytes() * static_cast<size_t>(rows[1] - rows[0]));
    std::memcpy(o.bytes.data(), &o.band, sizeof o.band);
    o.rows = o.bytes.data() + sizeof o.band;
  }
  return o;
}

void Rank::send(Outgoing& o) {
  if (o.slot < 0) {
    post(o.to, kTagView, std::move(o.bytes));
    return;
  }
  SharedViewHeader h;
  h.band = o.band;
  h.slot = o.slot;
  h.stamp = shared_->publish(o.slot);
  std::vector<char> bytes(sizeof h);
  std::memcpy(bytes.data(), &h, sizeof h);
  post(o.to, kTagSharedView, std::move(bytes));
}

void Rank::drop(Outgoing& o) {
  if (o.slot >= 0)
    shared_->give_back(o.slot);
  else if (spare_.size() < 8)
    spare_.push_back(std::move(o.bytes));
}

}  // namespace fdk::mpi
