// NVSHMEM's maxloc reduction (nvshmemx_double2_maxloc_reduce_block): each element a
// (value, location) pair; the result is the pair with the largest value, and among equal
// values the one with the smallest location, on every PE. Whole program, 2 and 4 PEs:
// element 0 is NVSHMEM's one-element case (the largest value on the last PE), the others
// have ties between PEs and a maximum on a different PE each. In place on a sub-team too.
// Run by tests/pe/test_nvshmem_programs.py.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>

constexpr int kN = 37;

__global__ void maxloc_kernel(nvshmem_team_t team, double2* dest, const double2* source, int n) {
  nvshmemx_double2_maxloc_reduce_block(team, dest, source, n);
}

// PE p's pair i: a value equal on several PEs (a tie the location breaks), larger on PE
// i % npes for every third element, and the PE's number as location but reversed for odd
// i, so that the smallest location is not always the smallest PE.
double2 pair(int p, int i, int npes) {
  if (i == 0) return make_double2(p, 10.0 * p);
  const double value = (i % 3 == 0 && p == i % npes) ? 100.0 + i : double(i % 4);
  const double location = (i % 2) ? double(npes - p) : double(p);
  return make_double2(value, location);
}

int main() {
  nvshmem_init();
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  auto* src = static_cast<double2*>(nvshmem_malloc(kN * sizeof(double2)));
  auto* dst = static_cast<double2*>(nvshmem_malloc(kN * sizeof(double2)));
  double2 host[kN];
  for (int i = 0; i < kN; ++i) host[i] = pair(me, i, npes);
  cudaMemcpy(src, host, sizeof host, cudaMemcpyHostToDevice);
  nvshmem_barrier_all();
  maxloc_kernel<<<1, 96>>>(NVSHMEM_TEAM_WORLD, dst, src, kN);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  double2 got[kN];
  cudaMemcpy(got, dst, sizeof got, cudaMemcpyDeviceToHost);
  int errors = 0;
  for (int i = 0; i < kN; ++i) {
    double2 want = pair(0, i, npes);
    for (int p = 1; p < npes; ++p) {
      const double2 v = pair(p, i, npes);
      if (v.x > want.x || (v.x == want.x && v.y < want.y)) want = v;
    }
    if (got[i].x != want.x || got[i].y != want.y) {
      if (errors++ < 3)
        fprintf(stderr, "PE %d: [%d] (%g, %g), expected (%g, %g)\n", me, i, got[i].x, got[i].y, want.x, want.y);
    }
  }
  if (got[0].x != npes - 1 || got[0].y != 10.0 * (npes - 1)) ++errors;
  // In place, on the team of the even PEs (each of them reduces its own pairs again).
  nvshmem_team_t even;
  nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, nullptr, 0, &even);
  if (even != NVSHMEM_TEAM_INVALID) {
    cudaMemcpy(src, host, sizeof host, cudaMemcpyHostToDevice);
    maxloc_kernel<<<1, 32>>>(even, src, src, kN);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    cudaMemcpy(got, src, sizeof got, cudaMemcpyDeviceToHost);
    for (int i = 0; i < kN; ++i) {
      double2 want = pair(0, i, npes);
      for (int p = 2; p < npes; p += 2) {
        const double2 v = pair(p, i, npes);
        if (v.x > want.x || (v.x == want.x && v.y < want.y)) want = v;
      }
      if (got[i].x != want.x || got[i].y != want.y) {
        if (errors++ < 6)
          fprintf(stderr, "PE %d: even team [%d] (%g, %g), expected (%g, %g)\n", me, i, got[i].x, got[i].y, want.x,
                  want.y);
      }
    }
    nvshmem_team_destroy(even);
  }
  printf("PE %d of %d: maxloc reductions %s\n", me, npes, errors ? "FAILED" : "OK");
  nvshmem_barrier_all();
  nvshmem_free(dst);
  nvshmem_free(src);
  nvshmem_finalize();
  return errors ? 1 : 0;
}
