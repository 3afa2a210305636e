// Background threads of the library that nobody waits for yield the cores
// to those that someone does (a push, a read, the host application).
#pragma once

namespace fdk {

// Lowers the calling thread's scheduling priority (Linux: nice +10 for this
// thread only; Windows: THREAD_PRIORITY_BELOW_NORMAL). Never raises it;
// does nothing where unsupported or refused.
void lower_this_thread_priority() noexcept;

}  // namespace fdk
