// Reductions on half and bfloat16 (nvshmem_half_sum_reduce, nvshmemx_bfloat16_max_reduce_block,
// nvshmemx_half_prod_reduce_on_stream), whole program. Values are small integers, exact
// in both formats, so the expected results are exact. Run by tests/pe/test_nvshmem_programs.py.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>

constexpr int kN = 300;

__global__ void reduce_kernel(__half* hsum, const __half* h, __nv_bfloat16* bmax, const __nv_bfloat16* b) {
  if (threadIdx.x == 0) nvshmem_half_sum_reduce(NVSHMEM_TEAM_WORLD, hsum, h, kN);
  nvshmemx_bfloat16_max_reduce_block(NVSHMEM_TEAM_WORLD, bmax, b, kN);
}

int main() {
  nvshmem_init();
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  auto* h = static_cast<__half*>(nvshmem_malloc(kN * sizeof(__half)));
  auto* hsum = static_cast<__half*>(nvshmem_malloc(kN * sizeof(__half)));
  auto* hprod = static_cast<__half*>(nvshmem_malloc(kN * sizeof(__half)));
  auto* b = static_cast<__nv_bfloat16*>(nvshmem_malloc(kN * sizeof(__nv_bfloat16)));
  auto* bmax = static_cast<__nv_bfloat16*>(nvshmem_malloc(kN * sizeof(__nv_bfloat16)));
  __half hh[kN];
  __nv_bfloat16 bh[kN];
  for (int i = 0; i < kN; ++i) {
    hh[i] = __float2half(float((me + 1) * (i % 5)));
    bh[i] = __float2bfloat16(float(i % 7 == me ? 100 + me : i % 3));
  }
  cudaMemcpy(h, hh, sizeof hh, cudaMemcpyHostToDevice);
  cudaMemcpy(b, bh, sizeof bh, cudaMemcpyHostToDevice);
  nvshmem_barrier_all();
  reduce_kernel<<<1, 64>>>(hsum, h, bmax, b);
  nvshmemx_half_prod_reduce_on_stream(NVSHMEM_TEAM_WORLD, hprod, h, kN, 0);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  __half gsum[kN], gprod[kN];
  __nv_bfloat16 gmax[kN];
  cudaMemcpy(gsum, hsum, sizeof gsum, cudaMemcpyDeviceToHost);
  cudaMemcpy(gprod, hprod, sizeof gprod, cudaMemcpyDeviceToHost);
  cudaMemcpy(gmax, bmax, sizeof gmax, cudaMemcpyDeviceToHost);
  int errors = 0;
  for (int i = 0; i < kN; ++i) {
    float want_sum = 0, want_prod = 1, want_max = -1e30f;
    for (int p = 0; p < npes; ++p) {
      want_sum += float((p + 1) * (i % 5));
      want_prod *= float((p + 1) * (i % 5));
      const float v = float(i % 7 == p ? 100 + p : i % 3);
      want_max = v > want_max ? v : want_max;
    }
    if (__half2float(gsum[i]) != want_sum || __half2float(gprod[i]) != want_prod ||
        __bfloat162float(gmax[i]) != want_max) {
      if (errors++ < 3)
        fprintf(stderr, "PE %d: [%d] sum %g prod %g max %g, expected %g %g %g\n", me, i, __half2float(gsum[i]),
                __half2float(gprod[i]), __bfloat162float(gmax[i]), want_sum, want_prod, want_max);
    }
  }
  printf("PE %d of %d: half and bfloat16 reductions %s\n", me, npes, errors ? "FAILED" : "OK");
  nvshmem_free(bmax);
  nvshmem_free(b);
  nvshmem_free(hprod);
  nvshmem_free(hsum);
  nvshmem_free(h);
  nvshmem_finalize();
  return errors ? 1 : 0;
}
