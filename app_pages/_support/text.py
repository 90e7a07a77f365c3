"""Text from outside the app (file names, repo ids, uploads, prompts, cells) shown safely inside markdown: the
helper lives in escape.py (every ASCII punctuation escaped, line breaks and controls made spaces)."""
from app_pages._support.escape import plain, plain_fields  # noqa: F401
