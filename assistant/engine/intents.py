"""What a question asks for, from evidence: its cue words (lexicon) and the facts of its Query.

    finalize(query, keep_intents=None) -> Query   intents, solve_for, implied capabilities, the
                                                  serving default and range checks, in place

Several intents may hold at once ("how long and how much"); a follow-up whose words ask for nothing
new keeps the thread's intents.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["cue_set", "finalize"]


from assistant.engine.names import find_concepts
from assistant.engine.numbers import find_numbers
from assistant.engine.normalise import normalise
from assistant.engine.plan_args import DEFAULTS
from assistant.engine.query import NUMBER_FACTS, Query
from knowledge.catalog import is_image_pipeline, resolve_model
from knowledge.concepts import choice_ids, choices_between, concept_ids
from knowledge.lexicon import pattern_map, patterns


def _hint(name: str, t: str) -> bool:
    """A lexicon hint (comparative, smallest, why, instruction, worth, preference, either_or) in the text."""
    return bool(pattern_map("hints")[name].search(t))


def cue_set(key: str, t: str) -> set[str]:
    """The concepts of a lexicon cue map that the (normalised) text shows."""
    return {c for c, pat in pattern_map(key).items() if pat.search(t)}


def finalize(q: Query, keep_intents: list[str] | None = None) -> Query:
    """Intents, what is solved for and range checks, from this turn's words and the (merged) facts.

    `keep_intents`: a follow-up whose words ask for nothing new keeps the thread's intents."""
    t = normalise(q.text)
    _request_rates(t, q)
    _daily_users(t, q)
    if q.concurrent_users and patterns("at_once").search(t):
        q.users_at_once = True  # kept by a follow-up that changes only the count
    _assumed_model(t, q)
    q.production = q.production or _hint("production", t)
    _intents(t, q)
    budget_only = set(q.intents) <= {"cost", "prices", "recommend"} and bool(q.budget_usd_total or q.budget_usd_per_hour) \
        and "recommend" in (keep_intents or [])
    if keep_intents == ["guide"] and q.has_model and q.gpus:
        keep_intents = None  # "what is t/s?" ... "so what would I get with phi-4 on a T4": now there is a run to compute
    if keep_intents and (not q.intent_cued or budget_only):  # "and if the budget is $300?" keeps the recommendation
        asks_guide = "guide" in cue_set("intent_cues", t) and "guide" not in keep_intents
        q.intents = list(keep_intents) + (["guide"] if asks_guide else [])  # "and how often should I checkpoint?"
        if (len(q.providers) >= 2 or len(q.gpus) >= 2 or q.setting_alternatives) and "compare" not in q.intents:
            q.intents.append("compare")  # "what about lambda and nebius", "int8 then, is that quicker?": side by side
        _implied(q, q.intents, cue_set("intent_cues", t), t)
        _pricing_follow_up(q)
    _explain_or_observe(t, q)
    _default_method(q)
    _check_ranges(q)
    return q


def _assumed_model(t: str, q: Query) -> None:
    """"What do we rent for our support bot, and what will it cost?": choosing the model is part of the
    question, so "which model?" would answer nothing. A recommendation or a cost for an LLM workload
    (lexicon `llm_use`: a chatbot, RAG, an assistant, a fine-tune) that names no model is sized for
    the example model (plan_args.DEFAULTS), and the answer says so before anything else (compose: notice.model_assumed)."""
    if q.has_model or q.model_unknown or q.model_elsewhere or q.gpu_unknown or q.followup or q.images or \
            q.resolution or q.steps or q.injection:
        return
    cues = cue_set("intent_cues", t)
    if not cues & {"recommend", "cost"} or cues & {"help", "guide"} or _hint("why", t) or _hint("difference", t) or \
            "max_params" in cue_set("solve_cues", t):
        return
    if patterns("llm_use").search(t):
        q.model, q.model_assumed = DEFAULTS["example_model"], True


def _pricing_follow_up(q: Query) -> None:
    """"And on spot?", "what about in Europe?" after a fit: a follow-up that only adds where or how to rent
    asks for the offers under it; the fit alone would repeat the last answer."""
    new = set(q.facts()) - set(q.carried)
    if new & {"spot", "both_pricing", "providers", "regions"} and q.has_gpu and \
            not set(q.intents) & {"prices", "cost", "recommend"}:
        q.intents.append("prices")


# "1,000 users a day" with no request count: each is sized as a short chat of this many requests (an assumption
# the answer states; "5 messages each" in the question replaces it)
REQUESTS_PER_DAILY_USER = 10


def _daily_users(t: str, q: Query) -> None:
    """"روزانہ 1000 یوزرز", "1k daily users", "300 users per day", "a couple hundred employees": people a day
    (an organisation's head count uses it in a day, not all at once); their requests a day feed Little's law
    like any request rate."""
    if not q.concurrent_users or q.users_at_once or q.requests_per_day or q.requests_per_hour or q.requests_per_minute:
        return
    written = next((w for w, f in q.number_uses.items() if f == "concurrent_users"), None)
    at = t.find(normalise(written)) if written else -1
    if at < 0:
        return
    after, before = t[at + len(normalise(written)):], t[max(0, at - 40):at]
    head_count = patterns("head_count_after").match(after) and not patterns("at_once").search(after[:40])
    # "200 employees": who may use it in a day; "30 students at once" are at once
    if patterns("daily_users_after").match(after) or patterns("daily_users_before").search(before) or head_count:
        q.daily_users, q.concurrent_users = q.concurrent_users, None
        q.requests_per_day = float(q.daily_users * REQUESTS_PER_DAILY_USER)
        q.number_uses[written] = "daily_users"


def _request_rates(t: str, q: Query) -> None:
    """"2,000 chats a day", "10k requests per day", "50 queries/min": a request rate (the recommender turns it into
    concurrent generations by Little's law), never concurrent users or training examples."""
    units = pattern_map("request_rate")
    for written, field in list(q.number_uses.items()):
        at = t.find(normalise(written))
        nums = find_numbers(normalise(written))
        if at < 0 or not nums or field.startswith("requests_per_"):
            continue
        after, before = t[at + len(normalise(written)):], t[max(0, at - 40):at]
        unit = next((u for u, pat in units.items() if pat.match(after)), None) or \
            next((u for u, pat in pattern_map("request_rate_before").items()
                  if pat.search(before) and patterns("request_nouns").match(after)), None)
        if unit is None or nums[0].value <= 0:
            continue
        if field in NUMBER_FACTS:
            setattr(q, field, None)
        setattr(q, f"requests_per_{unit}", float(nums[0].value))
        q.number_uses[written] = f"requests_per_{unit}"


def _explain_or_observe(t: str, q: Query) -> None:
    """An explanation asked for ("what is a KV cache", "why is decoding memory-bound") or an observation
    reported ("I get 15 tok/s, normal?", "vLLM keeps OOMing"): the topics are explained from
    knowledge/concepts.json; an observed speed is weighed against the estimate instead of read as a target;
    prices and rankings come only when the words ask for a card to rent."""
    order = concept_ids()
    q.topics = sorted(cue_set("explain_topics", t), key=order.index)
    if q.model and is_image_pipeline(q.model) and q.method in ("lora", "qlora", "full", "finetune"):
        # the tools size image generation, not an image model's training: explained, nothing sized as inference
        q.topics = ["diffusion_lora_training"] + [x for x in q.topics if x not in ("lora_qlora", "diffusion_speed")]
        q.intents, q.explain, q.observed = ["guide"], True, False
        return
    q.observed = bool(patterns("diagnose_cues").search(t)) and bool(q.topics or q.min_tokens_per_s) or \
        bool(q.observed_ttft_s)  # "the first token takes 4 s": a time the user sees
    if q.observed and any(x not in choice_ids() for x in q.topics):
        q.topics = [x for x in q.topics if x not in choice_ids()]  # the problem's own causes, not "LoRA or QLoRA?"
    if q.observed and q.min_tokens_per_s:
        q.observed_tokens_per_s, q.min_tokens_per_s = q.min_tokens_per_s, None
        if q.method in (None, "inference") and "training_throughput" not in q.topics:
            q.topics.append("slow_decode")  # what usually costs decode speed, beside the estimate
            if q.engine == "llama.cpp" and "cpu_offload" not in q.topics:
                q.topics.append("cpu_offload")  # llama.cpp keeps what does not fit in system memory
    cues = cue_set("intent_cues", t)
    priced = bool(cues & {"prices", "cost"})  # "what is the H100's rate on spot?" asks for prices, not a concept
    providers_weighed = bool(set(q.topics) & choices_between("providers"))  # "RunPod vs Vast, which is reliable?"
    weighs = (_hint("comparative", t) or _hint("preference", t)) and bool(set(q.topics) & choice_ids()) and \
        len(q.gpus) < 2 and (len(q.providers) < 2 or providers_weighed) and "$" not in t and \
        (not priced or providers_weighed)  # "not only cheap: which is reliable?" asks the concept beside the prices
    asks = _hint("why", t) or _hint("difference", t) or weighs or \
        (("guide" in cues or _hint("concept_beside_number", t)) and not priced)
    q.explain = bool(q.topics) and bool(asks) and not q.observed
    if not (q.explain or q.observed):
        return
    rent = _hint("which_gpu", t) or priced or bool(q.budget_usd_total or q.budget_usd_per_hour) or \
        bool(q.both_pricing and q.duration_hours and q.has_gpu)  # "3-day run on 8 A100s: spot or on-demand?": costed
    if rent and q.both_pricing and q.duration_hours and q.has_gpu and "cost" not in q.intents:
        q.intents.append("cost")
    keep = [i for i in q.intents if i not in ("guide", "help", "out_of_scope")
            and (rent or i not in ("prices", "cost", "recommend"))]
    training = q.method in ("full", "lora", "qlora", "finetune")
    if q.observed and (q.observed_tokens_per_s or q.observed_ttft_s) and q.has_model and q.has_gpu and \
            "speed" not in keep and not training:
        keep.insert(0, "speed")
    if q.observed and q.observed_tokens_per_s and training:  # a training run's tokens/s: the training estimate's
        keep = ["train_time"] + [i for i in keep if i not in ("train_time", "speed", "cost", "prices")]
    q.intents = (keep + ["guide"]) if q.observed and keep else ["guide"] + keep


def _default_method(q: Query) -> None:
    """Serving is what the words imply when no training word was written and the question is about
    decode speed, concurrent users, prompts, the KV cache, or whether a model fits a GPU."""
    rows = bool(q.examples) and not (q.prompt_tokens or q.output_tokens)
    if q.method is None and q.has_model and not (rows or q.dataset_tokens or q.epochs or q.lora_rank):
        if "speed" in q.intents or q.concurrent_users or q.prompt_tokens or q.output_tokens or q.kv_precision or \
                (q.context_tokens and "fit" in q.intents) or q.solve_for in ("max_context", "max_batch") or \
                q.engine or q.min_tokens_per_s or ("fit" in q.intents and q.has_gpu) or "recommend" in q.intents:
            q.method = "inference"


class _Evidence:
    """What the words and the facts of a question show, computed once for the intent rules."""

    def __init__(self, t: str, q: Query):
        self.t, self.q = t, q
        self.cues = cue_set("intent_cues", t)
        self.solve = cue_set("solve_cues", t)
        self.has_model, self.has_gpu = q.has_model, q.has_gpu
        # rows with a prompt and an output are requests to run, not a dataset to train on
        rows = bool(q.examples) and not (q.prompt_tokens or q.output_tokens)
        self.training = q.method in ("full", "lora", "qlora", "finetune") or rows or bool(q.dataset_tokens or q.epochs)
        self.image = bool(q.model and is_image_pipeline(q.model)) or bool(q.images or q.resolution or q.steps)
        methods = {s.value for s in find_concepts(t, "method")} & {"lora", "qlora", "full"}
        formats = {re.sub(r"\W", "", s.text) for s in [*find_concepts(t, "precision"), *find_concepts(t, "engine")]
                   if s.value != "llama.cpp" or s.text == "gguf"}  # "fp16 vs fp8", "GGUF, GPTQ or AWQ?" (as written)
        engines = {s.value for s in find_concepts(t, "engine")}  # "vllm or tensorrt-llm"
        # a follow-up that switches a setting and asks "is that quicker?": weighed against the earlier value
        self.weighs_earlier = bool(q.followup and q.setting_alternatives)
        self.comparing = len(q.gpus) + len(q.gpu_unknown) >= 2 or len(q.providers) >= 2 or q.both_pricing or \
            bool(q.other_models) or \
            len(methods) >= 2 or \
            len(q.regions) >= 2 or (q.billing and _hint("comparative", t))
        # a concept question unless a model is named; or one setting given two values ("rank 64 vs rank 8")
        self.formats_compared = len(formats) >= 2 or len(engines) >= 2 or bool(q.alternatives) or self.weighs_earlier
        self.intents: list[str] = []

    def add(self, *xs: str) -> None:
        for x in xs:
            if x not in self.intents:
                self.intents.append(x)


def _solve_for(e: _Evidence) -> None:
    """The unknown the question asks to be solved for, if any."""
    q, t = e.q, e.t
    q.solve_for = q.solve_for if q.followup and not e.solve else None
    cued = [(m.start(), s) for s, pat in pattern_map("solve_cues").items() if s in e.solve for m in [pat.search(t)] if m]
    if cued:
        q.solve_for = min(cued)[1]  # "the smallest VRAM ... want to put it on a cheap card": the first unknown asked
    if q.solve_for == "min_gpu_memory" and q.gpus and not _hint("smallest", t):
        q.solve_for = None  # "how much VRAM ... on an H100" is a fit question
    if q.solve_for == "cheapest_gpu" and not e.has_model and not e.image and not q.followup and q.gpus:
        q.solve_for = None  # "cheapest H100" is a price query
    given = {"max_context": "context_tokens", "max_batch": "batch"}.get(q.solve_for or "")
    cue = pattern_map("solve_cues").get(q.solve_for or "")
    if given and getattr(q, given) is not None and cue and (m := cue.search(t)) and \
            re.match(r"\s*(?:[a-z_]+\s*)?[=:]?\s*~?\d", t[m.end():m.end() + 16]):
        q.solve_for = None  # "max seq len 4096", "max_model_len 32768": a setting with its value, not an unknown


def _solve_intents(e: _Evidence) -> None:
    q = e.q
    if q.solve_for == "min_gpu_count" and e.image and (q.images or q.deadline_hours):
        e.add("speed")
        e.add("recommend")  # how many GPUs for N images by a deadline: the image recommender's replicas
    elif q.solve_for in ("max_context", "max_batch", "min_gpu_count", "min_gpu_memory"):
        e.add("fit")
    if q.solve_for == "min_gpu_memory" and e.has_model and not q.gpus:
        e.add("recommend")  # the smallest card that fits is a real GPU with its offers
    if q.solve_for in ("cheapest_gpu", "fastest_gpu", "largest_gpu"):
        e.add("recommend")
    if q.solve_for == "max_params" and not e.has_model:
        e.add("fit")  # the largest model that fits: the memory calculator searched over sizes
    if q.solve_for == "fastest_gpu" or q.solve_for == "max_batch" and not e.training and e.has_gpu:
        e.add("speed")  # the most users at once: the memory's limit, and the tokens/s each then gets
    if q.solve_for == "min_gpu_count" and e.training and q.deadline_hours:
        e.add("train_time")
    if q.solve_for == "min_gpu_count" and not e.training and q.examples and q.deadline_hours:
        e.add("speed")  # N requests by a deadline: the throughput decides


def _measure_intents(e: _Evidence) -> None:
    """Recommend, speed, time, cost and prices from their cue words and the facts they need."""
    q, cues = e.q, e.cues
    if "recommend" in cues and not e.has_model and not set(q.facts()) - {"method"} and patterns("domain").search(e.t) and \
            ("guide" not in cues or _hint("which_gpu", e.t)):
        e.add("recommend")  # "which GPU should I rent for my project?": asked back for the model
    if "recommend" in cues and not _settings_on_one_card(q, e.t) and \
            (e.has_model or e.image or e.training or e.comparing or q.gpus or q.egress_gb or q.storage_gb):
        # "which providers offer H100s, and the rate?", "which provider should I pick for H100s?"
        e.add("recommend")
    if "speed" in cues and (e.has_model or e.has_gpu or e.image):
        # "checkpointing on vs off for the full FT, how much slower?": a training run's speed is its time
        e.add("train_time" if e.training and q.method != "inference" and not e.image else "speed")
    if "fit" in cues and not e.has_model and (q.gpu_unknown or q.concurrent_users or e.training and _hint("need", e.t)):
        e.add("fit")  # "I'm on a GTX 1080, can it run anything?", "how much GPU for 100 users?": asked back for the model
    if q.min_tokens_per_s and e.has_model and not e.has_gpu:
        e.add("recommend")
    if e.image and (cues & {"speed", "train_time", "cost"} or q.images or q.solve_for in ("cheapest_gpu", "min_gpu_count")):
        e.add("speed")  # images: time per image drives time and cost
    if "train_time" in cues and (e.has_model or e.training or e.image) and \
            not (q.solve_for in ("max_context", "max_batch") and not e.training):  # "how long can the context get"
        batch_inference = e.image or q.method == "inference" or q.examples or q.prompt_tokens
        e.add("speed" if not e.training and batch_inference else "train_time")
    hourly_only = pattern_map("units")["per_hour"].search(e.t) and "prices" in cues and not (
        q.duration_hours or q.dataset_tokens or q.examples or q.images or q.budget_usd_total or q.egress_gb or q.storage_gb
        or e.training or q.billing or e.has_model or "gpu_count" in q.number_uses.values())  # a written count multiplies  # "how much is an H100 per hour?" asks a price, not a job's cost
    if ("cost" in cues and not hourly_only) or q.budget_usd_total or q.egress_gb or q.storage_gb or (q.billing and not e.has_model):
        if e.has_model or e.has_gpu or q.billing or q.egress_gb or q.storage_gb or e.training or e.image:
            pick = bool(q.budget_usd_total or q.budget_usd_per_hour) and e.has_model and not e.has_gpu and \
                ("cost" not in cues or e.training)
            if pick:
                e.add("recommend")  # a budget and no GPU: which GPU (a training run's cost comes with it)
            if not pick or "cost" in cues:
                e.add("cost")
    if "prices" in cues and e.has_model and not e.has_gpu and not q.providers:
        e.add("cost")  # "price that out for a month": the cost on the GPU that would serve it
    elif "prices" in cues and (e.has_gpu or q.providers or (not e.has_model and not e.training and patterns("domain").search(e.t))):
        hourly = pattern_map("units")["per_hour"].search(e.t)
        e.add("cost" if e.has_model and e.training and not hourly else
              "prices" if not e.has_model or not e.intents or hourly else "cost")  # a training job's price is its cost
    if q.duration_hours and e.has_gpu and cues & {"recommend", "compare", "prices"} and "cost" not in e.intents:
        e.add("cost")  # "which one for a 3-day job on 8 GPUs?": the job's cost decides
    if q.budget_usd_per_hour and e.has_model and not e.has_gpu:
        e.add("recommend")
    if e.has_model and ("fit" in cues or q.gpu_memory_gb or (e.has_gpu and not e.intents) or
                        (not e.intents and (q.method or q.context_tokens or q.batch or q.precision))):
        e.add("fit")


def _compare_and_guide(e: _Evidence) -> None:
    q, t, cues = e.q, e.t, e.cues
    if ("compare" in cues or len(q.providers) >= 2 or q.both_pricing or _hint("tradeoff", t) and len(q.gpus) >= 2) \
            and e.comparing or \
            e.formats_compared and ("compare" in cues or bool(q.alternatives) or e.weighs_earlier):
        e.add("compare")
        if not (set(e.intents) - {"compare"}):
            e.add("speed" if e.has_model else "prices" if q.gpus or q.providers else "guide")
    if not e.intents or e.intents == ["compare"]:
        if patterns("domain").search(t) or e.has_model or e.has_gpu:
            e.add("guide")
        elif "prices" in cues and pattern_map("units")["per_hour"].search(t):
            e.add("prices")  # "what's the going rate per hour?"; "cheap cricket tickets" is not about GPUs
    if q.solve_for and not _hint("concept_beside_number", t):
        cues.discard("guide")  # "how many L40S do I need?" asks for a number, not an explanation
    if "guide" in cues and e.intents and "guide" not in e.intents:
        e.add("guide")
    if "compare" in e.intents and _hint("either_or", t) and len(q.gpus) >= 2 and "recommend" not in e.intents:
        e.add("recommend")  # "A6000 or L40S?": which one to take
    numbers = set(q.facts()) - {"billing", "providers", "gpus", "regions", "method", "spot", "both_pricing"}
    why = _hint("why", t)
    asks_amount = _hint("quantity", t) and _hint("need", t) and cues & {"fit", "speed", "train_time", "cost"}
    # "how much VRAM do I need to fine-tune?" asks for a number (and the model); "how much does checkpointing save?" does not
    which_gpu = "recommend" in e.intents and _hint("which_gpu", t)  # asked back for the model
    if "guide" in cues and not q.model and not asks_amount and not which_gpu and (patterns("domain").search(t) or q.gpus) and \
            (not q.has_gpu and (not numbers or not (q.has_model or q.gpu_memory_gb or q.storage_gb or q.egress_gb or q.billing)
                                and not cues & {"fit", "speed", "train_time", "cost", "recommend"})
             or why and not numbers):  # nothing to compute with: the guide answers
        e.intents[:] = ["guide"] + [i for i in e.intents if i == "compare"]
    if "guide" in e.intents and "compare" not in e.intents and (
            e.intents == ["guide"] and _hint("comparative", t) or _hint("difference", t)):
        e.add("compare")  # "paged attention vs continuous batching": two concepts side by side, from the guide


def _intents(t: str, q: Query) -> None:
    """Every capability the question needs, main first; help and off-topic (or instructions to the
    assistant) stand alone."""
    e = _Evidence(t, q)
    _solve_for(e)
    if "help" in e.cues and not e.has_model and not e.has_gpu and \
            (len(t.split()) <= 12 or not set(q.facts()) - {"method", "providers", "duration_hours"}):
        q.intents, q.intent_cued = ["help"], True
        return
    explicit = e.cues & {"speed", "train_time", "cost", "prices", "recommend", "fit"}
    _solve_intents(e)
    _measure_intents(e)
    _compare_and_guide(e)
    _implied(q, e.intents, e.cues, t)
    intents = e.intents or ["out_of_scope"]
    if patterns("off_topic").search(t) and not (e.has_model or q.gpus or q.providers) or \
            patterns("off_topic_always").search(t) and not e.has_model and not (explicit and e.has_gpu):  # "bitcoin mining"
        intents = ["out_of_scope"]  # "a joke about GPUs": not a question the tools answer
    if q.injection and not ((e.has_model or e.has_gpu) and (explicit or q.solve_for)):
        intents = ["out_of_scope"]  # only instructions to the assistant; a real question beside them is answered
    q.intents = intents
    q.intent_cued = bool(explicit or q.solve_for or "guide" in e.cues and not q.followup or
                         "compare" in e.cues and e.comparing)


def _main_is(intents: list[str], *kinds: str) -> bool:
    """The question's main intent is one of `kinds` (none yet: not)."""
    return bool(intents) and intents[0] in kinds


def _settings_on_one_card(q: Query, t: str) -> bool:
    """Two precisions or engines weighed on the one card named ("on an H100, vLLM or TensorRT-LLM, which
    is faster?"): 'which' picks a setting, not another GPU to rent."""
    return bool(q.setting_alternatives) and len(q.gpus) == 1 and not (q.gpu_unknown or q.other_models) and \
        len(q.providers) < 2 and not _hint("which_gpu", t)


def _picks_among(q: Query, t: str) -> bool:
    """'Which one do I use?' over things to run or rent, unless the choice is a setting on the card named."""
    return _hint("preference", t) and bool(q.has_model or q.has_gpu or q.providers) and not _settings_on_one_card(q, t)


_NOT_ANSWERED_HERE = ("guide", "out_of_scope", "help")


class _Turn:
    """What the implied-capability rules read: the Query, the intents so far, the cue words, the text."""

    def __init__(self, q: Query, intents: list[str], cues: set[str], t: str):
        self.q, self.intents, self.cues, self.t = q, intents, cues, t
        # rows with a prompt or an output are requests to run, not training examples
        self.training = q.method in ("full", "lora", "qlora", "finetune") or bool(q.dataset_tokens or q.epochs) \
            or bool(q.examples and not (q.prompt_tokens or q.output_tokens))
        self.image = bool(q.model) and is_image_pipeline(q.model)

    def wants(self, *kinds: str) -> bool:
        return any(k in self.intents for k in kinds)

    def answered(self, *outside: str) -> bool:
        """The main intent is a question the tools answer (not one of `outside`, default guide/off-topic/help)."""
        return not _main_is(self.intents, *(outside or _NOT_ANSWERED_HERE))

    def serving(self) -> bool:
        return self.q.has_model and not self.training


def _sets_unpriced_alternative(x: _Turn) -> bool:
    """"Self-host or keep paying the API?" / "buy or rent?": the alternative the data holds no price for."""
    if _hint("self_host", x.t) and _hint("hosted_api", x.t) or x.q.model_elsewhere_kind == "closed" and x.q.has_model:
        x.q.unpriced_alternative = "hosted_api"  # "self-host Llama 70B or GPT-4o?": the closed model is an API
    elif _hint("own_hardware", x.t) and _hint("cloud_rent", x.t):
        x.q.unpriced_alternative = "own_hardware"
    return bool(x.q.unpriced_alternative) and x.answered("out_of_scope", "help")


# (when, what it adds (or a function of the turn giving it), why), in order: a later rule sees what an
# earlier one added.
_IMPLIED: tuple[tuple[Any, tuple[str, ...], str], ...] = (
    (lambda x: _hint("worth", x.t) and bool(x.q.has_model or x.q.gpus), ("recommend",), "'is it worth it' weighs options"),
    (lambda x: x.wants("recommend") and x.q.has_model, ("fit", "prices"), "a recommendation rests on the fit and offers"),
    (lambda x: x.wants("recommend") and x.q.has_model and not x.training
        and ((x.q.concurrent_users or 0) > 1 or x.q.method == "inference"), ("speed",), "a GPU to serve on: tokens/s"),
    (lambda x: x.wants("recommend") and x.q.has_model and x.training
        and bool(x.q.examples or x.q.dataset_tokens or x.q.budget_usd_total), ("train_time", "cost"), "a run's hours"),
    (lambda x: x.wants("compare") and x.q.has_model and len(x.q.gpus) >= 2 and x.training,
        ("train_time", "cost"), "two cards for a run: hours and bill on each"),
    (lambda x: x.wants("compare") and x.q.has_model and len(x.q.gpus) >= 2 and x.training
        and _hint("preference", x.t), ("recommend",), "and which to take"),
    (lambda x: x.wants("compare") and not (x.q.has_model and len(x.q.gpus) >= 2 and x.training)
        and _picks_among(x.q, x.t), ("recommend",), "'awq vs gptq, which one?' picks"),
    (lambda x: x.q.has_model and x.q.has_gpu and x.q.method in ("full", "lora", "qlora", "finetune") and bool(x.intents),
        ("fit",), "a run on a named card: does it fit"),
    (lambda x: x.wants("compare") and x.serving() and (len(x.q.gpus) + len(x.q.gpu_unknown) >= 2 or x.q.other_models),
        ("fit", "speed", "prices"), "the same rows for each side"),
    (lambda x: x.wants("cost") and x.serving() and bool(x.q.gpus), ("fit",), "a deployment's bill assumes it runs"),
    (_sets_unpriced_alternative, ("cost", "compare"), "the self-hosted bill beside an alternative never priced"),
    (lambda x: x.wants("compare") and len(x.q.gpus) >= 2 and not x.q.has_model and not x.training
        and (x.q.method == "inference" or _hint("serving_words", x.t)), ("speed",), "'4090 vs 3090 for inference'"),
    (lambda x: x.wants("cost") and bool(x.q.gpus), ("prices",), "a cost names the hourly price it used"),
    (lambda x: x.wants("cost") and x.serving() and not x.q.has_gpu and not x.wants("recommend"),
        lambda x: ("recommend", "fit", "prices") + (("speed",) if (x.q.concurrent_users or 0) > 1 else ()),
        "hosting cost needs the GPU that fits and serves the load"),
    (lambda x: bool(x.q.billing) and x.wants("cost"), ("guide",), "billing granularity is in the guide"),
    (lambda x: x.wants("cost") and x.training and (x.q.has_model or not (x.q.storage_gb or x.q.egress_gb)),
        ("train_time",), "the cost of a run rests on its hours"),
    (lambda x: x.training and bool(x.q.deadline_hours) and x.q.has_model and x.answered(), ("train_time",),
        "'done in 6 hours?': the time decides"),
    (lambda x: x.image and bool(x.q.images or "cost" in x.cues)
        and (x.wants("recommend") or x.q.solve_for == "cheapest_gpu"), ("cost",), "images: the job's total"),
    (lambda x: bool(x.q.output_tokens) and x.serving() and x.answered(), ("speed",), "output lengths: time to write"),
    (lambda x: bool(x.q.min_tokens_per_s) and x.q.has_model and x.answered(), ("speed",), "a per-user speed target"),
    (lambda x: bool(x.q.host_ram_gb) and x.answered("out_of_scope", "help"), ("guide",), "host RAM is not GPU memory"),
    (lambda x: bool(x.q.budget_usd_total) and x.wants("recommend") and x.serving(), ("cost",), "the bill vs the budget"),
    (lambda x: bool(x.q.tokens_per_day) and x.q.has_model and x.answered(), ("cost",), "tokens a day: GPU hours, a month"),
    (lambda x: _hint("per_token_price", x.t) and x.serving() and bool(x.q.gpus) and x.answered(), ("speed",),
        "a price per token is the hourly price over the tokens an hour writes"),
    (lambda x: (x.q.concurrent_users or 0) > 1 and x.serving() and bool(x.q.gpus) and x.answered(), ("speed",),
        "'40 users on one L4': the throughput at that load"),
    (lambda x: x.wants("speed") and x.q.has_model and bool(x.q.gpus), ("fit",), "a speed assumes it fits"),
    (lambda x: bool(x.q.egress_gb) and x.wants("cost"), ("guide",), "who charges for egress is in the guide"),
)


def _implied(q: Query, intents: list[str], cues: set[str], t: str) -> None:
    """Capabilities a question needs because of another (the rules of _IMPLIED, in order): a
    recommendation rests on the memory fit and the offers, a comparison shows the same rows for each
    side, a cost names the hourly price it used, a billing question cites the guide."""
    x = _Turn(q, intents, cues, t)
    for when, adds, _why in _IMPLIED:
        if when(x):
            for a in adds(x) if callable(adds) else adds:
                if a not in intents:
                    intents.append(a)


def _check_ranges(q: Query) -> None:
    _invalid_numbers(q)
    if q.model and q.context_tokens:
        try:
            arch = resolve_model(q.model)
        except Exception:
            return
        if arch.max_context and q.context_tokens > arch.max_context:
            q.out_of_range.append("context_tokens")


_ZERO_ALLOWED = ("storage_gb", "egress_gb", "budget_usd_total", "budget_usd_per_hour")  # "no egress", "a $0 budget" are real


def _invalid_numbers(q: Query) -> None:
    """A number no tool accepts, as the user wrote it ("context -4096", "batch 0.5"): dropped from the Query
    (the figures use the default, said so) and named, never truncated or passed on as it is. Zero is
    no amount for a count or a size."""
    for written, field in q.number_uses.items():
        if field not in Query.model_fields:
            continue  # "taken back (corrected)", "gpus": a number that sets no field of its own
        kind = NUMBER_FACTS.get(field, (None, ""))[0]
        nums = find_numbers(normalise(written))
        if not nums:
            continue
        v = -nums[0].value if written.lstrip().startswith("-") and nums[0].value > 0 else nums[0].value
        if v < 0 or (kind is int and v != int(v)) or (v == 0 and field not in _ZERO_ALLOWED):
            setattr(q, field, None)
            q.invalid_numbers[field] = written
