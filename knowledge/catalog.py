"""Load the model and GPU catalogs (CSV files beside this module) and resolve names forgivingly.

`resolve_model("meta-llama/Meta-Llama-3.1-8B-Instruct")`, `resolve_model("Llama 3.1 8B")` and
`resolve_model("llama-3.1-8b")` all return the same ModelArch; an unknown name raises
UnknownModel with the closest known names.
"""

from __future__ import annotations

__all__ = [
    "DATA_DIR", "gpu_name_key", "gpu_names", "is_image_pipeline", "model_name_key", "model_names", "GpuMatch",
    "load_diffusion_arch", "load_diffusion_models", "load_image_frameworks", "load_engines", "load_kernels",
    "resolve_kernel", "load_gpus", "load_providers", "load_training_efficiency", "load_models", "model_from_config_file", "other_model",
    "resolve_diffusion", "resolve_engine", "resolve_gpu", "resolve_image_framework", "gpu_ids_for", "resolve_model",
]

import csv
import difflib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from tools.errors import ConfigError, UnknownGpu, UnknownModel
from tools.hf_config import arch_from_hf_config
from tools.errors import InvalidInput
from tools.schemas import DEFAULT_ENGINE, DiffusionComponent, GpuSpec, ModelArch
from tools.kernels import KernelProfile
from tools.throughput import EngineProfile

DATA_DIR = Path(__file__).resolve().parent

_BOOL = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False, "": False}


def _read_csv(name: str) -> list[dict[str, str]]:
    with open(DATA_DIR / name, newline="", encoding="utf-8") as fh:
        return [{k: (v or "").strip() for k, v in row.items() if k} for row in csv.DictReader(fh)]


def _num(v: str) -> float | None:
    v = v.strip().replace(",", "")
    if not v:
        return None
    m = re.match(r"^-?\d+(\.\d+)?", v)  # "350-400" -> 350; "300 (per direction)" -> 300
    return float(m.group(0)) if m else None


def _coerce_model_row(row: dict[str, str]) -> dict[str, Any]:
    fields = ModelArch.model_fields
    out: dict[str, Any] = {}
    for k, v in row.items():
        if k not in fields:
            continue
        ann = fields[k].annotation
        if ann is bool:
            out[k] = _BOOL.get(v.lower(), False)
        elif ann is int:
            n = _num(v)
            if n is not None:
                out[k] = int(n)
        elif ann is float:
            n = _num(v)
            if n is not None:
                out[k] = n
        elif v:
            out[k] = v
    return out


@lru_cache(maxsize=1)
def load_models() -> tuple[ModelArch, ...]:
    """Every LLM in knowledge/models.csv, validated."""
    return tuple(ModelArch(**_coerce_model_row(r)) for r in _read_csv("models.csv"))


@lru_cache(maxsize=1)
def load_diffusion_models() -> dict[str, tuple[DiffusionComponent, ...]]:
    """Image-generation pipelines from knowledge/diffusion_models.csv, keyed by model id."""
    out: dict[str, list[DiffusionComponent]] = {}
    for r in _read_csv("diffusion_models.csv"):
        pm = _num(r.get("params_m", ""))
        if pm is None:
            continue
        comp = DiffusionComponent(model_id=r["model_id"], model_name=r["model_name"],
                                  component=r["component"], component_class=r.get("component_class", ""),
                                  params_m=pm, default_dtype=r.get("default_dtype") or "bf16",
                                  source=r.get("source", ""))
        out.setdefault(comp.model_id, []).append(comp)
    return {k: tuple(v) for k, v in out.items()}


_MODEL_NOISE = re.compile(r"\b(instruct|chat|hf|it|base|pretrained|fp16|bf16|awq|gptq|int4|int8|gguf|fp8|fp4"
                          r"|intermediate step \d+k \d+t)\b")


def _model_key(name: str) -> str:
    s = str(name).strip().lower()
    s = s.rsplit("/", 1)[-1]
    s = re.sub(r"^meta[-_ ]", "", s)
    s = re.sub(r"[-_\s]+", " ", s)
    s = _MODEL_NOISE.sub(" ", s)
    return re.sub(r"[\s]+", "", s)


@lru_cache(maxsize=1)
def _model_index() -> dict[str, ModelArch]:
    idx: dict[str, ModelArch] = {}
    for m in load_models():
        for k in (m.id, m.name, m.hf_repo, *_aliases_of(m)):
            if k:
                idx.setdefault(_model_key(k), m)
    return idx


@lru_cache(maxsize=1)
def _alias_table() -> dict[str, tuple[str, ...]]:
    return {r["id"]: tuple(a.strip() for a in r.get("aliases", "").split(";") if a.strip())
            for r in _read_csv("models.csv")}


def _aliases_of(m: ModelArch) -> tuple[str, ...]:
    return _alias_table().get(m.id, ())


def resolve_model(name: str) -> ModelArch:
    """Find a catalog model by id, display name, Hugging Face repo or alias.

    Raises:
        UnknownModel: with up to five closest known names.
    """
    key = _model_key(name)
    idx = _model_index()
    if key in idx:
        return idx[key]
    # A unique prefix ("tinyllama", "phi-3-mini", "qwen3 30b") names one model; several do not.
    by_prefix = {m.id: m for k, m in idx.items() if key and k.startswith(key)}
    if len(by_prefix) == 1:
        return next(iter(by_prefix.values()))
    if 1 < len(by_prefix) <= 12:
        raise UnknownModel(str(name), sorted(by_prefix), ambiguous=True)
    raise UnknownModel(str(name), _closest_names(key, {k: m.id for k, m in idx.items()}, cutoff=0.6))


def _closest_names(key: str, names_by_key: dict[str, str], cutoff: float) -> list[str]:
    """Up to five distinct names whose keys are closest to `key` (difflib ratio >= `cutoff`), best first.
    Several keys (aliases) may name one record, so 12 close keys are read to find five names."""
    names: list[str] = []
    for k in difflib.get_close_matches(key, list(names_by_key), n=12, cutoff=cutoff):
        if names_by_key[k] not in names:
            names.append(names_by_key[k])
    return names[:5]


_DIFFUSION_NOISE = re.compile(r"(stable ?diffusion|stabilityai|black forest labs|blackforestlabs|base|pipeline)")


def _diffusion_key(s: str) -> str:
    s = str(s).strip().lower().rsplit("/", 1)[-1]
    s = _DIFFUSION_NOISE.sub(" ", s.replace("stable-diffusion", "sd").replace("stable diffusion", "sd"))
    s = re.sub(r"[^a-z0-9.]+", "", s).replace("sdxl1.0", "sdxl").replace("v1.5", "1.5")
    return re.sub(r"^flux\.?1", "flux", s)  # "Flux dev" is FLUX.1 [dev]


@lru_cache(maxsize=1)
def _diffusion_index() -> dict[str, str]:
    keys: dict[str, str] = {}
    for mid, comps in load_diffusion_models().items():
        keys.setdefault(_diffusion_key(mid), mid)
        keys.setdefault(_diffusion_key(comps[0].model_name), mid)
        for alias in _diffusion_aliases().get(mid, ()):
            keys.setdefault(_diffusion_key(alias), mid)
    return keys


def resolve_diffusion(name: str) -> tuple[DiffusionComponent, ...] | None:
    """The components of an image-generation pipeline named `name`, or None if it is not one.

    Raises:
        UnknownModel: the name is the prefix of several pipelines ("flux", "sd3").
    """
    q = _diffusion_key(name)
    if not q:
        return None
    pipes = load_diffusion_models()
    keys = _diffusion_index()
    if q in keys:
        return pipes[keys[q]]
    prefixed = {mid for k, mid in keys.items() if k.startswith(q)}
    if len(prefixed) > 1:
        raise UnknownModel(str(name), sorted(prefixed), ambiguous=True)
    return pipes[prefixed.pop()] if prefixed else None


@lru_cache(maxsize=1)
def _diffusion_aliases() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for r in _read_csv("diffusion_models.csv"):
        out.setdefault(r["model_id"], []).extend(
            [r.get("hf_repo", "")] + [a.strip() for a in r.get("aliases", "").split(";") if a.strip()])
    return {k: tuple(x for x in v if x) for k, v in out.items()}


def model_from_config_file(path: str | Path) -> ModelArch:
    """Read a Hugging Face config.json from disk into a ModelArch.

    Raises:
        ConfigError: unreadable file, invalid JSON or an unsupported architecture.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {str(path)!r}: {exc.__class__.__name__}") from None
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{str(path)!r} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    return arch_from_hf_config(cfg, name=p.name if p.name != "config.json" else str(p))


# ---- GPUs -------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def load_gpus() -> tuple[GpuSpec, ...]:
    """Every GPU in knowledge/gpus.csv, validated (blank = unknown)."""
    out = []
    for r in _read_csv("gpus.csv"):
        vals: dict[str, Any] = {}
        for k, f in GpuSpec.model_fields.items():
            v = r.get(k, "")
            if k == "aliases":
                vals[k] = tuple(a.strip() for a in v.split(";") if a.strip())
            elif k == "family_default":
                vals[k] = _BOOL.get(v.lower(), False)
            elif k == "fp8_support":
                vals[k] = _BOOL.get(v.lower()) if v else None
            elif f.annotation == (float | None):
                vals[k] = _num(v)
            elif f.annotation == (int | None):
                n = _num(v)
                vals[k] = None if n is None else int(n)
            else:
                vals[k] = v
        out.append(GpuSpec(**vals))
    return tuple(out)


def _gpu_key(name: str) -> str:
    s = str(name).strip().lower()
    s = re.sub(r"\b(nvidia|geforce|amd|instinct|tesla|intel|gpu|card)\b", " ", s)
    return re.sub(r"[^a-z0-9]+", "", s)


@dataclass(frozen=True)
class GpuMatch:
    """A resolved GPU; `variants` lists the other members when a short family name was given."""

    gpu: GpuSpec
    query: str
    variants: tuple[str, ...] = field(default_factory=tuple)

    @property
    def note(self) -> str:
        if not self.variants:
            return ""
        return (f"'{self.query}' is ambiguous; using {self.gpu.name}. "
                f"Variants: {', '.join(self.variants)}.")


@lru_cache(maxsize=1)
def _gpu_index() -> tuple[dict[str, GpuSpec], dict[str, list[GpuSpec]]]:
    exact: dict[str, GpuSpec] = {}
    families: dict[str, list[GpuSpec]] = {}
    for g in load_gpus():
        for k in (g.id, g.name, *g.aliases):
            exact.setdefault(_gpu_key(k), g)
        if g.family:
            families.setdefault(_gpu_key(g.family), []).append(g)
    return exact, families


def resolve_gpu(name: str) -> GpuMatch:
    """Find a GPU by id, name, alias (cloud catalog names too) or family.

    A family name ("H100", "A100", "V100") resolves to the family's default member, and the
    match lists the variants so the answer can say which was picked.

    Raises:
        UnknownGpu: with up to five closest known names.
    """
    key = _gpu_key(name)
    exact, families = _gpu_index()
    if key in families:
        members = families[key]
        default = next((g for g in members if g.family_default), members[0])
        return GpuMatch(default, str(name).strip(), tuple(g.name for g in members if g is not default))
    if key in exact:
        return GpuMatch(exact[key], str(name).strip())
    m = re.fullmatch(r"(.+?)[\s_-]*\(?(\d{2,3})\s?gb\)?", str(name).strip().lower())  # "H100 80GB", "RTX 4090 24GB"
    if m and _gpu_key(m.group(1)) in {**exact, **families}:
        base = _gpu_key(m.group(1))
        members = families.get(base) or [exact[base]]
        fits = [g for g in members if g.memory_gib and abs(g.memory_gib - float(m.group(2))) <= 0.06 * g.memory_gib]
        if fits:
            pick = next((g for g in fits if g.family_default), fits[0])
            return GpuMatch(pick, str(name).strip(), tuple(g.name for g in fits if g is not pick))
    raise UnknownGpu(str(name), _closest_names(key, {k: g.name for k, g in exact.items()}, cutoff=0.5))


def gpu_ids_for(name: str) -> tuple[list[str], str]:
    """Catalog ids a price filter should match: a whole family for a family name ("H100" = SXM,
    PCIe and NVL), else the one GPU. Returns (ids, a sentence saying what was matched).

    Raises:
        UnknownGpu: with the closest names.
    """
    key = _gpu_key(name)
    _, families = _gpu_index()
    if key in families:
        members = families[key]
        return [g.id for g in members], f"'{str(name).strip()}' covers {', '.join(g.name for g in members)}."
    m = resolve_gpu(name)
    return [m.gpu.id], ""


# ---- serving engines ----------------------------------------------------------------------------


@lru_cache(maxsize=1)
def load_kernels() -> tuple[KernelProfile, ...]:
    """Every quantised-matmul kernel family in knowledge/quant_kernels.csv."""
    out = []
    for r in _read_csv("quant_kernels.csv"):
        vals: dict[str, Any] = {k: v for k, v in r.items() if k in KernelProfile.model_fields and v != ""}
        for k in ("aliases", "formats"):
            vals[k] = tuple(a.strip() for a in r.get(k, "").split(";") if a.strip())
        out.append(KernelProfile(**vals))
    return tuple(out)


def _kernel_key(name: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "", str(name).lower())


@lru_cache(maxsize=1)
def load_engines() -> tuple[EngineProfile, ...]:
    """Every engine profile in knowledge/engines.csv, with its default kernel per weight format."""
    kernels = {k.id: k for k in load_kernels()}
    out = []
    for r in _read_csv("engines.csv"):
        vals: dict[str, Any] = {k: v for k, v in r.items() if k in EngineProfile.model_fields and v != ""}
        vals["aliases"] = tuple(a.strip() for a in r.get("aliases", "").split(";") if a.strip())
        for k in ("fp8_compute", "cuda_graphs", "host_overlap"):
            vals[k] = _BOOL.get(r.get(k, "").lower(), False)
        pairs = (p.split("=", 1) for p in r.get("default_kernels", "").split(";") if "=" in p)
        vals["kernels"] = {fmt.strip(): kernels[kid.strip()] for fmt, kid in pairs}
        out.append(EngineProfile(**vals))
    return tuple(out)


def resolve_kernel(precision: str | None, engine: EngineProfile) -> KernelProfile | None:
    """The kernel a precision names ("gptq-marlin", "bnb-nf4", "awq" on this engine ...), or None
    when the precision is a plain format and the engine's default for that format applies."""
    if not precision:
        return None
    key = _kernel_key(precision)
    for k in load_kernels():
        if key in {_kernel_key(x) for x in (k.id, *k.aliases)}:
            return k
    for name, k in engine.kernels.items():
        if key == _kernel_key(name):
            return k
    return None


def resolve_engine(name: str | None) -> EngineProfile:
    """Find an engine by id, name or alias ("ollama" is llama.cpp, "transformers" is pytorch-eager).

    Raises:
        InvalidInput: unknown engine, listing the known ones.
    """
    return _runtime_by_name(load_engines(), name, DEFAULT_ENGINE, r"[^a-z0-9.]+",
                            "(ollama = llama.cpp, transformers = pytorch-eager)")


def _runtime_by_name(items: Any, name: str | None, default_id: str, strip: str, note: str) -> Any:
    """The runtime named `name` by id, name or alias (no case, no `strip` characters); `default_id` for None.

    Raises:
        InvalidInput: no runtime has that name; lists the known ids and `note`.
    """
    if name is None:
        return next(x for x in items if x.id == default_id)
    key = re.sub(strip, "", str(name).lower())
    for x in items:
        if key in {re.sub(strip, "", n.lower()) for n in (x.id, x.name, *x.aliases)}:
            return x
    raise InvalidInput("engine", name, ", ".join(x.id for x in items) + " " + note)


@lru_cache(maxsize=1)
def load_training_efficiency() -> dict[str, tuple[float, str]]:
    """Full fine-tuning MFU per GPU architecture group, with its source (knowledge/training_efficiency.csv)."""
    return {r["architecture_group"]: (float(r["mfu_full"]), r["source"]) for r in _read_csv("training_efficiency.csv")}


@lru_cache(maxsize=1)
def load_providers() -> dict[str, dict[str, Any]]:
    """Provider facts (knowledge/providers.csv): billing increment, storage and egress rates, spot.
    Blank = not found in the sources read (unknown, never zero)."""
    out: dict[str, dict[str, Any]] = {}
    for r in _read_csv("providers.csv"):
        d: dict[str, Any] = dict(r)
        for k in ("billing_increment_s", "minimum_charge_s", "spot_notice_s"):
            n = _num(r.get(k, ""))
            d[k] = None if n is None else int(n)
        for k in ("storage_usd_per_gb_month", "egress_usd_per_gb"):
            d[k] = _num(r.get(k, ""))
        out[r["provider"]] = d
    return out


# ---- name spotting (public: the conversation engine finds names in free text through these) -------


# The engine spots names in free text through these: the normalised keys and the indexes above.
model_name_key = _model_key
model_names = _model_index
gpu_name_key = _gpu_key
gpu_names = _gpu_index


@lru_cache(maxsize=512)
def is_image_pipeline(name: str | None) -> bool:
    """True when `name` is a catalog image pipeline and no LLM (LLM names win; an ambiguous prefix is not one)."""
    if not name or not str(name).strip() or _model_key(name) in _model_index():
        return False
    try:
        return resolve_diffusion(name) is not None
    except UnknownModel:
        return False


@lru_cache(maxsize=1)
def load_diffusion_arch() -> dict[str, Any]:
    """Architecture facts (FLOPs, tokens, defaults) per image pipeline, knowledge/diffusion_arch.csv."""
    from tools.diffusion import DiffusionArch

    out: dict[str, Any] = {}
    for r in _read_csv("diffusion_arch.csv"):
        vals: dict[str, Any] = {k: v for k, v in r.items() if k in DiffusionArch.model_fields and v != ""}
        vals["guidance_distilled"] = _BOOL.get(r.get("guidance_distilled", "").lower(), False)
        vals["denoiser_tflop"] = tuple(float(r[f"denoiser_tflop_{s}"]) for s in (512, 768, 1024))
        vals["vae_decode_tflop"] = tuple(float(r[f"vae_decode_tflop_{s}"]) for s in (512, 768, 1024))
        out[r["model_id"]] = DiffusionArch(**vals)
    return out


@lru_cache(maxsize=1)
def load_image_frameworks() -> tuple[Any, ...]:
    """Image-generation runtimes (diffusers, torch-compile, tensorrt, comfyui), knowledge/diffusion_frameworks.csv."""
    from tools.image_speed import ImageFramework

    out = []
    for r in _read_csv("diffusion_frameworks.csv"):
        vals: dict[str, Any] = {k: v for k, v in r.items() if k in ImageFramework.model_fields and v != ""}
        vals["aliases"] = tuple(a.strip() for a in r.get("aliases", "").split(";") if a.strip())
        vals["fp8_compute"] = _BOOL.get(r.get("fp8_compute", "").lower(), False)
        out.append(ImageFramework(**vals))
    return tuple(out)


def resolve_image_framework(name: str | None) -> Any:
    """An image runtime by id, name or alias (default diffusers; "comfy" is comfyui, "trt" tensorrt).

    Raises:
        InvalidInput: unknown runtime, listing the known ones.
    """
    return _runtime_by_name(load_image_frameworks(), name, "diffusers", r"[^a-z0-9]+", "for image pipelines")


@lru_cache(maxsize=1)
def _other_models() -> list[tuple[re.Pattern, dict[str, str]]]:
    return [(re.compile(rf"(?<![\w-])(?:{r['pattern']})(?![\w-])", re.I), r) for r in _read_csv("other_models.csv")]


def other_model(text: str) -> dict[str, str] | None:
    """A model the catalogs do not size on purpose (other_models.csv): a closed model served only by its
    maker's API (GPT-4o, Claude, Gemini) or a speech model (Whisper). {name, kind, source, written} or None."""
    for pat, row in _other_models():
        if m := pat.search(text):
            return row | {"written": m.group()}
    return None
