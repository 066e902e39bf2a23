"""Answer text from tool results: verdict first, key numbers, reasons with guide citations,
assumptions, and the price data's date. English or Urdu, as the question was asked.

Numbers are only ever copied (and rounded) from tool results or the user's own words; nothing
here computes a new figure.
"""

from __future__ import annotations

__all__ = ["compose"]

import re
from typing import Any

from assistant.formatting import number
from assistant.nlu import Parsed
from assistant.planner import DEFAULTS

Done = list[tuple[str, dict, dict]]

T = {
    "en": {
        "fits": "Yes — it fits. {what} needs {total} GB per GPU{on}, leaving {head} GB ({pct}%) free.",
        "nofit": "No — it does not fit. {what} needs {total} GB per GPU{on}, {short} GB more than it has.",
        "need": "{what} needs about {total} GB of GPU memory per GPU.",
        "key": "Key numbers:",
        "comp": "- {name}: {gb} GB",
        "kv_big": "The KV cache ({kv} GB) rivals the weights ({w} GB): size the GPU for both, not just for the weights.",
        "mixed_vs_bf16": "Training precision matters: mixed precision (fp32 master weights and Adam states) needs {a} GB; pure bf16 needs {b} GB.",
        "gpus_fit": "GPUs with that much memory in the catalog: {list}.",
        "gpus_none": "No single GPU in the catalog has {total} GB: split it over several GPUs (tensor parallel for serving, FSDP/ZeRO for training), quantise, or use QLoRA.",
        "why": "Why (from the guide):",
        "assume": "Assumptions:",
        "data": "Prices: {note}",
        "speed_head": "Estimated speed of {model} ({prec}):",
        "speed_row": "- {gpu}{n}, batch {b}: {per} tokens/s per user, {agg} tokens/s in total, first token in {ttft} s ({bound}-bound)",
        "speed_nofit": "  (does not fit on {gpu} at this setting)",
        "prices_head": "{kind} {gpu}, cheapest first:",
        "price_row": "- {prov} {inst}: {n} GPU(s), ${gpuh}/GPU-hour (${insth}/hour for the instance), {region}",
        "spot_row": "- {prov} {inst}: {n} GPU(s), spot ${gpuh}/GPU-hour, {region}",
        "no_offers": "No {kind} offer matches in the catalog.",
        "cost_head": "Cost on {gpu} ({prov} {inst}, ${price}/hour):",
        "cost_job": "- about {h} h of running ({train}) → ${od} on demand",
        "cost_bill": "- billed per second ${ps}, per minute ${pm}, per hour ${ph}",
        "cost_spot": "- on spot ({prov}, ${sp}/hour): about ${sc} expected, with {ni} expected interruptions over {wh} h",
        "cost_serve": "- serving at {tps} tokens/s: ${pm} per million tokens; always on ${mo} a month",
        "billing_verdict": "It matters for short runs: a {mins}-minute run on {gpu} costs ${ps} billed per second but ${ph} billed per hour.",
        "rec_head": "Best options ({obj}):",
        "rec_row": "{i}. {n} x {gpu} at {prov} ({inst}{region})",
        "rec_out": "Ruled out: {list}",
        "rec_none": "Nothing in the catalog fits this goal. What would:",
        "rec_missing": "To recommend I still need: {list}.",
        "unknown_model": "I don't know the model {name!r}, so I won't guess its size. Tell me its parameter count (e.g. '13B') or share its config.json.",
        "close": " Close names I know: {list}.",
        "ask_model": "Which model? Give its name (e.g. Llama 3.1 8B) or its size (e.g. 13B).",
        "ask_gpu": "Which GPU should I estimate for? For example L4, A100 or H100.",
        "error": "I can't compute that: {msg}",
        "help": ("I size GPUs for LLM and generative-AI work: will it fit (VRAM), how fast (tokens/s, training time), "
                 "what it costs (prices, billing, spot), and which GPU to rent — with the guide passage behind each piece of advice. "
                 "Try: \"Can I run Llama-3-8B in FP16 on an L4?\" or \"Cheapest H100 per hour?\""),
        "oos": ("That is outside what I do. I answer questions about renting GPUs for LLM and generative-AI work: memory, "
                "speed, prices and costs, and which GPU to pick."),
        "guide_only": "From the guide:",
        "gpu_unknown": "I don't know the GPU {name!r}.",
    },
    "ur": {
        "fits": "جی ہاں — یہ سما جاتا ہے۔ {what} کو فی GPU {total} GB درکار ہیں{on}، اور {head} GB ({pct}%) خالی بچتے ہیں۔",
        "nofit": "نہیں — یہ نہیں سماتا۔ {what} کو فی GPU {total} GB درکار ہیں{on}، یعنی {short} GB زیادہ۔",
        "need": "{what} کو فی GPU تقریباً {total} GB میموری درکار ہے۔",
        "key": "اہم اعداد:",
        "comp": "- {name}: {gb} GB",
        "kv_big": "KV کیش ({kv} GB) وزنوں ({w} GB) کا مقابلہ کرتا ہے: صرف وزنوں کے حساب سے GPU نہ چنیں۔",
        "mixed_vs_bf16": "ٹریننگ پریسیژن اہم ہے: مکسڈ پریسیژن (fp32 ماسٹر وزن اور Adam کی حالت) کو {a} GB اور خالص bf16 کو {b} GB چاہییں۔",
        "gpus_fit": "کیٹلاگ میں اتنی میموری والے GPU: {list}۔",
        "gpus_none": "کیٹلاگ میں کسی ایک GPU میں {total} GB نہیں: اسے کئی GPUs پر تقسیم کریں، کوانٹائز کریں، یا QLoRA استعمال کریں۔",
        "why": "وجہ (گائیڈ سے):",
        "assume": "مفروضات:",
        "data": "قیمتیں: {note}",
        "speed_head": "{model} ({prec}) کی اندازاً رفتار:",
        "speed_row": "- {gpu}{n}، بیچ {b}: فی صارف {per} ٹوکن فی سیکنڈ، کل {agg} ٹوکن فی سیکنڈ، پہلا ٹوکن {ttft} سیکنڈ میں ({bound})",
        "speed_nofit": "  ({gpu} پر اس ترتیب میں نہیں سماتا)",
        "prices_head": "{gpu} — {kind}، سب سے سستا پہلے:",
        "price_row": "- {prov} {inst}: {n} GPU، ${gpuh} فی GPU گھنٹہ (انسٹانس ${insth} فی گھنٹہ)، {region}",
        "spot_row": "- {prov} {inst}: {n} GPU، اسپاٹ ${gpuh} فی GPU گھنٹہ، {region}",
        "no_offers": "کیٹلاگ میں کوئی {kind} پیشکش نہیں ملی۔",
        "cost_head": "{gpu} پر لاگت ({prov} {inst}، ${price} فی گھنٹہ):",
        "cost_job": "- تقریباً {h} گھنٹے ({train}) → آن ڈیمانڈ ${od}",
        "cost_bill": "- فی سیکنڈ بلنگ ${ps}، فی منٹ ${pm}، فی گھنٹہ ${ph}",
        "cost_spot": "- اسپاٹ پر ({prov}، ${sp} فی گھنٹہ): متوقع ${sc}، {wh} گھنٹوں میں {ni} متوقع رکاوٹیں",
        "cost_serve": "- {tps} ٹوکن فی سیکنڈ پر سرونگ: ${pm} فی ملین ٹوکن؛ ہمیشہ چالو رہنے پر ${mo} ماہانہ",
        "billing_verdict": "مختصر رنز کے لیے فرق پڑتا ہے: {gpu} پر {mins} منٹ کا رن فی سیکنڈ بلنگ پر ${ps} اور فی گھنٹہ بلنگ پر ${ph} کا پڑتا ہے۔",
        "rec_head": "بہترین انتخاب ({obj}):",
        "rec_row": "{i}۔ {n} x {gpu} — {prov} ({inst}{region})",
        "rec_out": "خارج: {list}",
        "rec_none": "کیٹلاگ میں کچھ بھی اس مقصد کے لیے نہیں سماتا۔ یہ مدد کرے گا:",
        "rec_missing": "تجویز کے لیے ابھی یہ چاہیے: {list}۔",
        "unknown_model": "میں ماڈل {name!r} کو نہیں جانتا، اس لیے اس کے سائز کا اندازہ نہیں لگاؤں گا۔ اس کے پیرامیٹرز کی تعداد (مثلاً '13B') یا اس کی config.json بتائیں۔",
        "close": " ملتے جلتے نام: {list}۔",
        "ask_model": "کون سا ماڈل؟ اس کا نام (مثلاً Llama 3.1 8B) یا سائز (مثلاً 13B) بتائیں۔",
        "ask_gpu": "کس GPU کے لیے اندازہ لگاؤں؟ مثلاً L4، A100 یا H100۔",
        "error": "یہ حساب نہیں ہو سکا: {msg}",
        "help": ("میں LLM اور جنریٹو اے آئی کے کام کے لیے GPU کا حساب لگاتا ہوں: کیا ماڈل سمائے گا (VRAM)، رفتار کتنی ہوگی، "
                 "لاگت کیا ہوگی، اور کون سا GPU کرائے پر لیں — ہر مشورے کے ساتھ گائیڈ کا حوالہ۔"),
        "oos": "یہ میرے دائرے سے باہر ہے۔ میں LLM اور جنریٹو اے آئی کے لیے GPU کرائے پر لینے کے سوالات کا جواب دیتا ہوں: میموری، رفتار، قیمت اور انتخاب۔",
        "guide_only": "گائیڈ سے:",
        "gpu_unknown": "میں GPU {name!r} کو نہیں جانتا۔",
    },
}
_COMP_UR = {"weights": "وزن", "kv_cache": "KV کیش", "activations": "ایکٹیویشنز", "gradients": "گریڈینٹس",
            "optimizer": "آپٹیمائزر", "cuda_context": "CUDA کانٹیکسٹ", "logits": "لاجٹس", "lora_adapters": "LoRA ایڈاپٹرز",
            "quantization_constants": "کوانٹائزیشن کانسٹنٹس", "dequant_workspace": "ڈی کوانٹ ورک اسپیس"}


def _n(x: Any, nd: int = 2) -> str:
    return "?" if x is None else number(x, nd)


def _best_sentence(text: str, query: str) -> str:
    """The passage sentence sharing most words with the question (the first one on a tie)."""
    from knowledge.guide_index import tokenize

    body = text.split("\n")[-1] if "\n" in text else text
    parts = [x.strip().lstrip("• ") for x in re.split(r"(?<=[.!?۔؟])\s+", body) if x.strip()]
    q = set(tokenize(query))
    best = max(parts, key=lambda s: (len(q & set(tokenize(s))), -parts.index(s))) if parts else body
    return best if len(best) <= 280 else best[:277] + "…"


def _citations(done: Done, lang: str) -> list[dict[str, str]]:
    out = []
    for name, args, r in done:
        if name == "search_guide":
            for p in r.get("passages", [])[:2]:
                out.append({"guide": p["guide"], "passage_id": p["id"], "title": p["guide_title"],
                            "quote": _best_sentence(p["text"], args.get("question", ""))})
    return out


def _why(cites: list[dict[str, str]], t: dict[str, str]) -> list[str]:
    if not cites:
        return []
    lines = [t["why"]]
    for c in cites:
        lines.append(f"- [{c['passage_id']}] “{c['quote']}”")
    return lines


def compose(p: Parsed, done: Done) -> tuple[str, list[dict[str, str]]]:
    """(answer text, citations) for the parsed question and this turn's tool results."""
    lang = p.lang if p.lang in T else "en"
    t = T[lang]
    cites = _citations(done, lang)
    if p.intent == "help":
        return t["help"], []
    if p.intent == "out_of_scope":
        return t["oos"], []
    errors = list(dict.fromkeys(r["error"] for n, _, r in done if n != "search_guide" and "error" in r))
    results = [(n, a, r) for n, a, r in done if n != "search_guide" and "error" not in r]
    if p.slots.model_unknown and not results:
        msg = t["unknown_model"].format(name=p.slots.model_unknown)
        m = re.search(r"Closest known: (.*?)\.", errors[0]) if errors else None
        if m:
            msg += t["close"].format(list=m.group(1))
        return msg, []
    body: list[str] = []
    if p.slots.gpu_unknown:
        body.append(t["gpu_unknown"].format(name=p.slots.gpu_unknown[0])
                    + (" " + errors[0].split(". ", 1)[1] if errors and "Closest" in errors[0] else ""))
    if not results:
        if errors and not body:
            return t["error"].format(msg=" ".join(errors)), cites
        if p.intent in ("speed", "compare", "train_time") and not p.slots.gpus:
            return t["ask_gpu"], cites
        if p.intent in ("fit", "recommend", "cost", "train_time") and not (p.slots.model or p.slots.params_b):
            return t["ask_model"], cites
        if p.intent == "guide" and cites:
            return "\n".join([t["guide_only"]] + [f"[{c['passage_id']}] {c['quote']}" for c in cites]), cites
        if errors:
            body.append(t["error"].format(msg=" ".join(errors)))
        return "\n".join(body) if body else t["oos"], cites
    fn = {"fit": _fit, "speed": _speed, "compare": _speed, "train_time": _train, "prices": _prices, "cost": _cost,
          "recommend": _recommend}.get(p.intent, _fit)
    body += fn(p, results, t, lang)
    if errors:
        body.append(t["error"].format(msg=" ".join(errors)))
    body += _why(cites, t)
    heads = {t["key"], t["why"], t["assume"], t["rec_head"].split("{")[0]}
    spaced: list[str] = []
    for line in body:  # a blank line before each section heading (markdown renders lists apart)
        if spaced and (line in heads or any(line.startswith(h) for h in heads if h)):
            spaced.append("")
        spaced.append(line)
    return "\n".join(spaced), cites


# ---- per intent -------------------------------------------------------------------------------------
def _what(r: dict, lang: str) -> str:
    m, i = r["model"], r["inputs"]
    meth = i.get("method", "inference")
    if lang == "ur":
        return f"{m['name']} ({meth}, {i.get('weight_precision', i.get('precision', ''))})"
    return f"{m['name']} ({meth}, {i.get('weight_precision', i.get('precision', ''))})"


def _fit(p: Parsed, results: Done, t: dict, lang: str) -> list[str]:
    out: list[str] = []
    vr = [(a, r) for n, a, r in results if n == "vram_calculator"]
    if not vr:
        return out
    a, r = vr[0]
    total = r["total_gb"]
    f = r.get("fit")
    what = _what(r, lang)
    if f:
        on = f" on {f['gpu']} ({_n(f['gpu_memory_gb'])} GB)" if lang == "en" else f"، {f['gpu']} ({_n(f['gpu_memory_gb'])} GB) پر"
        if f["fits"]:
            out.append(t["fits"].format(what=what, total=_n(total), on=on, head=_n(f["headroom_gb"]), pct=_n(f["headroom_pct"], 1)))
        else:
            out.append(t["nofit"].format(what=what, total=_n(total), on=on, short=_n(-f["headroom_gb"])))
    else:
        out.append(t["need"].format(what=what, total=_n(total)))
    out.append(t["key"])
    comps = r["components_gb"]
    for name, gb in sorted(comps.items(), key=lambda kv: -kv[1]):
        if gb >= 0.005:
            out.append(t["comp"].format(name=_COMP_UR.get(name, name) if lang == "ur" else name, gb=_n(gb)))
    kv, w = comps.get("kv_cache", 0), comps.get("weights", 0)
    if kv and w and kv >= 0.3 * w:
        out.append(t["kv_big"].format(kv=_n(kv), w=_n(w)))
    if len(vr) > 1 and vr[1][0].get("training_precision") == "bf16":
        out.append(t["mixed_vs_bf16"].format(a=_n(total), b=_n(vr[1][1]["total_gb"])))
        f2 = vr[1][1].get("fit")
        if f and f2:
            out.append((t["fits"] if f2["fits"] else t["nofit"]).format(
                what=_what(vr[1][1], lang) + " bf16", total=_n(vr[1][1]["total_gb"]),
                on=(f" on {f2['gpu']}" if lang == "en" else f"، {f2['gpu']} پر"), head=_n(f2["headroom_gb"]),
                pct=_n(f2["headroom_pct"], 1), short=_n(-f2["headroom_gb"])))
    pq = [r2 for n, _, r2 in results if n == "price_query"]
    if pq:
        offers = pq[0].get("offers", [])
        if offers:
            names = []
            for o in offers:
                item = f"{o['gpu']} ({o['provider']}, ${_n(o['price_usd_per_gpu_hour'])}/GPU-h)"
                if item not in names:
                    names.append(item)
            out.append(t["gpus_fit"].format(list="; ".join(names)))
        else:
            out.append(t["gpus_none"].format(total=_n(total)))
    out.append(t["assume"])
    out += [f"- {x}" for x in r["assumptions"][:4]]
    if pq:
        out.append(t["data"].format(note=pq[0].get("data_note", "")))
    return out


def _speed(p: Parsed, results: Done, t: dict, lang: str) -> list[str]:
    out: list[str] = []
    sp = [(a, r) for n, a, r in results if n == "speed_estimator"]
    if sp:
        a0, r0 = sp[0]
        out.append(t["speed_head"].format(model=r0["inputs"]["model"], prec=r0["inputs"]["precision"]))
        for a, r in sp:
            n = f" x{r['inputs']['gpus']}" if r["inputs"]["gpus"] > 1 else ""
            bound = {"memory": "memory", "compute": "compute", "interconnect": "interconnect"}[r["bound"]]
            if lang == "ur":
                bound = {"memory": "میموری بینڈوڈتھ کی حد", "compute": "کمپیوٹ کی حد", "interconnect": "انٹرکنیکٹ کی حد"}[r["bound"]]
            out.append(t["speed_row"].format(gpu=r["gpu"]["name"], n=n, b=r["inputs"]["batch"],
                                             per=_n(r["decode_tokens_per_s"], 1), agg=_n(r["aggregate_tokens_per_s"], 1),
                                             ttft=_n(r["time_to_first_token_s"], 3), bound=bound))
            if r.get("memory") and not r["memory"].get("fits", True):
                out.append(t["speed_nofit"].format(gpu=r["gpu"]["name"]))
        out.append(t["assume"])
        out += [f"- {x}" for x in r0["assumptions"][:3]]
        if p.slots.model is None and p.slots.params_b is None:
            out.append(f"- Example model: {DEFAULTS['example_model']} (no model was named).")
    pq = [r for n, _, r in results if n == "price_query" and r.get("offers")]
    for r in pq:
        o = r["offers"][0]
        out.append(t["price_row"].format(prov=o["provider"], inst=o["instance_type"] or "", n=o["gpu_count"],
                                         gpuh=_n(o["price_usd_per_gpu_hour"]), insth=_n(o["price_usd_per_hour"]),
                                         region=o["region"] or ""))
    if pq:
        out.append(t["data"].format(note=pq[0]["data_note"]))
    return out


def _train(p: Parsed, results: Done, t: dict, lang: str) -> list[str]:
    out = []
    for n, a, r in results:
        if n == "training_time":
            out.append(f"- {r['gpu']['name']} x{r['inputs']['gpus']}: {_n(r['tokens_per_s'], 0)} tokens/s, "
                       f"{_n(r['hours'])} h, {_n(r['gpu_hours'])} GPU-h ({r['inputs']['method']}, estimate)")
    tt = next((r for n, _, r in results if n == "training_time"), None)
    if tt:
        out.append(t["assume"])
        out += [f"- {x}" for x in tt["assumptions"][:4]]
    return out


def _prices(p: Parsed, results: Done, t: dict, lang: str) -> list[str]:
    out = []
    note = ""
    for n, a, r in results:
        if n != "price_query":
            continue
        spot = a.get("pricing") == "spot"
        kind = ("Spot" if spot else "On-demand") if lang == "en" else ("اسپاٹ" if spot else "آن ڈیمانڈ")
        gpu = a.get("gpu") or (f">= {_n(a.get('min_vram_gb'))} GB" if a.get("min_vram_gb") else "GPU")
        if not r.get("offers"):
            out.append(t["no_offers"].format(kind=kind.lower() if lang == "en" else kind))
            continue
        out.append(t["prices_head"].format(kind=kind, gpu=gpu))
        for o in r["offers"]:
            if spot:
                out.append(t["spot_row"].format(prov=o["provider"], inst=o["instance_type"] or "", n=o["gpu_count"],
                                                gpuh=_n(o["spot_price_usd_per_gpu_hour"]), region=o["region"] or ""))
            else:
                out.append(t["price_row"].format(prov=o["provider"], inst=o["instance_type"] or "", n=o["gpu_count"],
                                                 gpuh=_n(o["price_usd_per_gpu_hour"]), insth=_n(o["price_usd_per_hour"]),
                                                 region=o["region"] or ""))
        if r.get("gpu_note"):
            out.append(r["gpu_note"])
        note = r["data_note"]
    if note:
        out.append(t["data"].format(note=note))
    return out


def _cost(p: Parsed, results: Done, t: dict, lang: str) -> list[str]:
    out: list[str] = []
    note = ""
    costs = [(a, r) for n, a, r in results if n == "cost_estimator"]
    if p.slots.billing and costs and "billing" in costs[0][1]:
        a, r = costs[0]
        b = r["billing"]
        mins = _n(r["runtime_hours"] * 60, 0)
        out.append(t["billing_verdict"].format(mins=mins, gpu=r["offer"]["gpu"] if r.get("offer") else a["gpu"],
                                               ps=_n(b["per_second_usd"]), ph=_n(b["per_hour_usd"])))
    for a, r in costs:
        o = r.get("offer") or r.get("spot_offer") or {}
        out.append(t["cost_head"].format(gpu=o.get("gpu", a.get("gpu")), prov=o.get("provider", ""),
                                         inst=o.get("instance_type") or "", price=_n(o.get("price_usd_per_hour"))))
        if "serving" in r:
            s = r["serving"]
            out.append(t["cost_serve"].format(tps=_n(s["aggregate_tokens_per_s"], 0), pm=_n(s.get("usd_per_million_tokens"), 3),
                                              mo=_n(s.get("monthly_usd"))))
        else:
            train = "training estimate" if "training" in r else "as given"
            if lang == "ur":
                train = "ٹریننگ کا اندازہ" if "training" in r else "دیا گیا وقت"
            if r.get("on_demand_cost_usd") is not None:
                out.append(t["cost_job"].format(h=_n(r["runtime_hours"]), train=train, od=_n(r["on_demand_cost_usd"])))
            if r.get("billing"):
                b = r["billing"]
                out.append(t["cost_bill"].format(ps=_n(b["per_second_usd"]), pm=_n(b["per_minute_usd"]), ph=_n(b["per_hour_usd"])))
            sp = r.get("spot")
            if sp and sp.get("cost_usd") is not None:
                out.append(t["cost_spot"].format(prov=sp["provider"], sp=_n(sp["spot_price_usd_per_hour"]), sc=_n(sp["cost_usd"]),
                                                 ni=_n(sp["expected_interruptions"]), wh=_n(sp["wall_hours"])))
        note = r.get("data_note", note)
    if costs:
        out.append(t["assume"])
        seen = []
        for _, r in costs:
            for x in r["assumptions"]:
                if x not in seen and len(seen) < 6:
                    seen.append(x)
        out += [f"- {x}" for x in seen]
        if p.slots.examples and not p.slots.tokens_per_example:
            out.append(f"- {DEFAULTS['tokens_per_example']} tokens per example (not stated).")
    if note:
        out.append(t["data"].format(note=note))
    rec = [r for n, _, r in results if n == "recommend_gpus"]
    if rec:
        out += _recommend(p, [("recommend_gpus", {}, rec[0])], t, lang)
    return out


# Urdu renderings of the recommender's reason sentences (tools/recommend.py), numbers carried over as
# they are; a sentence that matches none stays in English rather than being guessed at.
_UR_REASONS: list[tuple[re.Pattern[str], str]] = [(re.compile(a), b) for a, b in [
    (r"^Fits: (?P<t>\S+) GB per GPU of (?P<m>\S+) GB at (?P<p>\S+) \(weights (?P<w>\S+) GB, KV cache (?P<kv>\S+) GB "
     r"for (?P<u>\S+) x (?P<c>\S+) tokens\) \[(?P<id>[\w-]+)\]\.$",
     "سما جاتا ہے: {p} پر فی GPU {t} GB، {m} GB میں سے (وزن {w} GB، KV کیش {kv} GB، {u} x {c} ٹوکن کے لیے) [{id}]۔"),
    (r"^Fits: (?P<t>\S+) GB per GPU of (?P<m>\S+) GB for (?P<meth>\S+) \(micro-batch (?P<b>\S+) x (?P<s>\S+) tokens"
     r"(?P<ck>, activation checkpointing on)?\) \[(?P<id>[\w-]+)\]\.$",
     "سما جاتا ہے: {meth} کے لیے فی GPU {t} GB، {m} GB میں سے (مائیکرو بیچ {b} x {s} ٹوکن{ck}) [{id}]۔"),
    (r"^The KV cache \((?P<kv>\S+) GB\) is (?P<pct>\S+) of the weights: .* \[(?P<id>[\w-]+)\]\.$",
     "KV کیش ({kv} GB) وزن کا {pct} ہے: لمبا سیاق اور زیادہ صارفین ماڈل سے زیادہ میموری مانگتے ہیں [{id}]۔"),
    (r"^(?P<pu>\S+) tokens/s per user, (?P<tot>\S+) in total \((?P<b>\w+)-bound; (?P<mt>.+?) at (?P<bw>\S+) GB/s\) "
     r"\[(?P<id>[\w-]+)\]\.$",
     "فی صارف {pu} ٹوکن فی سیکنڈ، کل {tot} ({b}-bound؛ {mt}، {bw} GB/s) [{id}]۔"),
    (r"^Split over (?P<n>\d+) GPUs \(tensor parallel\) with NVLink, .*\[(?P<id>[\w-]+)\]\.$",
     "{n} GPUs پر تقسیم (ٹینسر پیرالل) NVLink کے ساتھ، جو تقسیم کو تیز رکھتا ہے [{id}]۔"),
    (r"^Split over (?P<n>\d+) GPUs \(tensor parallel\) over PCIe only: .*\[(?P<id>[\w-]+)\]\.$",
     "{n} GPUs پر تقسیم (ٹینسر پیرالل) صرف PCIe پر: چلتا ہے، مگر ہر ٹوکن پر all-reduce رفتار کم کرتے ہیں [{id}]۔"),
    (r"^\$(?P<pm>\S+) per million tokens at full load; \$(?P<mo>\S+) a month always on \(\$(?P<h>\S+)/h, (?P<pv>.+)\)\.$",
     "پوری لوڈ پر ${pm} فی ملین ٹوکن؛ ہر وقت چالو رہے تو ${mo} ماہانہ (${h} فی گھنٹہ، {pv})۔"),
    (r"^Spot would be cheaper but is risky .*\[(?P<id>[\w-]+)\]\.$",
     "اسپاٹ سستا پڑے گا مگر صارفین کے لیے ہر وقت چالو اینڈ پوائنٹ کے لیے خطرناک ہے [{id}]۔"),
    (r"^About (?P<h>\S+) h \((?P<tps>\S+) tokens/s, estimate\) for (?P<tok>\S+) tokens\.$",
     "تقریباً {h} گھنٹے ({tps} ٹوکن فی سیکنڈ، تخمینہ)، {tok} ٹوکن کے لیے۔"),
    (r"^(?P<n>\d+) GPUs with NVLink: .*\[(?P<id>[\w-]+)\]\.$",
     "{n} GPUs، NVLink کے ساتھ: گریڈیئنٹس اور شارڈز بغیر رکاوٹ منتقل ہوتے ہیں [{id}]۔"),
    (r"^(?P<n>\d+) GPUs over PCIe: .*\[(?P<id>[\w-]+)\]\.$",
     "{n} GPUs، PCIe پر: اڈاپٹرز کے لیے ٹھیک، شارڈ شدہ وزن کے لیے سست [{id}]۔"),
    (r"^\$(?P<c>\S+) on demand at \$(?P<h>\S+)/h \((?P<how>.+)\) \[(?P<id>[\w-]+)\]\.$",
     "آن ڈیمانڈ ${c}، ${h} فی گھنٹہ پر ({how}) [{id}]۔"),
    (r"^About \$(?P<c>\S+) on spot \((?P<pv>.+)\) with checkpoints every 30 min \[(?P<id>[\w-]+)\]\.$",
     "اسپاٹ پر تقریباً ${c} ({pv})، ہر 30 منٹ پر چیک پوائنٹ کے ساتھ [{id}]۔"),
    (r"^QLoRA keeps the frozen base model in 4-bit, .*\[(?P<id>[\w-]+)\]\.$",
     "QLoRA منجمد بنیادی ماڈل کو 4-bit میں رکھتا ہے، اس لیے یہ ایک کارڈ پر سما جاتا ہے جہاں مکمل فائن ٹیوننگ کو کئی درکار ہوں [{id}]۔"),
    (r"^Full fine-tuning holds weights, gradients and optimizer states: .*\[(?P<id>[\w-]+)\]\.$",
     "مکمل فائن ٹیوننگ وزن، گریڈیئنٹس اور آپٹیمائزر اسٹیٹس سب رکھتی ہے: کسی بھی طریقے سے زیادہ میموری [{id}]۔"),
]]


def _reason(text: str, lang: str) -> str:
    """A recommender reason in the answer's language."""
    if lang != "ur":
        return text
    for pat, tmpl in _UR_REASONS:
        m = pat.match(text)
        if m:
            g = {k: v or "" for k, v in m.groupdict().items()}
            if "ck" in g and g["ck"]:
                g["ck"] = "، ایکٹیویشن چیک پوائنٹنگ آن"
            return tmpl.format(**g)
    return text


def _recommend(p: Parsed, results: Done, t: dict, lang: str) -> list[str]:
    r = next(r for n, _, r in results if n == "recommend_gpus")
    out: list[str] = []
    if r["status"] == "needs_input":
        return [t["rec_missing"].format(list=", ".join(r["missing"]))]
    if r["options"]:
        out.append(t["rec_head"].format(obj="cheapest job" if lang == "en" else "سب سے سستا"))
        for o in r["options"]:
            off = o["offer"]
            out.append(t["rec_row"].format(i=o["rank"], n=o["gpu_count"], gpu=o["gpu"], prov=off["provider"],
                                           inst=off["instance_type"] or "", region=f", {off['region']}" if off.get("region") else ""))
            out += [f"   - {_reason(x, lang)}" for x in o["reasons"]]
    else:
        out.append(t["rec_none"])
        out += [f"- {x}" for x in r["suggestions"]]
    if r["ruled_out"]:
        out.append(t["rec_out"].format(list="; ".join(x["reason"] for x in r["ruled_out"][:5])))
    out.append(t["assume"])
    out += [f"- {x}" for x in r["assumptions"]]
    if p.slots.examples and not p.slots.tokens_per_example:
        out.append(f"- {DEFAULTS['tokens_per_example']} tokens per example (not stated).")
    if p.slots.method in (None, "finetune") and r["options"] and "method" in r["options"][0]:
        out.append(f"- Method {r['options'][0]['method']} (not stated).")
    return out
