"""The device API: torch_directml compatibility, torch.dml, torch.accelerator and the generated methods."""

import subprocess
import sys

import pytest
import torch
import torch_dml


def test_count_and_name():
    assert torch_dml.device_count() >= 1
    assert torch_dml.is_available()
    name = torch_dml.device_name(0)
    assert isinstance(name, str) and name


def test_device_returns_dml_device():
    assert torch_dml.device() == torch.device("dml", 0)
    assert torch_dml.device(0) == torch.device("dml", 0)
    assert torch_dml.default_device() == 0


def test_invalid_index_message():
    count = torch_dml.device_count()
    with pytest.raises(RuntimeError) as raised:
        torch_dml.device(count + 4)
    assert str(raised.value) == (
        f"Invalid device_id argument supplied {count + 4}. device_id must be in range [0, {count})."
    )
    assert torch_dml.device_name(count + 4) == ""


def test_tensor_on_invalid_index_raises():
    count = torch_dml.device_count()
    with pytest.raises(RuntimeError, match="Invalid device_id argument supplied"):
        torch.ones(2, device=f"dml:{count}")


def test_tensor_lands_on_dml():
    t = torch.ones((4, 4), device=torch_dml.device())
    assert t.device == torch.device("dml", 0)
    assert str(t.device) == "dml:0"
    assert t.is_dml
    assert torch.equal(t.cpu(), torch.ones(4, 4))


def test_float64_support_matches_features():
    adapters = torch_dml._C._adapters(True)
    assert torch_dml.has_float64_support(0) == ("shader-f64" in adapters[0]["features"])


def test_torch_dml_module_contract():
    assert torch.dml.is_available()
    assert torch.dml.device_count() == torch_dml.device_count()
    assert torch.dml.current_device() == 0
    torch.dml.set_device(0)
    torch.dml.synchronize()
    assert torch.float16 in torch.dml.get_amp_supported_dtype()


def test_accelerator_api():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("dml")
    assert torch.accelerator.device_count() == torch_dml.device_count()
    assert torch.accelerator.current_device_index() == 0
    torch.accelerator.set_device_index(0)
    torch.accelerator.synchronize()


def test_device_capability_reflects_float64():
    capability = torch.accelerator.get_device_capability(torch.device("dml", 0))
    supported = capability["supported_dtypes"]
    assert torch.float32 in supported and torch.bool in supported
    assert (torch.float64 in supported) == torch_dml.has_float64_support(0)


def test_generated_methods():
    t = torch.arange(3.0).dml()
    assert t.device.type == "dml"
    module = torch.nn.Linear(2, 2).dml()
    assert module.weight.device.type == "dml"
    storage = torch.arange(4, dtype=torch.int32).untyped_storage().dml()
    assert storage.device.type == "dml"


def test_gpu_memory_reports_reserved_tiles():
    keep = torch.empty(3 * 1024 * 1024, dtype=torch.uint8, device="dml")
    tiles = torch_dml.gpu_memory(0, mb_per_tile=1)
    assert len(tiles) >= 3
    assert sum(tiles) == pytest.approx(torch.dml.memory_reserved() / 2**20)
    del keep


def test_collect_env_lists_the_adapter():
    from torch_dml import collect_env

    info = collect_env.collect()
    assert info["adapters"][0]["name"] == torch_dml.device_name(0)
    text = collect_env.render(info)
    assert torch_dml.device_name(0) in text and "features:" in text


def test_forked_child_cannot_reuse_the_device():
    import multiprocessing

    torch.ones(1, device="dml")  # the parent has initialised the device
    context = multiprocessing.get_context("fork")
    queue = context.Queue()

    def child(q):
        try:
            torch.ones(1, device="dml")
            q.put("ran")
        except RuntimeError as error:
            q.put(str(error))

    process = context.Process(target=child, args=(queue,))
    process.start()
    message = queue.get(timeout=120)
    process.join(timeout=120)
    assert "forked subprocess" in message


def test_import_and_first_use_print_nothing_without_xdg_runtime_dir():
    # Mesa printed "error: XDG_RUNTIME_DIR is invalid or not set in the environment" on first use.
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["TORCH_DML_FALLBACK_WARN"] = "0"
    env["CUDA_VISIBLE_DEVICES"] = ""  # beside CUDA, importing torch_dml rightly warns once (test_other_accelerators)
    code = "import torch, torch_dml; print(torch.ones(3, device='dml').sum().item())"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "3.0" and run.stderr == "", run.stderr


def test_device_properties_report_the_adapter():
    properties = torch.dml.get_device_properties()
    adapter = torch_dml._C._adapters(False)[0]
    assert properties.name == torch_dml.device_name(0) == adapter["name"]
    assert properties.backend == adapter["backend"] and properties.type == adapter["adapter_type"]
    assert properties.vendor_id == adapter["vendor_id"] and properties.driver == adapter["driver"]
    assert ("shader-f64" in properties.features) == torch_dml.has_float64_support(0)
    assert properties.limits["maxBufferSize"] >= properties.limits["maxStorageBufferBindingSize"] > 0
    assert properties.total_memory == torch.dml.mem_get_info(0)[1]
    assert properties.name in repr(properties) and "total_memory=" in repr(properties)
    assert torch.dml.get_device_properties("dml:0") == torch_dml.get_device_properties(torch.device("dml", 0))
    with pytest.raises(RuntimeError, match="Invalid device_id argument supplied"):
        torch.dml.get_device_properties(torch_dml.device_count())


def test_get_device_capability_matches_the_accelerator_api():
    capability = torch.dml.get_device_capability()
    assert capability == torch.accelerator.get_device_capability(torch.device("dml", 0))
    assert (torch.float64 in capability["supported_dtypes"]) == torch_dml.has_float64_support(0)


def test_init_creates_the_device_up_front_and_poisons_fork():
    from helpers import run_python

    result = run_python(
        "import multiprocessing, torch, torch_dml\n"
        "before = torch.dml.is_initialized()\n"
        "torch.dml.init()\n"
        "torch.dml.init()\n"
        "print(before, torch.dml.is_initialized(), torch.dml._initialized)\n"
        "def child(q):\n"
        "    try:\n"
        "        torch.dml.init()\n"
        "        q.put('initialised')\n"
        "    except RuntimeError as error:\n"
        "        q.put(str(error))\n"
        "context = multiprocessing.get_context('fork')\n"
        "queue = context.SimpleQueue()\n"
        "process = context.Process(target=child, args=(queue,))\n"
        "process.start()\n"
        "print(queue.get())\n"
        "process.join()\n"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[-2].split() == ["False", "True", "True"]
    assert "Cannot re-initialize dml in forked subprocess" in lines[-1]


def test_cuda_style_names_are_exported():
    for name in ("Stream", "Event", "current_stream", "default_stream", "set_stream", "stream", "init",
                 "get_device_properties", "mem_get_info", "memory_summary", "memory_stats",
                 "max_memory_reserved", "reset_accumulated_memory_stats"):
        assert getattr(torch_dml, name) is getattr(torch.dml, name), name
        assert name in torch_dml.__all__


def test_exit_right_after_a_backward_is_clean():
    # The autograd worker dropped its graph task (holding torch's stashed contextvars) while the
    # interpreter finalized: "terminate called without an active exception" in about 7 of 10 runs.
    head = "import torch, torch_dml\nx = torch.randn(1000, 1000, device='dml', requires_grad=True)\n"
    loss = "torch.nn.functional.layer_norm(x, (1000,)).sum()"
    for tail in (f"{loss}.backward()\n", f"torch.autograd.grad({loss}, x)\n", "print(x.sum().item())\n"):
        for _ in range(3):
            run = subprocess.run([sys.executable, "-c", head + tail], capture_output=True, text=True, timeout=120,
                                 check=False)
            assert run.returncode == 0 and "terminate" not in run.stderr, (tail, run.returncode, run.stderr[-2000:])
