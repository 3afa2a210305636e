#include "verdicts.hpp"

#include <cstring>

#include "deadline.hpp"
#include "fdk/core/error.hpp"

namespace fdk::mpi {

std::vector<Verdict> gather_verdicts(MPI_Comm comm, const Verdict& mine, double timeout_s, const std::string& what) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int64_t head[3] = {static_cast<int64_t>(mine.status), static_cast<int64_t>(mine.message.size()),
                           static_cast<int64_t>(mine.data.size())};
  std::vector<int64_t> heads(3 * static_cast<size_t>(size));
  std::vector<MPI_Request> requests(1);
  check_mpi(MPI_Iallgather(head, 3, MPI_INT64_T, heads.data(), 3, MPI_INT64_T, comm, &requests[0]),
            "MPI_Iallgather");
  wait_all(requests, timeout_s, what);

  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  int64_t total = 0;
  for (int r = 0; r < size; ++r) {
    const int64_t bytes = heads[3 * r + 2] * 4 + heads[3 * r + 1];
    if (bytes < 0 || total + bytes > (int64_t{1} << 30)) fail(FDK_ERROR_INTERNAL, what + ": verdicts too large");
    counts[static_cast<size_t>(r)] = static_cast<int>(bytes);
    displs[static_cast<size_t>(r)] = static_cast<int>(total);
    total += bytes;
  }
  std::vector<char> blob(mine.data.size() * 4 + mine.message.size());
  if (!mine.data.empty()) std::memcpy(blob.data(), mine.data.data(), mine.data.size() * 4);
  if (!mine.message.empty()) std::memcpy(blob.data() + mine.data.size() * 4, mine.message.data(), mine.message.size());
  std::vector<char> all(static_cast<size_t>(total) + 1);
  check_mpi(MPI_Iallgatherv(blob.data(), static_cast<int>(blob.size()), MPI_BYTE, all.data(), counts.data(),
                            displs.data(), MPI_BYTE, comm, &requests[0]),
            "MPI_Iallgatherv");
  wait_all(requests, timeout_s, what);

  std::vector<Verdict> verdicts(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    Verdict& v = verdicts[static_cast<size_t>(r)];
    v.status = static_cast<fdk_status>(heads[3 * r]);
    const char* p = all.data() + displs[static_cast<size_t>(r)];
    v.data.resize(static_cast<size_t>(heads[3 * r + 2]));
    if (!v.data.empty()) std::memcpy(v.data.data(), p, v.data.size() * 4);
    v.message.assign(p + v.data.size() * 4, static_cast<size_t>(heads[3 * r + 1]));
  }
  return verdicts;
}

void throw_if_any_failed(const std::vector<Verdict>& verdicts) {
  fdk_status first = FDK_OK;
  std::string message;
  for (size_t r = 0; r < verdicts.size(); ++r) {
    if (verdicts[r].status == FDK_OK) continue;
    if (first == FDK_OK) first = verdicts[r].status;
    if (!message.empty()) message += "; ";
    message += "rank " + std::to_string(r) + ": " + verdicts[r].message;
  }
  if (first != FDK_OK) fail(first, message);
}

}  // namespace fdk::mpi
