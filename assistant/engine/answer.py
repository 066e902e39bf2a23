"""The typed answer: sections that every front end renders in its own way and language.

Compose builds these from the Query and the tool results; renderers (render_text, render_markdown,
render_slack) turn them into text, Markdown or Block Kit in English or Urdu. Nobody parses rendered
text back: a front end that needs a number reads it from these sections.
"""

from __future__ import annotations

__all__ = ["KeyNumber", "Finding", "Option", "Table", "CitationRef", "Sections"]

from typing import Any, Literal

from pydantic import BaseModel, Field


class Finding(BaseModel):
    """A statement as data: a message code, its parameters and the guide passage it rests on.

    Renderers look the code up in the message catalog of the answer's language and fill in the
    parameters (numbers stay numbers until then)."""

    code: str = Field(description="message catalog key, e.g. 'fit.no', 'lever.qlora', 'assume.context_default'")
    params: dict[str, Any] = Field(default_factory=dict)
    passage_id: str | None = None


class KeyNumber(BaseModel):
    """One number worth showing, with a human label key (translated by the renderer) and its unit."""

    label: str = Field(description="message catalog key of the label, e.g. 'num.weights'")
    value: float | int | str | dict[str, Any] | None = Field(
        description="a number, a name, or a phrase {'code': key, 'params': {...}} such as a translated term")
    unit: str = Field("", description="GB, tokens/s, $/h, h, $ ...")
    note: Finding | None = None


class Option(BaseModel):
    """A way forward or a recommended choice: what to change, its numbers, its cheapest offer."""

    title: Finding
    numbers: list[KeyNumber] = Field(default_factory=list)
    offer: dict[str, Any] | None = Field(None, description="cheapest matching offer: provider, instance, region, usd_per_hour")


class Table(BaseModel):
    """A side-by-side table with the same rows for each compared item.

    A column header is a message catalog key (it has a dot: 'col.gpu') or a name shown as it is
    ('H100 SXM'). A cell is a name (str), a number (formatted with the column's unit from `units`),
    None (unknown), {"v": number, "u": unit key} (a quantity with its own unit) or
    {"code": key, "params": {...}} (a phrase from the catalog)."""

    title: Finding | None = None
    columns: list[str | dict[str, Any]] = Field(
        description="message catalog keys of the column headers, names, or phrases {'code', 'params'}")
    rows: list[list[Any]]
    units: list[str] = Field(default_factory=list, description="unit key per column ('' = none)")


class CitationRef(BaseModel):
    id: str
    title: str
    quote: str = Field(description="the passage's most relevant full sentence(s), never a heading alone")
    lang: Literal["en", "ur"] = "en"


class Sections(BaseModel):
    """Everything an answer says, in the order a reader needs it."""

    lang: Literal["en", "ur"] = "en"
    kind: str = Field("", description="fit, speed, train_time, prices, cost, recommend, compare, guide, help, ask, error")
    verdict: Literal["yes", "no", "partly", "info", "ask", "error"] = "info"
    understood: list[Finding] = Field(default_factory=list, description="what was understood and what was carried over")
    headline: list[Finding] = Field(default_factory=list, description="the verdict first, one or two statements")
    key_numbers: list[KeyNumber] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)
    way_forward: list[Option] = Field(default_factory=list)
    options: list[Option] = Field(default_factory=list, description="recommended choices, ranked")
    explanation: list[Finding] = Field(default_factory=list, description="why, resting on guide passages")
    assumptions: list[Finding] = Field(default_factory=list)
    not_used: list[str] = Field(default_factory=list, description="numbers/names of the question that were not used")
    citations: list[CitationRef] = Field(default_factory=list)
    data_date: str | None = Field(None, description="date of the price data used, ISO")
    notices: list[Finding] = Field(default_factory=list)
    data_stale: bool = Field(False, description="the price data is old: check live prices before renting")
    details: list[str] = Field(default_factory=list,
                               description="English only: the tools' own notes (code identifiers filtered out)")
