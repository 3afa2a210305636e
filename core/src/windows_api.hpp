// <windows.h> as the core's Windows paths include it: without the rarely
// used parts, and without the min/max macros that break std::min/std::max.
#pragma once
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
