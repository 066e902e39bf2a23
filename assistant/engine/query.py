"""The typed Query: the single representation of what the user asked, for every intent.

Every later step (plan, tools, compose) reads the Query, never the raw text again. A follow-up is
understood into its own Query and merged into the thread's: only the fields it mentions change.
"""

from __future__ import annotations

__all__ = ["INTENTS", "NUMBER_FACTS", "SOLVE_FOR", "Query", "merge"]

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, create_model

from knowledge.catalog import resolve_engine
from knowledge.lexicon import pattern_map, patterns
from tools.throughput import SpeedRequest

INTENTS = ("fit", "speed", "train_time", "prices", "cost", "recommend", "compare", "guide", "help", "out_of_scope")

Intent = Literal["fit", "speed", "train_time", "prices", "cost", "recommend", "compare", "guide", "help", "out_of_scope"]
SolveFor = Literal["max_context", "max_batch", "max_params", "min_gpu_count", "min_gpu_memory", "cheapest_gpu",
                   "fastest_gpu", "largest_gpu", "max_requests"]
SOLVE_FOR = get_args(SolveFor)

# Facts a user states. Everything else in Query is bookkeeping (language, coverage, carried-over fields).
FACT_FIELDS = (
    "solve_for", "model", "other_models", "model_unknown", "params_b", "method", "precision", "quant_format", "kv_precision",
    "optimizer", "training_precision", "gpus", "gpu_unknown", "gpu_count", "gpu_counts", "gpu_prices", "gpu_memory_gb", "host_ram_gb",
    "context_tokens", "prompt_tokens", "output_tokens", "batch", "concurrent_users", "examples", "tokens_per_example",
    "generated_tokens", "dataset_tokens", "epochs", "budget_usd_per_hour", "price_usd_per_gpu_hour", "spot_price_usd_per_gpu_hour",
    "api_usd_per_million_tokens", "checkpoint_every_hours", "budget_usd_total", "deadline_hours", "min_tokens_per_s", "observed_ttft_s",
    "tokens_per_day", "daily_users", "requests_per_day", "requests_per_hour", "requests_per_minute", "providers", "regions", "spot", "both_pricing", "engine", "lora_rank", "lora_targets",
    "grad_checkpointing", "storage_gb", "egress_gb", "duration_hours", "images", "images_per_day", "resolution", "steps", "billing",
)


def weighed_settings(**second: str | None) -> dict[str, str]:
    """Query.setting_alternatives from each setting's second value weighed (names.setting_values). A
    second format ("bnb nf4 or AWQ") carries its own bytes, so it replaces a second precision read
    from the same words."""
    out = {k: v for k, v in second.items() if v}
    if "quant_format" in out:
        out.pop("precision", None)
    return out


# The numbers a user states, one row per fact: type and meaning; units are in the names. Query declares
# them from here, and the evaluation and the coverage check read the same table.
NUMBER_FACTS: dict[str, tuple[type, str]] = {
    "params_b": (float, "model size in billions of parameters when only a size is given"),
    "gpu_count": (int, "GPUs per instance/job"),
    "gpu_memory_gb": (float, "a memory size given instead of a GPU model ('a 24 GB card'), GB"),
    "host_ram_gb": (float, "the computer's system RAM (not GPU memory), GB"),
    "context_tokens": (int, "tokens per sequence (prompt + output, or a training sequence)"),
    "prompt_tokens": (int, "input tokens per request"),
    "output_tokens": (int, "generated tokens per request"),
    "batch": (int, "micro-batch (training) or concurrent sequences when called batch"),
    "concurrent_users": (int, "users or requests served at once"),
    "examples": (int, "training examples (dataset rows), or the prompts of a generation job (method inference)"),
    "tokens_per_example": (int, "tokens in one training example"),
    "dataset_tokens": (float, "tokens in the whole dataset"),
    "generated_tokens": (float, "tokens a generation job writes in all, when no length per request is given"),
    "epochs": (float, "passes over the dataset"),
    "budget_usd_per_hour": (float, "most the user will pay per hour, USD"),
    "price_usd_per_gpu_hour": (float, "the hourly price per GPU the user says they pay (a price, not a cap), USD"),
    "budget_usd_total": (float, "most the user will pay in all (a job or a month), USD"),
    "spot_price_usd_per_gpu_hour": (float, "the spot (interruptible) price per GPU the user says they get, USD"),
    "checkpoint_every_hours": (float, "hours between the checkpoints a training run writes (spot interruptions)"),
    "api_usd_per_million_tokens": (float, "a hosted API's price the user quotes, USD per million tokens"),
    "deadline_hours": (float, "time the job must finish in, hours"),
    "min_tokens_per_s": (float, "per-user decode speed target, tokens/s"),
    "observed_ttft_s": (float, "a time to the first token the user sees, seconds"),
    "tokens_per_day": (float, "tokens an endpoint must write a day (a serving volume)"),
    "requests_per_day": (float, "requests (chats, queries) the service gets a day"),
    "daily_users": (int, "people who use the service in a day (sized as REQUESTS_PER_DAILY_USER requests each)"),
    "requests_per_hour": (float, "requests the service gets an hour"),
    "requests_per_minute": (float, "requests the service gets a minute"),
    "lora_rank": (int, "LoRA adapter rank"),
    "storage_gb": (float, "data kept on disk, GB"),
    "egress_gb": (float, "data moved out of the cloud, GB"),
    "duration_hours": (float, "how long a run or endpoint runs, hours"),
    "images": (int, "images to generate"),
    "images_per_day": (int, "images to generate every day (a month's job is 730 / 24 days of them)"),
    "resolution": (int, "pixels of one side of an image"),
    "steps": (int, "diffusion sampling steps"),
}


class _QueryFields(BaseModel):
    """What was asked, apart from the numbers (NUMBER_FACTS). None = not stated."""

    intents: list[Intent] = Field(default_factory=list, description="capabilities the question needs, first = main")
    solve_for: SolveFor | None = Field(None, description="the unknown the user asks to be solved for")
    model: str | None = Field(None, description="catalog model or image-pipeline id")
    model_text: str | None = Field(None, description="the model name as the user wrote it")
    other_models: list[str] = Field(default_factory=list, description="further catalog models named (comparisons)")
    model_unknown: str | None = Field(None, description="a model-like name not in the catalog, as written")
    model_elsewhere: str | None = Field(None, description="a model the catalogs leave out on purpose, as written "
                                        "(knowledge/other_models.csv: a closed API model, a speech model)")
    model_elsewhere_kind: Literal["closed", "speech"] | None = None
    office_hours: float | None = Field(None, description="hours a weekday the GPU runs (office hours), if said")
    production: bool = Field(False, description="production, compliance or regulated data (lexicon hint "
                             "`production`): datacenter GPUs from cloud providers, not marketplaces of hosts")
    users_at_once: bool = Field(False, description="the users were said to be at once (lexicon at_once): "
                                "concurrent generations; else users online, whose load follows Little's law")
    model_assumed: bool = Field(False, description="no model was named for an LLM workload: the example model is "
                                "sized and the answer says so (assistant/engine/scenario.py)")
    method: Literal["inference", "full", "lora", "qlora", "finetune"] | None = Field(
        None, description="finetune = a fine-tune of unstated kind")
    precision: str | None = Field(None, description="weight precision (bf16, fp8, int8, int4, nf4, q4_k_m ...)")
    quant_format: str | None = Field(None, description="the quantisation format or kernel as named ('awq', 'gptq', "
                                      "'gptq-marlin', 'bnb-nf4', 'bnb-int8'): the speed tool's kernel; precision keeps "
                                      "the bytes per weight")
    kv_precision: str | None = None
    optimizer: str | None = None
    training_precision: Literal["mixed", "bf16"] | None = None
    gpus: list[str] = Field(default_factory=list, description="catalog GPU names, in the order written")
    gpu_unknown: list[str] = Field(default_factory=list, description="GPU-like names not in the catalog")
    gpu_prices: dict[str, float] = Field(default_factory=dict, description="each named card's own hourly price per "
                                         "GPU as the user pays it ('an H100 at $2.49/hr vs a 4090 at $0.44/hr')")
    gpu_counts: dict[str, int] = Field(default_factory=dict,
                                       description="each named card's own count when they differ ('1x H100 or 2x L40S')")
    providers: list[str] = Field(default_factory=list)
    regions: list[str] = Field(default_factory=list)
    spot: bool | None = Field(None, description="True spot/interruptible, False on-demand, None both/unstated")
    both_pricing: bool = Field(False, description="the user asked for on-demand and spot side by side")
    engine: str | None = None
    engine_implied: bool = Field(False, description="no engine named: a GGUF format (Q4_0, Q4_K_M) implies llama.cpp")
    lora_targets: str | None = None
    grad_checkpointing: bool | None = None
    billing: bool = Field(False, description="asks about billing granularity")
    topics: list[str] = Field(default_factory=list, description="concepts the words name (knowledge/concepts.json ids)")
    explain: bool = Field(False, description="the question asks for an explanation of its topics (what, why, how)")
    observed: bool = Field(False, description="the user reports what they see (a speed, an error) and asks if it is right")
    observed_tokens_per_s: float | None = Field(None, description="a decode speed the user observed, tokens/s")
    unpriced_alternative: Literal["hosted_api", "own_hardware"] | None = Field(
        None, description="renting weighed against an option whose prices are not in the data (an API, buying a GPU)")
    lang: Literal["en", "ur", "roman-ur"] = Field("en", description="language the question is written in")
    answer_lang: Literal["en", "ur"] = "en"
    followup: bool = Field(False, description="this turn was merged into an earlier Query")
    asked_before: list[Intent] = Field(default_factory=list,
                                       description="after an off-topic aside: the intents of the thread's last question")
    carried: list[str] = Field(default_factory=list, description="facts carried over from earlier turns")
    changed: dict[str, Any] = Field(default_factory=dict, description="facts this follow-up changed: field -> "
                                    "the earlier value (the answer says what changed, not only the new figures)")
    not_used: list[str] = Field(default_factory=list, description="numbers or names of the question not used")
    number_uses: dict[str, str] = Field(default_factory=dict, description="each number as written -> the fact it filled")
    out_of_range: list[str] = Field(default_factory=list, description="values named as out of range")
    invalid_numbers: dict[str, str] = Field(default_factory=dict,
                                            description="a fact's number no tool accepts, as written (negative, a "
                                                        "fraction of a count): dropped, the default used, said so")
    alternatives: dict[str, float] = Field(default_factory=dict,
                                           description="a fact's second value, to weigh beside the first ('4k vs 32k context')")
    setting_alternatives: dict[str, str] = Field(
        default_factory=dict, description="a named setting's second value, weighed beside the first when the question "
                                          "compares them ('fp16 vs fp8', 'vLLM or TensorRT-LLM'): precision, engine, "
                                          "quant_format")
    injection: bool = Field(False, description="the text tries to instruct the assistant")
    intent_cued: bool = Field(False, description="the words themselves ask for an intent (not only settings)")
    seen_gpus: list[str] = Field(default_factory=list, description="every GPU named in the thread so far")
    seen_providers: list[str] = Field(default_factory=list, description="every provider named in the thread so far")
    text: str = ""

    @property
    def intent(self) -> str:
        return self.intents[0] if self.intents else "out_of_scope"

    def facts(self) -> dict:
        """The stated facts only (no bookkeeping, no blanks)."""
        out = {}
        for k in FACT_FIELDS:
            v = getattr(self, k)
            if v is None or v is False and k in ("both_pricing", "billing") or v == [] or v == {}:
                continue
            out[k] = v
        return out

    @property
    def has_model(self) -> bool:
        return bool(self.model or self.params_b or self.model_unknown)

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus or self.gpu_memory_gb or self.gpu_unknown)


Query = create_model(
    "Query", __base__=_QueryFields, __module__=__name__,
    __doc__="What was asked. Units are in the field names; None = not stated (a tool default applies and is said).",
    **{k: (t | None, Field(None, description=d)) for k, (t, d) in NUMBER_FACTS.items()})


# A new model or workload starts a new question; these fields then do not carry over.
_RESET_ON_NEW_MODEL = ("method", "precision", "context_tokens", "prompt_tokens", "output_tokens", "batch",
                       "concurrent_users", "examples", "tokens_per_example", "generated_tokens", "dataset_tokens", "epochs", "lora_rank",
                       "lora_targets", "images", "resolution", "steps", "solve_for")


_PICKS_A_GPU = ("cheapest_gpu", "fastest_gpu", "min_gpu_memory")  # unknowns that are a GPU, not a number


def _weighed_against_before(prev: Query, new: Query, stated: dict) -> dict[str, str]:
    """A follow-up's second values: those it names ("ExLlamaV2 ... faster than llama.cpp?"), and the
    earlier turn's value of a setting it changes while weighing the two ("int8 on the same card, is
    that a lot quicker?"): both are run and shown side by side."""
    out = dict(new.setting_alternatives)
    hints, t = pattern_map("hints"), new.text.lower()
    if hints["comparative"].search(t) or hints["weighed_against_before"].search(t):  # "than", or "is that quicker?"
        # an earlier turn that named none ran the speed tool's defaults: those are what it is weighed against
        default = {"precision": SpeedRequest.model_fields["precision"].default, "engine": resolve_engine(None).id}
        for k in ("precision", "engine", "quant_format"):
            old = getattr(prev, k) or default.get(k)
            if k in stated and old and old != stated[k] and k not in out:
                out[k] = old
    return out


def merge(prev: Query, new: Query) -> Query:
    """Fold a follow-up into the thread's Query: only what the follow-up mentions changes; a new
    model resets what belongs to the old workload (method, lengths, data) unless restated."""
    data = prev.model_dump()
    stated = new.facts()
    carried = [k for k in prev.facts() if k not in stated]
    if new.params_b and not (new.model or new.model_unknown) and prev.model_unknown:
        data["params_b"] = new.params_b  # "it's a 22B dense model": the size of the unknown model asked about
    elif new.model or new.params_b or new.model_unknown:
        for k in ("model", "model_text", "model_unknown", "params_b"):
            data[k] = getattr(new, k)
        data["model_assumed"] = False  # the user named one now
        same = patterns("same_settings").search(new.text.lower())  # "same thing for Nimbus-Omni 2?"
        same = same or not (prev.model or prev.model_unknown or prev.params_b) or \
            not set(stated) - {"model", "model_unknown", "params_b", "method"}  # "and for Llama-4-Titan-3T?"
        for k in _RESET_ON_NEW_MODEL:
            if k not in stated and not same:
                data[k] = Query.model_fields[k].get_default(call_default_factory=True)
        carried = [k for k in carried if (same or k not in _RESET_ON_NEW_MODEL) and k not in ("model", "params_b", "model_unknown")]
    to_cloud = patterns("cloud_switch").search(new.text.lower())  # "nah forget local, ... in the cloud"
    if new.gpus or new.gpu_memory_gb or new.gpu_unknown or to_cloud:
        for k in ("gpus", "gpu_memory_gb", "gpu_unknown", "gpu_counts"):
            data[k] = getattr(new, k)
        if new.gpu_memory_gb and not (new.gpus or new.gpu_unknown) and prev.gpu_unknown and not prev.gpus:
            data["gpu_unknown"] = prev.gpu_unknown  # "the listing says 96GB": the memory of the card asked about
        carried = [k for k in carried if k not in ("gpus", "gpu_memory_gb", "gpu_unknown", "gpu_counts")]
    for k, v in stated.items():
        data[k] = v
    if new.spot is not None:
        data["both_pricing"] = new.both_pricing
    intents = list(new.intents) if _asks_something(new) else list(prev.intents)
    data["setting_alternatives"] = _weighed_against_before(prev, new, stated)  # finalize then adds "compare"
    before = prev.facts()
    data["changed"] = {k: before[k] for k, v in stated.items() if k in before and before[k] != v
                       and isinstance(before[k], (int, float, str, bool)) and k not in ("model_text", "text")}
    data.update(intents=intents, lang=new.lang, answer_lang=new.answer_lang, followup=True, text=new.text,
                carried=sorted(set(carried)), not_used=new.not_used, out_of_range=new.out_of_range,
                injection=new.injection)
    if "solve_for" not in stated and new.gpus and prev.solve_for in _PICKS_A_GPU:
        data["solve_for"] = None  # "and on an L4?" after "the cheapest GPU": the GPU is now given
    if new.gpu_count is None and prev.concurrent_users and re.match(r"\s*" + patterns("each_one").pattern, new.text.lower()):
        data["gpu_count"] = prev.concurrent_users  # "12 participants." ... "each one will QLoRA ... on a T4"
    if "solve_for" not in stated and new.gpu_count and prev.solve_for == "min_gpu_count":
        data["solve_for"] = None  # "would 1 be enough with QLoRA?": the count is now given
    return Query.model_validate(data)


def _asks_something(q: Query) -> bool:
    """A follow-up that names its own question ("and the cost?") rather than only changing a setting."""
    return q.intent_cued and bool(q.intents) and q.intents[0] not in ("out_of_scope", "help")
