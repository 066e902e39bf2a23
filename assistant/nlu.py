"""Understanding a question without a language model: intent and slots, English and Urdu.

Pure functions over text. `parse(text)` reads one message; `parse_dialogue(messages)` folds a
thread's user messages so a follow-up ("and on spot?", "what about 32k context?") changes only
what it mentions. Model and GPU names resolve through the catalogs; everything else is patterns.
"""

from __future__ import annotations

__all__ = ["Parsed", "Slots", "parse", "parse_dialogue"]

import re
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache

from knowledge.catalog import (_gpu_index, _gpu_key, _model_index, _model_key, load_providers,
                               resolve_diffusion)
from knowledge.guide_index import detect_language
from tools.errors import UnknownModel

INTENTS = ("fit", "speed", "train_time", "prices", "cost", "recommend", "compare", "guide", "help", "out_of_scope")


@dataclass
class Slots:
    model: str | None = None
    model_unknown: str | None = None
    params_b: float | None = None
    method: str | None = None
    precision: str | None = None
    gpus: list[str] = field(default_factory=list)
    gpu_unknown: list[str] = field(default_factory=list)
    gpu_memory_gb: float | None = None
    gpu_count: int | None = None
    context: int | None = None
    batch: int | None = None
    seq_len: int | None = None
    examples: int | None = None
    tokens_per_example: int | None = None
    dataset_tokens: float | None = None
    epochs: float | None = None
    budget_usd: float | None = None
    duration_h: float | None = None
    spot: bool | None = None
    both_pricing: bool = False
    provider: str | None = None
    region: str | None = None
    engine: str | None = None
    optimizer: str | None = None
    training_precision: str | None = None
    billing: bool = False
    smallest: bool = False
    prompt_tokens: int | None = None
    min_tokens_per_s: float | None = None

    def filled(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if _present(getattr(self, f.name)) or (f.name in _KEEP_FALSE and getattr(self, f.name) is not None)}


def _present(v: object) -> bool:
    return not (v is None or v is False or v == [])


_KEEP_FALSE = ("spot",)  # "on-demand only" is information, not absence


@dataclass
class Parsed:
    intent: str
    lang: str
    slots: Slots
    followup: bool = False
    text: str = ""
    hint: str = ""  # what the words alone ask for (used when a follow-up changes the question)


# ---- numbers -----------------------------------------------------------------------------------
_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
_WORDNUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "sixteen": 16, "thirty-two": 32, "a": 1, "an": 1, "single": 1, "dual": 2, "twin": 2,
            "ایک": 1, "دو": 2, "تین": 3, "چار": 4, "پانچ": 5, "آٹھ": 8}
_NUM = r"(-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)"


def _num(s: str) -> float:
    """A number as typed; absurd magnitudes stay huge but finite (the tools then say what is accepted)."""
    v = float(s.replace(",", ""))
    return v if v == v and abs(v) < 1e300 else (1e300 if v > 0 else -1e300) if v == v else 0.0


def _int(v: float) -> int:
    return int(max(-10**18, min(10**18, v)))


def _scaled(value: str, suffix: str | None, binary_k: bool = False) -> float:
    v = _num(value)
    s = (suffix or "").lower()
    if s in ("k", "ہزار"):
        return v * (1024 if binary_k else 1000)
    if s in ("m", "million", "ملین"):
        return v * 1e6
    if s in ("b", "billion", "بلین", "ارب"):
        return v * 1e9
    return v


# ---- vocabulary ------------------------------------------------------------------------------
_PREC = [(r"\bq4_k_m\b", "q4_k_m"), (r"\bq5_k_m\b", "q5_k_m"), (r"\bq8_0\b", "q8_0"), (r"\bq4_0\b", "q4_0"),
         (r"\bq6_k\b", "q6_k"), (r"\bnf4\b", "nf4"), (r"\bfp8\b", "fp8"), (r"\bbf16\b", "bf16"), (r"\bfp16\b", "fp16"),
         (r"\bfloat16\b", "fp16"), (r"\bfp32\b", "fp32"), (r"\bint8\b|\b8[- ]?bit\b|8[- ]?بٹ", "int8"),
         (r"\bint4\b|\b4[- ]?bit\b|\bawq\b|\bgptq\b|۴[- ]?بٹ|4 بٹ", "int4"), (r"\bhalf precision\b", "fp16")]
_ENGINES = [(r"\bvllm\b", "vllm"), (r"\bsglang\b", "sglang"), (r"tensorrt|trt-?llm", "tensorrt-llm"),
            (r"llama\.?cpp|\bollama\b|\bgguf\b|lm ?studio", "llama.cpp"), (r"gpt-fast|torch\.?compile", "torch-compile"),
            (r"\btransformers\b|\bhf generate\b", "pytorch-eager"), (r"exllama", "exllamav2")]
_INTENT_WORDS = {
    "recommend": r"which gpu|what gpu|which card|what card|recommend|best gpu|which provider|what should i rent|"
                 r"what to rent|suggest|کون سا gpu|کونسا gpu|کون سا کارڈ|تجویز|سفارش|کون سی gpu|which instance|"
                 r"اچھا کارڈ|بہترین کارڈ|بہترین gpu|اچھا gpu|"
                 r"best option|cheapest way|cheapest gpu for|cheapest setup|cheaper (?:gpu|card|option|alternative)|کون سا فراہم",
    "prices": r"\bprice|\bprices|pricing|per hour|/hr\b|/h\b|hourly rate|cheapest|how much (?:is|are|for) |how much (?:does|is) (?:an? )?\S+ (?:cost|per)|"
              r"rent(?:al)? (?:price|cost)|going rate|hourly rate|\brate for\b|قیمت|کرایہ|ریٹ|سستا|سستی|"
              r"کتنے کا|کتنے میں|کتنے کی|offers?\b",
    "cost": r"\bcost\b|\bcosts\b|\bcheaper\b|\bexpensive\b|how much will|how much would|\bhow much\s*(?:money\b|in total\b|\?|$)|\bbudget\b|spend|bill(?:ing|ed)?\b|per-second|per second|"
            r"hourly billing|\$|dollars?|لاگت|خرچ|بجٹ|بلنگ|ڈالر",
    "speed": r"tokens?/s|tok/s|tokens? per second|throughput|how fast|latency|\bspeed\b|batching|time to first token|ttft|"
             r"رفتار|ٹوکن فی سیکنڈ|تیز|سست\b|تھروپٹ|اسپیڈ|سپیڈ",
    "train_time": r"how long|training time|how many hours|take to (?:fine-?tune|train)|hours to|کتنا وقت|کتنے گھنٹے|کتنی دیر",
    "fit": r"\bvram\b|\bmemory\b|\bfit\b|\bfits\b|kv[ -]?cache|can i run|can i (?:fully )?(?:fine-?tune|train|serve|load)|enough|"
           r"how much gpu|\boom\b|run .* on (?:an?|one|my)|میموری|وی آر اے ایم|چلا سکت|فائن ٹیون کر سکت|ٹرین کر سکت|"
           r"سما سکت|فٹ|کافی",
    "compare": r"\bvs\.?\b|versus|compare|comparison|better|\bor\b|difference|مقابلہ|موازنہ|بہتر|فرق",
    "guide": r"^(?:why|what is|what's|what are|what should|should i|is it|do i need|explain|how does|how do|when should|"
             r"tell me about)\b|کیوں|کیا مجھے|کیا .* چاہیے|وضاحت|کیا ہے\b|کیا ہوتا|کن چیزوں|کیا خطرہ|کے علاوہ",
    "help": r"^(?:help|hi|hello|hey|what can you do|who are you|\?+)\W*$|^(?:hi|hello|hey)\b.*\b(?:who are you|what can you)|"
            r"^مدد|^سلام|السلام علیکم|آپ کون|آپ کیا کر سکتے",
}
_DOMAIN = (r"gpu|vram|memory|model|llm|lora|qlora|fine-?tun|train|serve|inference|token|cloud|rent|spot|billing|price|"
           r"cost|h100|a100|4090|nvlink|bandwidth|kv|quantiz|\d+\s*b\b|storage|checkpoint|nvme|egress|provider|"
           r"instance|interrupt|docker|ssh|jupyter|cuda|\bt4\b|\bl4\b|"
           r"میموری|ماڈل|فائن|ٹیون|ٹوکن|قیمت|کلاؤڈ|جی پی یو|اسپاٹ|انسٹینس|انسٹانس|اسٹوریج|بلنگ|چیک پوائنٹ")
_FOLLOWUP = (r"^(?:and|what about|how about|what if|instead|same|now|also|but)\b|\binstead\b|^(?:and )?(?:on|in|with|at|for)\b|"
             r"^اور\b|^اگر\b|اس کے بجائے|بجائے|^تو\b|^پھر\b")


@lru_cache(maxsize=1)
def _providers() -> tuple[str, ...]:
    return tuple(sorted(set(load_providers()) | {"aws", "gcp", "azure", "lambda", "runpod", "vast"}))


# ---- entity spotting ------------------------------------------------------------------------------
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-_/]*[A-Za-z0-9]|[A-Za-z0-9]")


def _spans(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


def _find_models(text: str) -> tuple[str | None, str | None, tuple[int, int] | None]:
    """(catalog model id, unknown model-like name, span) — longest n-gram that is a catalog key."""
    toks = _spans(text)
    idx = _model_index()
    best = None
    for i in range(len(toks)):
        for L in range(min(7, len(toks) - i), 0, -1):
            s, e = toks[i][0], toks[i + L - 1][1]
            cand = text[s:e]
            if not re.search(r"[A-Za-z]", cand) or not re.search(r"\d", cand) and L == 1 and len(cand) < 5:
                continue
            key = _model_key(cand)
            hit = idx.get(key)
            if hit is None and L >= 2 and len(key) >= 6 and re.search(r"\d", key):
                ids = {m.id for k, m in idx.items() if k.startswith(key)}
                if len(ids) == 1:  # a unique prefix: "Phi-3 mini" is phi-3-mini-4k
                    hit = next(m for k, m in idx.items() if k.startswith(key))
            if hit is not None:
                if best is None or (e - s) > (best[1][1] - best[1][0]):
                    best = (hit.id, (s, e))
                break
    if best:
        return best[0], None, best[1]
    # diffusion pipelines (SDXL, FLUX.1 [dev] ...)
    for i in range(len(toks)):
        for L in range(min(4, len(toks) - i), 0, -1):
            cand = text[toks[i][0]:toks[i + L - 1][1]]
            if len(cand) < 3:
                continue
            try:
                pipe = resolve_diffusion(cand)
            except UnknownModel:
                pipe = None
            if pipe:
                return pipe[0].model_id, None, (toks[i][0], toks[i + L - 1][1])
    # a name-like token with a size inside it ("Llama-9-Ultra-900B-Turbo"): a model we do not know
    m = re.search(r"\b([A-Za-z]{3,}[A-Za-z0-9.]*(?:[-_][A-Za-z0-9.]+)*[-_]\d+(?:\.\d+)?[bBmM](?:[-_][A-Za-z0-9.]+)*)\b", text)
    if m:
        return None, m.group(1), m.span(1)
    return None, None, None


def _find_gpus(text: str, skip: tuple[int, int] | None) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    toks = [t for t in _spans(text) if not (skip and skip[0] <= t[0] < skip[1])]
    exact, families = _gpu_index()
    found: list[tuple[int, str, tuple[int, int]]] = []
    used: set[int] = set()
    for i in range(len(toks)):
        if i in used:
            continue
        for L in range(min(4, len(toks) - i), 0, -1):
            s, e = toks[i][0], toks[i + L - 1][1]
            cand = text[s:e]
            key = _gpu_key(cand)
            cand_s = cand
            if key not in exact and key not in families:
                cand_s = re.sub(r"(?<=\d)s$", "", cand)  # "4090s"
                key = _gpu_key(cand_s)
            if not key or key.isdigit() and len(key) < 4:
                continue
            if key in exact or key in families:
                name = exact[key].name if key in exact else families[key][0].family
                found.append((s, name, (s, e)))
                used.update(range(i, i + L))
                break
    names = []
    for _, n, _ in sorted(found):
        if n not in names:
            names.append(n)
    unknown = []
    for m in re.finditer(r"\b((?:gtx|rtx|tesla|quadro|radeon|rx|geforce)\s?[a-z]?\d{3,4}\w*|[ahlvtb]\d{1,3}[a-z]?)\b", text, re.I):
        if skip and skip[0] <= m.start() < skip[1]:
            continue
        k = _gpu_key(m.group(1))
        if k not in exact and k not in families and not any(a <= m.start() < b for _, _, (a, b) in found):
            if not re.fullmatch(r"(?i)[ahlvtb]\d{1,3}", m.group(1)) or re.search(r"(?i)\b(gpu|card)\b", text):
                unknown.append(m.group(1))
    return names, unknown, [sp for _, _, sp in found]


# ---- the parser -------------------------------------------------------------------------------------
def parse(text: str) -> Parsed:
    """Intent and slots of one message (a fresh copy: callers may change it)."""
    p = _parse_cached((text or "").strip())
    return replace(p, slots=replace(p.slots, gpus=list(p.slots.gpus), gpu_unknown=list(p.slots.gpu_unknown)))


@lru_cache(maxsize=4096)
def _parse_cached(raw: str) -> Parsed:
    lang = detect_language(raw)
    t = raw.translate(_DIGITS)
    low = t.lower()
    sl = Slots()
    model, unknown_model, mspan = _find_models(t)
    sl.model, sl.model_unknown = model, unknown_model
    gpus, gpu_unknown, gspans = _find_gpus(t, mspan)
    sl.gpus, sl.gpu_unknown = gpus, gpu_unknown

    # sizes: "13B", "a 70b model", "1e30 parameters", "500-trillion-parameter"
    if not sl.model and not sl.model_unknown:
        m = re.search(r"(\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)\s*[- ]?(trillion|billion|million|t|b|m)\b(?:[- ]?param)?", low)
        m2 = re.search(r"(\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)\s*(?:parameters|params)\b", low)
        if m and not re.match(r"\s*(?:tokens?|examples?|samples?)", low[m.end():]):
            unit = {"trillion": 1e3, "t": 1e3, "billion": 1, "b": 1, "million": 1e-3, "m": 1e-3}[m.group(2)]
            if m.group(2) in ("m", "million") and not re.search(r"param|model", low[m.end():m.end() + 20]):
                pass
            else:
                sl.params_b = _num(m.group(1)) * unit
        elif m2:
            sl.params_b = _num(m2.group(1)) / 1e9

    # method
    if re.search(r"\bqlora\b|کیو ?لورا", low):
        sl.method = "qlora"
    elif re.search(r"\blora\b|لورا|\badapters?\b|\bpeft\b", low):
        sl.method = "lora"
    elif re.search(r"full(?:y)?[- ]?(?:parameter )?fine-?tun|full fine-?tun|fully fine-?tun|full training|\bfull ft\b|"
                   r"مکمل فائن|full finetun", low):
        sl.method = "full"
    elif re.search(r"\b(?:serve|serving|inference|deploy|host|chat|chatting|chatbot|generate|run|running|load)\b|"
                   r"سرو|انفرنس|چلا|چلان", low):
        sl.method = "inference"
    elif re.search(r"fine-?tun|finetun|\btrain|فائن ٹیون|ٹرین", low):
        sl.method = "finetune"  # a fine-tune of unstated kind: each intent picks a default and says so
    for pat, p in _PREC:
        if re.search(pat, low):
            sl.precision = p
            break
    for pat, e in _ENGINES:
        if re.search(pat, low):
            sl.engine = e
            break
    if re.search(r"adamw ?8 ?bit|8-bit adam|paged", low):
        sl.optimizer = "paged-adamw8bit" if "paged" in low else "adamw8bit"
    elif re.search(r"\bsgd\b", low):
        sl.optimizer = "sgd"
    elif re.search(r"adafactor", low):
        sl.optimizer = "adafactor"
    if re.search(r"pure bf16|bf16[- ]true|all bf16", low):
        sl.training_precision = "bf16"
    elif re.search(r"mixed precision|\bamp\b|fp32 master", low):
        sl.training_precision = "mixed"

    # GPU count: "2x A100", "two RTX 4090s", "8 H100s", "on 4 GPUs"
    m = re.search(r"(\d+)\s*[x×]\s*(?=[a-z])|(?<![\d.])(\d+)\s+(?=(?:nvidia\s+)?(?:rtx|gtx|h100|h200|a100|l4|l40|a10|"
                  r"t4|v100|b200|mi300|gpus?\b|cards?\b|کارڈ|جی پی یو))", low)
    if m:
        sl.gpu_count = _int(_num(m.group(1) or m.group(2)))
    else:
        m = re.search(r"(?<!\w)(one|two|three|four|eight|sixteen|single|dual|ایک|دو|چار|آٹھ)\s+(?:[a-z0-9\- ]{0,16})?"
                      r"(?:gpus?|cards?|rtx|h100|a100|l4|4090s?|کارڈ|جی پی یو)", low)
        if m:
            sl.gpu_count = _WORDNUM.get(m.group(1))
    # GPU by memory: "a 24 GB GPU", "80GB-class", "48 GB card"
    m = re.search(_NUM + r"\s*(?:gb|جی بی)\s*[- ]?(?:gpu|card|class|vram|کارڈ|جی پی یو|والا|والے|والی)", low) or \
        re.search(r"(?:gpu|card|کارڈ)\s*(?:with|of|والا|والے)?\s*" + _NUM + r"\s*(?:gb|جی بی)", low)
    if m:
        sl.gpu_memory_gb = _num(m.group(1))

    # context: "8k context", "32k tokens", "context of 16,384", "10M context"
    m = re.search(_NUM + r"\s*(k|m)?\s*(?:-?token)?s?\s*(?:context|ctx|کانٹیکسٹ|سیاق)", low) or \
        re.search(r"(?:context|ctx|context length|context window|کانٹیکسٹ)\s*(?:of|=|:|is|length)?\s*" + _NUM + r"\s*(k|m)?", low) or \
        re.search(_NUM + r"\s*(k|m)\s+tokens?\b(?!\s*(?:dataset|of data|of training))", low) or \
        re.search(r"\bat\s+" + _NUM + r"\s*(k)\b(?!\s*(?:examples|samples|rows|steps|users|requests))", low)
    context_span = m.span() if m else None
    # prompt length for time to first token: "a 4k prompt", "4,000-token prompt", "prompt of 2k tokens"
    mp = re.search(_NUM + r"\s*(k)?\s*[- ]?(?:tokens?\s*|token-)?prompt", low) or \
        re.search(r"prompts?\s*(?:of|=|:|is)?\s*" + _NUM + r"\s*(k)?\s*tokens?", low)
    if mp:
        sl.prompt_tokens = _int(_scaled(mp.group(1), mp.group(2), binary_k=True))
        if context_span and mp.start() < context_span[1] and context_span[0] < mp.end():
            m, context_span = None, None  # the prompt, not a context length
    # a speed target: "at least 30 tokens/s per user", "100 tokens per second for each user"
    mt = re.search(r"(?:at least|at|over|above|minimum(?: of)?|min\.?|>=?|≥)\s*" + _NUM +
                   r"\s*(?:tokens?/s|tok/s|t/s|tokens? (?:per|a) second)", low)
    if mt:
        sl.min_tokens_per_s = _num(mt.group(1))
    if m:
        sl.context = _int(_scaled(m.group(1), m.group(2), binary_k=True))
    # batch / users
    m = re.search(_NUM + r"\s*(?:concurrent |simultaneous |parallel )?(?:users|requests|sequences|streams|clients|"
                  r"صارفین|درخواستیں|یوزرز|ریکویسٹس|ریکویسٹ)", low) or \
        re.search(r"batch(?:ing)?\s*(?:size)?\s*(?:of|=|:)?\s*" + _NUM, low) or \
        re.search(r"batching\s*" + _NUM, low) or re.search(r"بیچ\s*(?:سائز)?\s*" + _NUM, low)
    if m:
        sl.batch = _int(_num(m.group(1)))
    # training sequence length
    m = re.search(r"(?:seq(?:uence)?(?:[ _-]?len(?:gth)?)?|max[ _-]?len)\s*(?:of|=|:)?\s*" + _NUM + r"\s*(k)?", low) or \
        re.search(_NUM + r"\s*(k)?[- ]?token sequences", low)
    if m:
        sl.seq_len = _int(_scaled(m.group(1), m.group(2), binary_k=True))
    # dataset: "50k examples of ~512 tokens", "20k samples", "10M tokens dataset"
    m = re.search(_NUM + r"\s*(k|m|ہزار)?\s*(?:examples|samples|rows|conversations|instructions|records|مثالیں|نمونے|"
                  r"سیمپلز|سیمپل|مثالوں)", low)
    if m:
        sl.examples = _int(_scaled(m.group(1), m.group(2)))
        m2 = re.search(r"(?:of|with|each|at|averaging|avg\.?|around)\s*(?:~|about|around|approx\.?|roughly)?\s*" + _NUM +
                       r"\s*tokens?", low[m.end():]) or re.search(_NUM + r"\s*ٹوکن", low[m.end():])
        if m2:
            sl.tokens_per_example = _int(_num(m2.group(1)))
    m = re.search(_NUM + r"\s*(k|m|b|million|billion)?\s*(?:training )?tokens?\s*(?:dataset|of data|of training|corpus)|"
                  r"(?:dataset|corpus) of\s*" + _NUM + r"\s*(k|m|b|million|billion)?\s*tokens?", low)
    # "on 100M tokens", "train over 2B tokens", "a 50M-token dataset": millions/billions are data, not context
    m = m or re.search(r"(?:on|over|with|for|of|using|a|an)\s+" + _NUM +
                       r"\s*(m|b|million|billion)\s*[- ]?tokens?\b(?!\s*(?:/|per\b|a (?:second|day|month)|context))",
                       low)
    if m:
        val, suf = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        sl.dataset_tokens = _scaled(val, suf)
        if context_span and context_span[0] < m.end() and m.start() < context_span[1]:
            sl.context = None  # "on 100M tokens" is the dataset, not a context length
    m = re.search(_NUM + r"\s*[- ]?epochs?", low) or re.search(r"epochs?\s*(?:=|:)?\s*" + _NUM, low) or \
        re.search(_NUM + r"\s*ایپاک", low)
    if m:
        sl.epochs = _num(m.group(1))
    elif re.search(r"\b(?:one|a single|an) epoch\b|ایک ایپاک", low):
        sl.epochs = 1.0
    m = re.search(r"\$\s*" + _NUM + r"\s*(k)?", low) or re.search(_NUM + r"\s*(k)?\s*(?:usd|dollars?|ڈالر)", low)
    if m:
        sl.budget_usd = _scaled(m.group(1), m.group(2))
    m = re.search(r"(?<![\w.-])" + _NUM + r"\s*[- ]?(minutes?\b|mins?\b|hours?\b|hrs?\b|h\b|منٹ|گھنٹ)", low)
    if m:
        v = _num(m.group(1))
        sl.duration_h = v / 60 if m.group(2).startswith(("min", "منٹ")) else v

    if re.search(r"\bspot\b|interruptible|preemptible|اسپاٹ|سپاٹ|مداخلت پذیر", low):
        sl.spot = True
    if re.search(r"on-?demand|reserved|آن ڈیمانڈ", low):
        sl.both_pricing = sl.spot is True
        sl.spot = None if sl.spot else False
    sl.billing = bool(re.search(r"per-?second|per-?minute|hourly billing|billed hourly|billing|billed|بلنگ|بل\b|"
                                r"فی سیکنڈ|گھنٹہ وار", low))
    sl.smallest = bool(re.search(r"smallest|cheapest gpu|minimum gpu|least|سب سے چھوٹ|کم سے کم", low))
    for p in _providers():
        if re.search(rf"\b{re.escape(p)}\b", low):
            sl.provider = p
            break
    m = re.search(r"\bin (us-[a-z]+(?:-\d)?|eu-[a-z]+(?:-\d)?|europe|asia|us|eu|india|japan|canada)\b", low)
    if m:
        sl.region = m.group(1)

    intent = _intent(low, sl)
    if intent in ("recommend", "cost") and sl.model and _is_image_model(sl.model):
        intent = "fit"  # image pipelines are sized (and matched to GPUs with offers) by the memory calculator
    followup = bool(re.search(_FOLLOWUP, low)) and not sl.model and not sl.params_b
    hint = next((k for k in ("speed", "train_time", "recommend", "cost", "prices") if _has(_INTENT_WORDS[k], low)), "")
    return Parsed(intent=intent, lang=lang, slots=sl, followup=followup, text=raw, hint=hint)


def _is_image_model(model_id: str) -> bool:
    try:
        return resolve_diffusion(model_id) is not None
    except UnknownModel:
        return False


def _has(words: str, low: str) -> bool:
    return bool(re.search(words, low))


def _intent(low: str, sl: Slots) -> str:
    if not low.strip() or _has(_INTENT_WORDS["help"], low):
        return "help"
    has_model = bool(sl.model or sl.params_b or sl.model_unknown)
    has_gpu = bool(sl.gpus or sl.gpu_memory_gb or sl.gpu_unknown)
    if _has(_INTENT_WORDS["recommend"], low) or (has_model and sl.budget_usd and not has_gpu):
        return "recommend"
    if not has_model and not has_gpu and _has(_INTENT_WORDS["guide"], low) and _has(_DOMAIN, low) and not sl.billing:
        return "guide"
    if sl.billing and not has_model:
        return "cost"
    if sl.min_tokens_per_s and has_model and not has_gpu:
        return "recommend"  # a speed target without a GPU: find the GPUs that reach it
    if _has(_INTENT_WORDS["speed"], low) and (has_model or has_gpu):
        return "speed"
    if _has(_INTENT_WORDS["train_time"], low) and has_model:
        # "how long ... and how much?": the cost estimate carries the hours too
        if sl.gpus and _has(_INTENT_WORDS["cost"], low) and not sl.billing:
            return "cost"
        return "train_time"
    if has_model and _has(_INTENT_WORDS["cost"], low) and not _has(r"\bvram\b|memory|میموری", low) and \
            (sl.gpus or sl.examples or sl.dataset_tokens or sl.duration_h or sl.epochs or
             _has(r"per million|per month|monthly|serving cost|to serve|serve", low)):
        return "cost"
    if not has_model and has_gpu and (_has(_INTENT_WORDS["prices"], low) or _has(_INTENT_WORDS["cost"], low)):
        return "prices"
    if _has(_INTENT_WORDS["prices"], low) and not has_model:
        return "prices"
    if has_model and (_has(_INTENT_WORDS["fit"], low) or sl.method or has_gpu or sl.context or sl.batch):
        return "fit"
    if len(sl.gpus) >= 2 and _has(_INTENT_WORDS["compare"], low):
        return "compare"
    if _has(_DOMAIN, low):
        return "guide"
    return "out_of_scope"


def parse_dialogue(messages: list[str]) -> Parsed:
    """Fold a thread's user messages: each follow-up keeps the earlier intent and slots and
    overrides only what it mentions."""
    state: Parsed | None = None
    for text in messages:
        p = parse(text)
        if state is None or not _is_followup(p, state):
            state = p
            continue
        merged = replace(state.slots)
        for f in fields(Slots):
            v = getattr(p.slots, f.name)
            if _present(v) or (f.name in _KEEP_FALSE and v is not None):
                setattr(merged, f.name, v)
        if p.slots.spot is not None:
            merged.both_pricing = p.slots.both_pricing
        intent = state.intent
        asked = p.intent if p.intent in ("speed", "cost", "prices", "train_time", "recommend") else p.hint
        if asked and asked != state.intent and not (state.intent == "cost" and asked == "prices") \
                and not (state.intent == "prices" and asked == "cost") \
                and not (state.intent == "recommend" and asked == "cost"):
            intent = asked
        state = Parsed(intent=intent, lang=p.lang, slots=merged, followup=True, text=p.text)
    assert state is not None
    return state


def _is_followup(p: Parsed, prev: Parsed) -> bool:
    if prev.intent in ("help", "out_of_scope", "guide"):
        return False
    if p.slots.model or p.slots.params_b or p.slots.model_unknown:
        return False
    if p.followup:
        return True
    # a short message that only changes a setting ("32k context?", "in 4-bit", "on spot")
    return len(p.text.split()) <= 8 and p.intent in ("fit", "cost", "prices", "speed", "guide", "out_of_scope") and \
        bool(p.slots.filled())
