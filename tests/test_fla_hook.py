"""The fla hook (gdn.ops.fla) with a fake fla module: CI has neither a GPU nor fla, so nothing here needs one."""
import sys
import types

import pytest
import torch

from gdn.ops import fla, recurrent_gated_delta_rule
from gdn.ops.fla import FLA_MODULE, fla_chunk
from gdn.qwen35 import gates
from tests.kernel_inputs import make_inputs


@pytest.fixture
def fake_fla(monkeypatch):
    """A stand-in fla whose chunk kernel is our recurrent one scaled by (1 + 1e-3): a known 'TF32 error'."""
    calls = []

    def chunk_gated_delta_rule(*, q, k, v, g, beta, initial_state, output_final_state, use_qk_l2norm_in_kernel):
        calls.append({"l2norm": use_qk_l2norm_in_kernel, "final": output_final_state, "T": q.shape[1]})
        o, S = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=initial_state,
                                          output_final_state=output_final_state,
                                          use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel)
        return o * (1 + 1e-3), None if S is None else S * (1 + 1e-3)
    module = types.ModuleType(FLA_MODULE)
    module.chunk_gated_delta_rule = chunk_gated_delta_rule
    monkeypatch.setitem(sys.modules, FLA_MODULE, module)
    return calls


def test_no_fla_off_cuda_even_when_importable(fake_fla):
    assert fla_chunk("cpu") is None and fla_chunk(torch.device("cpu")) is None
    assert fake_fla == []


def test_an_fla_that_fails_to_import_counts_as_absent(monkeypatch):
    monkeypatch.setitem(sys.modules, FLA_MODULE, None)          # import of a None entry raises ImportError
    assert fla_chunk("cuda") is None


def test_the_hook_passes_our_keywords_through(fake_fla, monkeypatch):
    monkeypatch.setattr(fla, "ACCELERATOR", "cpu")              # the fake runs on CPU tensors: call the CPU fla's device
    run = fla_chunk("cpu")
    q, k, v, g, beta, _ = make_inputs(1, 20, 2, 2, 8, 8, seed=1, dtype=torch.float64)
    o, S = run(q, k, v, g=g, beta=beta, output_final_state=True, use_qk_l2norm_in_kernel=True)
    o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, output_final_state=True,
                                              use_qk_l2norm_in_kernel=True)
    torch.testing.assert_close(o, o_ref * (1 + 1e-3))
    torch.testing.assert_close(S, S_ref * (1 + 1e-3))
    assert fake_fla == [{"l2norm": True, "final": True, "T": 20}]


def test_the_kernels_view_moves_every_tensor_to_flas_device(monkeypatch):
    """kernels_side_by_side (what the app calls) with a fake fla that records where its inputs live. The
    'GPU' is the meta device here, so no CUDA is needed: every tensor, the g and beta keywords included,
    must arrive there."""
    devices = []

    def chunk_gated_delta_rule(*, q, k, v, g, beta, initial_state, output_final_state, use_qk_l2norm_in_kernel):
        devices.append({name: x.device.type for name, x in dict(q=q, k=k, v=v, g=g, beta=beta).items()})
        B, T, HV, V = v.shape
        return torch.zeros(B, T, HV, V), torch.zeros(B, HV, q.shape[-1], V)   # back on the CPU, all zeros
    module = types.ModuleType(FLA_MODULE)
    module.chunk_gated_delta_rule = chunk_gated_delta_rule
    monkeypatch.setitem(sys.modules, FLA_MODULE, module)
    monkeypatch.setattr(fla, "ACCELERATOR", "meta")
    monkeypatch.setattr(fla, "_accelerator_available", lambda: True)
    q, k, v, g, beta, _ = make_inputs(1, 40, 2, 4, 8, 8, seed=2, dtype=torch.float32)
    side = gates.kernels_side_by_side(q, k, v, g, beta, head=1)
    assert devices == [dict.fromkeys("q k v g beta".split(), "meta")] * 2     # the warm-up, then the timed run
    assert side["rel"]["fla"] == pytest.approx(1.0)                            # zeros: as far as the scale itself
    assert side["rel"]["chunk"] < gates.KERNEL_RTOL and "fla" in side["seconds"]
