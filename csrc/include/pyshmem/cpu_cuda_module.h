// pyshmem/cpu_cuda_module.h: the driver API's modules and launches on the CPU build
// (included by pyshmem/cpu_cuda_driver.h).
//
// A CPU "cubin" is a shared object built by `pyshmem-nvcc --cpu -cubin prog.cu -o
// prog.cubin` (nvcc's -cubin keeps a source's device code; here: its kernels, the
// functions they call and the program's own copy of the CPU kernel runtime, nothing of
// its host code). cuModuleLoad dlopens it (RTLD_LOCAL), cuModuleGetFunction finds a
// kernel by name (the name as written for extern "C" kernels, the mangled name or the
// name as written for C++ ones), and cuLaunchKernel / cuLaunchCooperativeKernel copy
// the arguments at the call and enqueue the grid on the program's stream, as
// cudaLaunchKernel does; the module runs the grid with its own copy of the runtime.
// Kernels that call the device API need nvshmemx_cumodule_init(module) first, as with
// NVSHMEM: until then such a kernel fails its launch with a message saying so.
#pragma once

#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>

#include <string>
#include <vector>

// Exported by every module and program built with pyshmem-nvcc --cpu (weak: once per
// shared object): finds one of its kernels by name. Returns 0 and the kernel in *out, or
// 1 (no such kernel) / 2 (the name fits several) with the reason in err.
extern "C" __attribute__((weak, visibility("default"))) int pyshmem_cpu_module_find(const char* name,
                                                                                  const pyshmem_cpu_kernel_abi** out,
                                                                                  char* err, size_t errlen) {
  namespace cpu = ::pyshmem::cpu;
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&pyshmem_cpu_module_find), &self);
  // "ns::k(int*, int)" or "void tk<float, 3>(float*)" for a mangled name.
  std::string wanted = name ? name : "", wanted_params;
  if (wanted.rfind("_Z", 0) == 0) {
    int status = 0;
    char* d = abi::__cxa_demangle(wanted.c_str(), nullptr, nullptr, &status);
    if (status == 0 && d) {
      std::string text = d;
      free(d);
      size_t paren = text.rfind('(');
      if (paren != std::string::npos) {
        wanted_params = text.substr(paren);
        text = text.substr(0, paren);
      }
      // A template function's demangled name starts with its return type.
      int depth = 0;
      size_t start = 0;
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '<') ++depth;
        else if (text[i] == '>') --depth;
        else if (text[i] == ' ' && depth == 0) start = i + 1;
      }
      wanted = text.substr(start);
    }
  }
  auto squeeze = [](std::string s) {
    std::string out;
    for (char c : s)
      if (c != ' ') out += c;
    return out;
  };
  auto unqualified = [](const std::string& s) {
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      if (s[i] == '<') ++depth;
      else if (s[i] == '>') --depth;
      else if (depth == 0 && s[i] == ':' && s[i + 1] == ':') start = i + 2;
    }
    return s.substr(start);
  };
  std::vector<const pyshmem_cpu_kernel_abi*> hits;
  std::string all;
  std::lock_guard<std::mutex> lock(cpu::kernel_registry_mutex());
  for (auto& [fn, entry] : cpu::kernel_registry()) {
    Dl_info info{};
    if (!dladdr(fn, &info) || info.dli_fbase != self.dli_fbase) continue;  // another object's kernel
    const std::string have = entry.abi.name;
    all += (all.empty() ? "" : ", ") + have;
    bool match = have == wanted || unqualified(have) == wanted;
    if (match && !wanted_params.empty()) {
      // The type "void (*)(int*, int)" against the demangled "(int*, int)".
      const std::string sig = squeeze(entry.abi.signature);
      const size_t p = sig.find(")(");
      match = p == std::string::npos || sig.substr(p + 1) == squeeze(wanted_params);
    }
    if (match) hits.push_back(&entry.abi);
  }
  if (hits.size() == 1) {
    *out = hits[0];
    return 0;
  }
  if (hits.empty())
    snprintf(err, errlen, "no kernel named '%s' in %s (its kernels: %s)", name ? name : "(null)",
             self.dli_fname ? self.dli_fname : "the module", all.empty() ? "none" : all.c_str());
  else
    snprintf(err, errlen, "the name '%s' fits %zu kernels of %s; pass the mangled name", name, hits.size(),
             self.dli_fname ? self.dli_fname : "the module");
  return hits.empty() ? 1 : 2;
}

struct CUmod_st {
  void* handle = nullptr;
  std::string path;
  int (*find)(const char*, const pyshmem_cpu_kernel_abi**, char*, size_t) = nullptr;
  void (*bind_state)(const pyshmem_device_state*) = nullptr;
  std::mutex mu;
  std::map<std::string, CUfunc_st*> functions;                      // by the name asked for
  std::map<const pyshmem_cpu_kernel_abi*, CUfunc_st*> by_kernel;  // one handle per kernel
};
struct CUfunc_st {
  const pyshmem_cpu_kernel_abi* abi;
  CUmod_st* module;
  int max_dynamic_shared;
};

typedef enum CUfunction_attribute_enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
  CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9
} CUfunction_attribute;

#define CU_LAUNCH_PARAM_END_AS_INT 0x00
#define CU_LAUNCH_PARAM_END ((void*)CU_LAUNCH_PARAM_END_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT 0x01
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void*)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT 0x02
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void*)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)

namespace pyshmem {
namespace cpu {
namespace drv {
// Loads a module from a file (dlopen). `what` names it in messages.
inline CUresult load_module(CUmodule* module, const char* path, const char* call, const char* what) {
  if (!module || !path) return fail(CUDA_ERROR_INVALID_VALUE, call, "NULL argument");
  if (access(path, R_OK) != 0) {
    std::string m = std::string(what) + " cannot be read: " + strerror(errno);
    return fail(CUDA_ERROR_FILE_NOT_FOUND, call, m.c_str());
  }
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    // A GPU cubin or PTX is an ELF for the NVIDIA GPU (machine 190) or text.
    std::string m = std::string(what) + " is not a module of the CPU build (" + dlerror() +
                    "); build it with `pyshmem-nvcc --cpu -cubin SOURCE.cu -o FILE` (a cubin or PTX for a GPU does "
                    "not run on the CPU)";
    return fail(CUDA_ERROR_INVALID_IMAGE, call, m.c_str());
  }
  auto find = reinterpret_cast<int (*)(const char*, const pyshmem_cpu_kernel_abi**, char*, size_t)>(
      dlsym(h, "pyshmem_cpu_module_find"));
  if (!find) {
    dlclose(h);
    std::string m = std::string(what) + " is a shared object but not one pyshmem-nvcc --cpu -cubin built";
    return fail(CUDA_ERROR_INVALID_IMAGE, call, m.c_str());
  }
  auto* mod = new CUmod_st;
  mod->handle = h;
  mod->path = what;
  mod->find = find;
  mod->bind_state = reinterpret_cast<void (*)(const pyshmem_device_state*)>(dlsym(h, "pyshmem_cpu_bind_state"));
  *module = mod;
  return CUDA_SUCCESS;
}

inline CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, CUstream stream, void** params, void** extra, bool cooperative) {
  const char* call = cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel";
  if (CUresult e = check_init(call)) return e;
  if (!f) return fail(CUDA_ERROR_INVALID_HANDLE, call, "f is NULL");
  const std::string why = check_launch_shape(f->abi->name, dim3(gx, gy, gz), dim3(bx, by, bz), cooperative);
  if (!why.empty()) {
    return fail(cooperative && too_large_for_residency(dim3(gx, gy, gz), dim3(bx, by, bz))
                    ? CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE : CUDA_ERROR_INVALID_VALUE, call,
                why.c_str());
  }
  if (shared > static_cast<unsigned>(f->max_dynamic_shared)) {
    char m[160];
    snprintf(m, sizeof m, "%u bytes of dynamic shared memory; the kernel allows %d (cuFuncSetAttribute "
                          "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)", shared, f->max_dynamic_shared);
    return fail(CUDA_ERROR_INVALID_VALUE, call, m);
  }
  void* copy = nullptr;
  if (params && extra) return fail(CUDA_ERROR_INVALID_VALUE, call, "both kernelParams and extra are given");
  if (extra) {
    const void* buffer = nullptr;
    size_t size = 0;
    bool has_size = false;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<size_t*>(extra[i + 1]), has_size = true;
      else return fail(CUDA_ERROR_INVALID_VALUE, call, "extra holds an unknown CU_LAUNCH_PARAM_* key");
    }
    if (!buffer || !has_size)
      return fail(CUDA_ERROR_INVALID_VALUE, call, "extra needs CU_LAUNCH_PARAM_BUFFER_POINTER and _BUFFER_SIZE");
    copy = f->abi->copy_packed(buffer, size);
    if (!copy) return fail(CUDA_ERROR_INVALID_VALUE, call, "the extra buffer is smaller than the kernel's arguments");
  } else {
    if (f->abi->nparams && !params)
      return fail(CUDA_ERROR_INVALID_VALUE, call, "kernelParams is NULL but the kernel has parameters");
    copy = f->abi->copy_args(params, f->abi->name);
  }
  const pyshmem_cpu_kernel_abi* abi = f->abi;
  const unsigned dims[6] = {gx, gy, gz, bx, by, bz};
  std::array<unsigned, 6> d{};
  std::copy(dims, dims + 6, d.begin());
  const cudaError_t e = rt::stream_enqueue(stream, call, [abi, copy, d, shared, cooperative]() -> cudaError_t {
    char err[4096];
    const int failed = abi->run(abi->fn, abi->name, copy, d.data(), shared, cooperative, err, sizeof err);
    abi->free_args(copy);
    if (!failed) return cudaSuccess;
    const pyshmem_device_state* st = ::pyshmem::detail::h_state;
    const std::string what = "a kernel failed on PE " + std::to_string(st ? st->my_pe : -1) + ": " + err +
                             " (the launch's error, CUDA_ERROR_LAUNCH_FAILED, is returned by every later "
                             "synchronising call)";
    rt::set_sticky_error(cudaErrorLaunchFailure, what.c_str());
    return cudaErrorLaunchFailure;
  });
  if (e != cudaSuccess) abi->free_args(copy);
  return from_runtime(e);
}
}  // namespace drv
}  // namespace cpu
}  // namespace pyshmem

/// Loads the module `fname` (a shared object from pyshmem-nvcc --cpu -cubin).
/// CUDA_ERROR_FILE_NOT_FOUND when it cannot be read; CUDA_ERROR_INVALID_IMAGE, with the
/// reason, for anything else (a GPU cubin, PTX, another shared object).
inline CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  PYSHMEM_CU_INIT("cuModuleLoad");
  return pyshmem::cpu::drv::load_module(module, fname, "cuModuleLoad", fname ? fname : "(null)");
}
/// As cuModuleLoad, from the module's bytes in memory (an anonymous file is loaded).
inline CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  PYSHMEM_CU_INIT("cuModuleLoadData");
  if (!image) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadData", "image is NULL");
  // The image's size: an ELF's section header table ends it.
  const unsigned char* p = static_cast<const unsigned char*>(image);
  if (memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData",
                                   "not a 64-bit ELF module of the CPU build (pyshmem-nvcc --cpu -cubin)");
  uint64_t shoff;
  uint16_t shentsize, shnum;
  memcpy(&shoff, p + 0x28, 8);
  memcpy(&shentsize, p + 0x3A, 2);
  memcpy(&shnum, p + 0x3C, 2);
  const size_t size = shoff + size_t(shentsize) * shnum;
  const int fd = memfd_create("pyshmem-module", MFD_CLOEXEC);
  if (fd < 0) return pyshmem::cpu::drv::fail(CUDA_ERROR_OPERATING_SYSTEM, "cuModuleLoadData", strerror(errno));
  for (size_t done = 0; done < size;) {
    const ssize_t w = write(fd, p + done, size - done);
    if (w <= 0) {
      close(fd);
      return pyshmem::cpu::drv::fail(CUDA_ERROR_OPERATING_SYSTEM, "cuModuleLoadData", strerror(errno));
    }
    done += static_cast<size_t>(w);
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const CUresult r = pyshmem::cpu::drv::load_module(module, path, "cuModuleLoadData", "the image");
  close(fd);  // the mapping keeps the file
  return r;
}
inline CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, void*, void**) {
  return cuModuleLoadData(module, image);
}
/// Unloads a module: its functions' handles become invalid. The caller must have
/// synchronised with its kernels' launches (as in CUDA).
inline CUresult cuModuleUnload(CUmodule hmod) {
  PYSHMEM_CU_INIT("cuModuleUnload");
  if (!hmod) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload", "hmod is NULL");
  for (auto& kv : hmod->by_kernel) delete kv.second;
  dlclose(hmod->handle);
  delete hmod;
  return CUDA_SUCCESS;
}
/// The kernel of `hmod` named `name` (see the file comment). CUDA_ERROR_NOT_FOUND with
/// the module's kernels listed when there is none.
inline CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  PYSHMEM_CU_INIT("cuModuleGetFunction");
  if (!hfunc || !name) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuModuleGetFunction", "NULL");
  if (!hmod) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction", "hmod is NULL");
  std::lock_guard<std::mutex> lock(hmod->mu);
  CUfunc_st*& f = hmod->functions[name];
  if (!f) {
    const pyshmem_cpu_kernel_abi* abi = nullptr;
    char err[1024];
    if (hmod->find(name, &abi, err, sizeof err) != 0) {
      hmod->functions.erase(name);
      return pyshmem::cpu::drv::fail(CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction", err);
    }
    CUfunc_st*& same = hmod->by_kernel[abi];
    if (!same) same = new CUfunc_st{abi, hmod, pyshmem::cpu::rt::kSharedPerBlock};
    f = same;
  }
  *hfunc = f;
  return CUDA_SUCCESS;
}
/// What the CPU runner gives any kernel (cudaFuncGetAttributes' answers).
inline CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  PYSHMEM_CU_INIT("cuFuncGetAttribute");
  if (!pi) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute", "pi is NULL");
  if (!hfunc) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetAttribute", "hfunc is NULL");
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = hfunc->max_dynamic_shared; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: case CU_FUNC_ATTRIBUTE_NUM_REGS: case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
      *pi = 0;  // not known to the CPU build
      break;
    default: return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute", "unknown attribute");
  }
  return CUDA_SUCCESS;
}
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (any size the host can allocate) and
/// the carveout hint (accepted); other attributes are CUDA_ERROR_INVALID_VALUE.
inline CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  PYSHMEM_CU_INIT("cuFuncSetAttribute");
  if (!hfunc) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncSetAttribute", "hfunc is NULL");
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && value >= 0) {
    hfunc->max_dynamic_shared = value;
    return CUDA_SUCCESS;
  }
  if (attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT && value >= -1 && value <= 100) return CUDA_SUCCESS;
  return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute", "unsupported attribute or value");
}
/// The kernel's name as written.
inline CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  if (!name || !hfunc) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuFuncGetName", "NULL");
  *name = hfunc->abi->name;
  return CUDA_SUCCESS;
}
/// Enqueues the grid on hStream and returns at once (cudaLaunchKernel's ordering and
/// errors): the arguments are copied at the call, from kernelParams (kernelParams[i]
/// points at argument i) or from `extra`'s packed buffer.
inline CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
  return pyshmem::cpu::drv::launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                   hStream, kernelParams, extra, false);
}
/// As cuLaunchKernel, with every block resident at once (this_grid().sync() allowed): up
/// to 4096 blocks, more is CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.
inline CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                          unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                          unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                          void** kernelParams) {
  return pyshmem::cpu::drv::launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                   hStream, kernelParams, nullptr, true);
}
/// cudaOccupancyMaxActiveBlocksPerMultiprocessor's answer.
inline CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                            size_t dynamicSMemSize) {
  PYSHMEM_CU_INIT("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!func)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_HANDLE, "cuOccupancyMaxActiveBlocksPerMultiprocessor", "NULL");
  return pyshmem::cpu::drv::via_runtime([&] {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func->abi->fn, blockSize, dynamicSMemSize);
  });
}
