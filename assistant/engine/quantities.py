"""Quantity + unit + role: what each number of a question is.

A number's role comes from the unit written next to it and the cue words around it (lexicon
data): "512 tokens" after "50k examples of" is tokens per example, "8k context" a context length,
"2 A100s" a GPU count, "$2/hr" an hourly budget, "by 6 hours" a deadline. A number with no role is
returned unassigned, so the answer can say it was not used.
"""

from __future__ import annotations

__all__ = ["assign_roles", "counts_per_card"]

import re
from dataclasses import dataclass, field, replace

from assistant.engine.durations import time_role
from assistant.engine.gigabytes import memory_role
from assistant.engine.numbers import Num
from knowledge.lexicon import pattern_map, patterns


def text_all(r: "Roles") -> str:
    return r.text


@dataclass
class Roles:
    values: dict[str, float] = field(default_factory=dict)
    used: set[int] = field(default_factory=set)        # indexes of numbers given a role
    role_of: dict[int, str] = field(default_factory=dict)  # index -> the role it filled
    precision_bits: list[tuple[int, int]] = field(default_factory=list)  # (bits, position) for "8-bit"
    text: str = ""
    image: bool = False  # the question names an image pipeline (its name is blanked out of `text`)
    low_left: dict[int, str] = field(default_factory=dict)  # a range's upper end -> the words before its lower end
    second: dict[str, float] = field(default_factory=dict)  # a role given another value ("rank 64 vs rank 8")


def _unit(key: str) -> re.Pattern:
    return pattern_map("units")[key]


def _starts(pat: re.Pattern, s: str) -> re.Match | None:
    return pat.match(s.lstrip(" -~:=")) if s else None


_APPROX = re.compile(r"(?:taqreeban|lagbhag|تقریباً|تقریبا|لگ بھگ|~|about|around|approx\w*|roughly)\W*$")
_TOKENS_EACH = re.compile(r"(?:taqreeban|lagbhag|تقریباً|تقریبا|لگ بھگ|each|per (?:example|sample|row|conversation|record|item|doc\w*|pair|instruction|entry)|"
                          r"avg|average|averag\w+|on average|apiece|long|of about|of around|of ~|of roughly|of|~|about|"
                          r"around|approx\w*|roughly|with|har|fi|ہر|اوسط)\W*$|(?:each|per|har|ہر)\s+\w+\W+(?:\w+\W+)?$")
_DATASET = re.compile(r"dataset|corpus|of data|of text|training data|\btrain(?:ing)? on\b|\bon\b\W*$|ڈیٹا|ڈیٹاسیٹ")
_CONTEXT_NEAR = re.compile(r"context|ctx|window|seq(?:uence)?[ _-]?len|max[ _-]?len|sequence|کانٹیکسٹ|سیاق|سیکوئنس|سیکوینس")
_PROMPT_NEAR = re.compile(r"prompt|input|\bin\b|پرامپٹ|ان پٹ")
_OUTPUT_NEAR = re.compile(r"output|generat|response|completion|new tokens|answer|repl(?:y|ies)|summar|\bout\b|\bback\b|"
                          r"آؤٹ پٹ|جواب|خلاصہ|khulasa")
_TIME_UNITS = (("minutes", 1 / 60), ("hours", 1.0), ("days", 24.0), ("weeks", 168.0), ("months", 730.0),
               ("years", 8760.0), ("seconds", 1 / 3600))


def assign_roles(text: str, nums: list[Num], gpu_spans: list[tuple[int, int]], has_model: bool,
                 image: bool = False) -> Roles:
    """Give each number of `text` its role; `gpu_spans` are where GPU names were found; `image`: the
    model named is an image pipeline."""
    r = Roles(text=text, image=image)
    corrections = [m.start() for m in patterns("correction").finditer(text)]
    _resolution(text, nums, r)
    for i, n in enumerate(nums):
        if i in r.used:
            continue
        right = text[n.end:n.end + 80]
        left = text[max(0, n.start - 40):n.start]
        if i + 1 < len(nums) and re.fullmatch(r"\s*(?:-|–|to|se|تا|سے)\s*", text[n.end:nums[i + 1].start]) and \
                nums[i + 1].value > n.value and not n.is_word and not re.search(r"\bfrom\s*$", left):
            r.used.add(i)  # "$200-300", "2-4k tokens": the upper end, read with the words around the whole range
            r.role_of[i] = "_range_low"
            r.low_left[i + 1] = left
            continue
        left = r.low_left.get(i, left)
        role = _role(text, n, right, left, gpu_spans, has_model, nums, i, r)
        if role is None and n.value < 0:  # "-4 GPUs", "minus 2000 tokens": the unit says the role; the sign makes it invalid
            role = _role(text, replace(n, value=-n.value), right, left, gpu_spans, has_model, nums, i, r)
            role = (role[0], -role[1]) if role and not role[0].startswith("_") else None
        if role is None:
            continue
        name, value = role
        if name == "_bits":
            r.precision_bits.append((int(value), n.start))
            r.used.add(i)
            r.role_of[i] = "kv_precision" if value < 0 else "precision"
            continue
        if name == "_storage_and_egress":
            r.values.setdefault("storage_gb", value)
            r.values.setdefault("egress_gb", value)
        if name in r.values and abs(r.values[name] - value) > 1e-9 * max(1.0, abs(value)):
            before = [nums[j].start for j, role in r.role_of.items() if role == name]
            corrected = any(b < c < n.start for c in corrections for b in before)  # "3 epochs ... sorry, 2"
            corrected = corrected or any(re.fullmatch(r"\W*(?:\w+\W+)?(?:nahi|nahin|نہیں|not|no)\W+", text[nums[j].end:n.start])
                                         for j, role in r.role_of.items() if role == name)  # "1500 nahi 2500"
            corrected = corrected or name == "concurrent_users" and re.match(r"\s*(?:concurrent\s+)?users?\b", right) and \
                any(re.match(_PEOPLE, text[nums[j].end:nums[j].end + 20]) for j, role in r.role_of.items() if role == name)
            if not corrected and not _replaces(name, left, right, r.values[name]):
                r.second.setdefault(name, value)
                continue  # a second value for a role already filled: reported as not used, never swallowed
            if not corrected:
                r.second.setdefault(name, r.values[name])  # the value it replaces ("bump to"), weighed beside it
            for j, role in list(r.role_of.items()):
                if role == name:
                    r.role_of[j] = f"_{name}_before"  # "from batch 1 to 32", "200 staff, 10 at once"
        r.values[name] = value
        r.used.add(i)
        r.role_of[i] = name
    return r


_PEOPLE = r"\s*(?:devs|developers|engineers|employees|staff|people|team members|students|members|ملازمین|لوگ)\b"  # a head count
_AT_ONCE = re.compile(rf"\s*{patterns('at_once').pattern}\b")  # lexicon `at_once`: "at the same time", "بیک وقت"
_AT_ONCE_BEFORE = re.compile(rf"{patterns('at_once').pattern}\W+(?:[^\W\d]+\W+){{0,4}}$")  # "ایک وقت میں زیادہ سے زیادہ 20"


def _replaces(name: str, left: str, right: str, first: float) -> bool:
    """A second value that supersedes the first: the target of "from X to Y", or the users at once
    after a head count ("~200 employees but maybe 10 at once")."""
    if re.search(r"\bfrom\b[^.?!]{0,30}\bto\s*(?:[a-z]+\s+)?$", left) or \
            re.search(r"\b(?:bump\w*|go(?:ing)?|increas\w*|rais\w*|switch\w*|mov\w*|chang\w*|upgrad\w*)\s+(?:it\s+|that\s+)?"
                      r"(?:up\s+)?to\s+(?:[a-z]+\s*=?\s*)?$", left):
        return True  # "bump batch from 1 to 32", "at r=8 ... bumping to r=64": the new value
    if name == "concurrent_users" and re.search(r"\b(?:wants?|needs?|expects?|targets?|goal is|plans? for)\s+(?:to\s+\w+\s+)?"
                                                r"(?:~|about|around)?\s*$", left):
        return True  # "~40 users now, product wants 150": the load to plan for
    if name in ("batch", "concurrent_users") and first == 1:
        return True  # "batch 1 and batch 16", "a single user ... 16 at once": 1 is shown beside any load
    if name == "duration_hours" and re.match(r"\s*gpu[- ]?(?:hours?|hrs?)\b", right):
        return True  # "a one-week workshop ... about 20 GPU-hours total": the compute, not the calendar
    return name == "concurrent_users" and bool(_AT_ONCE.match(right) or _AT_ONCE_BEFORE.search(left) or re.match(
        r"\s*(?:[a-z]+\s+){0,4}(?:use|using|chat\w*|online|hitting|query\w*)\b.{0,25}(?:at the same time|at once|concurrently|"
        r"simultaneously)", right))  # "~200 employees but maybe 15 using it at the same time"


def _resolution(text: str, nums: list[Num], r: Roles) -> None:
    for m in re.finditer(r"(\d{3,4})\s*[x×*]\s*(\d{3,4})|(\d{3,4})\s*²", text):
        r.values.setdefault("resolution", float(m.group(1) or m.group(3)))  # "1024x1024", "1024²"
        for i, n in enumerate(nums):
            if m.start() <= n.start < m.end():
                r.used.add(i)
                r.role_of[i] = "resolution"


def _role(text, n: Num, right: str, left: str, gpu_spans, has_model, nums, i, r: Roles):
    """The role of one number: the first rule group that recognises it (a grammar table, in order)."""
    if n.value in (1_000, 1_000_000) and re.search(r"(?:\bper|/|\ba|\bevery|\beach|\bfi|فی)\s*$", left) and \
            _per_tokens(right):
        return ("_price_unit", n.value)  # "cost per 1M output tokens": the unit a price is quoted in, not a length
    for rules in (_count_role, _unit_role, _token_role_group, _misc_role, _late_role):
        role = rules(text, n, right, left, gpu_spans, has_model, nums, i, r)
        if role is not None and role[0] == "output_tokens" and role[1] >= 1_000_000:
            return ("_generated_total", role[1])  # "~2M output tokens total": a generation job, not one answer's length
        if role is not None:
            return role
    return None


def _per_tokens(right: str) -> bool:
    """Tokens right after a "per N" ("per 1M output tokens", "فی ملین آؤٹ پٹ ٹوکن"): the unit a price is quoted in."""
    return bool(re.match(rf"\s*[- ]?(?:(?:{_unit('output').pattern}|{_unit('prompt').pattern}|generated)\s+)?"
                         r"(?:tokens?|toks?|ٹوکنز|ٹوکن)", right))


# between a count and the GPU name: "8x", "8 nvidia", "8 عدد" (pieces), "8 units of", "ek hi" (just one)
_COUNTER = r"\s*[x×]?\s*(?:(?:hi|ہی)\s+)?(?:(?:units? of|pcs|pieces? of|nos?\.?|عدد|adad)\s+)?(?:\d{1,3}\s?gb\s+)?" \
           r"(?:(?:rented|dedicated|spare|extra|additional|more|used|cloud)\s+)?(?:nvidia\s+|geforce\s+)?"


def counts_per_card(text: str, nums: list[Num], cards: list[tuple[int, int, str]]) -> dict[str, int]:
    """"1x H100 or 2x L40S": each card's own count, when every card has one and they differ ({} otherwise,
    and the one GPU count applies to every card)."""
    out: dict[str, int] = {}
    for start, end, name in cards:
        for n in nums:
            before = 0 <= start - n.end <= 12 and re.fullmatch(_COUNTER, text[n.end:start])
            after = 0 <= n.start - end <= 3 and re.fullmatch(r"\s*[x×]\s*", text[end:n.start])
            if (before or after) and 0 < n.value <= 1e6:
                out[name] = int(n.value)
    return out if len(out) == len(cards) >= 2 and len(set(out.values())) > 1 else {}


def _count_role(text, n: Num, right: str, left: str, gpu_spans, has_model, nums, i, r: Roles):
    """GPU counts: "8x h100", "2 a100s", "two 4090s", "h100 x8"."""
    v = n.value
    # GPU count: "8x h100", "2 a100s", "two 4090s", "4 gpus", "h100 x8"
    after = n.end + (len(right) - len(right.lstrip(" x×-")))
    if any(a == after or (0 <= a - n.end <= 12 and re.fullmatch(_COUNTER, text[n.end:a]))
           for a, _ in gpu_spans):
        return ("gpu_count", v) if 0 < v <= 1e9 else None  # absurd counts reach the tools, which name the limit
    if re.search(r"[x×]\s*$", left) and any(b >= n.start - 3 and b <= n.start for _, b in gpu_spans):
        return ("gpu_count", v)
    if any(0 <= n.start - b <= 3 for _, b in gpu_spans) and re.match(r"\s*[x×]", text[n.start - 2:n.start] or ""):
        return ("gpu_count", v)
    return None


def _unit_role(text, n: Num, right: str, left: str, gpu_spans, has_model, nums, i, r: Roles):
    """Units written right after the number: bits, tokens/s, GB/TB, dollars."""
    v = n.value
    if _starts(_unit("bit"), right) and (re.match(r"[- ]?bits?\s*(?:adam|optim|paged)", right.lstrip()) or
                                         re.search(r"(?:adam\w*|optimi[sz]er)\s*$", left)):
        return ("_optimizer_bits", v)  # "8-bit Adam" is an optimizer, not 8-bit weights
    if _starts(_unit("bit"), right):
        kv = bool(re.match(r"[- ]?bits?\s*(?:kv|key)", right.lstrip()))
        return ("_bits", -v if kv else v)  # negative: the KV cache's bits, not the weights'

    if _starts(_unit("tps"), right):
        if re.search(rf"(?:{patterns('claim_cues').pattern})[^.?!]{{0,40}}$", left):
            return ("_claimed", v)  # "a blog claiming an H100 does 3000 tok/s": a figure to check, not a target (reported)
        return ("min_tokens_per_s", v)
    if re.search(rf"(?:{_unit('tps').pattern})\s*(?:(?:is|are|was|=|:|hai|ہے)\s*"
                 r"(?:only|just|about|around|roughly|barely|~|sirf|صرف)?|only|just|barely|sirf|صرف)\s*$", left):
        return ("min_tokens_per_s", v)  # "my tokens/s is only 12": the unit written before the figure
    cur = patterns("other_currency").pattern
    if re.match(rf"\s*{cur}(?:\W|$)", right) or re.search(rf"(?<![a-z]){cur}\s*$", left):
        return ("_other_currency", v)  # no exchange rate in the data: reported, never converted
    if re.match(r"\s*(?:gb|gib|gigs?|gigabytes?|g\b|جی بی)", right):
        return memory_role(v, right, left, has_model, gpu_spans, n.start)
    if re.match(r"\s*(?:tb|tib|terabytes?|ٹی بی|ٹیرا ?بائٹ)", right):
        role = memory_role(v * 1000, right, left, has_model, gpu_spans, n.start)
        return role if role and role[0] in ("egress_gb", "storage_gb", "_storage_and_egress") else ("storage_gb", v * 1000)
    if re.match(r"\s*(?:cents?\b|سینٹ)", right):
        tail = re.sub(r"^\s*\([^)]*\)", "", right[re.match(r"\s*(?:cents?\b|سینٹ)", right).end():])  # "70 cents ($0.70)"
        per_hour = re.match(r"\s*(?:/|per|an|a|each|fi|فی)\s*(?:gpu[- ]?)?(?:hour|hr|h\b|ghant|گھنٹ)", tail)
        return (_hourly_role(v / 100, left, tail) if per_hour else "budget_usd_total", v / 100)  # "under 50 cents an hour"
    if re.search(r"(?:\$|usd|us\$)\s*$", left) or _starts(_unit("usd"), right) or \
            re.search(r"(?:in|into) (?:dollars|usd)\W+(?:\w+\W+){0,2}(?:around|about|roughly|~)?\s*$", left):
        stripped = right.lstrip(" -~:=")
        mu = _unit("usd").match(stripped)
        tail = stripped[mu.end():] if mu else right
        if re.match(r"\s*(?:/|per|an|a|each|fi|فی)?\s*(?:gpu[- ]?)?(?:hour|hr|h\b|ghant|گھنٹ)", tail.lstrip(" )]")) or \
                re.match(r"\s*/\s*h", tail) or \
                re.search(r"(?:per hour|hourly|/ ?hr|فی گھنٹ[ہے]|ghante ka|fi ghanta)\W*(?:\w+\W+){0,2}$", left[-25:]):
            return (_hourly_role(v, left, stripped[mu.end():] if mu else right), v)
        if re.match(r"\s*(?:/|per|fi|فی)\s*(?:m\b|million|mtok|1m|ملین|10 لاکھ)", tail):
            # "an API at $0.20 per million tokens": the alternative's price, weighed against self-hosting
            return ("api_usd_per_million_tokens", v) if pattern_map("hints")["hosted_api"].search(r.text) else None
        return ("budget_usd_total", v)
    return None


def _hourly_role(v: float, left: str, right: str) -> str:
    """An hourly dollar figure is a cap ("under $2/hr", "budget $1/h") unless it is said as the price paid
    ("at $2.50/hr", "the rate is $1.8/h", "$0.40/hr mil raha"): lexicon budget_cues and price_cues; $0 is never
    a price (a cap no offer meets)."""
    before, after = left[-30:], right[:30]
    cap = [m.end() for m in patterns("budget_cues").finditer(before)]
    paid = [m.end() for m in patterns("price_cues").finditer(before)]
    # a cap said close by ("budget is $1/hr") is a cap; further back, the nearer cue decides ("I have $500 and an
    # H100 at $2/hr": the $2 is what the H100 costs)
    if v <= 0 or cap and (max(cap) >= len(before) - 15 or not (paid and max(paid) > max(cap))):
        return "budget_usd_per_hour"
    label = re.search(rf"(?:{patterns('spot').pattern}|{patterns('on_demand').pattern})\W*"
                      rf"(?:(?:{patterns('price_cues').pattern}|hai|ہے|[=:])\W*)*$", before)  # "spot price is 0.9"
    if label:  # "spot 0.9$/hr aur on-demand 1.8$/hr": each price labelled as the user pays it
        return "price_usd_per_gpu_hour" if patterns("on_demand").match(label.group()) else "spot_price_usd_per_gpu_hour"
    if patterns("price_cues").search(before) or patterns("price_cues").search(after.split(",")[0]):
        return "price_usd_per_gpu_hour"
    return "budget_usd_per_hour"


def _token_role_group(text, n: Num, right: str, left: str, gpu_spans, has_model, nums, i, r: Roles):
    """Contexts, tokens, prompts, examples, users in batches."""
    v = n.value
    if n.scale in ("b", "bn", "billion") and re.match(r"\s*(?:[\w-]+\s+){0,2}(?:models?|llms?|params?|parameters?)\b", right):
        return None  # "a 13b chat model": a size (read later), not 13 billion chats
    if n.is_word and not n.value % 1000 and re.search(r"(?:per|فی|fi|a|/)\s*$", left) and n.text.split()[0] == n.scale and \
            _per_tokens(right):
        return ("_per_unit", v)  # "$ per million tokens", "فی ملین ٹوکن": a unit of price, not an amount
    if _starts(_unit("users"), right) and not re.search(r"sequences?", right[:12]) or \
            re.search(r"(?:batch(?:[- ]?size)?|\bbs)\s*(?:of|=|:)?\s*$", left):
        pass  # "context to 100000 users", "32k ctx 8 users", "batch 8 seq 1024": the number's own unit wins
    elif _starts(_unit("context"), right) or re.search(r"(?:context|ctx|context length|context window|seq(?:uence)?(?:[ _-]?len(?:gth)?)?|max[ _-]?(?:model[ _-]?)?len)\s*(?:of|=|:|is|at|to|length)?\s*(?:~|about|around)?\s*$", left) \
            or re.search(r"(?:کانٹیکسٹ|سیاق|(?:سیکوئنس|سیکوینس|سیکوینس) ?(?:کی )?(?:لمبائی|لینتھ)?)\s*(?:تقریباً|تقریبا|لگ بھگ|taqreeban)?\s*$", left):
        return ("context_tokens", ctx_tokens(n))
    label = re.search(r"\b(input|prompt|output)s?\s*[:=]?\s*(?:~|about|around)?\s*$", left)
    if label and re.match(r"\s*[- ]?tokens?\b", right):  # "input 2000 tokens output 500": the label before the amount
        return ("output_tokens" if label.group(1) == "output" else "prompt_tokens", ctx_tokens(n))
    m_kind = re.match(r"\s*(output|prompt|input|context|generated|new)\s+tokens?\b", right) or \
        re.match(r"\s*[- ]?tokens?\s+(repl(?:y|ies)|answers?|responses?|outputs?)\b", right)
    if m_kind:  # "512 output tokens"
        kind = m_kind.group(1)
        role = "output_tokens" if re.match(r"output|generated|new|repl|answer|respons", kind) else \
            {"prompt": "prompt_tokens", "input": "prompt_tokens"}.get(kind, "context_tokens")
        return (role, ctx_tokens(n))
    if re.match(r"\s*(?:output|completion|response|generated)s?\b", right) and re.search(r"\btok|ٹوکن", r.text):
        return ("output_tokens", ctx_tokens(n))  # "2000 token prompt + 512 output"
    if re.match(r"\s*in\s*[/,]\s*\d", right):
        return ("prompt_tokens", ctx_tokens(n))  # "512 in / 256 out"
    if re.match(r"\s*out\b", right) and (re.search(r"(?:tokens?\s+)?in\b\s*[/,]?\s*$|tokens?\s+in\b", left[-40:]) or
                                         re.search(r"\btok(?:en)?s?\b|prompt", left[-60:])):
        return ("output_tokens", n.value)  # "~6000 tokens in, 400 out"
    if _starts(_unit("tokens"), right) or re.match(r"\s*[- ]?token", right):
        return _token_role(n, right, left, nums, i, r)
    if re.match(r"\s*(?:prompts|inputs|queries|questions|requests to run)\b", right):
        return ("examples", v)  # "5,000 prompts": how many, not how long
    if _starts(_unit("prompt"), right) and n.value >= 16:
        return ("prompt_tokens", ctx_tokens(n))
    if re.match(r"\s*(?:images?|pics?|تصاویر|تصویریں)\s*(?:ka|کا|in a|per)?\s*(?:batch|بیچ)", right):
        return ("batch", v)  # "4 images ka batch"
    one_word = re.match(r"\s*(?:internal|active|daily|total|concurrent|parallel|simultaneous|real|paying|"
                        r"training|labelled|labeled|unique|different|separate|generated|product|new)\s+", right)
    if one_word:  # "10 internal users", "5k labelled examples"
        rest = right[one_word.end() - 1:]
        if re.match(r"\s*(?:daily|monthly|weekly|total)\b", right) and _starts(_unit("users"), rest):
            return ("_users_per_period", v)  # "1000 daily users" are not concurrent users
        if re.match(r"\s*(?:concurrent|parallel|simultaneous)\s+(?:chats?|streams?|sessions?|conversations?|requests?|"
                    r"connections?|clients?|calls?|queries|users?|at\b|during\b|in\b|on\b|max\b)", right):
            return ("concurrent_users", v)  # "25 concurrent chats": the adjective says they run at once
        for unit, role in (("users", "concurrent_users"), ("examples", "examples"), ("images", "images")):
            if _starts(_unit(unit), rest):
                return (role, v)
    if _starts(_unit("examples"), right) or v >= 10 and _described(right, "examples"):
        return ("examples", v)  # "50k chats", "50 ہزار کسٹمر سپورٹ چیٹس"
    return None


_OTHER_UNITS = ("tokens", "users", "gpus", "images", "epochs", "steps", "context", "params", "hours", "days")


def _described(right: str, unit: str) -> bool:
    """The unit noun after one or two describing words ("50k customer support chats"), none of
    which is itself a unit of another quantity."""
    for k in (1, 2):
        m = re.match(rf"\s*((?:[^\W\d][\w-]*\s+){{{k}}})", right)
        if m and _starts(_unit(unit), right[m.end():]):
            return not any(_starts(_unit(u), w) for w in m.group(1).split() for u in _OTHER_UNITS)
    return False


def _misc_role(text, n: Num, right: str, left: str, gpu_spans, has_model, nums, i, r: Roles):
    """Epochs, batch, users, LoRA rank."""
    v = n.value
    if _starts(_unit("epochs"), right) or re.search(r"epochs?\s*(?:=|:|of)?\s*$", left):
        return ("epochs", v)  # an absurd count is kept: the time tool names the limit it breaks
    if re.search(r"(?:batch(?:es|ing|ed)?(?:[- ]?size)?|micro-?batch(?:[- ]?size)?|\bbs|mbs|بیچ(?: سائز)?)[\s-]*(?:of|=|:|is|to)?\s*$", left) or \
            re.match(r"\s*(?:(?:requests?|prompts?|sequences?|images?|queries|درخواستیں|درخواستوں|ریکویسٹس|ریکویسٹ|کو|ایک|ساتھ|"
                     r"together|in|a|one)\s+){0,3}"
                     r"(?:batch(?:ed)?|بیچ)", right):  # "batching 32 requests", "۶۴ درخواستیں ایک ساتھ بیچ"
        return ("batch", v)
    if "concurrent_users" in r.values and re.search(r"\b(?:wants?|needs?|expects?|targets?)\s+(?:~|about|around)?\s*$", left):
        return ("concurrent_users", v)  # "~40 users. product wants 150 by next month"
    if _starts(_unit("users"), right) or re.search(r"\b(?:class|users?|students?|team|traffic|audience|people)\b[^.?!]{0,20}"
                                                  r"\b(?:grows?|goes? up|increases?|rises?|scales?|jumps?)\s+to\s*$", left):
        return ("concurrent_users", v)  # "what if the class grows to 60?"
    if re.search(r"(?:rank|\br|رینک)\s*(?:of|=|:)?\s*$", left) or re.match(r"\s*rank\b", right):
        return ("lora_rank", v)
    return None


_UNMATCHED = ("", 0.0)  # no unit role: the counts by context come next


def _measure_role(n: Num, right: str, left: str, r: Roles):
    """Roles a unit or a named quantity gives: durations, images, sizes, steps, resolution, "2 x 24GB cards"."""
    v = n.value
    for unit, factor in _TIME_UNITS:
        m = _starts(_unit(unit), right)
        if m and not (unit == "minutes" and n.scale) and not re.match(r"\s*m\b", right) or \
                (m and unit == "hours" and re.match(r"\s*h\b", right)):
            return time_role(v * factor, left, right)
    if _starts(_unit("images"), re.sub(r"^\s*\d{3,4}\s*[x×*]\s*\d{3,4}\s*(?:px)?", "", right)):
        return ("images", v)  # "two thousand 1024x1024 images": the count before the size
    if n.scale in ("b", "bn", "billion", "t", "trillion", "ارب", "بلین", "arab", "کھرب", "kharab", "ٹریلین") or \
            _starts(_unit("params"), right):
        if n.scale:
            return ("params_b", v / 1e9)
        if re.match(r"\s*(?:-|\s)?(?:param|parameter)", right):
            return ("params_b", v / 1e9 if v >= 1e6 else v)
    if n.scale in ("m", "million") and re.match(r"\s*(?:[\w.\-]+\s+){0,3}?(?:style\s+|sized?\s+)?(?:model|llm|gpt)\b", right) and \
            not re.match(r"\s*(?:[\w.\-]+\s+){0,3}?tok", right):
        return ("params_b", v / 1e9)  # "a 125M GPT-2-small style model"
    if _starts(_unit("steps"), right) or re.search(r"steps?\s*(?:=|:|of)?\s*$", left) and \
            not re.search(r"\d\s*steps?\s*$", left):  # "4 steps 1024": the steps were counted before the word
        return ("steps", v)
    if _starts(_unit("pixels"), right) or re.search(r"(?:resolution|res|ریزولوشن)\s*(?:of|=|:|at)?\s*$", left):
        return ("resolution", v)
    if r.image and 256 <= v <= 4096 and v % 64 == 0 and not n.scale and re.match(r"\s*(?:px)?\s*(?:[?.!,;)]|$)", right):
        return ("resolution", v)  # "flux schnell on an H100, 4 steps 1024?": an image side in pixels
    if n.is_word and 0 < v <= 16 and re.match(r"\s*\d+\s?(?:gb|gib)\s*(?:card|gpu|vram|کارڈ|جی پی یو|wala|والا|والی)", right):
        return ("gpu_count", v)
    return _UNMATCHED


def _late_role(text, n: Num, right: str, left: str, gpu_spans, has_model, nums, i, r: Roles):
    """Durations, images, sizes, steps, resolution, counts by reference, "from X to Y"."""
    role = _measure_role(n, right, left, r)
    if role is not _UNMATCHED:
        return role
    v = n.value
    rs = right.lstrip(" -~:=")
    if re.match(r"\s*of (?:them|those|these|the gpus|the cards)\b", right):
        if _unit("examples").search(left[-60:]) or re.search(r"chats?|tickets|emails|texts|transcripts", left[-60:]):
            return ("examples", v)  # "eighty thousand of them" after "chats"
        if _AT_ONCE_BEFORE.search(right[:60] + " ") or re.search(r"at (?:the same time|once)|hitting|using|concurrent", right[:60]):
            return ("concurrent_users", v)  # "60 of them hitting one server at the same time"
        return ("gpu_count", v)  # "on 4 of them": the GPUs talked about
    if 0 < v <= 64 and v == int(v) and re.match(r"\s*(?:hi |hee |ہی )?(?:kafi|kaafi|کافی|enough)\b", right) and \
            not re.search(r"(?:gb|vram|memory|میموری)\W*$", left):
        return ("gpu_count", v)  # "1 hi kafi ho ga?": is that many GPUs enough
    if 0 < v <= 64 and v == int(v) and len(r.text.split()) <= 8 and re.search(r"\b(?:get|have|use|take|rent|only)\W*$", left) \
            and re.match(r"\s*[?.!]*$", right):
        return ("gpu_count", v)  # "what if we only get 4"
    if 0 < v <= 64 and v == int(v) and len(r.text.split()) <= 6 and re.match(r"\s*(?:pe|par|پر|on)\s*[?.!]*$", right):
        return ("gpu_count", v)  # "acha 2 pe?", "and on 4?": the GPUs talked about
    if _starts(_unit("gpus"), right) and not re.match(r"\s*x\b", right):
        return ("gpu_count", v) if 0 < v <= 100000 else None
    if _starts(_unit("nodes"), right):
        return ("_nodes", v)
    # "at 32k", "32k?" on its own: a context length when written with k and in the range of contexts
    if n.scale == "k" and 0.5 <= v / 1000 <= 10000 and not re.match(r"\s*(?:/|per|rows|samples|examples)", right):
        if re.search(r"(?:at|with|to|use|using|of|for|about|پر|pe)\s*$", left) or not rs or rs[0] in "?.,!)" or \
                re.match(r"then\b", rs):  # "what about 32k then?"
            return ("context_tokens", ctx_tokens(n))
    if re.search(r"(?:users?|requests?|concurrency|concurrent)\s*(?:of|=|:)?\s*$", left):
        return ("concurrent_users", v)
    if v >= 2 and (re.match(r"\s*(?:[a-z]+\s+){0,4}(?:would |will |may |might |could )?(?:use|using|chat\w*|online|"
                            r"hitting|query|querying|play\w*)\b.{0,25}(?:at the same time|at once|concurrently|simultaneously)",
                            right) or re.match(r"\s*(?:at the same time|at once|concurrently|simultaneously)\b", right)):
        return ("concurrent_users", v)  # "40 nurses and doctors would use it at the same time"
    if v >= 2 and _AT_ONCE_BEFORE.search(left):
        return ("concurrent_users", v)  # "ایک وقت میں زیادہ سے زیادہ 20"
    if 256 <= v <= 4096 and (re.search(r"(?:\bat|\bpe|\bpar|@|پر)\s*$", left) or re.match(r"\s*(?:pe|par|پر)\b", right)) and \
            (r.image or re.search(r"images?|تصاویر|تصویر|tasveer", r.text)):
        return ("resolution", v)  # "PixArt at 1024"
    m_out = re.search(r"\b(output|prompt|input|context|repl(?:y|ie)|answer|response)s?\s*[:=]?\s*(?:~|about|around)?\s*$", left)
    if m_out and re.search(r"\btokens?\b", r.text):
        role = {"output": "output_tokens", "prompt": "prompt_tokens", "input": "prompt_tokens"}.get(m_out.group(1),
                                                                                                   "context_tokens")
        role = "output_tokens" if m_out.group(1) in ("reply", "replie", "answer", "response") else role  # "replies ~300"
        return (role, v)  # "(prompt ~400 tokens, output ~100)"
    return _by_reference(text, n, right, left, r)


def _by_reference(text: str, n: Num, right: str, left: str, r: Roles) -> tuple[str, float] | None:
    """A count that names its quantity elsewhere: "need two thousand" after "SDXL images", "bump batch from
    1 to 32", "examples are 40k", "4k prompt and 512 output"."""
    v = n.value
    side = next((role for unit, role in (("output", "output_tokens"), ("prompt", "prompt_tokens"))
                 if _starts(_unit(unit), right)), None)  # lexicon units: "512 output", "500 ان پٹ"
    if side and re.search(r"\btokens?\b|\d\s?k\b|\bprompt|\boutput|ٹوکن", r.text):
        return (side, ctx_tokens(n))
    if v >= 2 and re.search(r"(?:needs?|wants?|make|generate|produce|create|chahiye|چاہیے|چاہئیں)\s*$", left) and \
            re.match(r"\s*(?:$|[,.;:?!)]|(?:for|to|in|by|of|by|ki|ke|کی|کے)\b|(?:a|per) day\b|daily\b|roz\b)", right):
        for unit, role in (("images", "images"), ("examples", "examples")):
            if _unit(unit).search(text[:n.start]) and role not in r.values:
                return (role, v)  # "need two thousand" after "SDXL images"
    m = re.search(r"([a-z\u0600-\u06ff]+)\s+from\s+\S+\s+to\s*$", left)
    if m:  # "bump batch from 1 to 32": the new value of the same quantity
        word = m.group(1)
        for key, role in (("batch", "batch"), ("users", "concurrent_users"), ("context", "context_tokens"),
                          ("epochs", "epochs"), ("rank", "lora_rank"), ("steps", "steps")):
            if _unit(key).match(word) if key in ("users", "context", "epochs", "steps", "batch") else word == key:
                return (role, ctx_tokens(n) if role == "context_tokens" else v)
    return _named_before(v, right, left)


_IS = r"\s*(?:are|is|were|=|:|ہیں|ہے|hain|hai|ki tadaad|کی تعداد)?\s*$"


def _named_before(v: float, right: str, left: str) -> tuple[str, float] | None:
    """A count written after what it counts: "examples are 40k", "مثالیں چالیس ہزار ہیں", "epochs: 3"."""
    if not re.match(r"\s*(?:ہیں|ہے|hain|hai|[,.;?!)]|and\b|اور|aur\b|$)", right):
        return None
    for unit, role in (("examples", "examples"), ("epochs", "epochs"), ("users", "concurrent_users"),
                       ("images", "images"), ("steps", "steps")):
        if re.search(f"(?:{_unit(unit).pattern}){_IS}", left[-40:]):
            return (role, v)
    return None


_PER_DAY = {"day": 1.0, "daily": 1.0, "روزانہ": 1.0, "دن": 1.0, "roz": 1.0, "rozana": 1.0, "week": 1 / 7,
            "month": 24 / 730, "monthly": 24 / 730, "ماہانہ": 24 / 730, "مہینے": 24 / 730, "hour": 24.0}


def _token_rate(right: str, left: str) -> float | None:
    """Tokens a day per token written with a period: "2M tokens/day", "5M tokens a month", "روزانہ 50 لاکھ ٹوکن"."""
    unit = r"\s*[- ]?(?:tokens?|toks?|ٹوکنز|ٹوکن)"
    m = re.match(unit + r"\s*(?:/|per|a|an|each|every|فی)?\s*(day|daily|month|monthly|week|hour|روزانہ|ماہانہ|مہینے|دن)\b",
                 right) or (re.match(unit, right) and re.search(r"(daily|roz|rozana|روزانہ|ماہانہ|monthly)\W+(?:\w+\W+){0,2}$",
                                                                 left[-30:]))
    return _PER_DAY[m.group(1)] if m else None


def ctx_tokens(n: Num) -> float:
    """A context written with k is binary ("8k" = 8,192), as model windows are."""
    return n.value / 1000 * 1024 if n.scale == "k" else n.value


def _token_role(n: Num, right: str, left: str, nums: list[Num], i: int, r: Roles) -> tuple[str, float]:
    """Tokens of what: the context, a prompt, an output, each example, or the whole dataset."""
    near_r, near_l = right[:25], left[-25:]
    after_tokens = re.sub(r"^\s*[- ]?(?:tokens?|toks?|ٹوکنز|ٹوکن)(?:\b|(?=\s))", "", right)[:16].strip(" -")
    for pat, role in ((_PROMPT_NEAR, "prompt_tokens"), (_OUTPUT_NEAR, "output_tokens"), (_CONTEXT_NEAR, "context_tokens")):
        if pat.match(after_tokens) and role == "output_tokens" and n.value >= 1_000_000:
            return ("_generated_total", n.value)  # "1 billion tokens generated": a generation job, not one output
        if pat.match(after_tokens) or role == "context_tokens" and pat.search(after_tokens[:14]):
            return (role, ctx_tokens(n))  # "2000-token prompts", "300 token answers", "8k tokens context", "ٹوکن کے کانٹیکسٹ"
    each_word = re.search(r"(?:each|[x×*]|per (?:example|sample|row|conversation|record|item|doc\w*|pair|instruction|entry)|"
                          r"avg|average|averag\w+|on average|apiece|har|ہر|اوسط\w*)\W+(?:\w+\W+){0,4}$", left[-40:]) or \
        re.match(r"\s*[- ]?(?:tokens?|toks?|ٹوکنز|ٹوکن)\s*(?:each|per|apiece|har|ہر|فی|fi)\b", right)
    each = each_word or (_APPROX.search(left[-12:]) and "examples" in r.values) or _TOKENS_EACH.search(left[-22:])
    if re.match(r"\s*[- ]?(?:tokens?|toks?)\s+(?:at once|in one go|in one prompt|in a single prompt|ek saath|ایک ساتھ)", right):
        return ("context_tokens", ctx_tokens(n))  # "feed it 10 million tokens at once": one context (checked against the window)
    rate = _token_rate(right, left)
    if rate:  # "2M tokens/day", "روزانہ 50 لاکھ ٹوکن": a serving volume, per day
        return ("tokens_per_day", n.value * rate)
    if n.value >= 2_000_000 and not each_word:
        return ("dataset_tokens", n.value)  # "on 500M tokens": no prompt or context is that long
    cues = [(m.end(), role) for pat, role in ((_CONTEXT_NEAR, "context_tokens"), (_PROMPT_NEAR, "prompt_tokens"),
                                              (_OUTPUT_NEAR, "output_tokens")) for m in pat.finditer(near_l)
            if m.group() != "in" or m.end() >= len(near_l) - 4]
    if not cues and not re.search(r"\d", left[-50:]):  # "prompts with retrieved documents are around 3,000 tokens"
        far = left[-50:]
        cues = [(m.end() - 25, role) for pat, role in ((_PROMPT_NEAR, "prompt_tokens"), (_OUTPUT_NEAR, "output_tokens"))
                for m in pat.finditer(far) if len(m.group()) > 3]
    if "examples" in r.values and re.search(r"(?:examples?|samples?|rows?|records?|pairs?|docs?|conversations?|chats?|"
                                             r"مثالیں|مثالوں)\W{0,3}$", left):
        return ("tokens_per_example", n.value)  # "10k samples 512 tok"
    if each_word and "examples" in r.values and not re.search(r"\b(?:repl(?:y|ies)|responses?|outputs?)\b", left[-20:]) \
            and not re.search(r"(?:each|per|har|ہر)\s+(?:prompt|input|request|answer|output|response)", near_l):
        return ("tokens_per_example", n.value)  # "25k question-answer pairs, maybe 300 tokens each"
    if cues and (not each_word or re.search(r"(?:each|per|har|ہر)\s+(?:prompt|input|request|answer|output|response)", near_l)
                 or max(cues)[0] > len(near_l) - 16):
        return (max(cues)[1], ctx_tokens(n))  # the nearest cue word before the number
    if each and "examples" not in r.values and re.search(r"users?|sessions?|requests?|concurren|صارف|log\b", text_all(r)):
        return ("context_tokens", ctx_tokens(n))  # "20 users at 4096 tokens each": a context per user
    if each and ("examples" in r.values or n.value < 100000):
        return ("tokens_per_example", n.value)
    if _DATASET.search(near_r) or _DATASET.search(near_l) or n.value >= 2_000_000:
        return ("dataset_tokens", n.value)
    if _CONTEXT_NEAR.search(near_r):
        return ("context_tokens", ctx_tokens(n))
    return ("context_tokens", ctx_tokens(n))
