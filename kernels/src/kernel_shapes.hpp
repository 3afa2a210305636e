// Block shapes the kernels are written for and their launches use (host
// and device code alike).
#pragma once

namespace fdk::cuda {

constexpr int kBlockX = 32, kBlockZ = 4;  // backprojection: threads along x and z
// Rows of the windows each block of the maxima kernels scans: one atomic per
// block, not per warp and row (131072 atomics on one word per pair of
// 2048^2 views serialised the kernel: 60 us per pair).
constexpr int kMaxRowsPerBlock = 32;
constexpr int kMaxBlockThreads = 128;
// fdk_round_store_bands: one block per band of the store (a multiple of 32).
constexpr int kRoundBandThreads = 256;

}  // namespace fdk::cuda
