"""The one entry point for front ends (CLI, app, Slack): resolve names, call the tools.

Imports stay light (no LangChain, no Gradio) so `gpu-advisor vram` starts fast.
"""

from __future__ import annotations

__all__ = [  # noqa: F822 (Advisor and Answer: lazy, see __getattr__)
    "Advisor", "Answer", "advisor", "catalog_info", "catalog_refresh", "cost", "explain", "guide", "image_cost",
    "image_recommend", "image_speed", "image_vram", "levers", "list_gpus", "list_models", "price_db", "prices",
    "recommend", "resolve_model_arch", "solve", "speed", "train_time", "transfer_cost", "vram"]

from typing import Any

from assistant.service.images import image_cost, image_recommend, image_speed, image_vram  # noqa: F401
from assistant.service.models import (list_gpus, list_models, resolve_model_arch, speed, train_time,  # noqa: F401
                                      vram)
from assistant.service.money import (catalog_info, catalog_refresh, cost, job_totals, price_db,  # noqa: F401
                                     prices, transfer_cost)
from assistant.service.planning import guide, levers, recommend, solve  # noqa: F401
from knowledge.concepts import explain  # noqa: F401


_ADVISORS: dict[str, Any] = {}


def advisor(backend: str | None = None) -> Any:
    """The process's Advisor for the current data directory and backend (created on first use)."""
    from assistant.service.advisor import Advisor
    from assistant.runtime.settings import data_dir

    from assistant.runtime.backends import resolve_backend

    b = resolve_backend(backend)
    key = f"{data_dir()}|{b}"
    if key not in _ADVISORS:
        _ADVISORS[key] = Advisor(b)
    return _ADVISORS[key]


def __getattr__(name: str) -> Any:  # lazy re-exports: importing LangChain costs ~1 s
    if name in ("Advisor", "Answer"):
        import assistant.service.advisor as adv

        return getattr(adv, name)
    raise AttributeError(name)
