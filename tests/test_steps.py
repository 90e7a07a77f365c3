"""Step records equal the reference kernel, and the worked examples show docs/teaching-content.md's numbers."""
import numpy as np
import pytest
import torch

from gdn.lessons.memory import (
    PRESETS,
    InputError,
    k1_update,
    random_stream,
    rows_to_stream,
    stream_to_rows,
    unit_key_overwrite,
    write_and_read_2d,
)
from gdn.lessons.stream import Stream, step_records
from gdn.ops import recurrent_gated_delta_rule


def kernel_outputs(s: Stream):
    """The same stream through gdn.ops.recurrent_gated_delta_rule (raw q/k, scale 1)."""
    t = lambda x: torch.tensor(x)[None, :, None]                       # [1, T, 1, ...]
    beta = torch.tensor(s.beta)[None, :, None]
    o, S = recurrent_gated_delta_rule(t(s.q), t(s.k), t(s.v), g=torch.log(torch.tensor(s.alpha))[None, :, None],
                                      beta=beta, scale=1.0, initial_state=torch.tensor(s.S0)[None, None],
                                      output_final_state=True)
    return o[0, :, 0].numpy(), S[0, 0].numpy()


@pytest.mark.parametrize("name", list(PRESETS))
def test_records_match_the_kernel(name):
    s = PRESETS[name]()
    rec = step_records(s)
    o, S = kernel_outputs(s)
    np.testing.assert_allclose(rec.output, o, atol=1e-12)
    np.testing.assert_allclose(rec.S_new[-1], S, atol=1e-12)


@pytest.mark.parametrize("K,V", [(4, 3), (2, 7), (8, 8)])
def test_records_are_consistent_for_any_dims(K, V):
    rng = np.random.default_rng(K * 10 + V)
    s = random_stream(T=6, K=K, V=V, seed=int(rng.integers(100)))
    s = Stream(k=s.k, v=s.v, q=s.q, alpha=s.alpha, beta=rng.uniform(0, 1, (6, V)), S0=rng.normal(size=(K, V)))
    rec = step_records(s)
    assert rec.S_prev.shape == rec.write.shape == (6, K, V) and rec.error.shape == (6, V)
    np.testing.assert_allclose(rec.S_prev[1:], rec.S_new[:-1])
    np.testing.assert_allclose(rec.S_decayed, s.alpha[:, None, None] * rec.S_prev)
    np.testing.assert_allclose(rec.prediction, np.einsum("tkv,tk->tv", rec.S_decayed, s.k))
    np.testing.assert_allclose(rec.write, np.einsum("tk,tv->tkv", s.k, s.beta * rec.error))
    # closed form of one step: S_t = alpha (I - beta k k^T) S + beta k v^T, per value channel
    for t in range(6):
        for j in range(V):
            A = s.alpha[t] * (np.eye(K) - s.beta[t, j] * np.outer(s.k[t], s.k[t]))
            np.testing.assert_allclose(rec.S_new[t][:, j], A @ rec.S_prev[t][:, j] + s.beta[t, j] * s.k[t] * s.v[t, j])
    o, S = kernel_outputs(s)
    np.testing.assert_allclose(rec.output, o, atol=1e-12)


def test_worked_example_2d_write_and_read():
    rec = step_records(write_and_read_2d())
    np.testing.assert_array_equal(rec.S_new[1], [[3, 1], [-1, 2]])
    np.testing.assert_allclose(rec.output[1], [1.0, 2.2])               # 0.6*(3,1) + 0.8*(-1,2)
    np.testing.assert_array_equal(rec.output[2], [3, 1])                # beta = 0: no write, still read
    np.testing.assert_array_equal(rec.S_new[2], rec.S_new[1])


def test_worked_example_k1_update_with_gate():
    rec = step_records(k1_update())
    np.testing.assert_allclose(rec.prediction[2], [1.5, 0.5])           # decayed row of k1
    np.testing.assert_allclose(rec.error[2], [3.5, -0.5])
    np.testing.assert_allclose(rec.output[2], [5, 0])                   # k1 reads its new value
    np.testing.assert_allclose(rec.output[3], [-0.5, 1])                # untouched k2 faded by alpha


def test_unit_key_overwrites_exactly():
    s = unit_key_overwrite()
    rec = step_records(s)
    np.testing.assert_array_equal(rec.S_new[0][0], [3, 4])
    np.testing.assert_array_equal(rec.S_new[0][1], s.S0[1])             # other row untouched
    np.testing.assert_array_equal(rec.output[0], [3, 4])
    assert np.abs(s.v[0] - rec.S_new[0].T @ s.k[0]).max() == 0          # error after the write is 0


def test_alpha_zero_leaves_only_the_current_write_and_beta_zero_still_reads():
    s = random_stream(T=4, K=3, V=2, seed=5)
    wiped = Stream(k=s.k, v=s.v, q=s.q, alpha=np.array([1, 1, 0, 1.0]), beta=s.beta, S0=s.S0)
    rec = step_records(wiped)
    np.testing.assert_allclose(rec.S_new[2], s.beta[2] * np.outer(s.k[2], s.v[2]))
    frozen = Stream(k=s.k, v=s.v, q=s.q, alpha=s.alpha, beta=np.zeros(4), S0=np.ones((3, 2)))
    rec = step_records(frozen)
    assert np.abs(rec.output).min() > 0                                  # no write, but the decayed table is read


def test_table_round_trip_and_errors():
    s = k1_update()
    back = rows_to_stream(stream_to_rows(s), K=2, V=2, S0=s.S0)
    for name in ("k", "v", "q", "alpha", "beta", "S0"):                # before: only k was ever checked
        np.testing.assert_allclose(getattr(back, name), getattr(s, name), err_msg=name)
    rows = stream_to_rows(s)
    for change, key in [({"k": "1, x"}, "not_numbers"), ({"v": "1"}, "wrong_length"),
                        ({"alpha": 1.5}, "gate_range"), ({"beta": None}, "gate_missing")]:
        bad = [dict(rows[0], **change)] + rows[1:]
        with pytest.raises(InputError) as e:
            rows_to_stream(bad, K=2, V=2, S0=s.S0)
        assert e.value.key == key and e.value.fields["token"] == 1
    with pytest.raises(InputError, match="no_tokens"):
        rows_to_stream([{"k": None, "v": "", "q": None, "alpha": None, "beta": None}], K=2, V=2, S0=s.S0)
    assert rows_to_stream([dict(rows[0], k="1，0")], K=2, V=2, S0=s.S0).k.tolist() == [[1, 0]]  # Chinese comma
    nan = float("nan")                                                  # a row added in the editor, left empty
    blank = {"k": nan, "v": None, "q": "", "alpha": nan, "beta": nan}
    assert rows_to_stream(rows + [blank], K=2, V=2, S0=s.S0).shape == s.shape
    with pytest.raises(InputError) as e:
        rows_to_stream([dict(rows[0], alpha=nan)], K=2, V=2, S0=s.S0)
    assert e.value.key == "gate_missing"
