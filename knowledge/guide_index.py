"""The two guides as passages (English rendition + Urdu original, same ids) and BM25 retrieval.

Passages are defined in knowledge/guides/passages.csv (id, guide, line range, topics) over the
line-aligned texts knowledge/guides/<guide>.{en,ur}.txt. Each language has its own BM25 index
(rank-bm25, Okapi) over heading + passage + topic tags. Tokenisation is script-aware: Urdu letters
are normalised (Arabic/Urdu variants, diacritics), Urdu and English stopwords dropped, and a small
concept lexicon maps synonyms in either script ("spot", "interruptible", "اسپاٹ", "مداخلت پذیر")
to one shared token, so paraphrases and mixed Urdu/English questions meet the same passages.
"""

from __future__ import annotations

__all__ = ["Passage", "PassageHit", "detect_language", "load_passages", "search_guide", "tokenize"]

import csv
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from knowledge.catalog import DATA_DIR
from knowledge.language import answer_language

GUIDE_DIR = DATA_DIR / "guides"
GUIDE_TITLES = {
    "fine-tuning-llms": {"en": "Best cloud GPUs for fine-tuning LLMs", "ur": "ایل ایل ایمز کی فائن ٹیوننگ کے لیے بہترین کلاؤڈ جی پی یوز"},
    "generative-ai": {"en": "Best cloud GPUs for generative AI", "ur": "جنریٹو اے آئی کے لیے بہترین کلاؤڈ جی پی یوز"},
}


@dataclass(frozen=True)
class Passage:
    id: str
    guide: str
    section_en: str
    section_ur: str
    text_en: str
    text_ur: str
    topics: tuple[str, ...]

    def text(self, lang: str) -> str:
        return self.text_ur if lang == "ur" else self.text_en

    def section(self, lang: str) -> str:
        return self.section_ur if lang == "ur" else self.section_en


@dataclass(frozen=True)
class PassageHit:
    id: str
    guide: str
    guide_title: str
    section: str
    text: str
    lang: str
    score: float
    topics: tuple[str, ...]




def detect_language(text: str) -> str:
    """The guides' language for a question: Urdu script reads the Urdu passages, else English."""
    return answer_language(text)


_URDU_FOLD = str.maketrans({"ي": "ی", "ى": "ی", "ك": "ک", "ە": "ہ", "ة": "ہ", "ۀ": "ہ", "ؤ": "و", "أ": "ا", "إ": "ا",
                            "آ": "ا", "ٱ": "ا", "ۓ": "ے", "ئ": "ی"})
_DIACRITICS = re.compile(r"[\u064B-\u065F\u0670\u06D6-\u06ED]")
_EN_STOP = set("""a an the of to in on for and or is are be been being it its this that these those with as at by from
do does did i me my we you your can could should would will shall may might must what which who whom how why when where
if then than so not no yes just about into over under more most much many any some all one there their they them he she
his her our us am was were have has had also very get got need needs want using use used""".split())
_UR_STOP = set("""کے کی کا کو میں سے پر اور ہے ہیں تھا تھی تھے ہو ہوں ہوتا ہوتی ہوتے یہ وہ ایک کہ بھی نہیں تو جو جس جن
کیا کیوں کیسے کب کہاں کون کتنا کتنی کتنے لیے لئے ساتھ بعد پہلے اس ان اپنا اپنی اپنے آپ مجھے میرا میری میرے ہم
ہمیں تم کر کریں کرنا کرتا کرتی کرتے کرے کرو رہا رہی رہے گا گی گے سکتا سکتی سکتے چاہیے چاہئے والا والی والے
ہوگا ہوگی ہونا ہونے جب تک اگر لیکن مگر یا بہت زیادہ کم""".split())
# concept lexicon: surface forms (either script) -> one shared token added to the tokens
_CONCEPTS: dict[str, tuple[str, ...]] = {
    "cvram": ("vram", "memory", "gb", "fit", "fits", "oom", "میموری", "وی", "ریم", "یادداشت", "گنجائش", "فٹ"),
    "cbandwidth": ("bandwidth", "bandwith", "memory-bound", "memorybound", "بینڈوڈتھ", "بینڈ", "بینڈوتھ"),
    "cspeed": ("speed", "slow", "slowly", "fast", "faster", "throughput", "tokens/s", "tok/s", "latency", "رفتار", "تیز",
               "سست", "آہستہ", "تھروپٹ", "سپیڈ", "اسپیڈ"),
    "cutil": ("utilization", "utilisation", "utilized", "idle", "underused", "یوٹیلائزیشن", "استعمال"),
    "cflagship": ("flagship", "top-end", "high-end", "newest", "latest", "best", "powerful", "فلیگ", "شپ", "طاقتور",
                  "جدید", "نیا", "نئے"),
    "crent": ("rent", "rental", "renting", "rented", "کرائے", "کرایہ"),
    "csingle": ("single", "one", "1x", "ایک"),
    "cmulti": ("multiple", "several", "8x", "4x", "2x", "کئی", "متعدد"),
    "cspot": ("spot", "interruptible", "preemptible", "preempted", "interruption", "interrupted", "reclaim",
              "اسپاٹ", "سپاٹ", "مداخلت", "پذیر"),
    "cbilling": ("billing", "billed", "hourly", "per-second", "per-minute", "minute", "second", "بلنگ", "بل", "گھنٹہ", "سیکنڈ", "منٹ"),
    "ccost": ("cost", "costs", "cheap", "cheaper", "cheapest", "price", "prices", "pricing", "money", "budget", "save",
              "expensive", "dollar", "قیمت", "لاگت", "سستا", "سستی", "سستے", "مہنگا", "خرچ", "بجٹ", "پیسہ", "پیسے", "ڈالر"),
    "cstorage": ("storage", "disk", "volume", "persistent", "dataset", "اسٹوریج", "سٹوریج", "ذخیرہ", "مستقل"),
    "cegress": ("egress", "transfer", "download", "ایگریس"),
    "cinterconnect": ("nvlink", "interconnect", "pcie", "infiniband", "fabric", "multi-gpu", "multigpu", "انٹرکنیکٹ", "انٹرکنکٹ"),
    "cmultinode": ("multi-node", "multinode", "nodes", "node", "cluster", "نوڈ", "نوڈز", "کلسٹر"),
    "ckv": ("kv", "cache", "context", "long-context", "کیش", "کانٹیکسٹ", "سیاق"),
    "cfinetune": ("finetune", "fine-tune", "finetuning", "fine-tuning", "tuning", "tune", "فائن", "ٹیوننگ", "ٹیون"),
    "clora": ("lora", "qlora", "adapter", "adapters", "peft", "parameter-efficient", "ایڈاپٹر", "ایڈاپٹرز"),
    "cquant": ("quantize", "quantized", "quantization", "4-bit", "8-bit", "int8", "int4", "fp8", "nf4", "gguf",
               "کوانٹائز", "کوانٹائزڈ", "کوانٹائزیشن"),
    "cprecision": ("precision", "bf16", "fp16", "fp8", "tensor", "cores", "پریسیژن", "درستگی", "ٹینسر"),
    "ccheckpoint": ("checkpoint", "checkpoints", "checkpointing", "resume", "resumes", "چیک", "پوائنٹ", "پوائنٹس"),
    "cenv": ("ssh", "docker", "jupyter", "notebook", "cuda", "environment", "version", "versions", "ڈاکر", "نوٹ", "بک"),
    "cconsumer": ("consumer", "gaming", "4090", "3090", "5090", "geforce", "gddr", "کنزیومر", "گیمنگ"),
    "chbm": ("hbm", "datacenter", "data-center", "a100", "h100", "h200", "80gb", "ڈیٹا", "سینٹر"),
    "cserve": ("serve", "serving", "endpoint", "deploy", "deployment", "production", "chatbot", "api", "users",
               "سروس", "سرونگ", "اینڈپوائنٹ", "تعینات", "صارفین", "چیٹ"),
    "cpretrain": ("pretrain", "pre-train", "pre-training", "pretraining", "scratch", "from-scratch", "ابتدا", "پری",
                  "شروع"),
    "cprovider": ("provider", "providers", "cloud", "vendor", "فراہم", "کنندہ", "کلاؤڈ"),
    "cfull": ("full", "all-weights", "مکمل"),
    "cbatch": ("batch", "batching", "concurrent", "بیچ"),
    "cdiffusion": ("diffusion", "image", "images", "video", "sdxl", "flux", "stable", "تصاویر", "تصویر", "ویڈیو",
                   "ڈفیوژن"),
}
_CONCEPT_OF: dict[str, str] = {w: c for c, ws in _CONCEPTS.items() for w in ws}
_WORD = re.compile(r"[a-z0-9][a-z0-9\-/.]*[a-z0-9]|[a-z0-9]|[\u0621-\u06FF]+")


def _stem_en(w: str) -> str:
    for suf in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def tokenize(text: str) -> list[str]:
    """Tokens for BM25: words (English stemmed, Urdu normalised) without stopwords, plus concept tokens."""
    t = unicodedata.normalize("NFKC", str(text)).lower().translate(_URDU_FOLD)
    t = _DIACRITICS.sub("", t)
    t = re.sub(r"[۰-۹]", lambda m: str(ord(m.group()) - ord("۰")), t)  # Eastern Arabic digits
    t = t.replace("وی آر اے ایم", " vram ").replace("جی پی یو", " gpu ").replace("ٹوکن فی سیکنڈ", " tokens/s ")
    out: list[str] = []
    for w in _WORD.findall(t):
        w = w.strip("-/.")
        if not w or w in _EN_STOP or w in _UR_STOP:
            continue
        c = _CONCEPT_OF.get(w)
        if c:
            out.append(c)
        out.append(_stem_en(w) if w.isascii() else w)
    return out


def _line_range(spec: str) -> tuple[int, int]:
    a, _, b = spec.partition("-")
    return int(a), int(b or a)


@lru_cache(maxsize=1)
def load_passages() -> tuple[Passage, ...]:
    texts = {}
    for guide in GUIDE_TITLES:
        en = (GUIDE_DIR / f"{guide}.en.txt").read_text(encoding="utf-8").split("\n")
        ur = (GUIDE_DIR / f"{guide}.ur.txt").read_text(encoding="utf-8").split("\n")
        texts[guide] = (en, ur)
    out = []
    with open(GUIDE_DIR / "passages.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            en, ur = texts[r["guide"]]
            a, b = _line_range(r["lines"])
            head_i = max((i for i in range(a) if en[i].strip() and not en[i].startswith("•")
                          and (i + 1 >= len(en) or not en[i + 1].strip()) and len(en[i]) < 90
                          and not en[i].rstrip().endswith((".", ":", "?"))), default=0)
            out.append(Passage(
                id=r["id"], guide=r["guide"], section_en=en[head_i].strip(), section_ur=ur[head_i].strip(),
                text_en="\n".join(x for x in en[a:b + 1] if x.strip()),
                text_ur="\n".join(x for x in ur[a:b + 1] if x.strip()),
                topics=tuple(t for t in r["topics"].split(";") if t)))
    return tuple(out)


class BM25Okapi:
    """Okapi BM25 over tokenized documents, the ATIRE variant with an idf floor (as rank_bm25's BM25Okapi,
    whose results it reproduces; written here in plain Python: importing that package pulls in NumPy,
    a seventh of `gpu-advisor ask`'s cold start, for 39 passages).

    score(D, Q) = sum over q in Q of idf(q) * f(q, D) * (k1 + 1) / (f(q, D) + k1 * (1 - b + b * |D| / avgdl)),
    idf(q) = ln(N - n(q) + 0.5) - ln(n(q) + 0.5), a negative idf replaced by epsilon x the mean idf.
    Source: S. Robertson, H. Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond" (2009);
    A. Trotman, X. Jia, M. Crane, "Towards an Efficient and Effective Search Engine" (2012).
    """

    def __init__(self, corpus: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        self.k1, self.b = k1, b
        self.doc_freqs = [Counter(d) for d in corpus]
        self.doc_len = [len(d) for d in corpus]
        self.avgdl = sum(self.doc_len) / len(corpus)
        n = Counter(w for f in self.doc_freqs for w in f)
        self.idf = {w: math.log(len(corpus) - c + 0.5) - math.log(c + 0.5) for w, c in n.items()}
        floor = epsilon * sum(self.idf.values()) / len(self.idf)
        self.idf = {w: (floor if v < 0 else v) for w, v in self.idf.items()}

    def get_scores(self, query: list[str]) -> list[float]:
        k1, b, avgdl = self.k1, self.b, self.avgdl
        out = []
        for f, dl in zip(self.doc_freqs, self.doc_len):
            s = 0.0
            for q in query:
                tf = f.get(q, 0)
                s += (self.idf.get(q) or 0) * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))
            out.append(s)
        return out


@lru_cache(maxsize=2)
def _index(lang: str):
    ps = load_passages()
    docs = [tokenize(p.section(lang) + " " + p.text(lang) + " " + " ".join(p.topics).replace("-", " ")) for p in ps]
    return BM25Okapi(docs, k1=1.2, b=0.6), ps


def search_guide(question: str, lang: str | None = None, k: int = 3, topics: tuple[str, ...] = ()) -> list[PassageHit]:
    """The `k` guide passages that best answer `question`, in the question's language.

    Args:
        question: free text, English or Urdu (mixed is fine).
        lang: 'en' or 'ur'; detected from the script when None.
        k: how many passages (1-10).
        topics: optional topic tags that earn a small boost (used by tools that know the subject).
    """
    lang = lang if lang in ("en", "ur") else detect_language(question)
    k = max(1, min(10, int(k)))
    bm25, ps = _index(lang)
    q = tokenize(question)
    if not q and not topics:
        return []
    scores = bm25.get_scores(q) if q else [0.0] * len(ps)
    ranked = []
    for p, s in zip(ps, scores):
        boost = sum(1.0 for t in topics if t in p.topics)
        ranked.append((float(s) + boost, p))
    ranked.sort(key=lambda x: (-x[0], x[1].id))
    return [PassageHit(id=p.id, guide=p.guide, guide_title=GUIDE_TITLES[p.guide][lang], section=p.section(lang),
                       text=p.text(lang), lang=lang, score=round(s, 4), topics=p.topics)
            for s, p in ranked[:k] if s > 0]
