"""What the worker processes run (app_pages/_support/workers.py): module-level functions of plain arguments
(a folder, token ids, a layer) that return plain data and numpy arrays, so nothing but those crosses
between the processes. A worker loads a model once and keeps it, and keeps the last layers' inputs (the
head and check views ask for one layer many times); both caches are bounded (caches.py).

No streamlit: this module is imported by the workers. The pages call these through compute.run_job.
"""
from __future__ import annotations

from gdn.lru import LRU
from app_pages._support.bounds import BOUNDS
from app_pages._support.workers import report, should_stop

_models = LRU(BOUNDS["work.models"])          # folder -> loaded model, in this worker
_inputs = LRU(BOUNDS["work.inputs"])          # (folder, ids, layer) -> LayerInputs, in this worker


def warm() -> None:
    """Import what every job needs while the worker starts, not in a visitor's first job."""
    import gdn.practice.judge  # noqa: F401
    import gdn.qwen35  # noqa: F401
    import gdn.recall.quick  # noqa: F401


def model(folder: str):
    """The model of a folder the server has checked already (source.load): the worker does not check it
    again against the allowed roots, which the server's environment may have changed since. Loaded anew
    when a file of it changed on disk since: the old one would answer every trace with "changed"."""
    m = _models.get(folder)
    if m is None or m.stale():
        from gdn.qwen35 import load_model
        m = load_model(folder, allow_any_folder=True)
        _models.put(folder, m)
    return m


# -- the real-model page ---------------------------------------------------------------------------------

def gate_run(folder: str, ids: tuple):
    """GateRun of the prompt: every GDN layer's g, beta [L, T, HV] (the page's Run)."""
    from gdn.qwen35.analysis import gate_run
    return gate_run(model(folder), list(ids))


def overrides_key(overrides: dict) -> str:
    """Interventions ({"set_beta": {(layer, head): value}}) as a cache key's part: the same in any order."""
    return repr(sorted((name, sorted(given.items(), key=repr)) for name, given in overrides.items()))


def layer_inputs(folder: str, ids: tuple, layer: int, overrides: dict | None = None):
    """overrides: the interventions (set_alpha / set_beta, as trace takes them) the layer's inputs are made under."""
    overrides = overrides or {}
    key = (folder, ids, layer, overrides_key(overrides))
    x = _inputs.get(key)
    if x is None:
        from gdn.qwen35.analysis import layer_inputs
        x = layer_inputs(model(folder), list(ids), layer, **overrides)
        _inputs.put(key, x)
    return x


def head_inputs(folder: str, ids: tuple, layer: int, head: int, overrides: dict | None = None) -> dict:
    """One value head's q, k [T, K], v [T, V], g, beta [T] as numpy (the replay's window), under the
    interventions in overrides (set_alpha / set_beta), if any."""
    return layer_inputs(folder, ids, layer, overrides).head(head)


def state_norms(folder: str, ids: tuple, layer: int):
    """||S_t|| of one layer [T, HV]."""
    from gdn.qwen35.analysis import layer_state_norms
    return layer_state_norms(layer_inputs(folder, ids, layer))


def kernel_check(folder: str, ids: tuple, layer: int, head: int) -> dict:
    from gdn.qwen35.gates import kernels_side_by_side
    return kernels_side_by_side(*layer_inputs(folder, ids, layer).tensors(), head=head)


def predictions(folder: str, ids: tuple, ask: tuple, same_script: bool, overrides: dict):
    """Top-3 next tokens at every position, under the interventions in overrides (set_alpha / set_beta)."""
    from gdn.qwen35.predict import predict
    return predict(model(folder), list(ids), ask=ask, same_script=same_script, **overrides)


def prompt_facts(folder: str, ids: tuple, pieces: list, kind: str, same_script: bool):
    """What a story's hint may say about this prompt (a search over every head and layer: many forwards)."""
    from gdn.qwen35.demo.hints import prompt_facts
    return prompt_facts(model(folder), list(ids), pieces, kind, same_script=same_script)


def evidence(folder: str) -> dict:
    """The trained demo's gate evidence on its fixed task batch (gdn.qwen35.demo.evidence: a few small forwards)."""
    from gdn.qwen35.demo.evidence import evidence as measure
    return measure(model(folder))


# -- the start and compare pages ---------------------------------------------------------------------------

def layer_arrays(folder: str, ids: tuple, layer: int) -> dict:
    """One GDN layer on the prompt (the start page's live diagram): q, k [T, HK, K], v [T, HV, V], g, beta,
    ||S_t|| [T, HV] as numpy."""
    from gdn.qwen35.analysis import layer_state_norms
    x = layer_inputs(folder, ids, layer)
    return {"q": x.q[0].numpy(), "k": x.k[0].numpy(), "v": x.v[0].numpy(), "g": x.g[0].numpy(),
            "beta": x.beta[0].numpy(), "state_norm": layer_state_norms(x)}


def two_calls(folder: str, ids: tuple, cut: int):
    """StreamingRun: the prompt fed in one call and in two, split before token `cut` (the compare page)."""
    from gdn.qwen35.analysis import two_call_run
    return two_call_run(model(folder), list(ids), cut, same_script=True)


# -- the recall page ---------------------------------------------------------------------------------------

def new_curves(rules) -> dict:
    return {r: {"loss": [], "acc_steps": [], "acc": []} for r in rules}


def add_step(curves: dict, rules, step_report: tuple) -> None:
    """One reported step (step, losses, accuracies or None: one per rule) onto the curves of each rule."""
    step, losses, accs = step_report
    for i, r in enumerate(rules):
        curves[r]["loss"].append(losses[i])
        if accs is not None:
            curves[r]["acc_steps"].append(step)
            curves[r]["acc"].append(accs[i])


def recall_trace(pairs: int, seq_len: int) -> tuple:
    """The shipped trained MQAR model on one example: (token names, each layer's LayerTrace, how many
    positions are asked, how many of them it answers right, pairs)."""
    from gdn.recall import inspect
    tokens, targets = inspect.example(pairs, seq_len)
    layers, answers = inspect.trace(inspect.load_shipped(), tokens, pairs)
    asked = (targets[0] != -100).numpy()
    right = int((answers[asked] == targets[0].numpy()[asked]).sum())
    return inspect.token_names(tokens[0]), layers, int(asked.sum()), right, pairs


def train_quick(rules: tuple, seed: int, config: dict) -> dict:
    """The recall page's quick run to its last planned step (unless its visitor leaves: should_stop), every
    step reported as (step, losses, accuracies or None), one value per rule. Returns {"rows": each rule's
    result row, "curves": the curves the reports drew}."""
    from gdn.recall.quick import run_quick
    got, curves = {}, new_curves(rules)

    def on_step(rule, step, loss, acc):
        got[rule] = (step, loss, acc)
        if all(got.get(r, (None,))[0] == step for r in rules):      # the rules step together: once all have
            accs = [got[r][2] for r in rules]
            step_report = (step, [got[r][1] for r in rules], None if accs[0] is None else accs)
            add_step(curves, rules, step_report)
            report(step_report)

    rows = run_quick(rules, seed=seed, on_step=on_step, should_stop=should_stop, **config)
    return {"rows": rows, "curves": curves}


def train_update(rules: tuple, seed: int, config: dict) -> dict:
    """The update page's quick run to its last planned step (unless its visitor leaves), each eval reported
    as (step, [score per rule]) with score {"accuracy", "kept", "updated", "old"}. Returns {"rows": each
    rule's result row (its score_curve holds the same evals)}."""
    from gdn.recall.update import run_update_quick
    got = {}

    def on_scores(rule, step, score):
        got[rule] = (step, score)
        if all(got.get(r, (None,))[0] == step for r in rules):        # every rule's score of this eval
            report((step, [got[r][1] for r in rules]))

    return {"rows": run_update_quick(rules, seed=seed, on_scores=on_scores, should_stop=should_stop, **config)}


# -- the chunking page ---------------------------------------------------------------------------------------

def time_kernels(lengths: tuple) -> dict:
    """The chunking page's live timing (gdn.timing.time_kernels) at this worker's one thread, as the shipped
    reference curve was measured; each length reported as (i, n) once timed."""
    from gdn.timing import LIVE_REPEATS, time_kernels
    return time_kernels(list(lengths), repeats=LIVE_REPEATS, progress=lambda i, n: report((i, n)))


# -- the practice page ---------------------------------------------------------------------------------------

def judge(exercise: str, source: str, sandbox: bool, seed: int):
    """A learner's file judged (gdn.practice.judge): the code itself runs in a child of this worker, in the
    sandbox when `sandbox`; the Verdict comes back as plain data."""
    from gdn.practice.judge import judge as run
    return run(exercise, source, sandbox=sandbox, seed=seed)
