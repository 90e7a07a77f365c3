"""Every cache of the app and the library, in one list: what it holds, its bound, its key and its owner.

Three kinds, one bounded LRU class underneath the hand-made ones (gdn/lru.py):
  shared    results shared by every session, one LRU per namespace, a namespace per page ("real_model.run"),
            so one page's traffic never evicts another's; filled by compute.run_job(namespace, key, fn, args)
            (computed in a worker process, app_pages/_support/jobs.py), the encodings by their page (the
            server's tokenizer). compute.shared_caches() builds them from SHARED below.
  streamlit st.cache_resource / st.cache_data in app_pages, and app_pages' own module-level LRUs: their
            bounds (max_entries, an LRU's size) are BOUNDS[<their entry's name>] below, never a number
            written where the cache is made; one without a bound says here why it needs none.
  library   LRUs and functools.lru_cache / functools.cache inside gdn/ (no streamlit there): listed with the
            constant that bounds them, read from the library itself.
Each STREAMLIT and LIBRARY entry names its code (`names`: functions or module-level names in `owner`).
tests/test_caches.py reads every .py under app_pages/ and gdn/ as a syntax tree and fails when a cache
there (a decorated function, a module-level LRU, or a module-level dict filled by the module's functions,
which must become an LRU) is not named here, or when its bound is not the one written here.
"""
from __future__ import annotations

from dataclasses import dataclass

from gdn.figures.common import SKELETONS_KEPT
from gdn.figures.tables import SCALES_KEPT
from gdn.lessons.playground import CACHED_SETS, CAPACITY_NS
from gdn.ops.scan import GRAPHS_KEPT
from app_pages._support.bounds import BOUNDS


@dataclass(frozen=True)
class Cache:
    bound: int | str          # entries kept (a number), or why it needs none
    key: str                  # what the key is made of
    holds: str                # what a value is
    owner: str                # the module that fills it
    names: tuple[str, ...] = ()   # the caches in owner: decorated functions or module-level names


SHARED = {
    "real_model.encode": Cache(16, "(folder, sha256 of the prompt, max_tokens)", "Encoded: ids, pieces", "_real_model/prompt.py"),
    "real_model.run": Cache(8, "(folder, token ids)", "GateRun: g, beta [L, T, H] of every GDN layer", "_real_model/prompt.py"),
    "real_model.inputs": Cache(8, "(folder, ids, layer, head, interventions)", "one head's q, k, v, g, beta as numpy (the replay)",
                               "_real_model/context.py"),
    "real_model.norms": Cache(16, "(folder, ids, layer)", "||S_t|| [T, H]", "_real_model/context.py"),
    "real_model.pred": Cache(32, "(folder, ids, repr of the intervention)", "Predictions: top-3 [T, 3], gates",
                             "_real_model/context.py"),
    "real_model.views": Cache(8, "(folder, token ids, language): the trace's identity", "RunViews: every GDN "
                              "layer's gates and overview HTML (each also packed), the guesses, the answers; built "
                              "in the worker", "_real_model/context.py"),
    "real_model.evidence": Cache(2, "folder (the trained demo)", "its gate evidence on the fixed task batch (pinned)",
                                 "_real_model/about.py"),
    "real_model.head": Cache(32, "(folder, ids, layer, head, t, language, (font size, lecture))", "HeadViews: the head "
                             "view's three figures and its state's numbers, drawn in the worker", "_real_model/context.py"),
    "real_model.check": Cache(32, "(folder, ids, layer, head)", "both kernels' outputs, timings, differences",
                              "_real_model/views/head.py"),
    "real_model.found": Cache(16, "(folder, token ids, story kind)", "the intervention that flips an answer (pinned)",
                              "_real_model/found.py"),
    "recall.trace": Cache(2, "(pairs, seq_len)", "the shipped trained MQAR model on one example: token names, each "
                          "layer's gates and recall, how many asked and right (pinned)", "_recall_views.py"),
    "recall.train": Cache(16, "(seed, the quick run's settings)", "each rule's result row and its curves, trained "
                          "to the last planned step in a worker", "_recall_views.py"),
    "update.train": Cache(16, "(seed, the update quick run's settings)", "each rule's result row with its score "
                          "curve, trained to the last planned step in a worker", "_update_views.py"),
    "practice.judge": Cache(1, "none: every Run is a job of its own (key None), never kept", "a Verdict",
                            "_practice.py"),
    "chunking.timing": Cache(1, "none: every measurement is a job of its own (key None), never kept here (the page "
                             "keeps the last one)", "the live timing of both kernels", "chunking.py"),
    "start.encode": Cache(4, "(folder, prompt)", "Encoded of the start page's prompt (2 languages)", "start.py"),
    "start.inputs": Cache(16, "(folder, ids, layer)", "dict of one layer's q, k, v, g, beta, ||S_t|| arrays",
                          "start.py"),
    "compare.stream": Cache(8, "(folder, the whole prompt's token ids, the first call's length)",
                            "StreamingRun: the prompt fed in one call and in two (carrying the state or starting "
                            "over): each way's top-3 next tokens, the largest logit and state differences",
                            "compare.py"),
}


STREAMLIT = {
    "figures.shared_figure": Cache(BOUNDS["figures.shared_figure"], "(figure function, fingerprint of its arguments)",
                                   "a plotly Figure (never mutated)", "_support/figures.py", ("_shared",)),
    "compute.model": Cache(BOUNDS["compute.model"], "(folder, stamp)", "a checkpoint opened: config, tokenizer, headers (no weight read)",
                           "_support/compute.py", ("_open",)),
    "compute._scan": Cache(BOUNDS["compute._scan"], "listing_stamp(): the disk's stat fingerprint",
                           "every checkpoint folder in the allowed roots, unusable ones with a reason",
                           "_support/compute.py", ("_scan",)),
    "compute._describe": Cache(BOUNDS["compute._describe"], "(folder, folder_stamp): the folder's stat fingerprint",
                               "describe(folder) or why it cannot be used", "_support/compute.py", ("_describe",)),
    "compute.shared_caches": Cache("one per server", "()", "one LRU per namespace of SHARED (listed above)",
                                   "_support/compute.py", ("shared_caches",)),
    "browser.server_id": Cache("one per server", "()", "this process's random id (a moved tab notices it)",
                               "_support/browser.py", ("server_id",)),
    "compute.job_line": Cache("one per server", "()", "the JobLine of heavy jobs and its worker processes",
                              "_support/compute.py", ("job_line",)),
    "work.models": Cache(BOUNDS["work.models"], "folder", "a loaded model, in one worker process (each keeps its own)",
                         "_support/work.py", ("_models",)),
    "work.inputs": Cache(BOUNDS["work.inputs"], "(folder, ids, layer, interventions)", "LayerInputs: one layer's q, k, v, g, beta, "
                         "in one worker process", "_support/work.py", ("_inputs",)),
    "compute.download_lock": Cache("one per server", "()", "the lock of hub downloads", "_support/compute.py",
                                   ("download_lock",)),
    "playground.lessons": Cache(BOUNDS["playground.lessons"], "the capacity panel's parameters",
                                "a capacity curve (gdn.lessons.playground.capacity_curve)", "_playground_panels.py",
                                ("curve",)),
    "compare.runs": Cache("one per preset (a fixed list)", "preset name", "a preset's stream run through every rule",
                          "_compare_frames.py", ("compare_run", "variant_run")),
    "player.memory": Cache(BOUNDS["player.memory"], "(fingerprint of the stream, language, lecture, token names)",
                           "Packed: every frame of the memory page's player, gzipped", "_memory_frames.py",
                           ("_packed",)),
    "memory.editor": Cache(BOUNDS["memory.editor"], "fingerprint of the example's stream",
                           "the token editor's table and the records of its unedited read-back", "_memory_frames.py",
                           ("_unedited",)),
    "player.compare": Cache(BOUNDS["player.compare"], "(example name, language, lecture)",
                            "Packed: every frame of the compare page's player and its error grid", "_compare_frames.py",
                            ("_packed",)),
    "explorer.start": Cache(BOUNDS["explorer.start"], "(language, lecture)",
                            "Packed: the start page's first figure at every T and example", "_start_attention.py",
                            ("_packed",)),
    "explorer.playground": Cache(BOUNDS["explorer.playground"], "(language, lecture), one cache per toy",
                                 "Packed: a playground toy at every point of its slider grid", "_playground_toys.py",
                                 ("_half_life_packed", "_repeat_packed", "_key_norm_packed")),
    "explorer.overwrite": Cache(BOUNDS["explorer.overwrite"], "(language, (geometry, n, d_k, d_v))",
                                "Packed: the overwrite toy at every alpha x beta x key norm [x angle] of one shape",
                                "_playground_toys.py", ("_overwrite_packed",)),
    "explorer.geometry": Cache(BOUNDS["explorer.geometry"], "(page prefix, language, lecture)",
                               "Packed: the 2-D write at every k1 angle x angle between the keys x beta",
                               "_geometry_view.py", ("_packed",)),
    "live.store": Cache("one per server", "()", "the live class's Store: its connection pool to GDN_CLASS_DB",
                        "_live.py", ("store",)),
    "live.rooms": Cache(BOUNDS["live.rooms"], "room code", "(monotonic time read, Room): a room as the store had "
                        "it, reused for ROOM_TTL_S by the phones of one replica (an LRU: thread-safe)", "_live.py",
                        ("_recent_rooms",)),
    "chunking.reference": Cache("one per server", "()", "the shipped timing curve, the live timing store (2 caches)",
                                "chunking.py", ("timing_store", "reference")),
    "recall.shipped": Cache("one per argument set (a few fixed calls)", "() / model name",
                            "the shipped MQAR results, gate-init half-lives (2 caches)",
                            "_recall_views.py", ("shipped_results", "half_life_series")),
    "update.shipped": Cache("one per argument set (a few fixed calls)", "() / (rule, layers) / layers",
                            "the shipped update results, the inspected models, their gates at rewrites (3 caches)",
                            "_update_views.py", ("results", "trained", "gates")),
    "update.paths": Cache(BOUNDS["update.paths"], "(layers, sequence seed)", "each rule's answer path for the "
                          "sequence's first rewritten key, and the sequence", "_update_views.py", ("paths",)),
}

LIBRARY = {
    "figures.skeletons": Cache(SKELETONS_KEPT, "(figure name, labels, sizes)", "a figure's validated plain JSON",
                               "gdn/figures/common.py", ("_skeletons",)),
    "figures.scale_stops": Cache(SCALES_KEPT, "colour scale", "its stops and colours, parsed", "gdn/figures/tables.py",
                                 ("_scale_stops",)),
    "scan.graphs": Cache(GRAPHS_KEPT, "(shapes, dtype, device)", "a captured CUDA graph and its buffers (CUDA only)",
                         "gdn/ops/scan.py", ("_graphs",)),
    "fused.triton_installed": Cache("one per process (no argument)", "()", "whether Triton can be imported (looked "
                                    "up once, not imported)", "gdn/ops/fused.py", ("_triton_installed",)),
    "playground.normals": Cache(CACHED_SETS, "seed", "the longest run of the seed's normals drawn",
                                "gdn/lessons/playground.py", ("_normals_drawn",)),
    "playground.capacity": Cache(CACHED_SETS * len(CAPACITY_NS), "(N, K[, V], seed, geometry)",
                                 "capacity keys, streams, unrolled keys (3 lru_caches)", "gdn/lessons/playground.py",
                                 ("_cached_keys", "_cached_stream", "unrolled_keys")),
    "figures.scale_template": Cache("one per process (no argument)", "()", "Plotly's default template as JSON, "
                                    "to tell a figure's own template from it when scaling", "gdn/figures/scale.py",
                                    ("_default_template",)),
    "practice.sandbox": Cache("one per process (no argument)", "()", "whether a bubblewrap sandbox starts Python here, "
                              "or why not (tried once)", "gdn/practice/runner.py", ("sandbox_problem",)),
    "i18n.tables": Cache("one per language (the prompts file: one)", "language",
                         "the merged string table, the glossary, the example prompts", "gdn/i18n.py",
                         ("table", "glossary", "_prompts")),
}

ALL = {**{f"shared:{k}": v for k, v in SHARED.items()}, **{f"streamlit:{k}": v for k, v in STREAMLIT.items()},
       **{f"library:{k}": v for k, v in LIBRARY.items()}}
