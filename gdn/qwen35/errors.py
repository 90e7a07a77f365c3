"""The one error class of checkpoint loading, carrying its kind where it is raised.

Every refusal of a checkpoint, a folder or a download is a CheckpointError: a ValueError (callers that
catch ValueError keep working) whose `kind` names the problem and whose message says, in English, what
exactly is wrong and what to do. The real-model page shows a translated headline per kind
(assets/i18n/*/real_model.json, `real_model.err_<kind>`) above that message, so rewording a message never
changes the headline.
"""
from __future__ import annotations

KINDS = (
    "downloads_off",    # the operator has not allowed downloads
    "too_big",          # the repo is larger than this server downloads
    "no_gdn",           # the model has no Gated DeltaNet layer
    "too_large",        # config.json asks for sizes beyond any Qwen3.5 release
    "file_too_big",     # config.json, the index or tokenizer.json is over its size cap (gdn.qwen35.filecaps)
    "dtype",            # weights stored in a dtype Qwen3.5 never uses
    "outside_roots",    # the folder (or a link in it) is outside the allowed model folders
    "no_folder",        # no such folder
    "long_name",        # a typed folder name far longer than any path (a paste gone wrong)
    "unreadable",       # a folder that cannot be opened (permissions, a symlink loop, a name too long)
    "no_config",        # no config.json
    "model_type",       # config.json is not a Qwen3.5 model
    "bad_config",       # config.json is not valid JSON
    "missing_tensor",   # a tensor config.json requires is missing
    "bad_shape",        # a tensor's shape disagrees with config.json
    "corrupt",          # a damaged, truncated or hostile safetensors file or index
    "changed",          # a weights file rewritten, truncated or replaced since it was opened
    "not_finite",       # NaN or Inf in the weights
    "no_weights",       # no *.safetensors weights
    "tokenizer",        # tokenizer.json missing or unreadable
    "tokenizer_vocab",  # tokenizer.json of another model: ids past the embedding's rows
    "no_hub",           # downloading needs huggingface_hub
    "repo_id",          # not a valid repo id
)


class CheckpointError(ValueError):
    """A refused checkpoint: `kind` (one of KINDS) for the headline, the message for the detail."""

    def __init__(self, kind: str, message: str):
        if kind not in KINDS:
            raise ValueError(f"unknown checkpoint error kind {kind!r}; add it to KINDS")
        super().__init__(message)
        self.kind = kind

    def __reduce__(self):          # pickled with its kind: a worker process sends it back to the page
        return type(self), (self.kind, str(self))


def error_kind(error: object) -> str:
    """The kind of a loader error: a CheckpointError's own, "other" for anything else."""
    return error.kind if isinstance(error, CheckpointError) else "other"
