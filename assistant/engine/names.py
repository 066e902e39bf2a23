"""Names in free text: catalog models, image pipelines, GPUs, providers, engines and regions.

Every name comes from the catalogs (knowledge/*.csv) or the lexicons; nothing is restated here.
A model- or GPU-like word that is not in the catalog is returned as unknown, never replaced by a
default: the answer asks about it, offering the closest known names.
"""

from __future__ import annotations

__all__ = ["Span", "find_models", "find_gpus", "find_providers", "find_concepts", "named_model"]

import re
from dataclasses import dataclass
from functools import lru_cache

from knowledge.lexicon import lexicon, pattern_map
from knowledge.catalog import gpu_name_key, gpu_names, load_providers, model_name_key, model_names, resolve_diffusion
from knowledge.instances import Instance, instance_index
from knowledge.model_family import newest_of_size
from tools.errors import UnknownModel

_TOKEN = re.compile(r"[a-z0-9][a-z0-9.\-_/]*[a-z0-9]|[a-z0-9]")
# Family words that make a following version/size a model name even when the catalog lacks it.
_MODEL_FAMILIES = (r"gemini|llama|mistral|mixtral|qwen|gemma|phi|falcon|deepseek|gpt|claude|grok|yi|command-?r|olmo|"
                   r"starcoder|codellama|vicuna|bloom|opt|mpt|solar|nemotron|jamba|dbrx|internlm|baichuan|chatglm|glm|"
                   r"kimi|minimax|smollm|granite|aya|orca|zephyr|tinyllama|stablelm|pythia|t5|bert")
# a family word, then versions or parts: digits may follow at once ("llama3", "qwen2.5"), letters only after a
# separator ("opt-1.3b", not "option"; "phi-mini", not "phil")
_FAMILY = re.compile(rf"^(?:{_MODEL_FAMILIES})(?:[-_.]?\d[a-z0-9.]*|[-_.][a-z0-9.]+)*$")
_NAME_PART = re.compile(r"^(?:v?\d+(?:\.\d+)?[a-z]{0,2}|[a-z][a-z0-9.\-]{0,14})$")
_NOT_NAME = frozenset("""on in at for with to of and or is are be a an the my our my model models gpu gpus card need needs
run serve inference fine finetune fine-tune train training lora qlora vram memory how much what which can will would
ka ki ke ko se pe par mein me hai hain ko liye kitna kitni kitne batao chahiye k requirement
fit fits fitting work works handle use uses cost costs load loads do does runs deploy host get""".split())
_WORD_RUN = re.compile(r"[a-z0-9][a-z0-9.\-_]*")


def _unknown_model(text: str) -> Span | None:
    """A family word ("llama", "mistral", "gemini" ...) with a version, size or product words after
    it that the catalog does not know: "Llama 6 1T", "Mistral Colossus 3", "Zephyr-Ultra 300"."""
    words = list(_WORD_RUN.finditer(text))
    for i, w in enumerate(words):
        if not _FAMILY.match(w.group()) or find_concepts(f" {w.group()} ", "precision") or \
                re.match(r"[- ]?(?:style|like|based|type|architecture|arch)\b", text[w.end():w.end() + 14]) \
                or re.search(r"-(?:style|like|based|type)$", w.group()):
            continue  # "a 40B llama-style model" describes a shape, it is not a name
        j = i + 1
        while j < len(words) and j - i <= 4 and words[j].group() not in _NOT_NAME and _NAME_PART.match(words[j].group()) \
                and not find_concepts(f" {words[j].group()} ", "precision") \
                and words[j].start() - words[j - 1].end() <= 1:
            j += 1
        name = text[w.start():words[j - 1].end()]
        closed = re.match(r"(?:gemini|claude|gpt|grok)", w.group())
        if j - i >= 2 or re.search(r"\d|-[a-z]", w.group()) or closed:
            if re.search(r"\d", name) or closed or j - i >= 3 or "-" in w.group():
                return Span(w.start(), words[j - 1].end(), name, name)
    m = re.search(r"\b([a-z]{3,}[a-z0-9.]*(?:[-_][a-z0-9.]+){0,4}[-_]\d+(?:\.\d+)?[bm](?:[-_][a-z0-9.]+){0,3})\b", text) or \
        re.search(r"\b(?:my|our|custom|in-house|own|fine-tuned) (?:own )?model,? (?:called |named )?['\"“‘]?([a-z][a-z0-9]*[-_][a-z0-9\-_.]+)", text)
    return Span(m.start(1), m.end(1), m.group(1), m.group(1)) if m else None


_UNKNOWN_GPU = re.compile(r"\b((?:gtx|rtx|tesla|quadro|radeon|rx|geforce|instinct)\s?[a-z]?\d{3,4}\w*(?: (?:ti|super|xtx?))*|\d{4} (?:ti|super|xtx?)(?: super)?|nvidia\s+[a-z]{1,2}\d{2,4}\w*|"
                          r"(?:[abhlv]|mi|gb|b)\d{2,3}[a-z]?|"
                          r"[a-z]{1,2}\d{3,4}(?: (?:ultra|pro|max|super|ti))?(?=\s*(?:card|gpu|کارڈ|جی پی یو)))\b")  # "X200 Ultra کارڈ"


_VARIANT_SUFFIX = {"ti", "super", "xt", "xtx"}  # a further word of a card's name ("RTX 4070 Ti Super")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    value: str      # catalog id / name / concept
    text: str       # as written


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


def find_models(text: str) -> tuple[list[Span], Span | None]:
    """(every catalog LLM or image pipeline named, in text order; an unknown model-like name).

    At each position the longest n-gram that is a catalog key wins; a unique prefix of a catalog
    key counts ("phi-3 mini" is phi-3-mini-4k) unless it ends in a bare number ("llama 7")."""
    toks = _tokens(text)
    idx = model_names()
    found: list[Span] = []
    i = 0
    while i < len(toks):
        hit_span = None
        for n in range(min(7, len(toks) - i), 0, -1):
            s, e = toks[i][0], toks[i + n - 1][1]
            cand = text[s:e]
            if not re.search(r"[a-z]", cand) or (n == 1 and not re.search(r"\d", cand) and len(cand) < 5):
                continue
            if "/" in cand and " " in cand:
                continue  # "w/ llama 3.1 8b" is not a Hugging Face repo path
            key = model_name_key(cand)
            hit = idx.get(key)
            if hit is None and (n >= 2 or re.search(r"[-.]", cand)) and len(key) >= 6 and re.search(r"\d", key) and \
                    not re.search(r"\d$", key):  # "phi-3 mini", "phi-3-mini": a unique prefix of a catalog key
                ids = {m.id for k, m in idx.items() if k.startswith(key)}
                if len(ids) == 1:
                    hit = next(m for k, m in idx.items() if k.startswith(key))
            if hit is not None:
                hit_span = (Span(s, e, hit.id, cand), n)
                break
        if hit_span:
            found.append(hit_span[0])
            i += hit_span[1]
        else:
            i += 1
    pipe = _find_pipeline(text, toks, [(f.start, f.end) for f in found])
    found += pipe
    found.sort(key=lambda f: f.start)
    if found:
        return found, None
    by_size = _family_and_size(text)
    return ([by_size], None) if by_size else ([], _unknown_model(text))


def _family_and_size(text: str) -> Span | None:
    """"llama 70b", "qwen-32b": a family word and a size, no version; the newest catalog model of it."""
    m = re.search(rf"\b({_MODEL_FAMILIES})[\s-]?(\d+(?:\.\d+)?)\s?b\b", text)
    if not m:
        return None
    model_id = newest_of_size(m.group(1), float(m.group(2)))
    return Span(m.start(), m.end(), model_id, m.group()) if model_id else None


def _find_pipeline(text: str, toks: list[tuple[int, int, str]], taken: list[tuple[int, int]]) -> list[Span]:
    out: list[Span] = []
    i = 0
    while i < len(toks):
        step = 1
        for n in range(min(4, len(toks) - i), 0, -1):
            s, e = toks[i][0], toks[i + n - 1][1]
            cand = text[s:e]
            if len(cand) < 3 or not re.search(r"[a-z]", cand) or any(a < e and s < b for a, b in taken + [(o.start, o.end) for o in out]):
                continue
            try:
                pipe = resolve_diffusion(cand)
            except UnknownModel as exc:  # "flux": the family's first pipeline (FLUX.1-dev), named in the answer
                word = re.sub(r"[^a-z0-9.]", "", cand)
                family = exc.ambiguous and exc.suggestions and len(word) >= 4 and re.fullmatch(r"[a-z0-9.\- ]+", cand) and \
                    all(re.sub(r"[^a-z0-9.]", "", x).startswith(word) for x in exc.suggestions)
                pipe = resolve_diffusion(sorted(exc.suggestions)[0]) if family else None
            if pipe and n > 1 and _same_pipeline(text[toks[i + 1][0]:e], pipe[0].model_id):
                break  # "frames w/ flux schnell": the words before the name are not part of it
            if pipe:
                out.append(Span(s, e, pipe[0].model_id, cand))
                step = n
                break
        i += step
    return out


def _same_pipeline(cand: str, model_id: str) -> bool:
    try:
        pipe = resolve_diffusion(cand)
    except UnknownModel:
        return False
    return bool(pipe) and pipe[0].model_id == model_id


def find_gpus(text: str, skip: list[tuple[int, int]]) -> tuple[list[Span], list[Span]]:
    """(catalog GPUs in the order written, unknown GPU-like names). `skip` spans (a model name) are not read.

    A number right before "GB" is a memory size, never a GPU ("a 16 GB card" is not the A16); a lone
    article is never the start of a name ("a 10" is not the A10)."""
    toks = [t for t in _tokens(text) if not any(a <= t[0] < b for a, b in skip)]
    exact, families = gpu_names()
    found: list[Span] = []
    used: set[int] = set()
    for i in range(len(toks)):
        if i in used:
            continue
        for n in range(min(4, len(toks) - i), 0, -1):
            s, e = toks[i][0], toks[i + n - 1][1]
            if n > 1 and (len(toks[i][2]) == 1 or toks[i][2].isdigit() and len(toks[i][2]) < 3):
                continue
            if any(toks[j][0] - toks[j - 1][1] > 1 for j in range(i + 1, i + n)):
                continue  # only names written together ("rtx 4090", "a100-80gb")
            key = gpu_name_key(re.sub(r"-(?:class|series|tier|level|type)$", "", text[s:e]))  # "A10-class GPUs"
            if key not in exact and key not in families and text[s:e].endswith("s"):
                key = gpu_name_key(text[s:e][:-1])  # "4090s", "h100s", "a10gs"
            if not key or (key.isdigit() and len(key) < 4):
                continue
            if re.match(r"\s*(?:gb|gib|g\b|جی بی)", text[e:e + 5]) and key.isdigit():
                continue
            if key in exact or key in families:
                more = toks[i + n][2] if i + n < len(toks) and toks[i + n][0] - e <= 1 else ""
                if more in _VARIANT_SUFFIX:
                    break  # "4060 Ti" is not the RTX 4060: a card the catalog lacks stays unknown
                name = _as_meant(exact[key], text[s:e]) if key in exact else families[key][0].family
                found.append(Span(s, e, name, text[s:e]))
                used.update(range(i, i + n))
                break
    unknown = []
    for m in _UNKNOWN_GPU.finditer(text):
        if any(a <= m.start() < b for a, b in skip) or any(f.start <= m.start() < f.end for f in found):
            continue
        if re.match(r"\s*(?:gb|gib|bit|b\b|k\b|m\b|x\b)", text[m.end():m.end() + 4]) or re.search(r"\d[bm]$", m.group(1)):
            continue
        k = gpu_name_key(m.group(1))
        if k in exact or k in families:
            continue
        bare = re.fullmatch(r"[abhlv]\d{2}[a-z]?", m.group(1))
        if bare and not re.search(r"\b(?:gpus?|cards?|nvidia|rent|instances?)\b|جی پی یو|کارڈ", text):
            continue
        vendor = re.match(r"(?:nvidia|geforce|amd)\s+", m.group(1))  # "NVIDIA H250": the card's name is H250
        start = m.start(1) + (vendor.end() if vendor else 0)
        unknown.append(Span(start, m.end(1), text[start:m.end(1)], text[start:m.end(1)]))
    return found, unknown


def _as_meant(g, written: str) -> str:
    """"A100 80GB" means both the SXM and the PCIe card unless a form is written; the name kept is
    then the family and memory, which every tool reads (the price tool covers the forms, the memory
    calculator takes the family's default form and says so)."""
    if not g.family or re.search(r"sxm|pci|nvl|mega|server", written):
        return g.name
    mem = re.search(r"(\d{2,3})\s?gb", written)
    return f"{g.family} {mem.group(1)}GB" if mem else g.family


@lru_cache(maxsize=1)
def _provider_patterns() -> dict[str, re.Pattern]:
    aliases: dict[str, list[str]] = {}
    for lx in lexicon().values():  # other names people use for a provider, per locale
        for p, forms in lx.get("provider_aliases", {}).items():
            aliases.setdefault(p, []).extend(forms)
    out = {}
    for p in load_providers():
        alt = "|".join([re.escape(p), *aliases.get(p, [])])
        out[p] = re.compile(rf"(?<![\w-])(?:{alt})(?![\w]|-(?!only\b|based\b|hosted\b))")  # "azure-only" names Azure
    return out


def find_providers(text: str) -> list[Span]:
    out = []
    for p, pat in _provider_patterns().items():
        for m in pat.finditer(text):
            out.append(Span(m.start(), m.end(), p, m.group()))
            break
    return sorted(out, key=lambda s: s.start)


def find_instances(text: str, skip: list[tuple[int, int]]) -> list[tuple[Span, Instance]]:
    """Cloud instance names of the offers table ("g5.2xlarge", "p4d", "standard_nc24ads_a100_v4"),
    each with its provider, GPU and (for an exact instance type) GPU count."""
    index = instance_index()
    out = []
    for s, e, tok in _tokens(text):
        if any(a <= s < b for a, b in skip):
            continue
        inst = index.get(tok) or (index.get(tok.split(".")[0]) if "." in tok else None)
        if inst is not None:
            out.append((Span(s, e, inst.gpu_name, tok), inst))
    return out


def find_concepts(text: str, key: str) -> list[Span]:
    """Every match of a lexicon concept map (method, precision, engine, regions ...), in text order."""
    out = []
    for concept, pat in pattern_map(key).items():
        for m in pat.finditer(text):
            out.append(Span(m.start(), m.end(), concept, m.group()))
    return sorted(out, key=lambda s: (s.start, -(s.end - s.start)))


def setting_values(text: str, spans: list[Span], order: tuple[str, ...] = ()) -> tuple[str | None, str | None]:
    """(The value a setting takes, the second value weighed beside it) from its named spans in text
    order. Two values weighed against each other ("fp16 vs fp8", "int4 ya int8", "bnb nf4 aur AWQ"):
    the first named, then the other. Otherwise no second value, and the first of `order` named (the
    most specific: "GPTQ-Int4 with vLLM's Marlin kernel" is GPTQ-Marlin), or the first named."""
    vals = [s.value for s in spans]
    between = text[spans[0].end:spans[-1].start] if spans else ""
    hints = pattern_map("hints")  # comparative words ("vs", "than") or either-or connectors ("or", "ya", "instead")
    if len(set(vals)) > 1 and (hints["comparative"].search(between) or hints["weighed_between"].search(between)):
        return vals[0], next(v for v in vals if v != vals[0])
    return next((p for p in order if p in vals), None if order or not vals else vals[0]), None


_NAME_FORMS = (  # where a product-like name the catalog lacks is written, most explicit first
    r"[\"“'‘]([A-Z][\w.]*(?:[ -][A-Z0-9][\w.]*)*)[\"”'’]\s+(?:model|llm|naam ka|نام کا|ماڈل)",  # the new "Nebulon-X Pro" model
    r"[\"“'‘]([A-Z][\w.]*(?:-[A-Z0-9][\w.]*)+)[\"”'’]",  # "anyone sized 'Orca-Nova' yet?": a quoted hyphenated name
    r"(?:\b(?:for|run|serve|of|does|deploy|with|model|called|named|use|host|can|is|will|about|q?lora|fine-?tune|train|tune)\s+)"
    r"((?:[A-Z][A-Za-z0-9]+)(?:[-_ ][A-Z0-9][A-Za-z0-9]*)+|[A-Z][a-z]+[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)",
    r"(?:^|[\s،,])((?:[A-Z][A-Za-z0-9]+)(?: [A-Z0-9][A-Za-z0-9]*)+)\s+(?:کو|کی|کا|ko|ki|ka)\b",
    r"(?:^|\s)([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*|[A-Z][A-Za-z0-9]+(?:-[A-Z0-9][A-Za-z0-9]*)+)(?=[\s?.,!]|$)",
)


def named_model(raw: str, t: str) -> "Span | None":
    """A product-like name the catalog lacks, seen by its capitals as written ("DeepThink-Omega",
    "Mistral Colossus", "Nebulon-X Pro" in quotes): the first written form that is not a GPU, a
    provider, a tool, a format or a short word in capitals."""
    for form in _NAME_FORMS:
        for m in re.finditer(form, raw):
            if _is_model_like(m.group(1)):
                low = m.group(1).lower()
                i = t.find(low)
                return Span(max(i, 0), max(i, 0) + len(low), m.group(1), m.group(1))
    return None


@lru_cache(maxsize=1)
def _not_model_names() -> frozenset[str]:
    """Tools, platforms and brands people write in capitals (lexicon `not_model_names`)."""
    return frozenset(w for lx in lexicon().values() for w in lx.get("not_model_names", []))


def _is_model_like(name: str) -> bool:
    exact, families = gpu_names()
    key = gpu_name_key(name)
    if key in exact or key in families or name.lower().replace("-", "") in {p.replace("-", "") for p in load_providers()} or \
            name.lower() in _not_model_names():
        return False
    if re.fullmatch(r"(?:[A-Z][a-z]+ )?(?:GPU|GPUs|RTX|GTX|AWS|GCP|Azure|Lambda|RunPod|Vast|NVIDIA|AMD)\b.*", name):
        return False
    if _UNKNOWN_GPU.fullmatch(name.lower()):
        return False  # "B300X": a GPU-like name, asked about as a GPU
    if re.search(r"\b(?:gpus?|node|hours?|hr|instance|vm|cards?|per)\b", name.lower()):
        return False  # "Per-GPU", "H100-node": hardware words, not a model
    if len(name) < 5 and not re.search(r"[\d-]", name):
        return False  # "SaaS", "MVP": short words in capitals are not model names
    first = re.split(r"[\s-]+", name)[0].lower()
    return not any(find_concepts(f" {first} ", key) for key in ("precision", "method", "engine", "optimizer"))
