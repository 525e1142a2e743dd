#include "runtime/vulkan_memory.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX // windows.h's min/max macros break std::min
#endif
#include <windows.h>
#define TORCH_DML_VKAPI __stdcall
#else
#include <dlfcn.h>
#define TORCH_DML_VKAPI
#endif

namespace torch_dml::runtime {
namespace {

// The few Vulkan declarations used here, with the Vulkan specification's values: no Vulkan headers
// are needed to build torch_dml, and no SDK is assumed on the build machine.
using VkInstance = struct VkInstanceOpaque*;
using VkPhysicalDevice = struct VkPhysicalDeviceOpaque*;
using VkResult = int32_t;
using VkDeviceSize = uint64_t;
using VkFlags = uint32_t;

constexpr VkResult kVkSuccess = 0;
constexpr VkResult kVkIncomplete = 5;
enum VkStructureType : int32_t {
  kVkStructureTypeApplicationInfo = 0,
  kVkStructureTypeInstanceCreateInfo = 1,
  kVkStructureTypePhysicalDeviceMemoryProperties2 = 1000059006,
  kVkStructureTypePhysicalDeviceMemoryBudgetPropertiesExt = 1000237000,
};
constexpr VkFlags kVkMemoryHeapDeviceLocalBit = 0x1;
constexpr uint32_t kVkMaxMemoryTypes = 32;
constexpr uint32_t kVkMaxMemoryHeaps = 16;
constexpr uint32_t kVkMaxExtensionNameSize = 256;
constexpr uint32_t kVkMaxPhysicalDeviceNameSize = 256;

constexpr uint32_t vk_api_version(uint32_t major, uint32_t minor) { return (major << 22) | (minor << 12); }

struct VkApplicationInfo {
  VkStructureType sType;
  const void* pNext;
  const char* pApplicationName;
  uint32_t applicationVersion;
  const char* pEngineName;
  uint32_t engineVersion;
  uint32_t apiVersion;
};

struct VkInstanceCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  const VkApplicationInfo* pApplicationInfo;
  uint32_t enabledLayerCount;
  const char* const* ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char* const* ppEnabledExtensionNames;
};

// Only the leading fields are read; VkPhysicalDeviceLimits and the sparse properties that follow are
// left as room (their real size is under 600 bytes) rather than declared field by field.
struct VkPhysicalDeviceProperties {
  uint32_t apiVersion;
  uint32_t driverVersion;
  uint32_t vendorID;
  uint32_t deviceID;
  int32_t deviceType;
  char deviceName[kVkMaxPhysicalDeviceNameSize];
  uint8_t pipelineCacheUUID[16];
  alignas(8) unsigned char limits_and_sparse_properties[2048];
};

struct VkMemoryType {
  VkFlags propertyFlags;
  uint32_t heapIndex;
};

struct VkMemoryHeap {
  VkDeviceSize size;
  VkFlags flags;
};

struct VkPhysicalDeviceMemoryProperties {
  uint32_t memoryTypeCount;
  VkMemoryType memoryTypes[kVkMaxMemoryTypes];
  uint32_t memoryHeapCount;
  VkMemoryHeap memoryHeaps[kVkMaxMemoryHeaps];
};

struct VkPhysicalDeviceMemoryProperties2 {
  VkStructureType sType;
  void* pNext;
  VkPhysicalDeviceMemoryProperties memoryProperties;
};

struct VkPhysicalDeviceMemoryBudgetPropertiesEXT {
  VkStructureType sType;
  void* pNext;
  VkDeviceSize heapBudget[kVkMaxMemoryHeaps];
  VkDeviceSize heapUsage[kVkMaxMemoryHeaps];
};

struct VkExtensionProperties {
  char extensionName[kVkMaxExtensionNameSize];
  uint32_t specVersion;
};

using PFN_vkVoidFunction = void(TORCH_DML_VKAPI*)();
using PFN_vkGetInstanceProcAddr = PFN_vkVoidFunction(TORCH_DML_VKAPI*)(VkInstance, const char*);
using PFN_vkEnumerateInstanceVersion = VkResult(TORCH_DML_VKAPI*)(uint32_t*);
using PFN_vkCreateInstance = VkResult(TORCH_DML_VKAPI*)(const VkInstanceCreateInfo*, const void*, VkInstance*);
using PFN_vkDestroyInstance = void(TORCH_DML_VKAPI*)(VkInstance, const void*);
using PFN_vkEnumeratePhysicalDevices = VkResult(TORCH_DML_VKAPI*)(VkInstance, uint32_t*, VkPhysicalDevice*);
using PFN_vkGetPhysicalDeviceProperties = void(TORCH_DML_VKAPI*)(VkPhysicalDevice, VkPhysicalDeviceProperties*);
using PFN_vkGetPhysicalDeviceMemoryProperties =
    void(TORCH_DML_VKAPI*)(VkPhysicalDevice, VkPhysicalDeviceMemoryProperties*);
using PFN_vkGetPhysicalDeviceMemoryProperties2 =
    void(TORCH_DML_VKAPI*)(VkPhysicalDevice, VkPhysicalDeviceMemoryProperties2*);
using PFN_vkEnumerateDeviceExtensionProperties =
    VkResult(TORCH_DML_VKAPI*)(VkPhysicalDevice, const char*, uint32_t*, VkExtensionProperties*);

class LoaderLibrary {
 public:
  explicit LoaderLibrary(const char* name) {
#ifdef _WIN32
    handle_ = LoadLibraryA(name);
#else
    handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
#endif
  }
  ~LoaderLibrary() {
    if (handle_ == nullptr) return;
#ifdef _WIN32
    FreeLibrary(static_cast<HMODULE>(handle_));
#else
    dlclose(handle_);
#endif
  }
  LoaderLibrary(const LoaderLibrary&) = delete;
  LoaderLibrary& operator=(const LoaderLibrary&) = delete;

  PFN_vkGetInstanceProcAddr get_instance_proc_addr() const {
    if (handle_ == nullptr) return nullptr;
#ifdef _WIN32
    auto* symbol = GetProcAddress(static_cast<HMODULE>(handle_), "vkGetInstanceProcAddr");
#else
    void* symbol = dlsym(handle_, "vkGetInstanceProcAddr");
#endif
    return reinterpret_cast<PFN_vkGetInstanceProcAddr>(symbol);
  }

 private:
  void* handle_ = nullptr;
};

struct InstanceDeleter {
  PFN_vkDestroyInstance destroy = nullptr;
  void operator()(VkInstance instance) const {
    if (destroy != nullptr) destroy(instance, nullptr);
  }
};
using InstanceHandle = std::unique_ptr<std::remove_pointer_t<VkInstance>, InstanceDeleter>;

struct PhysicalDeviceRecord {
  VkPhysicalDevice device = nullptr;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string name;
  uint64_t total = 0;
  uint32_t device_local_heaps = 0; // a bit per heap index
  bool has_budget = false;
};

const char* loader_name() {
  if (const char* chosen = std::getenv("TORCH_DML_VULKAN_LOADER"); chosen != nullptr && *chosen != '\0')
    return chosen;
#ifdef _WIN32
  return "vulkan-1.dll";
#else
  return "libvulkan.so.1";
#endif
}

// One Vulkan instance for the process, kept for the budget queries; members are declared so that the
// instance is destroyed before the loader library is closed.
class VulkanProbe {
 public:
  static VulkanProbe& get() {
    static VulkanProbe probe;
    return probe;
  }

  std::optional<VulkanMemory> query(uint32_t vendor_id, uint32_t device_id, const std::string& name) {
    std::vector<const PhysicalDeviceRecord*> matches;
    for (const auto& record : devices_)
      if (record.vendor_id == vendor_id && record.device_id == device_id) matches.push_back(&record);
    if (matches.size() > 1) {
      std::erase_if(matches, [&](const PhysicalDeviceRecord* record) { return record->name != name; });
    }
    if (matches.empty() || matches.front()->total == 0) return std::nullopt;
    VulkanMemory memory;
    memory.total = matches.front()->total;
    // Identical boards (same IDs and name) cannot be told apart without a PCI address, which wgpu does
    // not report: their size is the same, but one board's budget is not the other's free memory.
    if (matches.size() > 1) {
      for (const auto* record : matches)
        if (record->total != memory.total) return std::nullopt;
      return memory;
    }
    if (matches.front()->has_budget) memory.free = budget_free(*matches.front());
    return memory;
  }

 private:
  VulkanProbe() : library_(loader_name()) {
    const auto get_proc = library_.get_instance_proc_addr();
    if (get_proc == nullptr) return;
    const auto create_instance =
        reinterpret_cast<PFN_vkCreateInstance>(get_proc(nullptr, "vkCreateInstance"));
    const auto instance_version =
        reinterpret_cast<PFN_vkEnumerateInstanceVersion>(get_proc(nullptr, "vkEnumerateInstanceVersion"));
    if (create_instance == nullptr) return;
    // A 1.0 loader has no vkEnumerateInstanceVersion and refuses an instance asking for 1.1; with it,
    // the memory budget (which needs vkGetPhysicalDeviceMemoryProperties2) is not asked for.
    uint32_t loader_version = vk_api_version(1, 0);
    if (instance_version != nullptr && instance_version(&loader_version) != kVkSuccess)
      loader_version = vk_api_version(1, 0);
    const bool instance_1_1 = loader_version >= vk_api_version(1, 1);
    VkApplicationInfo app{};
    app.sType = kVkStructureTypeApplicationInfo;
    app.pApplicationName = "torch_dml memory query";
    app.apiVersion = instance_1_1 ? vk_api_version(1, 1) : vk_api_version(1, 0);
    VkInstanceCreateInfo create{};
    create.sType = kVkStructureTypeInstanceCreateInfo;
    create.pApplicationInfo = &app;
    VkInstance instance = nullptr;
    if (create_instance(&create, nullptr, &instance) != kVkSuccess || instance == nullptr) return;
    const auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(get_proc(instance, "vkDestroyInstance"));
    if (destroy == nullptr) return; // nothing could release it; the loader stays open to keep it valid
    instance_ = InstanceHandle(instance, InstanceDeleter{destroy});
    enumerate(get_proc, instance_1_1);
  }

  template <typename Fn>
  static Fn proc(PFN_vkGetInstanceProcAddr get_proc, VkInstance instance, const char* name) {
    return reinterpret_cast<Fn>(get_proc(instance, name));
  }

  void enumerate(PFN_vkGetInstanceProcAddr get_proc, bool instance_1_1) {
    VkInstance instance = instance_.get();
    const auto enumerate_devices =
        proc<PFN_vkEnumeratePhysicalDevices>(get_proc, instance, "vkEnumeratePhysicalDevices");
    const auto properties =
        proc<PFN_vkGetPhysicalDeviceProperties>(get_proc, instance, "vkGetPhysicalDeviceProperties");
    const auto memory_properties =
        proc<PFN_vkGetPhysicalDeviceMemoryProperties>(get_proc, instance, "vkGetPhysicalDeviceMemoryProperties");
    const auto extensions =
        proc<PFN_vkEnumerateDeviceExtensionProperties>(get_proc, instance, "vkEnumerateDeviceExtensionProperties");
    if (instance_1_1)
      memory_properties2_ = proc<PFN_vkGetPhysicalDeviceMemoryProperties2>(
          get_proc, instance, "vkGetPhysicalDeviceMemoryProperties2");
    if (enumerate_devices == nullptr || properties == nullptr || memory_properties == nullptr) return;

    uint32_t count = 0;
    if (enumerate_devices(instance, &count, nullptr) != kVkSuccess || count == 0) return;
    std::vector<VkPhysicalDevice> handles(count);
    const VkResult listed = enumerate_devices(instance, &count, handles.data());
    if (listed != kVkSuccess && listed != kVkIncomplete) return;
    handles.resize(count);

    for (VkPhysicalDevice handle : handles) {
      auto props = std::make_unique<VkPhysicalDeviceProperties>();
      properties(handle, props.get());
      VkPhysicalDeviceMemoryProperties memory{};
      memory_properties(handle, &memory);
      PhysicalDeviceRecord record;
      record.device = handle;
      record.vendor_id = props->vendorID;
      record.device_id = props->deviceID;
      record.name.assign(props->deviceName, strnlen(props->deviceName, sizeof(props->deviceName)));
      for (uint32_t heap = 0; heap < memory.memoryHeapCount && heap < kVkMaxMemoryHeaps; ++heap) {
        if ((memory.memoryHeaps[heap].flags & kVkMemoryHeapDeviceLocalBit) == 0) continue;
        record.total += memory.memoryHeaps[heap].size;
        record.device_local_heaps |= 1u << heap;
      }
      // Properties2 on a physical device needs the device, not only the instance, to speak 1.1.
      record.has_budget = memory_properties2_ != nullptr && props->apiVersion >= vk_api_version(1, 1) &&
          extensions != nullptr && has_extension(extensions, handle, "VK_EXT_memory_budget");
      devices_.push_back(std::move(record));
    }
  }

  static bool has_extension(PFN_vkEnumerateDeviceExtensionProperties extensions, VkPhysicalDevice device,
                            const char* wanted) {
    uint32_t count = 0;
    if (extensions(device, nullptr, &count, nullptr) != kVkSuccess || count == 0) return false;
    std::vector<VkExtensionProperties> listed(count);
    const VkResult result = extensions(device, nullptr, &count, listed.data());
    if (result != kVkSuccess && result != kVkIncomplete) return false;
    for (uint32_t i = 0; i < count && i < listed.size(); ++i)
      if (strncmp(listed[i].extensionName, wanted, kVkMaxExtensionNameSize) == 0) return true;
    return false;
  }

  // Budget and usage move with every allocation anywhere on the device; the call is a driver-side read,
  // cheap enough for each mem_get_info.
  std::optional<uint64_t> budget_free(const PhysicalDeviceRecord& record) {
    const std::lock_guard<std::mutex> lock(mutex_);
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{};
    budget.sType = kVkStructureTypePhysicalDeviceMemoryBudgetPropertiesExt;
    VkPhysicalDeviceMemoryProperties2 memory{};
    memory.sType = kVkStructureTypePhysicalDeviceMemoryProperties2;
    memory.pNext = &budget;
    memory_properties2_(record.device, &memory);
    uint64_t free = 0;
    for (uint32_t heap = 0; heap < kVkMaxMemoryHeaps; ++heap) {
      if ((record.device_local_heaps & (1u << heap)) == 0) continue;
      if (budget.heapBudget[heap] > budget.heapUsage[heap]) free += budget.heapBudget[heap] - budget.heapUsage[heap];
    }
    return free;
  }

  LoaderLibrary library_;
  InstanceHandle instance_;
  PFN_vkGetPhysicalDeviceMemoryProperties2 memory_properties2_ = nullptr;
  std::vector<PhysicalDeviceRecord> devices_;
  std::mutex mutex_;
};

} // namespace

std::optional<VulkanMemory> vulkan_memory(uint32_t vendor_id, uint32_t device_id, const std::string& name) {
  try {
    return VulkanProbe::get().query(vendor_id, device_id, name);
  } catch (...) { // an allocation failure while probing: no Vulkan answer, as documented
    return std::nullopt;
  }
}

} // namespace torch_dml::runtime
