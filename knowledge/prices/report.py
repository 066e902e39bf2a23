"""What a catalog refresh reports and the error it raises: shared by the price database and the refresh
(knowledge.price_db runs knowledge.prices.refresh, which needs neither the database class nor its module)."""

from __future__ import annotations

__all__ = ["CatalogError", "RefreshReport"]

from dataclasses import dataclass, field
from typing import Any

from tools.errors import AdvisorError


class CatalogError(AdvisorError):
    """A catalog file that cannot be used; nothing was changed."""


@dataclass
class RefreshReport:
    """What a refresh did: per provider added/changed/removed/rows, files read, skipped and bad."""

    per_provider: dict[str, dict[str, int]] = field(default_factory=dict)
    unmapped: dict[str, int] = field(default_factory=dict)
    dropped: int = 0
    files: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"file", "why"}
    bad: list[dict[str, Any]] = field(default_factory=list)  # {"file", "line", "error", "provider"}
    new_providers: list[str] = field(default_factory=list)  # loaded under a folder name never seen before
    dates: dict[str, dict[str, str | None]] = field(default_factory=dict)  # provider -> {"as_of", "date_from"}
