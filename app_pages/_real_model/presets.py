"""The page's example prompts: task prompts for the shipped demos, natural text for a real checkpoint."""
from gdn.i18n import prompt
from app_pages._support import ui

# The demo models (trained or random) get their own task prompts; natural text only means something to
# a real Qwen3.5 checkpoint, so only a real one gets those presets.
TASK_PRESETS = ["recall", "switch", "copy"]
TEXT_PRESETS = ["password", "topic_switch", "repeat", "mixed"]
ALL_PRESETS = ["custom", *TASK_PRESETS, *TEXT_PRESETS]


def presets_for(kind: str) -> list[str]:
    """The picker's options for a model kind ("trained", "random", "real"); the second is the default."""
    return ["custom", *(TEXT_PRESETS if kind == "real" else TASK_PRESETS)]


def preset_text(preset: str, lang: str | None = None) -> str:
    return prompt(preset, lang or ui.lang()) if preset != "custom" else ""


def is_preset_text(text: str) -> bool:
    """The text of a preset in either language (its results are pinned in the shared caches)."""
    return any(text == preset_text(p, lang) for p in ALL_PRESETS[1:] for lang in ui.LANG_NAMES)
