#include "thread_priority.hpp"

#if defined(__linux__)
#include <cerrno>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(_WIN32)
#include "windows_api.hpp"
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
#elif defined(_WIN32)
  // One step below normal, not "lowest" or "idle": Windows schedules by
  // strict priority, so a lower step already yields to every normal thread
  // that is ready, and a further one would risk starving this one on a
  // busy machine (nice +10 on Linux still gets a share).
  const DWORD saved = GetLastError();  // the host application's last error stays as it was
  const HANDLE self = GetCurrentThread();
  const int current = GetThreadPriority(self);
  if (current != THREAD_PRIORITY_ERROR_RETURN && current > THREAD_PRIORITY_BELOW_NORMAL)
    SetThreadPriority(self, THREAD_PRIORITY_BELOW_NORMAL);
  SetLastError(saved);
#endif
}

}  // namespace fdk
