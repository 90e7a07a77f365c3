"""The practice judge: every exercise's reference passes, and each classic mistake, planted in a correct
solution, fails with a verdict that names the token, the stage and the mistake.

A planted mistake is one line of tests/practice_solutions/<exercise>.py changed the way a learner gets it
wrong. The expected token is worked out by hand from the first failing test's inputs: a mistake that only
matters once the table holds something (the decay, a read before the decay, beta on v instead of on
v - prediction, equal while the prediction is 0) cannot show at token 1 of a run that starts from an empty
table, so it shows at token 2; anything else shows at token 1.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gdn.practice import reference as ref
from gdn.practice.__main__ import main as cli
from gdn.practice.exercises import EXERCISES
from gdn.practice.judge import judge
from gdn.practice.verdict import Line, stage_word, words

SOLUTIONS = Path(__file__).resolve().parent / "practice_solutions"
SEED = 11


def solution(exercise: str) -> str:
    text = (SOLUTIONS / f"{exercise}.py").read_text(encoding="utf-8")
    return solution("recurrence") + "\n\n" + text if exercise == "stream" else text


def planted(exercise: str, old: str, new: str) -> str:
    source = solution(exercise)
    assert source.count(old) == 1, f"{old!r} must occur once in the {exercise} solution"
    return source.replace(old, new)


def first_failure(verdict):
    failed = verdict.first_failure()
    assert failed is not None, words(verdict, "en")
    return failed


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_a_correct_solution_passes_every_test(exercise):
    verdict = judge(exercise, solution(exercise), sandbox=False, seed=SEED)
    assert verdict.passed, words(verdict, "en")
    assert any(r.hidden for r in verdict.tests) and any(not r.hidden for r in verdict.tests)


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_the_starter_file_fails_without_a_traceback(exercise):
    verdict = judge(exercise, EXERCISES[exercise].stub(), sandbox=False, seed=SEED)
    said = "\n".join(words(verdict, "en"))
    assert not verdict.passed and "Traceback" not in said and "harness" not in said


def test_the_references_agree_with_a_solution_written_apart():
    """reference.py (on gdn.ops's kernel) against the learner-style solutions, run here in float64."""
    scope: dict = {}
    exec(solution("recurrence") + "\n" + solution("chunk").replace("def recurrence", "def head_loop"), scope)
    gen = torch.Generator().manual_seed(3)
    # unit q and k: the eps inside an L2 normalisation (1e-6 in the reference, 1e-12 in the solution's
    # F.normalize) then moves the result by about 1e-7 at most
    q, k = (torch.nn.functional.normalize(torch.randn(2, 9, 3, 4, generator=gen, dtype=torch.float64), dim=-1) for _ in "qk")
    v = torch.randn(2, 9, 3, 5, generator=gen, dtype=torch.float64)
    g, beta = -torch.rand(2, 9, 3, generator=gen, dtype=torch.float64), torch.rand(2, 9, 3, generator=gen, dtype=torch.float64)
    S0 = torch.randn(2, 3, 4, 5, generator=gen, dtype=torch.float64)
    for want, got in zip(ref.delta_rule(q, k, v, g, beta, S0), scope["delta_rule"](q, k, v, g, beta, S0)):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    one = [x[0, :, 0] for x in (q, k, v, g, beta)]
    for want, got in zip(ref.head_recurrence(*one, S0[0, 0]), scope["chunk"](*one, S0[0, 0])):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    assert abs(ref.half_life(0.5) - 1) < 1e-12 and abs(ref.half_life(0.9) - 6.5788) < 1e-4


def test_the_memory_page_example_is_the_first_four_stages_case():
    """The worked example the statement shows: token 3 of the memory page (docs/teaching-content.md)."""
    S, k, v = torch.tensor([[3.0, 1.0], [-1.0, 2.0]]), torch.tensor([1.0, 0.0]), torch.tensor([5.0, 0.0])
    decayed, prediction, error, S_new = ref.four_stages(S, k, v, 0.5, 1.0)
    assert prediction.tolist() == [1.5, 0.5] and error.tolist() == [3.5, -0.5]
    assert S_new.tolist() == [[5.0, 0.0], [-0.5, 1.0]]
    assert ref.read(torch.tensor([[[[3.0, 1.0], [-1.0, 2.0]]]]), torch.tensor([[[0.6, 0.8]]])).flatten().tolist() == \
        pytest.approx([1.0, 2.2])


DECAY = "S = S * g[:, t].exp()[..., None, None]"
READ = "prediction = torch.einsum(\"bhkv,bhk->bhv\", S, k[:, t])"
WRITE = "S = S + torch.einsum(\"bhk,bhv->bhkv\", k[:, t], error)"
QUERY = "outputs.append(torch.einsum(\"bhkv,bhk->bhv\", S, q[:, t]))"
RECURRENCE_MISTAKES = [       # (mistake, old line, new line, failing test, token, stage)
    ("transposed_write", WRITE, "S = S + torch.einsum(\"bhv,bhk->bhvk\", error, k[:, t])", "case_rec_small", 1, "write"),
    ("read_before_decay", f"{DECAY}\n        {READ}", f"{READ}\n        {DECAY}", "case_rec_small", 2, "read"),
    ("decay_after_write", f"{DECAY}\n        {READ}", READ, "case_rec_small", 1, "read"),
    ("beta_on_v", "error = beta[:, t, :, None] * (v[:, t] - prediction)",
     "error = beta[:, t, :, None] * v[:, t] - prediction", "case_rec_small", 2, "error"),
    ("no_decay", DECAY, "pass", "case_rec_small", 2, "decay"),
    ("g_as_alpha", DECAY, "S = S * g[:, t][..., None, None]", "case_rec_small", 2, "decay"),
    ("no_qk_norm", "q = F.normalize(q, dim=-1) * K ** -0.5\n    k = F.normalize(k, dim=-1)", "q = q * K ** -0.5",
     "case_rec_small", 1, "read"),
    ("query_before_write", f"{WRITE}\n        {QUERY}", f"{QUERY}\n        {WRITE}", "case_rec_small", 1, "query"),
    ("no_scale", "q = F.normalize(q, dim=-1) * K ** -0.5", "q = F.normalize(q, dim=-1)", "case_rec_small", 1, "query"),
    ("state_ignored", "S = torch.zeros(B, H, K, V, dtype=work) if S is None else S.to(work)",
     "S = torch.zeros(B, H, K, V, dtype=work)", "case_rec_wide", 1, "carry"),
]


@pytest.mark.parametrize(("mistake", "old", "new", "case", "token", "stage"), RECURRENCE_MISTAKES,
                         ids=[m[0] for m in RECURRENCE_MISTAKES])
def test_a_planted_mistake_in_the_recurrence_is_named(mistake, old, new, case, token, stage):
    source = planted("recurrence", old, new)
    if mistake == "decay_after_write":                     # the decay moved after the write, not dropped
        source = source.replace(WRITE, f"{WRITE}\n        {DECAY}")
    failed = first_failure(judge("recurrence", source, sandbox=False, seed=SEED))
    assert failed.name.key == case
    assert failed.details[0] == Line("where", {"t": token, "stage": stage_word(stage)})
    assert Line(f"mistake_{mistake}") in failed.details
    assert any(d.key == "largest_error" for d in failed.details)


def test_the_state_not_carried_between_calls_is_named_at_the_second_call():
    source = planted("stream", "o, self.S = delta_rule(q, k, v, g, beta, self.S)", "o, _ = delta_rule(q, k, v, g, beta)")
    failed = first_failure(judge("stream", source, sandbox=False, seed=SEED))
    assert failed.name.key == "case_stream_small"                   # 6 tokens in two calls of 3
    assert failed.details[:3] == [Line("stream_piece", {"piece": 2}), Line("where", {"t": 4, "stage": stage_word("carry")}),
                                  Line("mistake_state_not_carried")]


STAGE_MISTAKES = [            # (exercise, old, new, detail lines expected in the first failure)
    ("four_stages", "prediction = decayed.T @ k", "prediction = S.T @ k",
     [Line("where_stage", {"stage": stage_word("read")}), Line("mistake_read_before_decay")]),
    ("four_stages", "S_new = decayed + torch.outer(k, beta * error)", "S_new = decayed + torch.outer(beta * error, k)",
     [Line("where_stage", {"stage": stage_word("write")}), Line("mistake_transposed_write")]),
    ("four_stages", "S_new = decayed + torch.outer(k, beta * error)", "S_new = decayed + torch.outer(k, beta * v - prediction)",
     [Line("where_stage", {"stage": stage_word("write")}), Line("mistake_beta_on_v")]),
    ("four_stages", "error = v - prediction", "error = prediction - v",
     [Line("where_stage", {"stage": stage_word("error")}), Line("mistake_error_sign")]),
    ("read", "torch.einsum(\"bhkv,bhk->bhv\", S, q)", "torch.einsum(\"bhkv,bhv->bhk\", S, q)",
     [Line("mistake_transposed_read")]),
    ("gates", "g = -torch.exp(A_log) * F.softplus(a + dt_bias)", "g = torch.exp(A_log) * F.softplus(a + dt_bias)",
     [Line("mistake_g_sign")]),
    ("gates", "g = -torch.exp(A_log) * F.softplus(a + dt_bias)", "g = -torch.exp(A_log) * (a + dt_bias)",
     [Line("mistake_no_softplus")]),
    ("gates", "return math.log(0.5) / math.log(alpha)", "return 1 / (1 - alpha)", [Line("mistake_half_life_mean")]),
    ("chunk", "A = torch.tril(beta[:, None] * (k @ k.T) * Gamma, diagonal=-1)",
     "A = torch.tril(beta[:, None] * (k @ k.T) * Gamma, diagonal=0)", [Line("mistake_chunk_diagonal")]),
    ("chunk", "A = torch.tril(beta[:, None] * (k @ k.T) * Gamma, diagonal=-1)",
     "A = torch.tril(beta[:, None] * (k @ k.T), diagonal=-1)", [Line("mistake_chunk_no_decay_in_solve")]),
    ("chunk", "torch.tril(q @ k.T * Gamma) @ U", "torch.tril(q @ k.T * Gamma, diagonal=-1) @ U",
     [Line("mistake_chunk_strict_output")]),
]


@pytest.mark.parametrize(("exercise", "old", "new", "expected"), STAGE_MISTAKES,
                         ids=[f"{m[0]}-{m[3][-1].key}" for m in STAGE_MISTAKES])
def test_a_planted_mistake_is_named_with_its_stage(exercise, old, new, expected):
    failed = first_failure(judge(exercise, planted(exercise, old, new), sandbox=False, seed=SEED))
    assert all(line in failed.details for line in expected), failed.details


def test_a_chunk_that_copies_a_wrong_recurrence_is_told_to_fix_the_recurrence_first():
    source = solution("chunk").replace("S = S * g[t].exp()", "S = S * 1.0")
    source = source.replace("    return o, S_after", "    return recurrence(q, k, v, g, beta, S)")
    verdict = judge("chunk", source, sandbox=False, seed=SEED)
    failed_chunks = [r for r in verdict.tests if r.name.key == "case_chunk" and not r.passed]
    assert failed_chunks and all(Line("chunk_matches_yours") in r.details for r in failed_chunks)


def test_a_shape_mismatch_is_named_by_its_axis():
    source = planted("read", "torch.einsum(\"bhkv,bhk->bhv\", S, q)", "torch.einsum(\"bhkv,bhk->bhk\", S, q)")
    verdict = judge("read", source, sandbox=False, seed=SEED)
    wide = next(r for r in verdict.tests if r.name.key == "case_read_wide")
    assert wide.details == [Line("shape_axis", {"name": "o", "axis": 2, "axis_name": "V", "got": 2, "want": 3})]
    assert "o: axis 2 (V) has size 2 in yours, 3 expected" in words(verdict, "en")[3]


def test_a_syntax_error_and_an_exception_show_the_learners_own_lines_only():
    verdict = judge("read", "import torch\n\ndef read(S, q)\n    return S\n", sandbox=False, seed=SEED)
    assert verdict.problem[0].key == "syntax" and verdict.problem[0].fields["line"] == 3
    assert "def read(S, q)" in words(verdict, "en")[0]
    source = "import torch\n\ndef helper(S):\n    return S @ torch.ones(7)\n\ndef read(S, q):\n    return helper(S)\n"
    said = "\n".join(words(judge("read", source, sandbox=False, seed=SEED), "zh"))
    assert "你的代码抛出了 RuntimeError" in said
    assert "line 7, in read: return helper(S)" in said and "line 4, in helper: return S @ torch.ones(7)" in said
    assert "harness" not in said and "File \"" not in said


def test_the_hidden_tests_depend_on_the_seed_and_repeat_with_it():
    a, b = (EXERCISES["recurrence"].cases(seed) for seed in (1, 2))
    assert a[2].name != b[2].name or not torch.equal(a[2].inputs["v"], b[2].inputs["v"])
    again = EXERCISES["recurrence"].cases(1)
    assert all(torch.equal(again[2].inputs[n], a[2].inputs[n]) for n in a[2].inputs)


def test_the_command_line_lists_prints_stubs_and_judges_with_exit_codes(tmp_path, capsys):
    assert cli(["list"]) == 0 and "recurrence" in capsys.readouterr().out
    assert cli(["stub", "recurrence"]) == 0 and capsys.readouterr().out == EXERCISES["recurrence"].stub()
    mine = tmp_path / "mine.py"
    mine.write_text(solution("gates"), encoding="utf-8")
    assert cli(["judge", str(mine), "--exercise", "gates", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == words(judge("gates", solution("gates"), sandbox=False, seed=5), "en")
    mine.write_text(planted("gates", "return g, torch.sigmoid(b)", "return g, b"), encoding="utf-8")
    assert cli(["judge", str(mine), "--exercise", "gates", "--lang", "zh"]) == 1
    assert "β = sigmoid(b)" in capsys.readouterr().out
    assert cli(["judge", str(tmp_path / "missing.py"), "--exercise", "gates"]) == 2
    with pytest.raises(SystemExit) as bad:
        cli(["judge", str(mine), "--exercise", "nope"])
    assert bad.value.code == 2


def test_odd_return_values_fail_the_test_with_words_not_a_crash():
    """A half-life as a list, a tensor of the wrong size, a string, a dict: each a failed test, said in words."""
    gates = solution("gates")
    for odd in ("return [1.0, 2.0]", "return torch.ones(3)", "return 'six'", "return {'n': 1}"):
        source = gates.replace("return math.log(0.5) / math.log(alpha)", odd)
        verdict = judge("gates", source, sandbox=False, seed=SEED)
        assert not verdict.passed and not verdict.problem and all(r.details for r in verdict.tests if not r.passed)
    wrong_count = solution("four_stages").replace("return decayed, prediction, error, S_new", "return decayed")
    failed = first_failure(judge("four_stages", wrong_count, sandbox=False, seed=SEED))
    assert failed.details[0].key in ("count", "shape_rank", "shape_axis")


def test_the_same_tensor_twice_a_complex_result_and_an_at_sign_are_judged_not_crashed():
    """`return v, S` with one tensor twice (safetensors refuses shared memory), a complex result (its imaginary
    part must not be dropped into a pass), a syntax error on a line starting with @ (never an i18n key)."""
    same = solution("four_stages").replace("return decayed, prediction, error, S_new", "return S_new, S_new, S_new, S_new")
    assert not judge("four_stages", same, sandbox=False, seed=SEED).problem
    complex_read = planted("read", "return torch.einsum(", "return 1j + torch.einsum(")
    verdict = judge("read", complex_read, sandbox=False, seed=SEED)
    assert not verdict.passed and first_failure(verdict).details == [Line("not_tensor", {"name": "o"})]
    at_sign = judge("read", "@staticmethod def read(S, q):\n    return S\n", sandbox=False, seed=SEED)
    assert at_sign.problem[0].key == "syntax" and "@staticmethod def read" in words(at_sign, "zh")[0]


def test_a_chunk_whose_recurrence_raises_is_still_judged_on_its_own_numbers():
    source = solution("chunk").replace("    outputs = []\n", "    raise ValueError('not yet')\n    outputs = []\n", 1)
    source = source.replace("A = torch.tril(beta[:, None] * (k @ k.T) * Gamma, diagonal=-1)",
                            "A = torch.tril(beta[:, None] * (k @ k.T) * Gamma, diagonal=0)")
    verdict = judge("chunk", source, sandbox=False, seed=SEED)
    chunk = next(r for r in verdict.tests if r.name.key == "case_chunk")
    own = next(r for r in verdict.tests if r.name.key == "case_own_recurrence")
    assert own.details[0].key == "exception" and own.details[0].fields["message"] == "not yet"
    assert chunk.details[0] == Line("mistake_chunk_diagonal")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_worked_examples_say_the_numbers_the_references_compute(lang):
    """Every number the statements' worked examples show is the reference's, in both languages."""
    from gdn.i18n import t
    S = torch.tensor([[3.0, 1.0], [-1.0, 2.0]], dtype=torch.float64)
    o = ref.read(S[None, None], torch.tensor([[[0.6, 0.8]]], dtype=torch.float64)).flatten().tolist()
    assert f"= ({o[0]:.1f}, {o[1]:.1f})$" in t("practice.ex_read_examples", lang)
    _, prediction, error, S_new = ref.four_stages(S, torch.tensor([1.0, 0.0]), torch.tensor([5.0, 0.0]), 0.5, 1.0)
    four = t("practice.ex_four_stages_examples", lang)
    pair = lambda x: f"({x[0]:g}, {x[1]:g})"
    assert pair(prediction.tolist()) in four and pair(error.tolist()) in four
    assert "{:g} & {:g} \\\\ {:g} & {:g}".format(*S_new.flatten().tolist()) in four
    gates = t("practice.ex_gates_examples", lang)
    assert f"{ref.half_life(0.5):g}" in gates and f"\\approx {ref.half_life(0.9):.2f}" in gates
