"""Settings read from the environment when called (never at import)."""

from __future__ import annotations

__all__ = ["data_dir", "MAX_QUESTION_CHARS"]

import os
from pathlib import Path

MAX_QUESTION_CHARS = 4000


def data_dir() -> Path:
    """The product's data directory: $GPU_ADVISOR_HOME, else the per-user data dir."""
    env = os.environ.get("GPU_ADVISOR_HOME", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-advisor", appauthor=False))
