#pragma once
#include <cstdint>

// gray = uint8(0.299 R + 0.587 G + 0.114 B + 0.5), in float32, every operation rounded
// separately (no fused multiply-add) so the result is bit-identical to the CPU kernel.
__device__ __forceinline__ uint8_t gray_of(uint32_t r, uint32_t g, uint32_t b) {
  float acc = __fmul_rn(0.299f, static_cast<float>(r));
  acc = __fadd_rn(acc, __fmul_rn(0.587f, static_cast<float>(g)));
  acc = __fadd_rn(acc, __fmul_rn(0.114f, static_cast<float>(b)));
  acc = __fadd_rn(acc, 0.5f);
  acc = fminf(fmaxf(acc, 0.0f), 255.0f);
  return static_cast<uint8_t>(acc);
}

// The readable kernel: a 2-D grid over (rows, columns), one thread per pixel.
// rows = N * H (a batch is a stack of rows), cols = W.
__global__ void img2gray_pixel_kernel(const uint8_t* __restrict__ rgb, uint8_t* __restrict__ gray,
                                      int64_t rows, int64_t cols) {
  const int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t y = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y;
  if (x >= cols || y >= rows) return;
  const int64_t p = y * cols + x;
  gray[p] = gray_of(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
}

// The fast kernel: the same 2-D grid, but each thread converts a group of 16 consecutive
// pixels of the image with three 16-byte loads (48 bytes of RGB) and one 16-byte store.
// The image is treated as a (groups_y, groups_x) grid of 16-pixel groups over the flattened
// pixels, so any width works; the last partial group is done pixel by pixel.
constexpr int kGroup = 16;

__device__ __forceinline__ uint32_t byte_of(const uint4& v, int i) {
  const uint32_t w = (i < 4) ? v.x : (i < 8) ? v.y : (i < 12) ? v.z : v.w;
  return (w >> (8 * (i & 3))) & 0xffu;
}

template <bool kStream>
__global__ void img2gray_group_kernel(const uint8_t* __restrict__ rgb, uint8_t* __restrict__ gray,
                                      int64_t pixels, int64_t groups_x) {
  const int64_t gx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t gy = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y;
  if (gx >= groups_x) return;
  const int64_t first = (gy * groups_x + gx) * kGroup;
  if (first >= pixels) return;
  if (first + kGroup <= pixels) {
    const uint4* src = reinterpret_cast<const uint4*>(rgb + 3 * first);
    uint4 in[3];
    if (kStream) { in[0] = __ldcs(src); in[1] = __ldcs(src + 1); in[2] = __ldcs(src + 2); }
    else { in[0] = src[0]; in[1] = src[1]; in[2] = src[2]; }
    uint32_t packed[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      const int b = 3 * i;
      const uint32_t r = byte_of(in[b / 16], b % 16);
      const uint32_t g = byte_of(in[(b + 1) / 16], (b + 1) % 16);
      const uint32_t bl = byte_of(in[(b + 2) / 16], (b + 2) % 16);
      packed[i / 4] |= static_cast<uint32_t>(gray_of(r, g, bl)) << (8 * (i % 4));
    }
    if (kStream) __stcs(reinterpret_cast<uint4*>(gray + first), make_uint4(packed[0], packed[1], packed[2], packed[3]));
    else *reinterpret_cast<uint4*>(gray + first) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
  } else {
    for (int64_t p = first; p < pixels; ++p) {
      gray[p] = gray_of(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
    }
  }
}

// Cooperative variant: a block stages its 48*blockDim bytes of RGB through shared memory
// with fully coalesced 16-byte loads, then each thread converts its 16 pixels.
template <int kThreads>
__global__ void img2gray_staged_kernel(const uint8_t* __restrict__ rgb, uint8_t* __restrict__ gray,
                                       int64_t pixels) {
  __shared__ uint4 tile[3 * kThreads];
  const int64_t block_first = static_cast<int64_t>(blockIdx.x) * kThreads * kGroup;
  const int64_t block_pixels = min(static_cast<int64_t>(kThreads) * kGroup, pixels - block_first);
  if (block_pixels == static_cast<int64_t>(kThreads) * kGroup) {
    const uint4* src = reinterpret_cast<const uint4*>(rgb + 3 * block_first);
#pragma unroll
    for (int j = 0; j < 3; ++j) tile[threadIdx.x + j * kThreads] = __ldcs(src + threadIdx.x + j * kThreads);
    __syncthreads();
    const uint4 in[3] = {tile[3 * threadIdx.x], tile[3 * threadIdx.x + 1], tile[3 * threadIdx.x + 2]};
    uint32_t packed[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      const int b = 3 * i;
      packed[i / 4] |= static_cast<uint32_t>(gray_of(byte_of(in[b / 16], b % 16),
                                                     byte_of(in[(b + 1) / 16], (b + 1) % 16),
                                                     byte_of(in[(b + 2) / 16], (b + 2) % 16)))
                       << (8 * (i % 4));
    }
    __stcs(reinterpret_cast<uint4*>(gray + block_first) + threadIdx.x,
           make_uint4(packed[0], packed[1], packed[2], packed[3]));
  } else {
    for (int64_t p = block_first + threadIdx.x; p < block_first + block_pixels; p += kThreads)
      gray[p] = gray_of(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
  }
}
