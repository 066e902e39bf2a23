"""The typed fact every tool returns for the renderer to word: a reason code and its parameters."""

from __future__ import annotations

__all__ = ["Finding"]

from typing import Any

from pydantic import BaseModel


class Finding(BaseModel):
    """A typed fact for the renderer: a reason code and its parameters (no English)."""

    code: str
    params: dict[str, Any] = {}

