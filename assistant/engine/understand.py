"""Understanding: one message -> a typed Query; a thread's messages -> the folded Query.

    understand(text) -> Query               one message on its own
    understand_turn(text, prior) -> Query   a message in a thread (follow-ups merge into `prior`)
    understand_dialogue(turns) -> Query     fold a whole thread

Names come from the catalogs (names.py), numbers and their roles from the number normaliser and
the quantity grammar (numbers.py, quantities.py), every word list from the per-locale lexicons.
Nothing stated is silently dropped: a number with no role and a name not in the catalog are kept
in the Query (`not_used`, `model_unknown`, `gpu_unknown`) for the answer to report or ask about.
"""

from __future__ import annotations

__all__ = ["detect_language", "normalise", "understand", "understand_turn", "understand_dialogue"]

import re
from functools import lru_cache
from typing import Any

from assistant.engine.lexicon import lexicon, pattern_map, patterns
from assistant.engine.names import find_concepts, find_gpus, find_models, find_providers
from assistant.engine.numbers import find_numbers, to_ascii_digits
from assistant.engine.quantities import assign_roles
from assistant.engine.query import Query, merge
from knowledge.catalog import resolve_model

_ARABIC = re.compile(r"[\u0600-\u06FF\u0750-\u077F\uFB50-\uFDFF\uFE70-\uFEFF]")
_LATIN_WORD = re.compile(r"[a-z]+")
_URDU_FOLD = str.maketrans({"ي": "ی", "ى": "ی", "ك": "ک", "ە": "ہ", "ة": "ہ", "ۀ": "ہ", "أ": "ا", "إ": "ا", "؟": "?",
                            "،": ",", "۔": ".", "×": "x", "–": "-", "—": "-", "’": "'", "‘": "'"})
_MAX_CHARS = 4000
_BITS = {4: "int4", 8: "int8", 16: "fp16", 32: "fp32"}


def normalise(text: str) -> str:
    """Lowercase, ASCII digits, one spelling of Urdu letters, GPU multipliers split ("8xh100" -> "8x h100")."""
    t = to_ascii_digits((text or "")[:_MAX_CHARS]).translate(_URDU_FOLD).lower()
    t = re.sub(r"[\u064B-\u065F\u0670]", "", t)
    t = re.sub(r"\b(\d{1,4})\s?x(?=[a-z])", r"\1x ", t)                  # 8xh100 -> 8x h100
    t = re.sub(r"\b([a-z]+\d+[a-z]*)\s?x\s?(\d{1,3})\b", r"\1 x \2", t)   # h100x8 -> h100 x 8
    t = re.sub(r"(?<=\d)(?=(?:gb|gib|tb)\b)", " ", t)
    t = re.sub(r"(?<=[a-z0-9])/\s*(?=(?:hr|h|hour|mo|month|gpu)\b)", " /", t)   # "a100/hr" -> "a100 /hr"
    return re.sub(r"\s+", " ", t).strip()


@lru_cache(maxsize=1)
def _roman_markers() -> frozenset[str]:
    return frozenset(w for lx in lexicon().values() for w in lx.get("roman_markers", []))


def detect_language(text: str) -> str:
    """'ur' for Urdu script, 'roman-ur' for Urdu in Latin letters, else 'en'."""
    arabic = len(_ARABIC.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text))
    if arabic and arabic >= latin * 0.5:
        return "ur"
    words = _LATIN_WORD.findall(text.lower())
    hits = sum(1 for w in words if w in _roman_markers())
    if hits >= 2 or (hits == 1 and len(words) <= 4 and words and words[0] in ("kya", "kitna", "kitne", "konsa", "kaunsa")):
        return "roman-ur"
    return "en"


def _negated(t: str, start: int, end: int | None = None) -> bool:
    """English-style negation before the words ("not LoRA", "without spot"), or Urdu-style after
    them ("LoRA نہیں", "spot nahi", "کوانٹائزیشن کے بغیر")."""
    neg, after = patterns("negation"), patterns("negation_after")
    before = t[max(0, start - 16):start]
    if neg and neg.search(before) and not re.search(r"\b(?:but|instead|rather)\b", before[-8:]):
        return True
    if end is not None and after:
        m = after.match(t[end:end + 14].lstrip(" ,)(-"))
        return bool(m)
    return False


def _first_positive(t: str, key: str, order: tuple[str, ...] | None = None) -> str | None:
    spans = [s for s in find_concepts(t, key) if not _negated(t, s.start, s.end)]
    if order:
        for c in order:
            if any(s.value == c for s in spans):
                return c
        return None
    return spans[0].value if spans else None


def understand(text: str) -> Query:
    """What one message asks, on its own."""
    return _understand_cached((text or "").strip())


@lru_cache(maxsize=2048)
def _understand_cached(raw: str) -> Query:
    t = normalise(raw)
    lang = detect_language(raw)
    q = Query(text=raw[:_MAX_CHARS], lang=lang, answer_lang="ur" if lang == "ur" else "en")
    if patterns("answer_in_urdu").search(t):
        q.answer_lang = "ur"
    elif patterns("answer_in_english").search(t):
        q.answer_lang = "en"
    models, unknown_model = find_models(t)
    if not models and not unknown_model:
        unknown_model = _named_model(raw, t)
    model = _main_model(t, models)
    pivot = _pivot(t)
    q.other_models = _unique([m.value for m in models if m.value != (model.value if model else None)])
    skip = [(s.start, s.end) for s in [*models, unknown_model] if s]
    gpus, gpu_unknown = find_gpus(t, skip)
    if pivot is not None and any(g.start >= pivot for g in gpus):
        gpus = [g for g in gpus if g.start >= pivot]  # "... RTX 4090? wait no, it's an RTX 4080": the later one
    gpus = [_variant_by_memory(t, g) for g in gpus]
    if model and pivot is not None:
        model = _corrected_size(t, model, pivot)
    if model:
        q.model, q.model_text = model.value, _as_written(raw, model.text)
    elif unknown_model:
        q.model_unknown = _as_written(raw, unknown_model.text)
    q.gpus = _unique([g.value for g in gpus])
    q.seen_gpus = list(q.gpus)
    q.gpu_unknown = _unique([_as_written(raw, g.text) for g in gpu_unknown])
    name_spans = skip + [(g.start, g.end) for g in gpus + gpu_unknown]
    providers = [p for p in find_providers(t) if not _negated(t, p.start, p.end)]
    q.providers = _unique([p.value for p in providers])
    q.seen_providers = list(q.providers)
    name_spans += [(p.start, p.end) for p in providers]
    # a model name between a number and its unit ("1.2M SDXL images") does not hide the unit
    t_roles = t
    for m in models:
        t_roles = t_roles[:m.start] + " " * (m.end - m.start) + t_roles[m.end:]
    _read_numbers(t_roles, q, name_spans, [(g.start, g.end) for g in gpus + gpu_unknown])
    _read_words(t, q)
    finalize(q)
    return q


def _named_model(raw: str, t: str) -> Any:
    """A product-like name the catalog lacks, seen by its capitals as written ("DeepThink-Omega",
    "Mistral Colossus") after a word that introduces a model."""
    from assistant.engine.names import Span

    m = re.search(r"(?:\b(?:for|run|serve|of|does|deploy|with|model|called|named|use|host)\s+)"
                  r"((?:[A-Z][A-Za-z0-9]+)(?:[-_ ][A-Z0-9][A-Za-z0-9]*)+|[A-Z][a-z]+[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)", raw)
    if not m:
        return None
    name = m.group(1)
    if re.fullmatch(r"(?:[A-Z][a-z]+ )?(?:GPU|GPUs|RTX|GTX|AWS|GCP|Azure|Lambda|RunPod|Vast|NVIDIA|AMD)\b.*", name):
        return None
    low = name.lower()
    i = t.find(low)
    return Span(max(i, 0), max(i, 0) + len(low), name, name)


def _pivot(t: str) -> int | None:
    """Where a correction or a move starts ("sorry, I meant", "wait no", "now I'm moving to"): what
    follows it replaces what came before."""
    m = None
    for m in re.finditer(r"\b(?:sorry|i meant|wait,? no|actually|correction|my bad|i mean|nahi sorry|now i'?m moving to|"
                         r"moving to|switching to)\b|معاف|معذرت|میرا مطلب", t):
        pass
    return m.start() if m else None


def _corrected_size(t: str, model: Any, pivot: int) -> Any:
    """"Llama 2 7B ... sorry, I meant 13B": the same family at the corrected size, when the catalog has it."""
    from assistant.engine.names import Span
    from knowledge.catalog import resolve_model as _resolve

    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s?b\b", t[pivot:])
    if not m or model.start >= pivot:
        return model
    new_text = re.sub(r"\d+(?:\.\d+)?\s?b\b", m.group(1) + "b", model.text, count=1)
    try:
        return Span(model.start, model.end, _resolve(new_text).id, new_text)
    except Exception:
        return model


def _variant_by_memory(t: str, g: Any) -> Any:
    """"80GB wala A100", "A100 (80 GB)": the family member with that memory."""
    from assistant.engine.names import Span
    from knowledge.catalog import gpu_names

    _, families = gpu_names()
    members = families.get(re.sub(r"[^a-z0-9]", "", g.value.lower()), [])
    if not members:
        return g
    near = t[max(0, g.start - 16):g.start] + " | " + t[g.end:g.end + 12]
    m = re.search(r"(\d{2,3})\s?(?:gb|gib)", near)
    if not m:
        return g
    fits = [x for x in members if x.memory_gib and abs(x.memory_gib - float(m.group(1))) < 1]
    best = next((x for x in fits if x.family_default), fits[0] if fits else None)
    return Span(g.start, g.end, best.name, g.text) if best else g


def _as_written(raw: str, found: str) -> str:
    """A name as the user typed it (case, hyphens), found again in the raw text; else as found."""
    pat = r"[\s\-_]*".join(re.escape(ch) for ch in found.replace(" ", ""))
    m = re.search(pat, raw, re.I)
    return m.group() if m else found


def _main_model(t: str, models: list) -> Any:
    """The model the question is about: the first named, or a later one the user moves to
    ("I ran Mistral 7B, now moving to Llama 3.1 70B")."""
    if not models:
        return None
    for m in models[1:]:
        if re.search(r"(?:now|instead|moving to|move to|switch(?:ing)? to|upgrade to|migrat\w* to|rather)\W+(?:\w+\W+){0,3}$",
                     t[max(0, m.start - 40):m.start]):
            return m
    return models[0]


def _unique(xs: list) -> list:
    out = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out


def _read_numbers(t: str, q: Query, name_spans: list[tuple[int, int]], gpu_spans: list[tuple[int, int]]) -> None:
    nums = [n for n in find_numbers(t) if not any(a <= n.start < b for a, b in name_spans)]
    roles = assign_roles(t, nums, gpu_spans, bool(q.model or q.model_unknown))
    ints = {"gpu_count", "context_tokens", "prompt_tokens", "output_tokens", "batch", "concurrent_users", "examples",
            "tokens_per_example", "lora_rank", "images", "resolution", "steps"}
    for k, v in roles.values.items():
        if k.startswith("_"):
            continue
        if k == "params_b" and (q.model or q.params_b):
            continue
        setattr(q, k, int(round(min(v, 1e15))) if k in ints else float(min(v, 1e300)))
    for bits, pos in roles.precision_bits:
        if bits < 0:
            q.kv_precision = {8: "fp8", 4: "int4", 16: "fp16"}.get(-bits, q.kv_precision)
        elif bits in _BITS and not _negated(t, pos) and q.precision is None:
            q.precision = _BITS[bits]
    q.number_uses = {n.text: roles.role_of[i] for i, n in enumerate(nums) if i in roles.role_of}
    q.not_used = [n.text for i, n in enumerate(nums) if i not in roles.used and not n.is_word
                  and not _ordinal_or_version(t, n)]


def _ordinal_or_version(t: str, n) -> bool:
    after = t[n.end:n.end + 3]
    return bool(re.match(r"(?:st|nd|rd|th|%|\.\d|\))", after)) or (1900 <= n.value <= 2100 and not n.scale)


def _read_words(t: str, q: Query) -> None:
    prec = _first_positive(t, "precision", ("q4_k_m", "q5_k_m", "q8_0", "q4_0", "q6_k", "nf4", "fp4", "fp8", "bf16",
                                            "fp16", "fp32", "int8", "int4"))
    kv = _first_positive(t, "kv_precision")
    if kv:
        q.kv_precision = kv
    order = ("q4_k_m", "q5_k_m", "q8_0", "q4_0", "q6_k", "nf4", "fp4", "fp8", "bf16", "fp16", "fp32", "int8", "int4")
    weights = []
    for sp in find_concepts(t, "precision"):
        if _negated(t, sp.start, sp.end):
            continue
        kv_span = re.match(r"\s*kv", t[sp.end:sp.end + 4]) or \
            re.search(r"kv[- ]?cache\s*(?:in|at|as|to|with|=|:)?\s*$", t[max(0, sp.start - 20):sp.start])
        if kv_span:
            q.kv_precision = q.kv_precision or ("int8" if sp.value == "int8" else sp.value)
        elif not re.match(r"[- ]?\s*(?:adam|optim|paged)", t[sp.end:sp.end + 8]):
            weights.append(sp.value)
    prec = next((p for p in order if p in weights), None)
    if prec and (q.precision is None or q.precision in _BITS.values()):
        q.precision = prec
    q.optimizer = _first_positive(t, "optimizer", ("paged-adamw8bit", "adamw8bit", "adafactor", "sgd", "adamw"))
    q.training_precision = _first_positive(t, "training_precision")
    q.engine = _first_positive(t, "engine")
    if q.engine == "llama.cpp" and q.precision is None and "gguf" in t:
        q.precision = None
    q.method = _method(t)
    q.lora_targets = _first_positive(t, "lora_targets")
    _spot(t, q)
    gc = patterns("grad_checkpointing_on")
    m = gc.search(t) if gc else None
    if m:
        q.grad_checkpointing = not (_negated(t, m.start(), m.end()) or re.match(r"\s*(?:off|disabled|false)", t[m.end():m.end() + 10]))
    q.regions = _unique([s.value for s in find_concepts(t, "regions") if not _negated(t, s.start, s.end)] +
                        [m.group() for m in patterns("region_codes").finditer(t)])
    q.billing = bool(patterns("billing_cues").search(t))
    if q.concurrent_users is None:
        for lx in lexicon().values():
            for phrase, n in lx.get("user_phrases", {}).items():
                if re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", t):
                    q.concurrent_users = n
    if q.gpu_count is None and q.gpus and re.search(r"\b(?:on|fit on|run on) (?:one|a single|just one)\s*[?.!]*$", t):
        q.gpu_count = 1
    q.injection = bool(patterns("injection").search(t))
    m_day = re.search(r"(\d+(?:\.\d+)?)\s*(?:days?|din|دن)\b", t)
    m_hpd = re.search(r"(?:daily|per day|a day|each day|roz(?:ana)?|har din|روزانہ|ہر دن)\D{0,12}(\d+(?:\.\d+)?)\s*(?:hours?|hrs?|h\b|ghante|گھنٹے)"
                      r"|(\d+(?:\.\d+)?)\s*(?:hours?|hrs?|h\b|ghante|گھنٹے)\s*(?:a|per|each|every)?\s*(?:day|daily|roz|روزانہ)", t)
    if m_day and m_hpd:
        q.duration_hours = float(m_day.group(1)) * float(m_hpd.group(1) or m_hpd.group(2))
        q.deadline_hours = None
        for txt in (m_day.group(1), m_hpd.group(1) or m_hpd.group(2)):
            q.number_uses[txt] = "duration_hours"
            q.not_used = [x for x in q.not_used if x != txt]
    for lx in lexicon().values():
        for phrase, hours in lx.get("deadline_phrases", {}).items():
            if q.deadline_hours is None and re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", t):
                q.deadline_hours = float(hours)
        for phrase, hours in lx.get("duration_phrases", {}).items():
            if q.duration_hours is None and re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", t):
                q.duration_hours = float(hours)


def _method(t: str) -> str | None:
    found = {s.value for s in find_concepts(t, "method") if not _negated(t, s.start, s.end)}
    negated = {s.value for s in find_concepts(t, "method") if _negated(t, s.start, s.end)}
    for m in ("qlora", "full", "lora"):
        if m in found:
            return m
    if "finetune" in found:
        return "full" if negated & {"lora", "qlora"} else "finetune"
    if "inference" in found:
        return "inference"
    return None


def _spot(t: str, q: Query) -> None:
    spot = [m for m in patterns("spot").finditer(t)]
    ond = [m for m in patterns("on_demand").finditer(t)]
    pos_spot = [m for m in spot if not _negated(t, m.start(), m.end())]
    neg_spot = [m for m in spot if _negated(t, m.start(), m.end())]
    if pos_spot and ond and not any(_negated(t, m.start(), m.end()) for m in ond):
        q.both_pricing, q.spot = True, None
    elif pos_spot:
        q.spot = True
    elif ond or neg_spot:
        q.spot = False


def _cue(key: str, t: str) -> set[str]:
    return {c for c, pat in pattern_map(key).items() if pat.search(t)}


def finalize(q: Query, keep_intents: list[str] | None = None) -> Query:
    """Intents, what is solved for and range checks, from this turn's words and the (merged) facts.

    `keep_intents`: a follow-up whose words ask for nothing new keeps the thread's intents."""
    t = normalise(q.text)
    _intents(t, q)
    budget_only = set(q.intents) <= {"cost", "prices", "recommend"} and bool(q.budget_usd_total or q.budget_usd_per_hour) \
        and "recommend" in (keep_intents or [])
    if keep_intents and (not q.intent_cued or budget_only):  # "and if the budget is $300?" keeps the recommendation
        q.intents = list(keep_intents)
        _implied(q, q.intents, _cue("intent_cues", t), t)
    _default_method(q)
    _check_ranges(q)
    return q


def _default_method(q: Query) -> None:
    """Serving is what the words imply when no training word was written and the question is about
    decode speed, concurrent users, prompts, the KV cache, or whether a model fits a GPU."""
    if q.method is None and q.has_model and not (q.examples or q.dataset_tokens or q.epochs or q.lora_rank):
        if "speed" in q.intents or q.concurrent_users or q.prompt_tokens or q.output_tokens or q.kv_precision or \
                (q.context_tokens and "fit" in q.intents) or q.solve_for in ("max_context", "max_batch") or \
                q.engine or q.min_tokens_per_s or ("fit" in q.intents and q.has_gpu):
            q.method = "inference"


def _intents(t: str, q: Query) -> None:  # noqa: C901 - evidence rules, each one line
    cues = _cue("intent_cues", t)
    solve = _cue("solve_cues", t)
    q.solve_for = q.solve_for if q.followup and not solve else None
    has_model, has_gpu = q.has_model, q.has_gpu
    training = q.method in ("full", "lora", "qlora", "finetune") or bool(q.examples or q.dataset_tokens or q.epochs)
    image = bool(q.model and _is_pipeline(q.model)) or bool(q.images or q.resolution or q.steps)
    words = len(t.split())
    # what is being solved for
    for s in ("min_gpu_count", "max_context", "max_batch", "cheapest_gpu", "fastest_gpu", "min_gpu_memory"):
        if s in solve:
            q.solve_for = s
            break
    if q.solve_for == "min_gpu_memory" and (q.gpus and not re.search(r"smallest|minimum|least|chhot|چھوٹ|کم سے کم", t)):
        q.solve_for = None  # "how much VRAM ... on an H100" is a fit question
    if q.solve_for == "cheapest_gpu" and not has_model and not image and not q.followup and q.gpus:
        q.solve_for = None  # "cheapest H100" is a price query
    intents: list[str] = []

    def add(*xs: str) -> None:
        for x in xs:
            if x not in intents:
                intents.append(x)

    if "help" in cues and not has_model and not has_gpu and words <= 12:
        q.intents, q.intent_cued = ["help"], True
        return
    explicit = cues & {"speed", "train_time", "cost", "prices", "recommend", "fit"}
    if q.solve_for == "min_gpu_count" and image and (q.images or q.deadline_hours):
        add("speed")
    elif q.solve_for in ("max_context", "max_batch", "min_gpu_count", "min_gpu_memory"):
        add("fit")
    if q.solve_for in ("cheapest_gpu", "fastest_gpu"):
        add("recommend")
    if q.solve_for == "fastest_gpu":
        add("speed")
    comparing = len(q.gpus) + len(q.gpu_unknown) >= 2 or len(q.providers) >= 2 or q.both_pricing or \
        len(q.regions) >= 2 or (q.billing and bool(re.search(r"\bvs\b|versus|compared|than|مقابل", t)))
    if "recommend" in cues and (has_model or image or training or comparing):
        add("recommend")
    if "speed" in cues and (has_model or has_gpu or image):
        add("speed")
    if q.min_tokens_per_s and has_model and not has_gpu:
        add("recommend")
    if image and (cues & {"speed", "train_time", "cost"} or q.images or q.solve_for in ("cheapest_gpu", "min_gpu_count")):
        add("speed")  # images: time per image drives time and cost
    if q.solve_for == "min_gpu_count" and training and q.deadline_hours:
        add("train_time")
    if "train_time" in cues and (has_model or training or image):
        add("speed" if not training and (image or q.method == "inference" or q.examples or q.prompt_tokens) else "train_time")
    if "cost" in cues or q.budget_usd_total or q.egress_gb or q.storage_gb or (q.billing and not has_model):
        if has_model or has_gpu or q.billing or q.egress_gb or q.storage_gb or training or image:
            if (q.budget_usd_total or q.budget_usd_per_hour) and has_model and not has_gpu and "cost" not in cues:
                add("recommend")
            else:
                add("cost")
    if "prices" in cues and (has_gpu or q.providers or (not has_model and patterns("domain").search(t))):
        add("prices" if not has_model or not intents else "cost")
    if q.budget_usd_per_hour and has_model and not has_gpu:
        add("recommend")
    if has_model and ("fit" in cues or q.gpu_memory_gb or (has_gpu and not intents) or
                      (not intents and (q.method or q.context_tokens or q.batch or q.precision))):
        add("fit")
    if ("compare" in cues or len(q.providers) >= 2) and comparing:
        add("compare")
        if not (set(intents) - {"compare"}):
            add("speed" if has_model else "prices")
    if not intents or intents == ["compare"]:
        if patterns("domain").search(t) or has_model or has_gpu:
            add("guide")
        elif "prices" in cues:
            add("prices")
    if q.solve_for:
        cues.discard("guide")  # "how many L40S do I need?" asks for a number, not an explanation
    if "guide" in cues and intents and "guide" not in intents:
        add("guide")
    if "compare" in intents and re.search(r"\bor\b|\?\s*$", t) and len(q.gpus) >= 2 and "recommend" not in intents:
        add("recommend")  # "A6000 or L40S?": which one to take
    numbers = set(q.facts()) - {"billing", "providers", "gpus", "regions"}
    if "guide" in cues and not q.model and (patterns("domain").search(t) or q.gpus) and \
            (not q.has_gpu and not numbers or re.search(r"\b(?:why|conceptually|explain|how come)\b|کیوں|kyun", t) and not numbers):
        intents = ["guide"] + [i for i in intents if i == "compare"]
    _implied(q, intents, cues, t)
    if not intents:
        intents = ["out_of_scope"]
    if q.injection and (not (has_model or has_gpu) or re.search(r"forget|ignore|override|dump|commission|pays you", t)):
        intents = ["out_of_scope"]
    q.intents = intents
    q.intent_cued = bool(explicit or q.solve_for or "guide" in cues and not q.followup)


def _implied(q: Query, intents: list[str], cues: set[str], t: str) -> None:
    """Capabilities a question needs because of another: a recommendation rests on the memory fit
    and the offers, a comparison shows the same rows (fit, speed, price) for each side, a cost names
    the hourly price it used, a billing question cites the guide on billing granularity."""
    def add(x: str) -> None:
        if x not in intents:
            intents.append(x)
    if re.search(r"\bworth (?:it|the)\b|worth kar|فائدہ مند", t) and (q.has_model or q.gpus) and "recommend" not in intents:
        add("recommend")
    training = q.method in ("full", "lora", "qlora", "finetune") or bool(q.examples and not q.prompt_tokens) or \
        bool(q.dataset_tokens or q.epochs)
    if "recommend" in intents and q.has_model:
        add("fit")
        add("prices")
        if training and (q.examples or q.dataset_tokens or q.budget_usd_total):
            add("train_time")
            add("cost")
    if "compare" in intents and q.has_model and len(q.gpus) >= 2 and training:
        add("train_time")
        add("cost")
        if re.search(r"better|bہتر|بہتر|behtar|should|worth|which", t):
            add("recommend")
    elif "compare" in intents and re.search(r"\bbetter\b|بہتر|behtar|\bworth\b|\bshould i\b", t):
        add("recommend")
    if q.has_model and q.has_gpu and q.method in ("full", "lora", "qlora", "finetune") and intents and "fit" not in intents:
        add("fit")
    if "compare" in intents and q.has_model and len(q.gpus) >= 2 and not training:
        for x in ("fit", "speed", "prices"):
            add(x)
    if "cost" in intents and q.gpus:
        add("prices")
    if q.billing and "cost" in intents:
        add("guide")
    if "cost" in intents and training and q.has_model:
        add("train_time")  # the cost of a run rests on its hours
    image = bool(q.model) and _is_pipeline(q.model)
    if image and (q.images or "cost" in cues) and ("recommend" in intents or q.solve_for == "cheapest_gpu"):
        add("cost")  # the cheapest GPU for a batch of images is judged by the job's total
    if "speed" in intents and q.has_model and q.gpus:
        add("fit")


@lru_cache(maxsize=256)
def _is_pipeline(model_id: str) -> bool:
    try:
        resolve_model(model_id)
        return False
    except Exception:
        return True


def _check_ranges(q: Query) -> None:
    if q.model and q.context_tokens:
        try:
            arch = resolve_model(q.model)
        except Exception:
            return
        if arch.max_context and q.context_tokens > arch.max_context:
            q.out_of_range.append("context_tokens")


# ---- threads ---------------------------------------------------------------------------------


def _is_followup(new: Query, prev: Query) -> bool:
    """Does this message continue the thread's question (merge) or start a new one?

    Decided from the message's own words (its cue words, whether it names a model) and what the
    thread already holds: a message that asks something needing a model and names none continues
    the thread; one that names a new model, or asks only about prices or the guides, starts anew."""
    if new.intents == ["out_of_scope"] and new.injection:
        return False
    if prev.intents and prev.intents[0] == "help" or (prev.intents == ["out_of_scope"] and not prev.facts()):
        return False
    t = normalise(new.text)
    if patterns("correction").search(t):
        return True
    cue = patterns("followup").search(t)
    if (new.model or new.model_unknown) and not cue and prev.has_model:
        return False
    if new.params_b and not cue and len(t.split()) > 8 and not prev.model_unknown:
        return False
    if cue:
        return True
    cues = _cue("intent_cues", t)
    needs_model = bool(cues & {"fit", "speed", "train_time", "cost", "recommend"}) or bool(new.solve_for)
    if not new.has_model and (prev.has_model or prev.facts()):
        if needs_model or set(new.facts()) - {"billing"}:
            return True  # more facts, or a question, about the same workload
        if cues & {"prices", "guide"}:
            return False  # "cheapest H100 per hour?" after a fit question is a new, model-free question
    if (new.model or new.params_b) and not prev.has_model and prev.facts():
        return True  # the model arrives after the context ("budget is $30" ... "Qwen 7B with LoRA")
    return len(t.split()) <= 10 and (not new.intents or new.intents[0] != "guide" or not new.intent_cued)


def prior_has_model(q: Query) -> bool:
    return q.has_model


def understand_turn(text: str, prior: Query | None) -> Query:
    """A message in a thread: a follow-up is merged into the thread's Query (only what it mentions
    changes); its intents then come from its own words and the merged facts."""
    q = understand(text).model_copy(deep=True)
    if prior is None or not _is_followup(q, prior):
        return q
    merged = merge(prior, q, new_topic=False)
    t = normalise(text)
    if pattern_map("intent_cues")["compare"].search(t) or pattern_map("intent_cues")["recommend"].search(t):
        # "compare both", "which one is cheaper": every GPU / provider named in the thread is a side
        merged.gpus = _unique(prior.seen_gpus + merged.gpus)
        merged.providers = _unique(prior.seen_providers + merged.providers)
    merged.seen_gpus = _unique(prior.seen_gpus + merged.gpus)
    merged.seen_providers = _unique(prior.seen_providers + merged.providers)
    return finalize(merged, keep_intents=prior.intents)


def understand_dialogue(turns: list[str]) -> Query:
    """Fold a thread's user messages, first to last."""
    state: Query | None = None
    for text in turns:
        state = understand_turn(text, state)
    return state if state is not None else understand("")
