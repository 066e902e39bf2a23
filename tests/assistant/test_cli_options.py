"""The request-model options of `gpu-advisor`: one builder over the request models, every documented
spelling kept (README tables are contracts), and the model's own defaults applied."""

import argparse
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from assistant.main import build_parser, main
from assistant.frontends.cli.args import Parser, add_request_options


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


# (argv, dest, value): the spellings documented before the builder, and the canonical --field-name.
SPELLINGS = [
    (("vram", "--params-b", "7", "--precision", "int4"), "weight_precision", "int4"),
    (("vram", "--params-b", "7", "--weight-precision", "int4"), "weight_precision", "int4"),
    (("vram", "--params-b", "7", "--prefill-chunk", "8,192"), "prefill_chunk_tokens", 8192),
    (("vram", "--params-b", "7", "--prefill-chunk-tokens", "512"), "prefill_chunk_tokens", 512),
    (("vram", "--params-b", "7", "--double-quant"), "double_quant", True),
    (("vram", "--params-b", "7", "--chunked-loss"), "chunked_loss", True),
    (("vram", "--params-b", "7", "--no-grad-checkpointing"), "grad_checkpointing", False),
    (("vram", "--params-b", "7", "--lora-dropout", "0.1"), "lora_dropout", 0.1),
    (("speed", "--params-b", "7", "--gpu", "H100", "--kernel", "marlin"), "kernel", "marlin"),
    (("speed", "--params-b", "7", "--gpu", "H100", "--prompt-tokens", "1,000"), "prompt_tokens", 1000),
    (("train-time", "--params-b", "7", "--gpu", "H100", "--mfu", "0.4"), "mfu", 0.4),
    (("train-time", "--params-b", "7", "--gpu", "H100", "--dataset-tokens", "1e8"), "dataset_tokens", 1e8),
    (("prices", "--max-price", "2.5"), "max_price_usd_per_gpu_hour", 2.5),
    (("prices", "--max-price-usd-per-gpu-hour", "2.5"), "max_price_usd_per_gpu_hour", 2.5),
    (("prices", "--spot"), "pricing", "spot"),
    (("prices", "--on-demand"), "pricing", "on-demand"),
    (("prices", "--min-gpus", "2"), "min_gpus", 2),
    (("recommend", "--params-b", "7", "--context", "8192"), "context_tokens", 8192),
    (("recommend", "--params-b", "7", "--context-tokens", "8192"), "context_tokens", 8192),
    (("recommend", "--params-b", "7", "--users", "4"), "concurrent_users", 4),
    (("recommend", "--params-b", "7", "--min-tokens-per-s", "20"), "min_tokens_per_s_per_user", 20.0),
    (("recommend", "--params-b", "7", "--precision", "fp8", "--precision", "int4"), "precisions", ["fp8", "int4"]),
    (("recommend", "--params-b", "7", "--budget", "100"), "budget_usd", 100.0),
    (("recommend", "--params-b", "7", "--spot"), "spot_allowed", True),
    (("recommend", "--params-b", "7", "--nvlink"), "needs_nvlink", True),
    (("recommend", "--params-b", "7", "--top", "3"), "top_n", 3),
    (("recommend", "--params-b", "7", "--provider", "aws", "--provider", "gcp"), "providers", ["aws", "gcp"]),
]


@pytest.mark.parametrize("argv, dest, value", SPELLINGS, ids=[" ".join(a[:1] + a[-2:]) for a, _, _ in SPELLINGS])
def test_every_documented_spelling_reaches_the_field(argv, dest, value):
    assert getattr(parse(*argv), dest) == value


def test_request_fields_not_given_stay_none_for_the_model_to_fill():
    args = parse("vram", "--params-b", "7")
    assert args.method is None and args.batch is None and args.double_quant is None


def test_prices_gpus_and_min_gpus_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exc:
        parse("prices", "--gpus", "2", "--min-gpus", "4")
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_vram_inference_splits_over_the_gpus_given(capsys):
    # no --tensor-parallel: inference on 2 GPUs is tensor parallel 2 (the CLI's stated default)
    assert main(["vram", "--model", "llama-3.1-8b", "--gpus", "2", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"tensor_parallel": 2' in out and '"method": "inference"' in out


class _Toy(BaseModel):
    count: int = Field(7, ge=1, description="how many")
    rate: float | None = Field(None, gt=0, description="a rate")
    mode: Literal["a", "b"] = Field("a", description="a | b")
    on: bool = False
    note: str | None = Field(None, description="free text; default: nothing")
    hidden: int = 3


def _toy_parser(**kw) -> Parser:
    p = Parser(prog="toy")
    add_request_options(p, _Toy, **kw)
    return p


def test_builder_types_defaults_and_help():
    p = _toy_parser(flags={"count": ["-n"]}, skip=("hidden",), help_extra={"rate": "per hour"})
    a = p.parse_args(["-n", "1,000", "--rate", "0.5", "--mode", "b", "--no-on"])
    assert (a.count, a.rate, a.mode, a.on, a.note) == (1000, 0.5, "b", False, None)
    assert vars(p.parse_args([])) == {"count": None, "rate": None, "mode": None, "on": None, "note": None}
    helps = {a.dest: a.help for a in p._actions}
    assert helps["count"] == "how many (default: 7)"
    assert helps["rate"] == "a rate; per hour"  # default None: nothing stated
    assert helps["note"] == "free text; default: nothing"  # the description states it: not repeated
    assert helps["on"] == "(default: False)"
    assert "hidden" not in helps


@pytest.mark.parametrize("argv, needle", [
    (["--mode", "c"], "invalid choice"),
    (["--count", "two"], "not an integer"),
    (["--count", "1.5"], "not an integer"),
    (["--rate", "fast"], "not a number"),
])
def test_builder_refuses_with_argparse_messages(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        _toy_parser().parse_args(argv)
    assert exc.value.code == 2 and needle in capsys.readouterr().err
