"""Open the app in Streamlit's AppTest with a language and link parameters already set."""
import base64
import functools
import json
from pathlib import Path

import numpy as np
from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")
# The app never shows tracebacks (.streamlit/config.toml); in AppTest a failure should say what broke.
config.set_option("client.showErrorDetails", "full")

# Each AppTest's first run scans every installed distribution's metadata for component manifests (0.11-0.14 s
# here, of a 0.15 s warm page open): the installed packages do not change during a test run, so one scan
# serves every AppTest of the process. What each AppTest registers from it is unchanged (a fresh manager each).
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


# A tab keeps every packed payload it was sent (payloadOf in assets/common/view.js) and a later run sends only
# its hash (app_pages/_support/payload.py). The tests stand in for that tab: every run's payloads are
# kept here by hash (content-addressed, so one store serves every AppTest), and a mount that sent only a
# hash is read with the payload the session was sent before.
PAYLOADS: dict[str, str] = {}


def _keep_payloads(at: AppTest) -> AppTest:
    run = at._run

    def run_and_keep(*args, **kwargs):
        out = run(*args, **kwargs)
        for element in at.get("bidi_component"):
            if element.proto.json.startswith("{"):
                data = json.loads(element.proto.json)
                for entry in [data, *data.get("variants", []), *data.get("options", [])]:
                    if isinstance(entry, dict) and entry.get("gz"):
                        PAYLOADS[entry["hash"]] = entry["gz"]
        return out

    at._run = run_and_keep
    return at


def with_payload(data: dict) -> dict:
    """A mount's data with its gz filled in from what the session was sent before, if it sent only a hash."""
    if "hash" in data and "gz" not in data and data["hash"] in PAYLOADS:
        data = {**data, "gz": PAYLOADS[data["hash"]]}
    return data


def new_app() -> AppTest:
    """The app in AppTest, its runs' payloads kept as a tab keeps them."""
    return _keep_payloads(AppTest.from_file(APP, default_timeout=60))


def open_app(lang: str = "en", page: str | None = None, state: dict | None = None, **params) -> AppTest:
    """page: e.g. "app_pages/compare.py"; params become ?key=value in the link; state is put in
    st.session_state before the first run (what a user's earlier clicks would have left there)."""
    at = new_app()
    at.query_params["lang"] = lang
    for key, value in (state or {}).items():
        at.session_state[key] = value
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page)
        for key, value in [("lang", lang), *params.items()]:
            at.query_params[key] = value
        at.run()
    return at


def arr(x) -> np.ndarray:
    """A figure array as numpy: plotly 7 ships numpy arrays as {"bdata", "dtype", "shape"}."""
    if isinstance(x, dict) and "bdata" in x:
        shape = [int(n) for n in str(x.get("shape", "-1")).split(",")]
        return np.frombuffer(base64.b64decode(x["bdata"]), dtype=x["dtype"]).reshape(shape)
    return np.asarray(x)


def swapper_views(at: AppTest, key: str) -> tuple[dict, dict[str, str]]:
    """The swapper mounted under `key` (app_pages/_support/swap.py): (what the page sent, with the packed
    views left out; option value -> its HTML, each unpacked from its own payload)."""
    import gzip

    proto = next(e.proto for e in at.get("bidi_component") if e.proto.id.endswith(key))
    data = json.loads(proto.json)
    options = [with_payload(o) for o in data["options"]]
    views = {o["value"]: json.loads(gzip.decompress(base64.b64decode(o["gz"]))) for o in options}
    return {**data, "options": [{k: v for k, v in o.items() if k != "gz"} for o in options]}, views


def player_payload(at: AppTest, key: str) -> tuple[dict, dict]:
    """The frame player mounted under `key` (app_pages/_support/player.py): (what the page sent, with
    the packed frames left out; the unpacked {"frames", "fixed", "sides"})."""
    import gzip

    proto = next(e.proto for e in at.get("bidi_component") if e.proto.id.endswith(key))
    data = with_payload(json.loads(proto.json))
    payload = json.loads(gzip.decompress(base64.b64decode(data.pop("gz"))))
    return data, payload
