"""Bar charts as plain HTML for the web app: legible on a phone, the same colours in every answer.

A chart frame (ui_data.CHART_COLUMNS: item, value, part) becomes horizontal bars built from <div>s:
labels sit above their bar (never rotated, never overlapping), every bar carries its value, the
axis runs from 0 to a round number at or above the largest bar, the legend wraps, and a part (a
memory component, a GPU, a pricing kind) keeps one colour across answers. HTML rather than SVG
because Gradio's chat sanitizer drops `viewBox`, so an SVG could not shrink to a phone's width.

The DOM carries what the browser test reads: `.ga-tick` (axis labels, the last is the axis
maximum) and `.ga-val` (one value label per bar, the bar's total).
"""

from __future__ import annotations

__all__ = ["CHART_WORDS", "PART_LABELS", "chart_from", "chart_html", "chart_words", "color_for", "nice_max",
           "worth_drawing"]

import hashlib
import html
import math
import re
from typing import Any

import pandas as pd

from assistant.engine.render.catalog import catalog
from assistant.frontends.web import ui_data

# Fixed colours for the parts the tools name; anything else (a GPU, an option) hashes into _PALETTE,
# so the same name gets the same colour in every answer.
_FIXED = {"weights": "#4c78a8", "kv_cache": "#f58518", "activations": "#54a24b", "cuda_context": "#b279a2",
          "optimizer": "#e45756", "gradients": "#ff9da6", "lora_adapters": "#72b7b2",
          "quantization_constants": "#9d755d", "dequant_workspace": "#bab0ac", "logits": "#eeca3b",
          "GPU memory": "#7f7f7f", "on-demand": "#4c78a8", "spot": "#f58518", "tokens/s": "#4c78a8",
          "hours": "#54a24b", "USD": "#4c78a8"}
_PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d", "#eeca3b",
            "#ff9da6", "#2f6f4f"]
PART_LABELS = ui_data.PART_LABELS
# A chart's words in an answer's language other than English: its title by the picture's kind, its unit,
# and the words of bar and legend labels (a memory component's name comes from the message catalog).
CHART_WORDS: dict[str, dict[str, dict[str, str]]] = {"ur": {
    "title": {"memory": "فی GPU میموری", "speed": "رفتار کا اندازہ", "recommend": "اختیارات کا موازنہ",
              "cost": "لاگت", "training": "ٹریننگ کے وقت کا اندازہ", "prices": "فی GPU گھنٹہ قیمت، سب سے سستی پہلے"},
    "unit": {"GB (decimal)": "GB میں (اعشاری)", "tokens/s": "ٹوکن فی سیکنڈ", "hours": "گھنٹے", "USD": "$",
             "USD per million tokens": "$ فی ملین ٹوکن", "USD for the job": "کام کے $", "USD per GPU-hour": "$ فی GPU گھنٹہ"},
    "word": {"needed": "درکار", "GPU memory": "GPU میموری", "per sequence": "فی سلسلہ", "total at batch": "بیچ پر کل",
             "on-demand": "آن ڈیمانڈ", "spot (expected)": "اسپاٹ (متوقع)", "spot": "اسپاٹ", "wall-clock hours": "گھڑی کے گھنٹے",
             "GPU-hours": "GPU گھنٹے", "tokens/s": "ٹوکن فی سیکنڈ", "hours": "گھنٹے", "USD": "$",
             "USD per million tokens": "$ فی ملین ٹوکن", "USD for the job": "کام کے $"}}}


def color_for(part: str) -> str:
    """The colour of a part: fixed for known names, else a stable hash of the name into the palette."""
    if part in _FIXED:
        return _FIXED[part]
    digest = hashlib.sha1(part.encode("utf-8")).digest()
    return _PALETTE[digest[0] % len(_PALETTE)]


def nice_max(largest: float) -> float:
    """The axis maximum: the smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 x 10^k that is >= largest.

    E.g. 19.58 -> 20, 25.77 -> 30, 0.87 -> 1, 42.9 -> 50; 0 or less -> 1."""
    if not largest or largest <= 0 or not math.isfinite(largest):
        return 1.0
    exp = math.floor(math.log10(largest))
    for step in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        top = step * 10.0 ** exp
        if top >= largest * (1 - 1e-12):
            return float(f"{top:.12g}")
    return 10.0 ** (exp + 1)  # unreachable: the loop ends at 10 x 10^k


def _intervals(top: float) -> int:
    """How many grid intervals: the first of 4, 5, 3, 6, 2 whose step is 1, 2, 2.5 or 5 x 10^k (30 -> 3 of 10)."""
    for n in (4, 5, 3, 6, 2):
        step = top / n
        mant = step / 10 ** math.floor(math.log10(step))
        if any(abs(mant - m) < 1e-9 for m in (1, 2, 2.5, 5, 10)):
            return n
    return 4


def _fmt(v: float) -> str:
    """Axis and value labels with the chat's precision: 1,234 / 123 / 12.3 / 1.23 / 0.123."""
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}".removesuffix(".0")
    if a >= 1:
        return f"{v:.2f}".rstrip("0").rstrip(".")
    return f"{v:.3f}".rstrip("0").rstrip(".") or "0"


def _totals(frame: pd.DataFrame) -> dict[str, float]:
    out: dict[str, float] = {}
    for item, value in zip(frame["item"], frame["value"]):
        out[str(item)] = out.get(str(item), 0.0) + float(value)
    return out


def worth_drawing(frame: pd.DataFrame) -> bool:
    """False when a chart adds nothing: under two bars, or every bar the same single-coloured height."""
    if frame is None or frame.empty:
        return False
    totals = _totals(frame)
    if len(totals) < 2 and frame["part"].nunique() < 2:
        return False
    vals = list(totals.values())
    same = max(vals) - min(vals) <= 1e-9 * max(1.0, max(vals))
    return not (same and frame["part"].nunique() < 2)


def chart_words(lang: str, text: str) -> str:
    """A bar or legend label in the answer's language: a memory component by the catalog, a known word
    or the phrase it starts with ("total at batch 10") by CHART_WORDS; names stay as they are."""
    if lang == "en" or lang not in CHART_WORDS:
        return PART_LABELS.get(text, text)
    comp = catalog(lang).get(f"comp.{text}")
    if comp:
        return comp
    text = re.sub(r"\ba (\d+(?:\.\d+)?) GB GPU\b", r"\1 GB GPU", text)  # the fit's "a 24 GB GPU"
    words = CHART_WORDS[lang]["word"]
    for en in sorted(words, key=len, reverse=True):
        if text == en or text.startswith(en + " "):
            return words[en] + text[len(en):]
    return text


def chart_html(frame: pd.DataFrame, title: str = "", unit: str = "", lang: str = "en") -> str:
    """Horizontal (stacked) bars for a chart frame, or "" when worth_drawing() says no; labels in `lang`."""
    if not worth_drawing(frame):
        return ""
    frame = frame[[math.isfinite(float(v)) and float(v) >= 0 for v in frame["value"]]]
    totals = _totals(frame)
    top = nice_max(max(totals.values()))
    parts = list(dict.fromkeys(str(p) for p in frame["part"]))
    ur = ' lang="ur"' if lang == "ur" else ""
    rows = []
    for item, total in totals.items():
        segs = frame[frame["item"].astype(str) == item]
        bar = "".join(
            f'<span class="ga-seg" style="width:{100 * float(v) / top:.3f}%;background:{color_for(str(p))}" '
            f'title="{html.escape(chart_words(lang, str(p)))}: {_fmt(float(v))}"></span>'
            for p, v in zip(segs["part"], segs["value"]))
        rows.append(f'<div class="ga-row"><div class="ga-label"><bdi{ur}>{html.escape(chart_words(lang, item))}</bdi></div>'
                    f'<div class="ga-track">{bar}<span class="ga-val">{_fmt(total)}</span></div></div>')
    n = _intervals(top)
    ticks = "".join(f'<span class="ga-tick" style="left:{100 * i / n:.3f}%">{_fmt(top * i / n)}</span>'
                    for i in range(n + 1))
    legend = ""
    if len(parts) > 1:
        legend = '<div class="ga-legend">' + "".join(
            f'<span class="ga-key"><span class="ga-swatch" style="background:{color_for(p)}"></span>'
            f'<bdi{ur}>{html.escape(chart_words(lang, p))}</bdi></span>' for p in parts) + "</div>"
    head = f'<div class="ga-chart-title"><bdi{ur}>{html.escape(title)}</bdi></div>' if title else ""
    axis = f'<div class="ga-axis">{ticks}</div>'
    unit_line = f'<div class="ga-unit"><bdi{ur}>{html.escape(unit)}</bdi></div>' if unit else ""
    return (f'<div class="ga-chart" dir="ltr">{head}{legend}'
            f'<div class="ga-bars" style="background-size:{100 / n:.3f}% 100%">{"".join(rows)}</div>{axis}{unit_line}</div>')


def chart_from(visual: Any, lang: str = "en") -> str:
    """chart_html for a ui_data.Visual (its chart frame, title and y unit) in the answer's language.
    Offers get none: their table is already cheapest first, and a row of near-equal price bars says
    nothing more."""
    if visual.kind == "prices" and not visual.table.empty:
        return ""
    words = CHART_WORDS.get(lang)
    if words is None:
        return chart_html(visual.chart, visual.chart_title, visual.y_title)
    return chart_html(visual.chart, words["title"].get(visual.kind, visual.chart_title),
                      words["unit"].get(visual.y_title, visual.y_title), lang)
