"""Answer parts for memory (will it fit), speed and training time."""

from __future__ import annotations

from typing import Any

from assistant.engine.answer import Finding, Sections, Table
from assistant.engine.compose.common import (Done, add_details, engine_name, gpu_label, kn, model_label, model_name,
                                             q_, results, set_verdict, user_number)
from assistant.engine.compose.images import image_speed_part, is_image_speed
from assistant.engine.plan import asks_model_for_speed
from assistant.engine.query import Query
from tools.schemas import DEFAULT_ENGINE

_MIN_COMPONENT_GB = 0.005


def stated(label: str, value: Any, unit: str, was_stated: bool) -> Finding:
    """An assumption from a request value actually used, saying whether it was a default."""
    q = value if isinstance(value, dict) else q_(value, unit)
    return Finding(code="assume.stated" if was_stated else "assume.default", params={"label": label, "q": q})


def on_off(v: Any) -> dict[str, str]:
    return {"code": "term.on" if v else "term.off"}


def gpu_memory_assumption(fit: dict[str, Any], q: Query | None = None) -> Finding:
    gb = float(fit["gpu_memory_gb"])
    return Finding(code="assume.gpu_memory",
                   params={"gpu": gpu_label(fit["gpu"], q), "gib": q_(gb * 1e9 / 2**30, "gib"),
                                                     "gb": q_(gb, "gb")})


def vram_assumptions(q: Query, r: dict[str, Any]) -> list[Finding]:
    """Coded assumptions from the values the calculator used (defaults said as defaults)."""
    inp = r.get("inputs", {})
    if r.get("model", {}).get("kind") == "image-generation":
        if inp.get("width"):
            out = [Finding(code="assume.diffusion_peak", params={
                "res": f"{inp['width']}x{inp.get('height', inp['width'])}", "batch": inp.get("batch", 1),
                "placement": {"code": f"term.placement_{inp.get('placement', 'all-on-gpu')}"}})]
        else:
            out = [Finding(code="assume.diffusion_weights"), Finding(code="assume.diffusion_activations")]
        return out + ([gpu_memory_assumption(r["fit"], q)] if r.get("fit") else [])
    out = [Finding(code="assume.per_gpu")]
    method = inp.get("method", "inference")
    out.append(stated("num.weight_precision", inp.get("weight_precision"), "", q.precision is not None))
    ctx_stated = bool(q.context_tokens or q.prompt_tokens or q.output_tokens)
    if method == "inference":
        out.append(stated("num.context", inp.get("seq_len"), "tokens", ctx_stated))
        out.append(stated("num.sequences", inp.get("batch"), "int", bool(q.batch or q.concurrent_users)))
        out.append(stated("num.kv_precision", inp.get("kv_precision"), "", q.kv_precision is not None))
        chunk = inp.get("prefill_chunk_tokens")
        if chunk and not q.engine and (inp.get("seq_len") or 0) > chunk:
            out.append(Finding(code="assume.prefill_chunks", params={"engine": engine_name(DEFAULT_ENGINE),
                                                                     "chunk": q_(chunk, "tokens")}))
    else:
        out.append(stated("num.micro_batch", inp.get("batch"), "int", q.batch is not None))
        out.append(stated("num.seq_len", inp.get("seq_len"), "tokens", ctx_stated or q.tokens_per_example is not None))
        out.append(stated("num.checkpointing", on_off(inp.get("grad_checkpointing")), "",
                          q.grad_checkpointing is not None))
        if inp.get("optimizer"):
            out.append(stated("num.optimizer", inp["optimizer"], "", q.optimizer is not None))
        if inp.get("training_precision"):
            out.append(stated("num.training_precision", {"code": f"term.{inp['training_precision']}"}, "",
                              q.training_precision is not None))
        if method in ("lora", "qlora") and inp.get("lora_rank"):
            out.append(stated("num.lora_rank", inp["lora_rank"], "int", q.lora_rank is not None))
        if method == "qlora":
            out.append(stated("num.double_quant", on_off(inp.get("double_quant")), "", False))
        if (inp.get("gpus") or 1) > 1:
            out.append(Finding(code="assume.sharding", params={"n": inp["gpus"], "how": inp.get("sharding", "fsdp")}))
    if r.get("fit"):
        out.append(gpu_memory_assumption(r["fit"], q))
    return out


# tools.vram.margin_levers' codes -> the lever messages (assistant/engine/messages)
_MARGIN_LEVER = {"fp8_kv_cache": "lever.kv_cache_fp8", "shorter_context": "lever.shorter_context",
                 "grad_checkpointing": "lever.grad_checkpointing"}


def _fit_finding(r: dict[str, Any], prefix: str = "fit", q: Query | None = None) -> tuple[Finding, str]:
    inp, f = r.get("inputs", {}), r.get("fit")
    prec: Any = inp.get("weight_precision") or inp.get("precision") or ""
    if r.get("model", {}).get("kind") == "image-generation" and (not prec or str(prec).startswith("default")):
        prec = {"code": "term.default_precision"}
    p = {"model": model_label(r), "method": inp.get("method", "inference"), "precision": prec,
         "total": q_(r["total_gb"], "gb")}
    if not f:
        return Finding(code=f"{prefix}.need", params=p), "info"
    n = inp.get("gpus") or 1
    gpu = gpu_label(f["gpu"], q)
    p |= {"gpu": f"{n} x {gpu}" if n > 1 and isinstance(gpu, str) else gpu, "gpu_gb": q_(f["gpu_memory_gb"], "gb")}
    if f["fits"] and f.get("tight") and prefix == "fit":  # under 5 % free: said, with what gives margin
        lever = next((x for x in f.get("margin_levers") or [] if x.get("code") in _MARGIN_LEVER), None)
        if lever:
            return Finding(code="fit.tight", params=p | {"head": q_(f["headroom_gb"], "gb"), "lever": {
                "code": _MARGIN_LEVER[lever["code"]], "params": lever.get("params") or {}},
                "lever_total": q_(lever["total_gb"], "gb")}), "yes"
    if f["fits"]:
        return Finding(code=f"{prefix}.yes", params=p | {"head": q_(f["headroom_gb"], "gb")}), "yes"
    return Finding(code=f"{prefix}.no", params=p | {"short": q_(-f["headroom_gb"], "gb")}), "no"


def _components(r: dict[str, Any]) -> list[tuple[str, float]]:
    comps = r.get("components_gb") or {}
    return [(k, v) for k, v in sorted(comps.items(), key=lambda kv: -kv[1]) if v >= _MIN_COMPONENT_GB]


def _label(r: dict[str, Any], others: list[dict[str, Any]]) -> str:
    """What tells this result apart from the others (model, GPU, precision, method)."""
    def parts(x: dict[str, Any]) -> list[str]:
        i = x.get("inputs", {})
        return [model_name(x), str((x.get("fit") or {}).get("gpu", "")), str(i.get("weight_precision") or ""),
                str(i.get("method") or ""), f"x{i.get('gpus')}" if (i.get("gpus") or 1) > 1 else ""]
    mine, all_ = parts(r), [parts(o) for o in others]
    keep = [p for j, p in enumerate(mine) if p and len({a[j] for a in all_}) > 1]
    return _with_setting(r, others, " · ".join(keep) or (mine[1] if len(keep) < len(mine) and mine[1] else mine[0]))


def _with_setting(r: dict[str, Any], rs: list[dict[str, Any]], text: str) -> Any:
    """The header, with the setting that differs between the results (batch, context, LoRA rank)."""
    for key, code in (("batch", "col.batch"), ("seq_len", "col.context"), ("lora_rank", "col.rank")):
        if len({x.get("inputs", {}).get(key) for x in rs}) > 1:
            return {"code": code, "params": {"gpu": text, "n": r.get("inputs", {}).get(key)}}
    return text


def column(r: dict[str, Any], rs: list[dict[str, Any]]) -> Any:
    """A comparison column's header: the parts that tell this result apart (model, GPU, precision,
    method), and the batch when batches differ."""
    def parts(x: dict[str, Any]) -> list[str]:
        i = x.get("inputs", {})
        gpu = str((x.get("gpu") or {}).get("name", "")) + (f" x{i['gpus']}" if (i.get("gpus") or 1) > 1 else "")
        return [model_name(x), gpu, str(i.get("precision") or ""), str(i.get("method") or ""),
                engine_name(x.get("engine")) if x.get("engine") else ""]
    mine, all_ = parts(r), [parts(x) for x in rs]
    keep = [p for j, p in enumerate(mine) if p and len({a[j] for a in all_}) > 1]
    return _with_setting(r, rs, " · ".join(keep) or mine[1] or mine[0])


def fit_part(q: Query, done: Done, s: Sections) -> None:
    vr = [r for _, r in results(done, "vram_calculator")]
    if not vr:
        return
    r = vr[0]
    bf16 = [x for x in vr[1:] if x.get("inputs", {}).get("training_precision") == "bf16"
            and r.get("inputs", {}).get("training_precision") == "mixed"]
    others = [x for x in vr if x not in bf16]
    if len(others) > 1:
        _fit_compare(others, s)
    else:
        f, verdict = _fit_finding(r, q=q)
        s.headline.append(f)
        set_verdict(s, verdict)
        if not (q and q.setting_alternatives and "compare" in q.intents):
            # two engines or formats weighed: their speed table is the answer; a breakdown would sit above it
            s.key_numbers.append(kn("num.total_per_gpu", r["total_gb"], "gb"))
            s.key_numbers += [kn(f"comp.{k}", v, "gb") for k, v in _components(r)]
    comps = r.get("components_gb") or {}
    kv, w = comps.get("kv_cache", 0), comps.get("weights", 0)
    if kv and w and kv >= 0.3 * w:
        s.explanation.append(Finding(code="why.kv_big", params={"kv": q_(kv, "gb"), "w": q_(w, "gb")},
                                     passage_id="ga-17"))
    if bf16:
        s.explanation.append(Finding(code="fit.mixed_vs_bf16", params={"a": q_(r["total_gb"], "gb"),
                                                                       "b": q_(bf16[0]["total_gb"], "gb")},
                                     passage_id="ft-20"))
        if bf16[0].get("fit"):
            s.headline.append(_fit_finding(bf16[0], "fit.bf16", q)[0])
    if s.verdict == "no" and not results(done, "way_forward"):
        method = r.get("inputs", {}).get("method", "inference")
        s.explanation.append(Finding(code="why.quantize", passage_id="ga-08") if method == "inference"
                             else Finding(code="why.qlora", passage_id="ft-09"))
    s.assumptions += vram_assumptions(q, r)
    add_details(s, r.get("assumptions"))


def _fit_compare(vr: list[dict[str, Any]], s: Sections) -> None:
    cols = ["col.metric"] + [_label(r, vr) for r in vr]
    rows: list[list[Any]] = [[{"code": "num.total_per_gpu"}] + [q_(r["total_gb"], "gb") for r in vr]]
    if all(r.get("fit") for r in vr):
        rows.append([{"code": "num.fits"}] + [r["fit"]["fits"] for r in vr])
        rows.append([{"code": "num.headroom"}] + [q_(r["fit"]["headroom_gb"], "gb") for r in vr])
    names = list(dict.fromkeys(k for r in vr for k, _ in _components(r)))
    for k in names:
        rows.append([{"code": f"comp.{k}"}] + [q_((r.get("components_gb") or {}).get(k, 0.0), "gb") for r in vr])
    s.tables.append(Table(title=Finding(code="table.memory_compare"), columns=cols, rows=rows))
    for r in vr:
        f, verdict = _fit_finding(r)
        s.headline.append(f)
    verdicts = {_fit_finding(r)[1] for r in vr}
    set_verdict(s, "partly" if verdicts == {"yes", "no"} else verdicts.pop() if len(verdicts) == 1 else "info")


def speed_part(q: Query, done: Done, s: Sections) -> None:
    sp = results(done, "speed_estimator")
    images = [r for _, r in sp if is_image_speed(r)]
    if images:
        image_speed_part(q, images, s)
    sp = [(a, r) for a, r in sp if not is_image_speed(r)]
    if not sp:
        return
    rs = [r for _, r in sp]
    unreachable = [r for r in rs if (r.get("memory") or {}).get("fits") is False]
    if unreachable and len(unreachable) < len(rs):
        rs = [r for r in rs if r not in unreachable]  # a speed the setting cannot reach is no figure to show
    elif unreachable and not q.observed_tokens_per_s:  # nothing fits: no speed at all, the way forward instead
        s.notices += [Finding(code="speed.no_fit", params={"gpu": _speed_side(r, rs)}) for r in unreachable]
        set_verdict(s, "no")
        return
    r0 = rs[0]
    inp = r0.get("inputs", {})
    model = model_label(r0, q)

    def item(r: dict[str, Any]) -> Any:
        i = r.get("inputs", {})
        text = str(r["gpu"]["name"]) + (f" x{i['gpus']}" if (i.get("gpus") or 1) > 1 else "")
        if len({x.get("inputs", {}).get("precision") for x in rs}) > 1:
            text += f", {i.get('precision')}"
        if len({x.get("engine") for x in rs}) > 1:
            text += f", {engine_name(r.get('engine'))}"
        if len({x.get("inputs", {}).get("batch") for x in rs}) > 1:
            return {"code": "col.batch", "params": {"gpu": text, "n": i.get("batch")}}
        return text

    if len(rs) == 1:
        s.headline.append(Finding(code="speed.head", params={
            "model": model, "precision": inp.get("precision", ""), "gpu": item(r0), "batch": inp.get("batch", 1),
            "per": q_(r0["decode_tokens_per_s"], "tok_s"), "agg": q_(r0["aggregate_tokens_per_s"], "tok_s")}))
        s.key_numbers += [kn("num.per_user", r0["decode_tokens_per_s"], "tok_s"),
                          kn("num.total_throughput", r0["aggregate_tokens_per_s"], "tok_s"),
                          kn("num.ttft", r0["time_to_first_token_s"], "s"),
                          kn("num.latency", r0.get("request_latency_s"), "s"),
                          kn("num.bound", {"code": f"term.bound_{r0['bound']}"})]
        mem = r0.get("memory") or {}
        if mem.get("max_batch"):
            s.key_numbers.append(kn("num.max_batch", mem["max_batch"], "int"))
            if mem.get("aggregate_tokens_per_s_at_max_batch"):
                s.key_numbers.append(kn("num.total_at_max_batch", mem["aggregate_tokens_per_s_at_max_batch"], "tok_s"))
    else:
        _speed_compare(rs, model, s)
    for r in unreachable:
        s.notices.append(Finding(code="speed.no_fit", params={"gpu": _speed_side(r, unreachable)}))
        set_verdict(s, "no")
    if q.min_tokens_per_s:
        for r in rs:
            ok = r["decode_tokens_per_s"] >= q.min_tokens_per_s
            s.headline.append(Finding(code="speed.target_met" if ok else "speed.target_missed", params={
                "gpu": item(r), "per": q_(r["decode_tokens_per_s"],
                                          "tok_s"), "target": q_(user_number(q.min_tokens_per_s), "tok_s")}))
        set_verdict(s, "yes" if all(r["decode_tokens_per_s"] >= q.min_tokens_per_s for r in rs) else "no")
    if q.observed_ttft_s:
        _observed_time(q.observed_ttft_s, r0["time_to_first_token_s"], inp.get("prompt_tokens"), s)
    if q.observed_tokens_per_s:
        fits = [r for _, r in results(done, "vram_calculator") if r.get("fit")]
        offloaded = (r0.get("memory") or {}).get("fits") is False or bool(fits and fits[0]["fit"].get("fits") is False)
        _observed_speed(q.observed_tokens_per_s, r0, s, offloaded)
    if r0["bound"] == "memory" and not q.topics:
        s.explanation.append(Finding(code="why.bandwidth", passage_id="ga-07"))
    s.assumptions.append(Finding(code="assume.speed_estimate", params={"engine": engine_name(r0.get("engine"))}))
    s.assumptions.append(stated("num.prompt_tokens", inp.get("prompt_tokens"), "tokens", q.prompt_tokens is not None
                                or q.context_tokens is not None))
    s.assumptions.append(stated("num.output_tokens", inp.get("output_tokens"), "tokens", q.output_tokens is not None))
    if not (q.model or q.params_b):
        s.assumptions.append(Finding(code="assume.example_model", params={"model": model}))
    if asks_model_for_speed(q):
        s.headline.append(Finding(code="ask.model_for_speed", params={"model": model}))
    add_details(s, r0.get("assumptions"))


def _speed_side(r: dict[str, Any], rs: list[dict[str, Any]]) -> str:
    """A speed result's GPU (x count) and, when the sides differ in it, its batch: how a notice names it."""
    i = r.get("inputs", {})
    text = str(r["gpu"]["name"]) + (f" x{i['gpus']}" if (i.get("gpus") or 1) > 1 else "")
    return text + (f", batch {i.get('batch')}" if len({x.get("inputs", {}).get("batch") for x in rs}) > 1 else "")


def _speed_compare(rs: list[dict[str, Any]], model: str, s: Sections) -> None:
    """Several speed results: one table with the same rows for each side, and the faster side at batch 1
    (the verdict heads the answer; the table has its own title, so no "side by side:" line dangles above it)."""
    cols = ["col.metric"] + [column(r, rs) for r in rs]
    rows = [[{"code": "num.per_user"}] + [q_(r["decode_tokens_per_s"], "tok_s") for r in rs],
            [{"code": "num.total_throughput"}] + [q_(r["aggregate_tokens_per_s"], "tok_s") for r in rs],
            [{"code": "num.ttft"}] + [q_(r["time_to_first_token_s"], "s") for r in rs],
            [{"code": "num.bound"}] + [{"code": f"term.bound_{r['bound']}"} for r in rs],
            [{"code": "num.fits"}] + [(r.get("memory") or {}).get("fits") for r in rs]]
    s.tables.append(Table(title=Finding(code="table.speed_compare"), columns=cols, rows=rows))
    one = [r for r in rs if (r.get("inputs") or {}).get("batch", 1) == 1]  # sides compared at batch 1
    if len(one) >= 2:
        best = max(one, key=lambda r: r["decode_tokens_per_s"])
        slow = min(one, key=lambda r: r["decode_tokens_per_s"])
        same = round(best["decode_tokens_per_s"]) == round(slow["decode_tokens_per_s"])
        best, slow = (one[0], one[1]) if same else (best, slow)  # a tie names two sides, not one twice
        s.headline.append(Finding(code="speed.same" if same else "speed.fastest", params={
            "best": column(best, rs), "per": q_(best["decode_tokens_per_s"], "tok_s"),
            "slow": column(slow, rs), "slow_per": q_(slow["decode_tokens_per_s"], "tok_s")}))


def train_part(q: Query, done: Done, s: Sections) -> None:
    tt = results(done, "training_time")
    if not tt:
        return
    rs = [r for _, r in tt]
    r0, a0 = rs[0], tt[0][0]

    def item(r: dict[str, Any]) -> str:
        n = r.get("inputs", {}).get("gpus") or 1
        return (f"{n} x " if n > 1 else "") + str(r["gpu"]["name"])

    nominal = q.dataset_tokens is None and q.examples is None  # plan_args: a nominal run of 100M tokens
    for r in rs:
        s.headline.append(Finding(code="train.head_nominal" if nominal else "train.head", params={
            "model": model_label(r, q), "method": r.get("inputs", {}).get("method", ""), "gpu": item(r),
            "hours": q_(r["hours"], "h"), "gpu_hours": q_(r["gpu_hours"], ""), "tps": q_(r["tokens_per_s"], "tok_s")}))
    if len(rs) == 1:
        s.key_numbers += [kn("num.train_throughput", r0["tokens_per_s"], "tok_s"), kn("num.hours", r0["hours"], "h"),
                          kn("num.gpu_hours", r0["gpu_hours"], "h"),
                          kn("num.total_tokens", r0["total_tokens"], "tokens")]
    else:
        cols = ["col.metric"] + [column(r, rs) for r in rs]
        rows = [[{"code": "num.train_throughput"}] + [q_(r["tokens_per_s"], "tok_s") for r in rs],
                [{"code": "num.hours"}] + [q_(r["hours"], "h") for r in rs],
                [{"code": "num.gpu_hours"}] + [q_(r["gpu_hours"], "h") for r in rs]]
        s.tables.append(Table(title=Finding(code="table.train_compare"), columns=cols, rows=rows))
    if q.deadline_hours:
        for r in rs:
            ok = r["hours"] <= q.deadline_hours
            s.headline.append(Finding(code="train.within_deadline" if ok else "train.past_deadline", params={
                "gpu": item(r), "hours": q_(r["hours"], "h"), "deadline": q_(user_number(q.deadline_hours), "h")}))
        set_verdict(s, "yes" if all(r["hours"] <= q.deadline_hours for r in rs) else "no")
    if q.observed_tokens_per_s:
        _observed_training(q.observed_tokens_per_s, r0["tokens_per_s"], s)
    s.assumptions += train_assumptions(q, a0, r0)
    add_details(s, r0.get("assumptions"))


def train_assumptions(q: Query, args: dict[str, Any], r: dict[str, Any]) -> list[Finding]:
    inp = r.get("inputs", {})
    out = [Finding(code="assume.train_estimate")]
    if inp.get("mfu") is None and r.get("mfu"):
        out.append(Finding(code="assume.mfu", params={"pct": q_(r["mfu"] * 100, "pct")}))
    out.append(stated("num.dataset_tokens", inp.get("dataset_tokens") or r.get("total_tokens"), "tokens",
                      q.dataset_tokens is not None or q.examples is not None))
    if q.examples and not q.tokens_per_example and args.get("tokens_per_example"):
        out.append(Finding(code="assume.tokens_per_example_default",
                           params={"n": q_(args["tokens_per_example"], "int")}))
    out.append(stated("num.epochs", inp.get("epochs", 1), "int", q.epochs is not None))
    out.append(stated("num.micro_batch", inp.get("batch"), "int", q.batch is not None))
    out.append(stated("num.seq_len", inp.get("seq_len"), "tokens", q.context_tokens is not None))
    return out


def _band(performance: float) -> str:
    """What the user sees against the estimate for the same setup, as a share of the estimate's performance:
    under six tenths is well below, over a quarter more is above; the estimate's own error is about a tenth
    (README, 'Performance and accuracy'), so both are well outside it."""
    return "below" if performance < 0.6 else "above" if performance > 1.25 else "near"


def _observed_time(observed_s: float, expected_s: float, prompt: Any, s: Sections) -> None:
    """A time to the first token the user sees, beside the estimate for the same prompt (a time: the estimate
    over what is seen is its performance)."""
    how = {"below": "slow", "above": "fast", "near": "near"}[_band(expected_s / observed_s)]
    s.headline.insert(0, Finding(code=f"diagnose.ttft_{how}", params={
        "observed": q_(user_number(observed_s), "s"), "expected": q_(expected_s, "s"), "prompt": q_(prompt, "tokens")}))


def _observed_training(observed: float, expected: float, s: Sections) -> None:
    """A training run's tokens/s the user sees, beside the training estimate for the same run."""
    s.headline.insert(0, Finding(code=f"diagnose.train_{_band(observed / expected)}", params={
        "observed": q_(user_number(observed), "tok_s"), "expected": q_(expected, "tok_s")}))


def _observed_speed(observed: float, r: dict[str, Any], s: Sections, offloaded: bool = False) -> None:
    """A speed the user sees, beside the estimate for the same setup: well below (a cause to find), about
    right, or above it (_band)."""
    expected = r["decode_tokens_per_s"]
    how = _band(observed / expected)
    if offloaded and how == "below":
        how = "offload"  # the estimate is for every layer on the GPU, which this setting does not allow
    s.headline.insert(0, Finding(code=f"diagnose.{how}", params={
        "observed": q_(user_number(observed), "tok_s"), "expected": q_(expected, "tok_s")}))
