"""model.trace features: kernels agree, carried state continues a sequence, state diagnostics, lazy layers."""
import pytest
import torch

from gdn.ops import state_norm_scan
from gdn.qwen35 import load_model
from tests.qwen35_fixtures import rel_err, text_config, write_checkpoint


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = write_checkpoint(tmp_path_factory.mktemp("trace"), text_config(num_hidden_layers=4), seed=3, shards=2)
    return load_model(folder, dtype=torch.float32, allow_any_folder=True)


def ids_of(T, seed=0, vocab=512):
    return torch.randint(0, vocab, (T,), generator=torch.Generator().manual_seed(seed))


def test_recurrent_and_chunk_traces_agree(model):
    ids = ids_of(77)
    a, b = model.trace(ids, kernel="chunk"), model.trace(ids, kernel="recurrent")
    for la, lb in zip(a.layers, b.layers):
        assert rel_err(la.output, lb.output) < 1e-4
        if la.kind == "linear_attention":
            assert rel_err(la.final_state, lb.final_state) < 1e-4
            assert rel_err(la.state_norms, lb.state_norms) < 1e-4
    assert rel_err(a.logits, b.logits) < 1e-4


@pytest.mark.parametrize("split", [1, 2, 40, 69], ids=lambda s: f"split-at-{s}")
@pytest.mark.parametrize("kernel", ["chunk", "recurrent"])
def test_two_calls_with_carried_state_equal_one(model, split, kernel):
    ids = ids_of(70, seed=1)
    full = model.trace(ids, kernel=kernel)
    first = model.trace(ids[:split], kernel=kernel)
    second = model.trace(ids[split:], kernel=kernel, cache=first.cache)
    assert second.start == split and second.cache.length == 70
    for lf, l1, l2 in zip(full.layers, first.layers, second.layers):
        assert rel_err(torch.cat([l1.output, l2.output]), lf.output) < 1e-4
        if lf.kind == "linear_attention":
            assert rel_err(torch.cat([l1.g, l2.g]), lf.g) < 1e-4
            assert rel_err(torch.cat([l1.beta, l2.beta]), lf.beta) < 1e-4
            assert rel_err(l2.final_state, lf.final_state) < 1e-4
            assert rel_err(torch.cat([l1.state_norms, l2.state_norms]), lf.state_norms) < 1e-4
    assert rel_err(torch.cat([first.logits, second.logits]), full.logits) < 1e-4


def test_state_norms_and_on_demand_states_match_the_recurrence(model):
    ids = ids_of(75, seed=2)
    trace = model.trace(ids)
    lt = trace.layers[1]
    HV = lt.g.shape[1]
    for head in range(HV):
        S = lt.states(head)                                                # [T, K, V] token by token
        assert S.shape[0] == 75
        assert rel_err(S.flatten(1).norm(dim=1), lt.state_norms[:, head]) < 1e-4
        assert rel_err(S[-1], lt.final_state[head]) < 1e-4
        assert rel_err(lt.state_at(40, head), S[40]) < 1e-4
        assert rel_err(lt.states(head, start=64, stop=70), S[64:70]) < 1e-4
    eager = model.trace(ids, state_norms=True)
    assert eager.layers[1]._norms is not None
    assert rel_err(eager.layers[1].state_norms, lt.state_norms) < 1e-5
    assert trace.layers[3].state_norms is None
    with pytest.raises(ValueError, match="full attention"):
        trace.layers[3].state_at(0, 0)
    with pytest.raises(ValueError, match="head must be"):
        lt.state_at(0, HV)


def test_state_norm_scan_with_initial_state_and_grouped_heads():
    gen = torch.Generator().manual_seed(0)
    B, T, HK, HV, K, V = 1, 100, 2, 4, 8, 6
    k, v = torch.randn(B, T, HK, K, generator=gen), torch.randn(B, T, HV, V, generator=gen)
    g = -torch.rand(B, T, HV, generator=gen)
    beta = torch.rand(B, T, HV, generator=gen)
    S = torch.randn(B, HV, K, V, generator=gen)
    norms, final = state_norm_scan(k, v, g, beta, S, chunk=16)
    kn = k / (k.pow(2).sum(-1, keepdim=True) + 1e-6).sqrt()
    kn = kn.repeat_interleave(HV // HK, dim=2)
    for t in range(T):                                                     # the plain recurrence, one token at a time
        S = S * g[:, t].exp()[..., None, None]
        u = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhk,bhkv->bhv", kn[:, t], S))
        S = S + torch.einsum("bhk,bhv->bhkv", kn[:, t], u)
        assert rel_err(norms[:, t], S.flatten(2).norm(dim=-1)) < 1e-4
    assert rel_err(final, S) < 1e-4


def test_state_norm_scan_float64_with_alpha_zero_and_strong_decay():
    """Same recurrence in float64, with alpha = 0 tokens and decays far below float32's flush."""
    gen = torch.Generator().manual_seed(1)
    B, T, HK, HV, K, V = 1, 90, 1, 2, 5, 4
    k, v = torch.randn(B, T, HK, K, generator=gen, dtype=torch.float64), torch.randn(B, T, HV, V, generator=gen, dtype=torch.float64)
    g = -3 * torch.rand(B, T, HV, generator=gen, dtype=torch.float64)
    g[:, 10:30:3] = -float("inf")
    g[:, 50:60] = -60.0
    beta = torch.rand(B, T, HV, generator=gen, dtype=torch.float64)
    norms, final = state_norm_scan(k, v, g, beta, chunk=16)
    assert norms.dtype == final.dtype == torch.float64
    kn = (k / (k.pow(2).sum(-1, keepdim=True) + 1e-6).sqrt()).repeat_interleave(HV // HK, dim=2)
    S = torch.zeros(B, HV, K, V, dtype=torch.float64)
    for t in range(T):
        S = S * g[:, t].exp()[..., None, None]
        u = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhk,bhkv->bhv", kn[:, t], S))
        S = S + torch.einsum("bhk,bhv->bhkv", kn[:, t], u)
        torch.testing.assert_close(norms[:, t], S.flatten(2).norm(dim=-1), rtol=1e-9, atol=1e-12)


def test_state_norm_scan_runs_on_the_inputs_device():
    """On the meta device every tensor the scan builds must follow its inputs (before: CPU constants)."""
    meta = lambda *shape: torch.zeros(*shape, device="meta", dtype=torch.float64)
    norms, final = state_norm_scan(meta(1, 70, 2, 8), meta(1, 70, 4, 6), meta(1, 70, 4), meta(1, 70, 4), meta(1, 4, 8, 6))
    assert norms.device.type == final.device.type == "meta" and norms.shape == (1, 70, 4) and final.shape == (1, 4, 8, 6)


def full_embedding(folder):
    """The whole embedding matrix, read independently of the loader (float32 from the bf16 on disk)."""
    from safetensors.torch import load_file
    tensors = {}
    for path in folder.glob("*.safetensors"):
        tensors.update(load_file(str(path)))
    return tensors["model.language_model.embed_tokens.weight"].float()


def test_upto_layer_reads_only_those_layers(tmp_path):
    folder = write_checkpoint(tmp_path, text_config(num_hidden_layers=8), seed=4, shards=3)
    model = load_model(folder, dtype=torch.float32, lazy=True, allow_any_folder=True)
    assert model._loaded == set()
    trace = model.trace(ids_of(20), upto_layer=2)
    assert len(trace.layers) == 3 and trace.logits is None
    assert model._loaded == {0, 1, 2}                     # the embedding matrix too is unread: rows only
    assert rel_err(trace.embeddings, full_embedding(folder)[torch.as_tensor(ids_of(20))]) == 0
    full = model.trace(ids_of(20))
    assert model._loaded == {"embed", "norm", *range(8)}
    assert full.logits.shape == (20, 512)
    assert rel_err(full.layers[2].output, trace.layers[2].output) < 1e-6
    with pytest.raises(ValueError, match="carried cache covers layers 0..2"):
        model.trace(ids_of(5), cache=trace.cache)


def test_bad_trace_arguments(model):
    with pytest.raises(ValueError, match="kernel must be"):
        model.trace([1, 2], kernel="fast")
    with pytest.raises(ValueError, match="non-empty"):
        model.trace([])
    with pytest.raises(ValueError, match="token ids must be in 0..511"):
        model.trace([1, 512])
    with pytest.raises(ValueError, match="upto_layer must be in 0..3"):
        model.trace([1], upto_layer=4)


def test_bfloat16_model_keeps_fp32_gates_and_state(tmp_path):
    model = load_model(write_checkpoint(tmp_path, seed=5), dtype=torch.bfloat16, allow_any_folder=True)
    assert model.dtype == torch.bfloat16
    attn = model.model.layers[0].linear_attn
    assert attn.A_log.dtype == torch.float32 and attn.norm.weight.dtype == torch.float32
    assert attn.in_proj_qkv.weight.dtype == torch.bfloat16
    trace = model.trace(ids_of(30))
    lt = trace.layers[0]
    assert lt.g.dtype == lt.beta.dtype == lt.final_state.dtype == torch.float32
    assert (lt.g <= 0).all() and ((lt.beta > 0) & (lt.beta < 1)).all()
    assert torch.isfinite(trace.logits).all()
