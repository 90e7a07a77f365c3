"""Every session-state and widget key of the real-model page, named once.

The strings never change: linked ones are in shared links (?real_model_view=head), and tests and the
classroom's demos set them. Keys no widget owns are marked (state).
"""
PREFIX = "real_model"

# linked: the view, the pickers, the preset, the prompt's token cap, the head view's token (in the URL)
VIEW, LAYER, HEAD = "real_model_view", "real_model_layer", "real_model_head"
PRESET, MAX_TOKENS, TOKEN_T = "real_model_preset", "real_model_max_tokens", "real_model_t"

# the model source
SOURCE = "real_model_source"                # the checkpoint picker
FOLDER_EDIT = "real_model_folder_edit"      # a folder typed in
PICKED = "real_model_picked"                # (state) a folder just downloaded: picked on the next run, then dropped
CONFIRMED = "real_model_confirmed"          # (state) the large checkpoint the user agreed to load
LOAD = "real_model_load"                    # the button that loads a large checkpoint

# downloads from the hub
GET_08B, REPO_EDIT, DOWNLOAD_CHECK, DOWNLOAD = ("real_model_get_08b", "real_model_repo_edit",
                                                "real_model_download_check", "real_model_download")
PLAN = "real_model_plan"                    # (state) the checked DownloadPlan
FETCH_NOW = "real_model_fetch_now"          # (state) the one-click button: download without a second click
DOWNLOAD_ERROR = "real_model_download_error"  # (state) (message, error kind) of the last hub call

# the prompt
PROMPT_EDIT, UPLOAD, RUN = "real_model_prompt_edit", "real_model_upload", "real_model_run"
UPLOAD_ERROR = "real_model_upload_error"    # (state) (message,) why the uploaded file was refused
AUTORUN = "real_model_autorun"              # (state) run the prompt now (a preset, an upload, a story)
REQUEST = "real_model_request"              # (state) the Request shown: runs only on Run (or a new model)
PROMPT_TOKENS = "real_model_prompt_tokens"  # (state) the prompt's token count before the cap
FULL_RUN = "real_model_full_run"            # (state) a story button: rerun the page, not only the layer view

# the views' own widgets
IV_HEAD, IV_ALPHA_ON, IV_BETA_ON = "real_model_iv_head", "real_model_iv_alpha_on", "real_model_iv_beta_on"
IV_ALPHA, IV_BETA = "real_model_iv_alpha", "real_model_iv_beta"
IV_LINK = "real_model_iv"                   # (state, linked) the intervention set, as one link value
CHECK, REPLAY = "real_model_check", "real_model_replay"
REPLAY_LEN, REPLAY_START, REPLAY_DIMS = "real_model_replay_len", "real_model_replay_start", "real_model_replay_dims"
CSV, JSON = "real_model_csv", "real_model_json"

# figures (their HTML downloads are "<key>_html")
GATES_FIG, OVERVIEW_FIG, IV_FIG = "real_model_gates", "real_model_overview", "real_model_iv_fig"
HEAD_FIG, STATE_FIG, PARAMS_FIG, KERNELS_FIG = ("real_model_head_fig", "real_model_state", "real_model_params",
                                                "real_model_kernels")


def story(kind: str) -> str:
    """The button that loads the intervention story `kind`."""
    return f"real_model_story_{kind}"


def iv_value(gate: str) -> str:
    """The slider of the constant an intervention sets the gate to: "alpha" or "beta"."""
    return {"alpha": IV_ALPHA, "beta": IV_BETA}[gate]


def iv_on(gate: str) -> str:
    return {"alpha": IV_ALPHA_ON, "beta": IV_BETA_ON}[gate]
