/* A stand-in Vulkan loader for tests/test_memory.py (TORCH_DML_VULKAN_LOADER): two physical devices
 * with the IDs in FAKE_VK_VENDOR / FAKE_VK_DEVICE, only the second named FAKE_VK_NAME, with known heaps
 * and, unless FAKE_VK_NO_BUDGET is set, VK_EXT_memory_budget. Declarations follow the Vulkan spec. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t apiVersion, driverVersion, vendorID, deviceID;
  int32_t deviceType;
  char deviceName[256];
} Properties; /* the leading fields; the caller's struct is larger */
typedef struct { uint32_t propertyFlags, heapIndex; } MemoryType;
typedef struct { uint64_t size; uint32_t flags; } MemoryHeap;
typedef struct {
  uint32_t memoryTypeCount;
  MemoryType memoryTypes[32];
  uint32_t memoryHeapCount;
  MemoryHeap memoryHeaps[16];
} MemoryProperties;
typedef struct { int32_t sType; void* pNext; MemoryProperties memoryProperties; } MemoryProperties2;
typedef struct { int32_t sType; void* pNext; uint64_t heapBudget[16], heapUsage[16]; } Budget;
typedef struct { char extensionName[256]; uint32_t specVersion; } Extension;

#define GIB (1ull << 30)
#define MIB (1ull << 20)
static int instance_token, device_tokens[2];

static uint32_t env_u32(const char* name) {
  const char* value = getenv(name);
  return value ? (uint32_t)strtoul(value, NULL, 0) : 0;
}

static int32_t create_instance(const void* info, const void* allocator, void** instance) {
  *instance = &instance_token;
  return 0;
}
static void destroy_instance(void* instance, const void* allocator) {}
static int32_t enumerate_version(uint32_t* version) {
  *version = (1u << 22) | (1u << 12);
  return 0;
}
static int32_t enumerate_devices(void* instance, uint32_t* count, void** devices) {
  if (devices) for (uint32_t i = 0; i < *count && i < 2; ++i) devices[i] = &device_tokens[i];
  else *count = 2;
  return 0;
}
static void properties(void* device, Properties* out) {
  out->apiVersion = (1u << 22) | (3u << 12);
  out->vendorID = env_u32("FAKE_VK_VENDOR");
  out->deviceID = env_u32("FAKE_VK_DEVICE");
  strncpy(out->deviceName, device == &device_tokens[1] ? getenv("FAKE_VK_NAME") : "decoy board", 255);
}
/* Device 1: DEVICE_LOCAL heaps of 6 GiB and 256 MiB around a 32 GiB host heap; the decoy has 8 GiB. */
static void memory(void* device, MemoryProperties* out) {
  memset(out, 0, sizeof(*out));
  out->memoryHeapCount = 3;
  out->memoryHeaps[0] = (MemoryHeap){device == &device_tokens[1] ? 6 * GIB : 8 * GIB, 1};
  out->memoryHeaps[1] = (MemoryHeap){32 * GIB, 0};
  out->memoryHeaps[2] = (MemoryHeap){256 * MIB, 1};
}
/* Free on device 1: (5 - 1) GiB on heap 0; heap 2 is over its budget and counts as none. */
static void memory2(void* device, MemoryProperties2* out) {
  memory(device, &out->memoryProperties);
  Budget* budget = out->pNext;
  if (!budget || budget->sType != 1000237000) return;
  const uint64_t budgets[3] = {5 * GIB, 30 * GIB, 200 * MIB}, usage[3] = {1 * GIB, 2 * GIB, 300 * MIB};
  for (int heap = 0; heap < 3; ++heap) {
    budget->heapBudget[heap] = budgets[heap];
    budget->heapUsage[heap] = usage[heap];
  }
}
static int32_t extensions(void* device, const char* layer, uint32_t* count, Extension* out) {
  if (getenv("FAKE_VK_NO_BUDGET")) {
    *count = 0;
    return 0;
  }
  if (out) strcpy(out[0].extensionName, "VK_EXT_memory_budget");
  *count = 1;
  return 0;
}

typedef void (*Function)(void);
Function vkGetInstanceProcAddr(void* instance, const char* name) {
  static const struct { const char* name; Function function; } table[] = {
      {"vkCreateInstance", (Function)create_instance},
      {"vkDestroyInstance", (Function)destroy_instance},
      {"vkEnumerateInstanceVersion", (Function)enumerate_version},
      {"vkEnumeratePhysicalDevices", (Function)enumerate_devices},
      {"vkGetPhysicalDeviceProperties", (Function)properties},
      {"vkGetPhysicalDeviceMemoryProperties", (Function)memory},
      {"vkGetPhysicalDeviceMemoryProperties2", (Function)memory2},
      {"vkEnumerateDeviceExtensionProperties", (Function)extensions},
  };
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i)
    if (strcmp(table[i].name, name) == 0) return table[i].function;
  return NULL;
}
