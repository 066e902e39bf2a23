"""A model named by family and size only ("llama 70b", "qwen 32b", "gemma 9b"): the newest catalog
model of that family with that size in its name, as practitioners mean it today (Llama 3.3 70B,
not Llama 2 70B). The versions of one family and size share a shape closely enough for memory and
speed; the answer names the model it assumed.

    newest_of_size(family, size_b) -> catalog model id | None
"""

from __future__ import annotations

__all__ = ["newest_of_size"]

import re

from knowledge.catalog import model_names


def _version(model_id: str, family: str) -> tuple[float, ...]:
    """The version numbers between the family word and the size: "llama-3.1-70b" -> (3, 1)."""
    rest = model_id[len(family):]
    head = re.split(r"-\d+(?:\.\d+)?b\b", rest)[0]
    return tuple(float(x) for x in re.findall(r"\d+", head)) or (0.0,)


def newest_of_size(family: str, size_b: float) -> str | None:
    """The newest model id that starts with `family` and carries `size_b` ("70b") in its name;
    None when no catalog model does."""
    family = family.lower()
    size = f"{size_b:g}b"
    ids = {m.id for m in model_names().values()}
    hits = [i for i in ids if re.match(rf"{re.escape(family)}(?![a-z])", i)
            and re.search(rf"(?<![\d.]){re.escape(size)}(?![a-z0-9])", i)]
    return max(hits, key=lambda i: (_version(i, family), i)) if hits else None
