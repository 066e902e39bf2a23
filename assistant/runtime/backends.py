"""LLM backends as data, and the one function that builds a chat model from a backend id.

`router` is the embedded default. Anything else is a LangChain `init_chat_model` id:
`openai:MODEL` (OPENAI_BASE_URL for any OpenAI-compatible server), `anthropic:MODEL`, `ollama:MODEL`.
Provider packages are optional extras; a missing package or key is a clear message.
"""

from __future__ import annotations

__all__ = ["BACKENDS", "make_chat_model", "resolve_backend"]

import importlib.util
import os
from dataclasses import dataclass
from typing import Any

from tools.errors import AdvisorError


@dataclass(frozen=True)
class BackendSpec:
    prefix: str
    package: str
    extra: str
    key_env: str | None
    base_url_env: str | None


BACKENDS = {
    "openai": BackendSpec("openai", "langchain_openai", "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": BackendSpec("anthropic", "langchain_anthropic", "anthropic", "ANTHROPIC_API_KEY", None),
    "ollama": BackendSpec("ollama", "langchain_ollama", "ollama", None, "OLLAMA_BASE_URL"),
}


class BackendError(AdvisorError):
    """A backend that cannot be used as configured."""


def resolve_backend(value: str | None) -> str:
    """The backend id: the argument, else $GPU_ADVISOR_BACKEND, else 'router'."""
    v = (value or os.environ.get("GPU_ADVISOR_BACKEND") or "router").strip()
    if v == "router":
        return v
    prefix, _, model = v.partition(":")
    if prefix not in BACKENDS or not model:
        raise BackendError(f"Unknown backend {v!r}. Use 'router' or one of: "
                           + ", ".join(f"{p}:MODEL" for p in BACKENDS) + ".")
    return v


def make_chat_model(backend: str, timeout_s: float | None = None) -> Any:
    """A LangChain chat model for `backend` (not 'router').

    Raises:
        BackendError: naming the missing extra or environment variable.
    """
    prefix, _, model = backend.partition(":")
    spec = BACKENDS[prefix]
    if importlib.util.find_spec(spec.package) is None:
        raise BackendError(f"The {prefix} backend needs the '{spec.extra}' extra: "
                           f"pip install 'gpu-advisor[{spec.extra}]'")
    kw: dict[str, Any] = {"timeout": timeout_s or float(os.environ.get("GPU_ADVISOR_LLM_TIMEOUT", "30"))}
    base = os.environ.get(spec.base_url_env, "") if spec.base_url_env else ""
    if base:
        kw["base_url"] = base
    if spec.key_env:
        key = os.environ.get(spec.key_env, "")
        if not key and not (prefix == "openai" and base):
            raise BackendError(f"The {prefix} backend needs the {spec.key_env} environment variable"
                               + (" (or OPENAI_BASE_URL for a local OpenAI-compatible server)" if prefix == "openai" else "")
                               + ".")
        kw["api_key"] = key or "EMPTY"  # local OpenAI-compatible servers accept any key
    if prefix in ("openai", "anthropic"):
        kw["max_retries"] = 0  # a failure falls back to the router at once
    from langchain.chat_models import init_chat_model

    return init_chat_model(backend, **kw)
