"""The real-model page in AppTest on the shipped random-weight demo checkpoint (small and fixed, so token
counts and layer numbers are known): load, presets, layer/head, kernel check, downloads, replay, and a
clear translated message for every bad input of docs/architecture.md, Quality bars. The trained default
model is covered by tests/test_trained_model.py and test_trained_model_is_the_default below."""
import csv
import io
import json
import re

import numpy as np
import pytest
import torch

from gdn.i18n import t
from gdn.qwen35 import DEMO_PATH, load_model
from gdn.units import fmt_count
from tests.apptest import arr, open_app, swapper_views
from tests.qwen35_fixtures import rewrite, text_config, write_checkpoint

PAGE = "app_pages/real_model.py"
LAYER0 = "model.language_model.layers.0.linear_attn."


def open_demo(lang: str, **params):
    """The page on the random demo with the recall task preset, as these tests expect."""
    params.setdefault("real_model_preset", "recall")
    return open_app(lang, page=PAGE, state={"real_model_source": str(DEMO_PATH)}, **params)


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def swapped(at, name: str) -> tuple[dict, dict[str, str]]:
    """The swapper `name` (app_pages/_support/swap.py; "gates" or "overview" on this page): (what the page
    sent, the packed frames left out; option -> HTML)."""
    return swapper_views(at, f"real_model_layer_{name}_swap")


def gates(at) -> dict | None:
    """The gates figure as the page draws it (HTML: gdn.figures.real_model.gates_html) for the layer it
    shows, read back from its cells: "alpha", "beta" [H, T] and "guesses" [3, T] (the values their hovers
    show), "titles" (the panel titles), "answers" (the ✓ / ✗ over the guesses). None when the page drew none."""
    if not any(e.proto.id.endswith("real_model_layer_gates_swap") for e in at.get("bidi_component")):
        return None
    data, frames = swapped(at, "gates")
    return read_gates(frames[data["value"]])


def read_gates(body: str | None) -> dict | None:
    if body is None:
        return None
    gate = lambda name: np.array([[float(v) for v in re.findall(r' = (-?[\d.]+)"', row)]
                                  for row in re.findall(rf'<tr data-gate="{name}"><th>\d+</th>(.*?)</tr>', body)])
    guesses = [[float(title.split("&#10;")[k].split()[-1]) for title in re.findall(r'title="([^"]*)"', row)]
               for k, row in enumerate(re.findall(r'<tr class="guess" data-k="\d">(.*?)</tr>', body), start=1)]
    return {"alpha": gate("alpha"), "beta": gate("beta"), "guesses": np.array(guesses),
            "titles": re.findall(r'<tr class="title"><th>[^<]*</th><th colspan="\d+">([^<]*)', body),
            "answers": re.findall(r'<td class="(?:right|wrong)"[^>]*>([^<]*)</td>', body)}


def show(at, view: str):
    at.segmented_control(key="real_model_view").set_value(view).run()
    return at


def demo_tokens(text: str, limit: int = 512) -> int:
    """Tokens of a prompt on a demo model: the page puts a space before the first word, as in training."""
    text = text if text[:1].isspace() else " " + text
    return len(load_model(DEMO_PATH).tokenizer.encode(text, max_tokens=limit).ids)


def titles(fig: dict) -> list[str]:
    return [a["text"] for a in fig["layout"].get("annotations", [])]


def prompts(preset: str, lang: str) -> str:
    return json.loads((DEMO_PATH.parents[1] / "prompts" / "real_model.json").read_text(encoding="utf-8"))[preset][lang]


@pytest.fixture(scope="module", params=["en", "zh"])
def page(request):
    """One opened page per language, reused by the tests that only read it."""
    return request.param, open_demo(request.param)


def test_demo_loads_and_shows_gates(page):
    lang, at = page
    assert not at.exception
    assert at.warning[0].value == t("real_model.random_weights", lang)    # labelled honestly
    T = demo_tokens(prompts("recall", lang))
    assert at.session_state["real_model_prompt_tokens"] == T
    assert not charts(at)                                                    # the gates and the overview are HTML
    g = gates(at)
    assert g["guesses"].shape == (3, T)                                      # top-3 probabilities per token
    assert (g["guesses"][0] >= g["guesses"][1]).all()
    assert g["alpha"].shape == (4, T) and g["beta"].shape == (4, T)          # heads x tokens
    assert ((g["alpha"] > 0) & (g["alpha"] <= 1)).all() and ((g["beta"] >= 0) & (g["beta"] <= 1)).all()
    data, frames = swapped(at, "gates")
    body = frames[data["value"]]
    layer = at.session_state["real_model_layer"]
    assert data["value"] == str(layer) and list(frames) == [str(i) for i in load_model(DEMO_PATH).cfg.gdn_layers]
    # every GDN layer's gates are sent; the hover names token, layer, head, value
    assert re.search(rf'title="{t("real_model.lbl_token", lang)} 1 «[^»]*» · {t("real_model.lbl_layer", lang)} '
                     rf'{layer} · {t("real_model.lbl_head", lang)} 0&#10;α = \d\.\d{{3}}"', body)
    overview = swapped(at, "overview")[1][str(layer)]
    assert overview.count("<figure>") == 3 and overview.count("<tr") == 3 * 7                # 6 GDN layers x 4 heads
    assert overview.count("<td") == 3 * 6 * 4 and overview.count("<tr class=sel>") == 3    # the chosen layer framed
    assert f"{t('real_model.lbl_layer', lang)} {at.session_state['real_model_layer']} · " in overview  # hover
    show(at, "head")
    assert not at.exception
    assert [f["data"][0]["type"] for f in charts(at)] == ["scatter", "heatmap", "bar"]
    show(at, "gates")


def test_switch_layer_and_head():
    at = open_demo("en")
    at.session_state["real_model_layer"] = 5                # what the browser's layer pick relays (swap.heard)
    at.run()
    assert not at.exception
    assert "layer 5" in gates(at)["titles"][0]
    show(at, "head")
    assert at.selectbox(key="real_model_layer").value == 5  # the head view's picker opens on the layer picked
    at.selectbox(key="real_model_head").set_value(2).run()
    figs = charts(at)
    assert "layer 5 · head 2" in figs[0]["data"][0]["hovertemplate"]
    assert "head 2" in figs[1]["data"][0]["hovertemplate"]
    at.slider(key="real_model_t").set_value(3).run()
    assert not at.exception
    assert charts(at)[1]["layout"]["title"]["text"].startswith("S_t after token 3 «")
    assert arr(charts(at)[1]["data"][0]["z"]).shape == (16, 16)


def test_link_reopens_layer_and_head():
    at = open_demo("zh", real_model_layer="4", real_model_head="3", real_model_preset="switch",
                  real_model_view="head")
    assert not at.exception
    assert at.segmented_control(key="real_model_view").value == "head"
    assert at.selectbox(key="real_model_layer").value == 4 and at.selectbox(key="real_model_head").value == 3
    assert at.text_area(key="real_model_prompt_edit").value == prompts("switch", "zh")


def test_preset_switch_runs_the_new_prompt():
    at = open_demo("en")
    at.selectbox(key="real_model_preset").set_value("switch").run()
    assert not at.exception
    assert gates(at)["alpha"].shape[1] == demo_tokens(prompts("switch", "en"))


def test_kernel_check_agrees(page):
    lang, at = page
    show(at, "check")
    from gdn.ops import CHUNK_SIZE
    assert any(t("real_model.check_explain", lang, layer=at.session_state["real_model_layer"], C=CHUNK_SIZE) == i.value
               for i in at.info)
    at.button(key="real_model_check").click().run()
    assert not at.exception
    # the largest relative difference as gdn.units.fmt_diff writes it: "3.4e-7", or "< 1e-6" under float32's floor
    rel = re.search(r"(< )?\d(\.\d)?e-\d+", at.success[0].value).group()
    assert float(rel.removeprefix("< ")) < 1e-4
    T = demo_tokens(prompts("recall", lang))
    assert at.success[0].value == t("real_model.check_agree", lang, rel=rel, tol="1e-04", T=T)
    metrics = {m.label: m.value for m in at.metric}                     # one time per kernel
    assert set(metrics) == {t("real_model.kernel_recurrent", lang), t("real_model.kernel_chunk", lang)}
    rec, chunk, diff = charts(at)[0]["data"]                              # the chosen head's outputs side by side
    assert abs(arr(rec["z"]) - arr(chunk["z"])).max() == pytest.approx(arr(diff["z"]).max(), abs=1e-9)
    assert arr(diff["z"]).max() < 1e-4 * abs(arr(rec["z"])).max()
    assert any(t("real_model.check_no_fla", lang) == c.value for c in at.caption)   # no CUDA here: said so


def test_downloads_contain_what_they_claim(monkeypatch):
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    saved = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, data, mimetype, kind, filename=None):
        saved[filename] = data
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    at = open_demo("en")
    alpha = gates(at)["alpha"]
    show(at, "export")
    at.selectbox(key="real_model_head").set_value(1).run()
    T = demo_tokens(prompts("recall", "en"))
    text = saved["gates_layer0.csv"]
    rows = list(csv.DictReader(io.StringIO(text.decode() if isinstance(text, bytes) else text)))
    assert len(rows) == T * 4 and {r["layer"] for r in rows} == {"0"} and rows[0]["kernel"] == "chunk"
    assert float(rows[4 * 5 + 2]["alpha"]) == pytest.approx(float(alpha[2, 5]), abs=5e-4)   # token 5, head 2 (shown to 3 places)
    data = json.loads(saved["gates_layer0_head1.json"])
    assert data["prompt"] == prompts("recall", "en") and data["head"] == 1 and data["model"] == DEMO_PATH.name
    assert len(data["alpha"]) == T and len(data["head_beta"]) == T


def test_truncation_and_empty_prompt():
    at = open_demo("en")
    at.slider(key="real_model_max_tokens").set_value(16).run()
    at.button(key="real_model_run").click().run()
    T = demo_tokens(prompts("recall", "en"))
    assert at.warning[-1].value == t("real_model.truncated", "en", total=T, kept=16)
    assert gates(at)["alpha"].shape[1] == 16
    at.text_area(key="real_model_prompt_edit").set_value("   ").run()
    at.button(key="real_model_run").click().run()
    assert not at.exception
    assert at.error[0].value == t("real_model.err_empty", "en") and not gates(at) and not charts(at)


def test_uploads():
    at = open_demo("zh")
    at.file_uploader(key="real_model_upload").upload("bad.txt", b"\xff\xfe\x00\x81 not utf-8").run()
    assert at.error[0].value == t("real_model.upload_not_text", "zh", name=r"bad\.txt")     # shown as "bad.txt"
    at.file_uploader(key="real_model_upload").set_value(("big.txt", b"a" * 300_000, "text/plain")).run()
    assert at.error[0].value == t("real_model.upload_too_large", "zh", name=r"big\.txt", kb=300, limit=200)
    at.file_uploader(key="real_model_upload").set_value(("x.txt", b"a" * 200_001, "text/plain")).run()
    assert "200001" not in at.error[0].value and t("real_model.upload_too_large", "zh", name=r"x\.txt", kb=201,
                                                    limit=200) == at.error[0].value   # rounded up: 201 kB > 200 kB
    hostile = "![x](http://127.0.0.1:9/track.png).txt"                 # a name that markdown would fetch
    at.file_uploader(key="real_model_upload").upload(hostile, b"\xff\xfe").run()
    assert "![x](" not in at.error[0].value and r"\!\[x\]\(" in at.error[0].value
    at.file_uploader(key="real_model_upload").set_value(("ok.md", "记忆会衰减 memory fades".encode(), "text/markdown")).run()
    assert not at.exception and not at.error
    assert gates(at)["alpha"].shape[1] == demo_tokens("记忆会衰减 memory fades")


def test_replay_reaches_the_memory_table():
    at = open_demo("en")
    show(at, "replay").slider(key="real_model_replay_len").set_value(8).run()
    cfg = load_model(DEMO_PATH, lazy=True).cfg                           # the texts name the loaded model's sizes
    K, V = cfg.linear_key_head_dim, cfg.linear_value_head_dim
    assert any(f"{K}-dim keys and queries and {V}-dim values" in i.value for i in at.info)
    at.slider(key="real_model_replay_start").set_value(3).run()                # tokens count from 1, as on the axes
    pieces = load_model(DEMO_PATH).tokenizer.encode(" " + prompts("recall", "en")).pieces
    assert any(c.value.startswith("Window: tokens 3–10: ") for c in at.caption)
    at.button(key="real_model_replay").click().run()
    payload = at.session_state["memory_replay"]
    assert len(payload["tokens"]) == len(payload["alpha"]) == len(payload["k"]) == 8
    assert [p.strip() for p in payload["tokens"]] == [p.strip() for p in pieces[2:10]]        # the 3rd to the 10th
    assert len(payload["k"][0]) == 4 and len(payload["v"][0]) == 4
    assert at.session_state["memory_preset"] == "replay"
    assert (payload["K"], payload["V"]) == (K, V)
    assert not at.exception


def test_the_server_reads_no_weight_of_the_checkpoints_it_shows(tmp_path, monkeypatch):
    """The page's process keeps a checkpoint's config and tokenizer only: a Run loads and runs the weights in a
    worker process (issue 50). Before, the server read every weight of each checkpoint picked (one more copy
    of the model per server). (The app's landing page, opened first, still runs the small demo in-process.)"""
    from gdn.qwen35.checkpoint import Checkpoint
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    write_checkpoint(tmp_path / "ckpt", text_config(vocab_size=1024),
                     tokenizer_json=(DEMO_PATH / "tokenizer.json").read_text(encoding="utf-8"))
    at = open_demo("en")
    read = []
    for name in ("load_many", "rows"):
        real = getattr(Checkpoint, name)
        monkeypatch.setattr(Checkpoint, name, lambda self, *a, _real=real, _name=name, **k:
                            read.append(_name) or _real(self, *a, **k))
    at.selectbox(key="real_model_source").set_value("__folder__").run()
    at.text_input(key="real_model_folder_edit").set_value(str(tmp_path / "ckpt")).run()
    assert not at.exception and gates(at)
    assert read == []


# -- bad checkpoints, each built in tmp_path and typed into the folder field -----------------------


def no_config(folder):
    folder.mkdir()


def llama(folder):
    write_checkpoint(folder)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))


def missing(folder):
    rewrite(write_checkpoint(folder), lambda t: t.pop(LAYER0 + "A_log"))


def misshaped(folder):
    rewrite(write_checkpoint(folder), lambda t: t.update({LAYER0 + "A_log": torch.zeros(5)}))


def corrupt(folder):
    write_checkpoint(folder)
    (folder / "model.safetensors").write_bytes(b"\xff" * 8 + b"{not a header")


def not_finite(folder):
    """Found by the worker at the first Run (the server reads no weight), so it has a tokenizer to get there."""
    write_checkpoint(folder, text_config(vocab_size=1024),
                     tokenizer_json=(DEMO_PATH / "tokenizer.json").read_text(encoding="utf-8"))
    rewrite(folder, lambda t: t[LAYER0 + "dt_bias"].__setitem__(0, float("nan")))


def no_tokenizer(folder):
    write_checkpoint(folder)


@pytest.mark.parametrize("build,kind", [(no_config, "no_config"), (llama, "model_type"), (missing, "missing_tensor"),
                                        (misshaped, "bad_shape"), (corrupt, "corrupt"), (not_finite, "not_finite"),
                                        (no_tokenizer, "tokenizer")])
def test_bad_checkpoint_gets_its_message(build, kind, tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    build(tmp_path / "ckpt")
    at = open_demo("en")
    at.selectbox(key="real_model_source").set_value("__folder__").run()
    at.text_input(key="real_model_folder_edit").set_value(str(tmp_path / "ckpt")).run()
    assert not at.exception
    assert at.error[0].value == t(f"real_model.err_{kind}", "en")
    assert not gates(at) and not charts(at)


def test_folder_outside_the_allowed_roots(tmp_path):
    at = open_demo("zh")
    at.selectbox(key="real_model_source").set_value("__folder__").run()
    at.text_input(key="real_model_folder_edit").set_value(str(tmp_path)).run()
    assert not at.exception
    assert at.error[0].value == t("real_model.err_outside_roots", "zh")


def test_replay_of_a_one_token_prompt():
    """A one-token prompt leaves no window to choose (no length or start slider: a slider needs min < max),
    the window is that token, and the replay takes it to the memory table. Shown failing with the window's
    length planted as `c.T - 1` for a one-token prompt (views/replay.py, where it is 1): no exception (what
    this test alone asserted before), but a start slider appears over an empty window."""
    at = open_demo("en")
    at.text_area(key="real_model_prompt_edit").set_value("a").run()
    at.button(key="real_model_run").click().run()
    assert demo_tokens("a") == 1 and gates(at)["alpha"].shape[1] == 1
    show(at, "replay")
    assert not at.exception
    keys = {s.key for s in at.slider}
    assert "real_model_replay_dims" in keys
    assert not {"real_model_replay_len", "real_model_replay_start"} & keys
    piece, = load_model(DEMO_PATH).tokenizer.encode(" a").pieces
    assert any(c.value.startswith("Window: tokens 1–1: ") for c in at.caption)
    at.button(key="real_model_replay").click().run()
    assert not at.exception
    payload = at.session_state["memory_replay"]
    assert len(payload["tokens"]) == len(payload["alpha"]) == len(payload["k"]) == 1
    assert [p.strip() for p in payload["tokens"]] == [piece.strip()]
    assert at.session_state["memory_preset"] == "replay"


def test_trained_model_is_the_default():
    from gdn.qwen35.sources import TRAINED_PATH
    at = open_app("en", page=PAGE)
    assert not at.exception
    assert at.session_state["real_model_source"] == str(TRAINED_PATH)
    assert not any(w.value == t("real_model.random_weights", "en") for w in at.warning)   # no random warning
    assert gates(at)                                                                      # gates drawn at once


def no_gdn_layer(folder):
    text = text_config()
    write_checkpoint(folder, {**text, "layer_types": ["full_attention"] * text["num_hidden_layers"]})


def int8_weights(folder):
    rewrite(write_checkpoint(folder), lambda t: t.update({LAYER0 + "dt_bias": t[LAYER0 + "dt_bias"].to(torch.int8)}))


def huge_config(folder):
    write_checkpoint(folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["text_config"]["num_hidden_layers"] = 10 ** 9
    (folder / "config.json").write_text(json.dumps(cfg))


@pytest.mark.parametrize("build,kind", [(no_gdn_layer, "no_gdn"), (int8_weights, "dtype"), (huge_config, "too_large")])
def test_more_bad_checkpoints_get_their_message(build, kind, tmp_path, monkeypatch):
    test_bad_checkpoint_gets_its_message(build, kind, tmp_path, monkeypatch)


def test_a_broken_checkpoint_in_a_root_is_listed_with_its_reason_and_cannot_be_picked(tmp_path, monkeypatch):
    """Before, one malformed config in any root broke the page for every visitor."""
    import streamlit as st
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    write_checkpoint(tmp_path / "good", text_config())
    bad = write_checkpoint(tmp_path / "bad", text_config())
    st.cache_data.clear()                                               # the source list is cached for a minute
    cfg = json.loads((bad / "config.json").read_text())
    cfg["text_config"]["rope_parameters"] = "x"
    (bad / "config.json").write_text(json.dumps(cfg))
    at = open_app("en", page=PAGE)
    assert not at.exception
    options = at.selectbox(key="real_model_source").options
    assert any(o.startswith("good") for o in options) and not any(o.startswith("bad") for o in options)
    assert not any(str(tmp_path) in o for o in options)                 # labels never show server paths
    listed = at.expander[0]
    assert listed.label == t("real_model.broken", "en", n=1)
    assert any("rope_parameters must be a JSON object" in c.value for c in listed.code)
    assert not any(str(tmp_path) in c.value for c in listed.code)      # no server path in the reason


def test_downloads_off_say_how_to_turn_them_on(monkeypatch):
    monkeypatch.delenv("GDN_ALLOW_DOWNLOADS", raising=False)
    at = open_demo("zh")
    at.selectbox(key="real_model_source").set_value("__download__").run()
    assert not at.exception and not at.error
    assert at.info[-1].value == t("real_model.download_off", "zh", var="GDN_ALLOW_DOWNLOADS", cap="GDN_MAX_DOWNLOAD_GB")


def test_download_shows_size_before_fetching(tmp_path, monkeypatch):
    import gdn.qwen35.sources as sources
    from tests.test_qwen35_sources import FakeHub
    monkeypatch.setenv("GDN_ALLOW_DOWNLOADS", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    source = write_checkpoint(tmp_path / "src", text_config(vocab_size=1024), shards=2,
                              tokenizer_json=(DEMO_PATH / "tokenizer.json").read_text(encoding="utf-8"))
    hub = FakeHub(tmp_path / "hub", source)
    monkeypatch.setattr(sources, "_hub", lambda given: hub)
    at = open_demo("en")
    at.selectbox(key="real_model_source").set_value("__download__").run()
    at.text_input(key="real_model_repo_edit").set_value("Qwen/Fake").run()
    at.button(key="real_model_download_check").click().run()
    assert not at.exception and hub.fetched == ["config.json"]
    plan = at.session_state["real_model_plan"]
    assert f"{plan.total_bytes / 1e9:.2f} GB" in " ".join(m.value for m in at.markdown)
    at.button(key="real_model_download").click().run()
    assert not at.exception
    assert "rev0" in at.session_state["real_model_source"] and gates(at)      # the new model ran the prompt


def test_pasted_text_is_capped_like_an_upload():
    at = open_demo("en")
    assert at.text_area(key="real_model_prompt_edit").proto.max_chars == 200_000
    at.text_area(key="real_model_prompt_edit").set_value("记" * 70_000).run()   # 210 kB of UTF-8
    at.button(key="real_model_run").click().run()
    assert not at.exception and at.error[0].value == t("real_model.err_prompt_too_long", "en")
    assert not gates(at) and not charts(at)


# -- the trained default: named honestly, task presets, predictions, interventions, evidence ----------------


@pytest.fixture(scope="module", params=["en", "zh"])
def trained(request):
    return request.param, open_app(request.param, page=PAGE)


def test_trained_page_names_its_model_and_offers_its_tasks(trained):
    lang, at = trained
    from gdn.qwen35.sources import TRAINED_PATH
    n_params = sum(p.numel() for p in load_model(TRAINED_PATH).parameters())
    # named for what it is: the demo model, its size counted from the checkpoint, built like Qwen3.5
    assert at.title[0].value == t("real_model.title_trained", lang, params=fmt_count(n_params))
    assert "Qwen3.5" in at.title[0].value and fmt_count(n_params) == "3.0 M"
    assert at.selectbox(key="real_model_preset").options == [t(f"real_model.preset_{p}", lang)
                                                             for p in ("custom", "recall", "switch", "copy")]
    # the model's note follows the example's story in the same box (one fold in lecture mode)
    assert any(("\n\n" + t("real_model.about_trained", lang, **FIELDS_PREFIX)[:20]) in i.value for i in at.info)


FIELDS_PREFIX = dict(n="", latest="", recall="", recall_lin="", none="", copy="", layers="", gdn="", full="", params="")


def test_trained_page_predicts_every_token_and_scores_the_answers(trained):
    lang, at = trained
    from gdn.qwen35.demo.stories import answer_slots
    from gdn.qwen35.sources import TRAINED_PATH
    model = load_model(TRAINED_PATH)
    enc = model.tokenizer.encode(" " + prompts("recall", lang))
    shown = gates(at)
    probs = model.trace(enc.ids).logits.float().softmax(-1)                      # [T, vocab]
    # the guesses are ranked among the prompt's language only: tokens with a letter of the other script are left out
    cjk = lambda i: any("\u3400" <= ch <= "\u9fff" for ch in model.tokenizer.tok.decode([i]))
    latin = lambda i: any(ch.isascii() and ch.isalpha() for ch in model.tokenizer.tok.decode([i]))
    other = cjk if lang == "en" else latin
    keep = torch.tensor([0.0 if i >= model.tokenizer.vocab_size or other(i) else 1.0 for i in range(probs.shape[-1])])
    top = (probs * keep).topk(3, dim=-1)
    assert shown["guesses"] == pytest.approx(top.values.T.numpy(), abs=0.005)   # [3, T] probabilities, to 2 places
    slots = answer_slots(enc.pieces, enc.ids)
    right = sum(int(top.indices[t_, 0]) == a for t_, a in slots)
    assert any(t("real_model.accuracy", lang, right=right, n=len(slots)) in c.value for c in at.caption)
    marks = shown["answers"]
    assert len(marks) == len(slots) and marks.count("✓") == right


def test_a_story_button_flips_the_answer(trained):
    lang, at = trained
    show(at, "intervene")
    assert at.info[0].value == t("real_model.iv_none", lang)                   # nothing set yet
    at.button(key="real_model_story_stop_writing").click().run()
    assert not at.exception
    assert at.toggle(key="real_model_iv_beta_on").value and at.slider(key="real_model_iv_beta").value == 0.0
    table = at.dataframe[0].value
    assert "✗" in list(table.iloc[:, -1])                                      # at least one answer now wrong
    # The large before -> after callouts say what the table says: each slot's first guess and its probability
    # before and after, marked ✓ when it is the expected answer.
    callouts = next(h.proto.body for h in at.get("html") if "rm-callouts" in h.proto.body)
    flips = re.findall(r'class="(ok|bad)">[✓✗] «([^»]*)» <span class="p">([\d.]+)</span>', callouts)
    assert len(flips) == 2 * len(table)
    for i, row in enumerate(table.itertuples(index=False)):
        (_, g0, p0), (ok, g1, p1) = flips[2 * i], flips[2 * i + 1]
        assert f"{g0.replace('␣', '').strip()} {p0}" == row[2].split(" · ")[0]     # before: top-3's first
        assert f"{g1.replace('␣', '').strip()} {p1}" == row[3].split(" · ")[0]     # after
        assert (ok == "ok") == (row[-1] == "✓")
    before, after = charts(at)[0]["data"]                                       # the changed β heatmap beside the old
    head = at.selectbox(key="real_model_iv_head").value
    z = arr(after["z"])
    assert (z == 0).all() if head == -1 else (z[head] == 0).all() and (arr(before["z"])[head] > 0).all()
    show(at, "gates")


def test_evidence_table_is_computed_on_the_page(trained):
    lang, at = trained
    from gdn.qwen35.demo.evidence import evidence
    from gdn.qwen35.sources import TRAINED_PATH
    ev = evidence(load_model(TRAINED_PATH))
    table = at.dataframe[0].value
    assert len(table) == 6 and list(table.iloc[1, 1:]) == [f"{ev[c]['reassigned']:.2f}" for c in
                                                           ("acc", "acc_ablation", "acc_stop_writing", "acc_never_forget")]


def n_params(folder) -> int:
    return sum(p.numel() for p in load_model(folder, allow_any_folder=True).parameters())


def test_a_real_checkpoint_gets_the_natural_text_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    write_checkpoint(tmp_path / "qwen-like", text_config(vocab_size=1024), seed=2,
                     tokenizer_json=(DEMO_PATH / "tokenizer.json").read_text(encoding="utf-8"))
    at = open_app("en", page=PAGE)
    at.selectbox(key="real_model_source").set_value("__folder__").run()
    at.text_input(key="real_model_folder_edit").set_value(str(tmp_path / "qwen-like")).run()
    assert not at.exception
    assert at.selectbox(key="real_model_preset").options == [t(f"real_model.preset_{p}", "en") for p in
                                                             ("custom", "password", "topic_switch", "repeat", "mixed")]
    assert at.selectbox(key="real_model_preset").value == "password"
    assert at.title[0].value == t("real_model.title_real", "en", name="qwen\\-like", params=fmt_count(n_params(tmp_path / "qwen-like")))
    # the folder name escaped (drawn as typed), the size counted from the checkpoint


def test_upload_texts_are_ours_in_chinese():
    """The widget's own English texts (and its 1 MB limit) are hidden; our label, limit and refusals show."""
    at = open_demo("zh")
    css = [h.proto.body for h in at.get("html") if "stFileUploaderDropzoneInstructions" in h.proto.body]
    assert css and t("real_model.upload_browse", "zh") in css[0]
    assert any(c.value == t("real_model.upload_limit", "zh", limit=200, types=".txt, .md") for c in at.caption)
    at.file_uploader(key="real_model_upload").upload("notes.pdf", b"%PDF-1.4").run()
    assert at.error[0].value == t("real_model.upload_wrong_type", "zh", name=r"notes\.pdf", types=".txt, .md")


def test_one_click_qwen35_08b_names_its_size_checks_config_first_then_loads(tmp_path, monkeypatch):
    """The "Get Qwen3.5-0.8B" button (a fake hub: nothing is fetched): its label gives the size before any
    click, the click reads config.json before any weight, downloads and switches to the new model, whose
    natural-text presets are then offered."""
    import gdn.qwen35.sources as sources
    from tests.test_qwen35_sources import FakeHub
    monkeypatch.setenv("GDN_ALLOW_DOWNLOADS", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    source = write_checkpoint(tmp_path / "src", text_config(vocab_size=1024), shards=2,
                              tokenizer_json=(DEMO_PATH / "tokenizer.json").read_text(encoding="utf-8"))
    hub = FakeHub(tmp_path / "hub", source)
    asked = []
    monkeypatch.setattr(sources, "_hub", lambda given: hub)
    real_plan = sources.plan_download
    monkeypatch.setattr(sources, "plan_download", lambda repo, **kw: asked.append(repo) or real_plan(repo, **kw))
    at = open_demo("zh")
    at.selectbox(key="real_model_source").set_value("__download__").run()
    button = at.button(key="real_model_get_08b")
    assert button.label == t("real_model.get_08b", "zh", gb="1.6") and hub.fetched == []
    button.click().run()
    assert not at.exception and asked == ["Qwen/Qwen3.5-0.8B"] and hub.fetched[0] == "config.json"
    assert "rev0" in at.session_state["real_model_source"] and gates(at)
    assert at.selectbox(key="real_model_preset").value == "password"               # a real Qwen3.5 now


@pytest.mark.parametrize("T", [6, 30, 60])
def test_gates_figure_from_its_skeleton_equals_a_full_build(T, monkeypatch):
    """A layer change swaps α and β (a new prompt the guesses) into the cached skeleton of the gates
    figure; whatever the skeleton gives must equal plotly's validated build of that call."""
    import plotly.io as pio

    from gdn.figures import common
    from gdn.figures import real_model as figs
    tokens = [f" w{i}" if i % 3 else "词" for i in range(T)]
    kw = dict(tokens=tokens, layer=2, titles={"alpha": "α 2", "beta": "β 2", "predictions": "guesses"},
              labels={"token": "token", "layer": "layer", "head": "head"}, marks=[(1, 0, "alpha"), (2, 3, "beta")],
              answers=[(T - 1, " jade", False)], font_size=14, height=540)
    common._skeletons.clear()
    for seed in (1, 2, 3):
        r = np.random.default_rng(seed)
        data = dict(alpha=r.random((T, 4)), beta=r.random((T, 4)), top_p=np.sort(r.random((T, 3)))[:, ::-1],
                    top_tokens=[[f"t{seed}{i}{k}" for k in range(3)] for i in range(T)])
        warm = pio.to_json(figs.fig_gates_predictions(**data, **kw))
        with monkeypatch.context() as m:
            m.setattr(figs, "from_skeleton", lambda key, full, data: full())
            cold = pio.to_json(figs.fig_gates_predictions(**data, **kw))
        assert json.loads(warm) == json.loads(cold), seed
    assert len(common._skeletons) == 1


@pytest.mark.parametrize("T", [6, 30, 60])
def test_gates_html_shows_what_the_plotly_figure_shows(T):
    """The page draws the gates as HTML (the Plotly figure is the download): both from the same call must
    show the same values, colours, circled cells and answers, and the hovers must name the token the axis
    names (counted from 1)."""
    from gdn.figures import real_model as figs
    from gdn.figures.tables import scale_rgb
    r = np.random.default_rng(T)
    tokens = [f" w{i}" if i % 3 else "词" for i in range(T)]
    kw = dict(alpha=r.random((T, 4)), beta=r.random((T, 4)), top_p=np.sort(r.random((T, 3)))[:, ::-1],
              top_tokens=[[f"t{i}{k}" for k in range(3)] for i in range(T)], tokens=tokens, layer=2,
              titles={"alpha": "α 2", "beta": "β 2", "predictions": "guesses"},
              labels={"token": "token", "layer": "layer", "head": "head"}, marks=[(1, 0, "alpha"), (2, 3, "beta")],
              answers=[(T - 1, " jade", False), (T - 2, " red", True)])
    fig = json.loads(figs.fig_gates_predictions(**kw).to_json())
    body = figs.gates_html(**kw)
    shown = read_gates(body)
    for trace, name in zip(fig["data"], ("alpha", "beta", "guesses")):
        assert shown[name] == pytest.approx(arr(trace["z"]), abs=0.0051 if name == "guesses" else 0.00051), name
    # colours: each α cell's background is the figure's colour scale at its value
    scale = fig["data"][0]["colorscale"]
    first_row = re.search(r'<tr data-gate="alpha"><th>0</th>(.*?)</tr>', body).group(1)
    colours = re.findall(r"background:#([0-9a-f]{6})", first_row)
    want = np.rint(scale_rgb(scale, kw["alpha"][:, 0])).astype(int)
    assert [tuple(int(c[i:i + 2], 16) for i in (0, 2, 4)) for c in colours] == [tuple(w) for w in want]
    # the circled cells: the figure's rectangles, by row (gate) and column (token)
    rects = {(round((s["x0"] + s["x1"]) / 2) - 1, round((s["y0"] + s["y1"]) / 2), "alpha" if s["yref"] == "y" else "beta")
             for s in fig["layout"]["shapes"]}                            # the axis counts tokens from 1
    circled = set()
    for gate in ("alpha", "beta"):
        for h, row in re.findall(rf'<tr data-gate="{gate}"><th>(\d+)</th>(.*?)</tr>', body):
            circled |= {(t_, int(h), gate) for t_, cell in enumerate(re.findall(r"<td[^>]*>", row)) if "mark-" in cell}
    assert circled == rects == set(kw["marks"])
    assert sorted(shown["answers"]) == sorted(a["text"] for a in fig["layout"]["annotations"] if a["text"][:1] in "✓✗")
    # hovers count tokens from 1, like the axis under them, in both
    assert fig["data"][0]["x"][0] == 1 and fig["layout"]["xaxis3"].get("tickvals", [1])[0] == 1
    assert fig["data"][2]["customdata"][0][1].startswith("token 2 «␣w1» →")
    assert f'title="token 2 «␣w1» · layer 2 · head 0&#10;α = {kw["alpha"][1, 0]:.3f}"' in body
    assert f'title="token {T} «' in body and f'title="token {T + 1} «' not in body
    if T <= figs.TICK_TOKENS:                                             # every token named, or every 5th counted
        assert ">1·词<" in body and "<span>5</span>" not in body
    else:
        assert ">1·" not in body and '<tr class="ticks sparse">' in body and "<span>5</span><" in body


def test_gates_are_html_only_while_small_and_nan_gets_a_colour():
    """HTML for a short prompt of few heads (a layer change re-sends every cell), Plotly beyond; a NaN
    value must still give a valid colour, never '#-800...'."""
    from gdn.figures import real_model as figs
    assert figs.draws_as_html(34, 4) and figs.draws_as_html(128, 16) and figs.draws_as_html(1, 1)
    assert not figs.draws_as_html(129, 4) and not figs.draws_as_html(128, 32) and not figs.draws_as_html(40, 64)
    alpha = np.full((3, 2), 0.5)
    alpha[1, 1] = np.nan
    body = figs.gates_html(alpha, alpha, tokens=["a", "b", "c"], layer=0, top_tokens=[["x"] * 3] * 3,
                           top_p=np.full((3, 3), np.nan), titles={"alpha": "α", "beta": "β", "predictions": "p"},
                           labels={"token": "token", "layer": "layer", "head": "head"})
    assert "#-" not in body and "rgb(-" not in body
    assert len(re.findall(r"background:#[0-9a-f]{6}\"", body)) == 2 * 3 * 2
