#include "thread_priority.hpp"

#if defined(__linux__)
#include <cerrno>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace fdk {

void lower_this_thread_priority() noexcept {
#if defined(__linux__)
  // On Linux a nice value belongs to the thread (its tid), not the process.
  const int saved = errno;  // the host application's errno stays as it was
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, tid);
  if (errno == 0 && current < 10) setpriority(PRIO_PROCESS, tid, 10);
  errno = saved;
#endif
}

}  // namespace fdk
