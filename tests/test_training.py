"""A real training step on dml matches the same step on the CPU."""

import copy

import torch


def test_mlp_forward_backward_sgd_matches_cpu():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    inputs = torch.randn(32, 8)
    targets = torch.randint(0, 3, (32,))

    results = {}
    for device in ("cpu", "dml"):
        replica = copy.deepcopy(model).to(device)
        optimizer = torch.optim.SGD(replica.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(replica(inputs.to(device)), targets.to(device))
            loss.backward()
            optimizer.step()
        results[device] = (loss.item(), [p.detach().cpu() for p in replica.parameters()],
                           [p.grad.cpu() for p in replica.parameters()])

    cpu_loss, cpu_params, cpu_grads = results["cpu"]
    dml_loss, dml_params, dml_grads = results["dml"]
    assert abs(cpu_loss - dml_loss) < 1e-5
    for expected, actual in zip(cpu_params + cpu_grads, dml_params + dml_grads):
        assert actual.device.type == "cpu"
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6)
    assert all(p.device.type == "dml" for p in model.to("dml").parameters())
