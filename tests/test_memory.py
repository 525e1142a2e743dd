"""The caching allocator: stats that torch.accelerator reads, reuse, empty_cache, out-of-memory."""

import gc
import inspect

import pytest
import torch
import torch_dml
from helpers import run_python


def test_allocate_and_free_returns_to_baseline():
    gc.collect()
    baseline = torch.dml.memory_allocated()
    tensors = [torch.empty(1000 + i, device="dml") for i in range(1000)]
    assert torch.dml.memory_allocated() > baseline
    del tensors
    gc.collect()
    assert torch.dml.memory_allocated() == baseline


def test_cached_blocks_are_reused():
    # Blocks earlier tests freed stay cached, and one of x's size may be picked before x's own.
    torch.dml.empty_cache()
    x = torch.empty(1 << 20, device="dml")
    reserved = torch.dml.memory_reserved()
    address = x.data_ptr()
    del x
    y = torch.empty(1 << 20, device="dml")
    assert y.data_ptr() == address
    assert torch.dml.memory_reserved() == reserved


def test_peak_and_reset():
    torch.dml.reset_peak_memory_stats()
    start = torch.dml.max_memory_allocated()
    x = torch.empty(4 << 20, dtype=torch.uint8, device="dml")
    assert torch.dml.max_memory_allocated() >= start + (4 << 20)
    del x
    torch.dml.reset_peak_memory_stats()
    assert torch.dml.max_memory_allocated() == torch.dml.memory_allocated()


def test_empty_cache_releases_reserved_memory():
    x = torch.empty(8 << 20, dtype=torch.uint8, device="dml")
    del x
    before = torch.dml.memory_reserved()
    torch.dml.empty_cache()
    assert torch.dml.memory_reserved() <= before - (8 << 20)


def test_accelerator_memory_api_reads_the_allocator():
    x = torch.empty(1 << 16, device="dml")
    assert torch.accelerator.memory_allocated() == torch.dml.memory_allocated()
    stats = torch.accelerator.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.dml.memory_allocated()
    del x


def test_allocation_larger_than_the_adapter_is_out_of_memory():
    limit = torch_dml._C._adapters(True)[0]["limits"]["maxBufferSize"]
    with pytest.raises(torch.OutOfMemoryError, match="maxBufferSize") as raised:
        torch.empty(limit + 1024, dtype=torch.uint8, device="dml")
    assert str(limit) in str(raised.value) and torch_dml.device_name(0) in str(raised.value)
    # The device is still usable afterwards.
    assert torch.equal(torch.ones(3, device="dml").cpu(), torch.ones(3))


def test_resize_keeps_contents():
    x = torch.arange(6, dtype=torch.float32).to("dml")
    x.resize_(40)
    assert torch.equal(x[:6].cpu(), torch.arange(6, dtype=torch.float32))
    storage = torch.arange(8, dtype=torch.int32).to("dml").untyped_storage()
    storage.resize_(64)
    assert storage.nbytes() == 64


def test_views_share_storage_and_shallow_copy():
    x = torch.zeros(4, 4, device="dml")
    view = x[1]
    view.fill_(3.0)
    assert x.cpu()[1].tolist() == [3.0] * 4
    param = torch.nn.Parameter(torch.zeros(2))
    param.data = torch.ones(2, device="dml")
    assert param.device.type == "dml"


def test_pinned_memory():
    t = torch.arange(4.0).pin_memory()
    assert t.is_pinned()
    assert torch.equal(t.to("dml").cpu(), torch.arange(4.0))


@pytest.mark.skipif(not hasattr(torch.accelerator, "empty_host_cache"), reason="this torch has no empty_host_cache")
def test_empty_host_cache_after_use():
    # In a child: before a host allocator was registered this was a null call in ATen, a segfault.
    result = run_python(
        "import torch, torch_dml\n"
        "x = torch.arange(4.0, device='dml') * 2\n"
        "pinned = torch.arange(4.0).pin_memory()\n"
        "torch.accelerator.empty_host_cache()\n"
        "assert pinned.is_pinned() and torch.equal(pinned.to('dml').cpu(), torch.arange(4.0))\n"
        "del pinned\n"
        "torch.accelerator.empty_host_cache()\n"
        "print('sum', x.cpu().sum().item())\n"
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.split()[-2:] == ["sum", "12.0"]


def test_pinned_is_true_anywhere_inside_a_pinned_block():
    pinned = torch.arange(16.0).pin_memory()
    inner = pinned.untyped_storage()[8:]  # a storage that starts 8 bytes into the pinned block
    assert inner.data_ptr() == pinned.data_ptr() + 8
    # Before torch 2.13 a storage's is_pinned() asked CUDA unless told otherwise (device="cuda" default).
    device_default = inspect.signature(torch.UntypedStorage.is_pinned).parameters["device"].default
    assert inner.is_pinned() if device_default is None else inner.is_pinned("dml")
    assert torch.empty(0).set_(inner).is_pinned()
    assert pinned[3:].is_pinned()
    unpinned = torch.arange(16.0)
    assert not unpinned.untyped_storage()[8:].is_pinned()
    assert torch.equal(torch.empty(0).set_(inner).to("dml").cpu(), torch.arange(2.0, 16.0))


def test_mem_get_info_is_honest_about_the_reserved_bytes():
    free, total = torch.dml.mem_get_info()
    properties = torch.dml.get_device_properties()
    assert total == properties.total_memory > 0
    assert 0 <= free <= total
    assert torch.accelerator.get_memory_info(0) == torch.dml.mem_get_info(0)
    keep = torch.empty(64 << 20, dtype=torch.uint8, device="dml")
    free_after, total_after = torch.dml.mem_get_info("dml:0")
    assert total_after == total
    # What the allocator holds is never counted as free (a Vulkan budget counts it as used); system
    # memory may be scarcer still.
    free_source = torch_dml._C._memory_info(0)[3]
    assert free_source in ("budget", "reserved")
    if free_source == "budget" or properties.type in ("cpu", "integrated"):
        assert free_after <= total - torch.dml.memory_reserved()
    else:
        assert free_after == total - torch.dml.memory_reserved()
    del keep


def _physical_memory() -> int:
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _vulkan_loader_present() -> bool:
    import ctypes
    import sys

    try:
        ctypes.CDLL("vulkan-1.dll" if sys.platform == "win32" else "libvulkan.so.1")
    except OSError:
        return False
    return True


def _fallback_source(properties) -> str:
    return "host" if properties.type in ("cpu", "integrated") else "maxBufferSize"


def test_mem_get_info_total_follows_the_adapter_type():
    properties = torch.dml.get_device_properties(0)
    _free, total = torch.dml.mem_get_info(0)
    vulkan = torch_dml._C._vulkan_memory(0)
    if properties.type == "cpu":
        # lavapipe's Vulkan heap is host memory under a nominal size: the OS's figure is the truer one.
        assert properties.total_memory_source == "host"
        assert total == _physical_memory()
    elif vulkan is not None:
        assert properties.total_memory_source == "vulkan"
        assert total == vulkan[1]
    else:
        assert properties.total_memory_source == _fallback_source(properties)
        if properties.total_memory_source == "host":
            assert total == _physical_memory()
        else:
            assert total == properties.limits["maxBufferSize"]


def test_vulkan_finds_the_adapter():
    properties = torch.dml.get_device_properties(0)
    if properties.backend != "Vulkan" or not _vulkan_loader_present():
        pytest.skip(f"no Vulkan loader for a {properties.backend} adapter")
    vulkan = torch_dml._C._vulkan_memory(0)
    assert vulkan is not None, f"Vulkan did not list {properties.name} ({properties.vendor_id:#x}:{properties.device_id:#x})"
    budget_free, total = vulkan
    assert total > 0
    if properties.type == "cpu":
        assert total <= _physical_memory()
    assert budget_free is None or 0 <= budget_free <= total


def test_a_missing_vulkan_loader_falls_back_to_the_old_source():
    code = (
        "import torch, torch_dml\n"
        "p = torch.dml.get_device_properties(0)\n"
        "free, total = torch.dml.mem_get_info(0)\n"
        "print(torch_dml._C._vulkan_memory(0), p.type, p.total_memory_source, total == p.total_memory,"
        " torch_dml._C._memory_info(0)[3], 0 <= free <= total)\n"
    )
    result = run_python(code, TORCH_DML_VULKAN_LOADER="libtorch-dml-no-such-vulkan-loader.so.1")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    vulkan, adapter_type, source, agree, free_source, free_ok = result.stdout.split()
    assert vulkan == "None"
    assert source == ("host" if adapter_type in ("cpu", "integrated") else "maxBufferSize")
    assert (agree, free_source, free_ok) == ("True", "reserved", "True")


@pytest.mark.parametrize("budget", [True, False], ids=["budget", "no-budget"])
def test_vulkan_heaps_and_budget_are_summed_for_the_matching_device(tmp_path, budget):
    # A stand-in loader with known heaps: the real drivers here (lavapipe) have no memory budget.
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    compiler = shutil.which("cc")
    if compiler is None or sys.platform == "win32":
        pytest.skip("needs a C compiler to build the stand-in Vulkan loader")
    library = tmp_path / "fake_vulkan.so"
    source = Path(__file__).parent / "data" / "fake_vulkan_loader.c"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    properties = torch.dml.get_device_properties(0)
    if properties.backend != "Vulkan":
        pytest.skip("the Vulkan query is asked only for a Vulkan adapter")
    env = {
        "TORCH_DML_VULKAN_LOADER": str(library),
        "FAKE_VK_VENDOR": str(properties.vendor_id),
        "FAKE_VK_DEVICE": str(properties.device_id),
        "FAKE_VK_NAME": properties.name,
    }
    if not budget:
        env["FAKE_VK_NO_BUDGET"] = "1"
    result = run_python("import torch, torch_dml\nprint(torch_dml._C._vulkan_memory(0))", **env)
    assert result.returncode == 0, result.stderr
    gib, mib = 1 << 30, 1 << 20
    # The decoy shares the IDs but not the name; heap 1 is not DEVICE_LOCAL; heap 2 is over budget.
    expected_free = 4 * gib if budget else None
    assert result.stdout.strip() == str((expected_free, 6 * gib + 256 * mib))


def test_the_vulkan_query_is_silent_and_exits_cleanly():
    # The probe's instance is destroyed at exit, after wgpu's: neither may print or abort.
    result = run_python("import torch, torch_dml\nprint(torch_dml._C._vulkan_memory(0) is not None)")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.strip() in ("True", "False")


def test_memory_summary_shows_current_and_peak():
    torch.dml.reset_peak_memory_stats()
    x = torch.empty(3 << 20, dtype=torch.uint8, device="dml")
    text = torch.dml.memory_summary()
    assert "dml:0" in text
    allocated_row = next(line for line in text.splitlines() if line.startswith("| Allocated memory"))
    reserved_row = next(line for line in text.splitlines() if line.startswith("| Reserved memory"))
    mib = torch.dml.memory_allocated() / 2**20
    assert f"{mib:.2f} MiB" in allocated_row
    assert f"{torch.dml.max_memory_reserved() / 2**20:.2f} MiB" in reserved_row
    short = torch_dml.memory_summary(abbreviated=True)
    assert "from large pool" in text and "from large pool" not in short
    del x


def test_max_memory_reserved_and_accumulated_stats():
    torch.dml.reset_peak_memory_stats()
    x = torch.empty(2 << 20, dtype=torch.uint8, device="dml")
    assert torch.dml.max_memory_reserved() >= torch.dml.memory_reserved() >= 2 << 20
    del x
    gc.collect()
    assert torch.dml.memory_stats()["allocation.all.freed"] > 0
    current = torch.dml.memory_stats()["allocation.all.current"]
    torch.dml.reset_accumulated_memory_stats()
    stats = torch.dml.memory_stats()
    assert stats["allocation.all.freed"] == 0 and stats["allocated_bytes.all.allocated"] == 0
    assert stats["allocation.all.current"] == current  # current values are not running totals
    y = torch.empty(16, device="dml")
    assert torch.dml.memory_stats()["allocation.all.allocated"] == 1
    del y


def test_memory_api_names_a_missing_device():
    count = torch_dml.device_count()
    for call in (torch.dml.memory_stats, torch.dml.mem_get_info, torch.dml.memory_summary):
        with pytest.raises(RuntimeError, match="Invalid device_id argument supplied"):
            call(count)
