#include "deadline.hpp"

#include <thread>

#include "fdk/core/error.hpp"

namespace fdk::mpi {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  fail(FDK_ERROR_DEVICE, std::string(call) + " failed: " + std::string(text, static_cast<size_t>(length)));
}

void pause_briefly() { std::this_thread::sleep_for(std::chrono::microseconds(50)); }

void wait_all(std::vector<MPI_Request>& requests, double timeout_s, const std::string& what,
              const std::function<void()>& idle) {
  if (requests.empty()) return;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  for (;;) {
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (done) return;
    if (Clock::now() > deadline)
      fail(FDK_ERROR_INVALID_STATE, what + " did not complete on every rank within " +
                                        std::to_string(static_cast<long long>(timeout_s)) +
                                        " s: a rank has not called it (stopped, crashed or called something "
                                        "else); end the job (MPI_Abort)");
    if (idle) idle();
    pause_briefly();
  }
}

}  // namespace fdk::mpi
