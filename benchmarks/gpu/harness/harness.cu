#include "img2gray_core.cuh"
#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
  int64_t H = argc > 1 ? atoll(argv[1]) : 8192, W = argc > 2 ? atoll(argv[2]) : 8192;
  int64_t P = H * W;
  std::vector<uint8_t> h(3 * P);
  for (int64_t i = 0; i < 3 * P; ++i) h[i] = (uint8_t)(i * 2654435761u >> 13);
  uint8_t *d_in, *d_a, *d_b, *d_c;
  cudaMalloc(&d_in, 3 * P); cudaMalloc(&d_a, P); cudaMalloc(&d_b, P); cudaMalloc(&d_c, 4 * P);
  cudaMemcpy(d_in, h.data(), 3 * P, cudaMemcpyHostToDevice);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto timeit = [&](auto fn) { for (int i = 0; i < 5; ++i) fn(); cudaEventRecord(e0); for (int i = 0; i < 50; ++i) fn(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); return ms / 50; };
  dim3 b1(32, 8), g1((W + 31) / 32, (H + 7) / 8);
  float t_pix = timeit([&] { img2gray_pixel_kernel<<<g1, b1>>>(d_in, d_a, H, W); });
  int64_t groups = (P + kGroup - 1) / kGroup;
  int64_t gx = 1024; int64_t gyn = (groups + gx - 1) / gx;
  dim3 b2(128, 2), g2((gx + 127) / 128, (gyn + 1) / 2);
  float t_grp = timeit([&] { img2gray_group_kernel<true><<<g2, b2>>>(d_in, d_b, P, gx); });
  float t_plain = timeit([&] { img2gray_group_kernel<false><<<g2, b2>>>(d_in, d_b, P, gx); });
  float t_stg = timeit([&] { img2gray_staged_kernel<256><<<(P + 4095) / 4096, 256>>>(d_in, d_c + 2 * P, P); });
  std::vector<uint8_t> c(P); cudaMemcpy(c.data(), d_c + 2 * P, P, cudaMemcpyDeviceToHost);
  float t_cpy = timeit([&] { cudaMemcpyAsync(d_c, d_in, 2 * P, cudaMemcpyDeviceToDevice); });
  std::vector<uint8_t> a(P), b(P); cudaMemcpy(a.data(), d_a, P, cudaMemcpyDeviceToHost); cudaMemcpy(b.data(), d_b, P, cudaMemcpyDeviceToHost);
  int64_t diff = 0; for (int64_t i = 0; i < P; ++i) diff += (a[i] != b[i]) + (a[i] != c[i]);
  double bytes = 4.0 * P;
  printf("H=%lld W=%lld pixel %.3f TB/s group(stream) %.3f TB/s group(plain) %.3f TB/s staged %.3f TB/s copy(4P bytes moved) %.3f TB/s diffs=%lld err=%s\n", (long long)H, (long long)W,
         bytes / t_pix / 1e9, bytes / t_grp / 1e9, bytes / t_plain / 1e9, bytes / t_stg / 1e9, bytes / t_cpy / 1e9, (long long)diff, cudaGetErrorString(cudaGetLastError()));
}
