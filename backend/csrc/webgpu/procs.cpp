#include "webgpu/procs.h"

#include <mutex>
#include <stdexcept>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace torch_dml::webgpu {
namespace {

Procs g_procs;
std::string g_path;
bool g_loaded = false;
std::mutex g_mutex;

void* open_library(const std::string& path, std::string& error) {
#ifdef _WIN32
  HMODULE handle = LoadLibraryA(path.c_str());
  if (!handle) error = "LoadLibrary failed with code " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(handle);
#else
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* message = dlerror();
    error = message ? message : "dlopen failed";
  }
  return handle;
#endif
}

void* find_symbol(void* handle, const char* name) {
#ifdef _WIN32
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(handle), name));
#else
  return dlsym(handle, name);
#endif
}

} // namespace

void load(const std::string& library_path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_loaded) return;
  std::string error;
  void* handle = open_library(library_path, error);
  if (!handle) throw std::runtime_error("cannot open " + library_path + ": " + error);
  Procs procs;
#define TORCH_DML_RESOLVE_PROC(name)                                                           \
  procs.name = reinterpret_cast<decltype(procs.name)>(find_symbol(handle, "wgpu" #name));      \
  if (!procs.name)                                                                            \
    throw std::runtime_error(library_path + " has no symbol wgpu" #name                        \
                             " (torch_dml needs wgpu-native 29, from wgpu==0.32.0)");
  TORCH_DML_WGPU_PROCS(TORCH_DML_RESOLVE_PROC)
#undef TORCH_DML_RESOLVE_PROC
  g_procs = procs;
  g_path = library_path;
  g_loaded = true;
  // The library stays loaded for the life of the process: WebGPU objects outlive any one caller.
}

bool loaded() {
  return g_loaded;
}

const std::string& library_path() {
  return g_path;
}

const Procs& wgpu() {
  if (!g_loaded) throw std::runtime_error("torch_dml: wgpu-native is not loaded (import torch_dml first)");
  return g_procs;
}

std::string to_string(WGPUStringView view) {
  if (!view.data) return {};
  if (view.length == WGPU_STRLEN) return std::string(view.data);
  return std::string(view.data, view.length);
}

} // namespace torch_dml::webgpu
