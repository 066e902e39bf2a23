"""Every surface of a tool exposes the tool's one declaration: its request model.

The LangChain/registry schema is derived from the request model (same names, no defaults of its
own); the CLI subcommand offers every request field under the same name (argparse `dest`) and, where
it states a default, the request model's default; the app's calculator forms only ever ask for
request fields (or the names a tool resolves: model, GPU, memory size).
"""

import argparse

import pytest

from assistant.service import registry as reg
from assistant.main import build_parser
from tools.recommend import RecommendRequest
from tools.schemas import PriceQuery, VramRequest
from tools.throughput import SpeedRequest
from tools.training import TrainRequest

# (request model, registry tool, CLI subcommand, app form, request fields a surface may leave out: why)
TOOLS = [
    (VramRequest, "vram_calculator", "vram", "vram", {}),
    (SpeedRequest, "speed_estimator", "speed", "speed", {}),
    (TrainRequest, "training_time", "train-time", "train_time", {}),
    (PriceQuery, "price_query", "prices", "prices", {"pricing": "CLI: --spot / --on-demand switches"}),
    (RecommendRequest, "recommend_gpus", "recommend", "recommend", {}),
]
RESOLVED = {"model", "config", "params_b", "gpu", "gpu_memory_gb", "engine", "examples", "tokens_per_example",
            "provider", "region", "providers", "regions", "precision"}


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("request_cls, tool, command, form, exempt", TOOLS, ids=[t[2] for t in TOOLS])
def test_registry_schema_is_the_request_model(request_cls, tool, command, form, exempt):
    _fn, schema = reg._BY_NAME[tool]
    for name in request_cls.model_fields:
        assert name in schema.model_fields, f"{tool} lacks {name}"
        default = schema.model_fields[name].default
        assert default is None or default == request_cls.model_fields[name].get_default(call_default_factory=True), \
            f"{tool}.{name} states another default"


@pytest.mark.parametrize("request_cls, tool, command, form, exempt", TOOLS, ids=[t[2] for t in TOOLS])
def test_cli_offers_every_field_with_the_same_default(request_cls, tool, command, form, exempt):
    actions = {a.dest: a for a in _subparser(command)._actions}
    missing, wrong = [], []
    for name, f in request_cls.model_fields.items():
        if name in exempt:
            continue
        if name not in actions:
            missing.append(name)
            continue
        default = actions[name].default
        if default is not None and default != f.get_default(call_default_factory=True):
            wrong.append((name, default, f.get_default(call_default_factory=True)))
    assert not missing, f"`gpu-advisor {command}` lacks options for {missing}"
    assert not wrong, wrong


@pytest.mark.parametrize("request_cls, tool, command, form, exempt", TOOLS, ids=[t[2] for t in TOOLS])
def test_app_forms_ask_only_for_request_fields(request_cls, tool, command, form, exempt):
    pytest.importorskip("gradio")
    from assistant.frontends.web import calc as web_calc

    fields, _compute = web_calc.form(form)
    tool_name = {short: full for full, short in web_calc._TOOL_FIELDS.items()}  # the forms' one rename table
    keys = [f.key if f.key in request_cls.model_fields else tool_name.get(f.key, f.key) for f in fields]
    unknown = [k for k in keys if k not in request_cls.model_fields and k not in RESOLVED]
    assert not unknown, f"the {form} form asks for {unknown}, which {request_cls.__name__} does not declare"
