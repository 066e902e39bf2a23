"""Typed errors raised by the tools. Messages name the value and what is accepted."""

from __future__ import annotations

__all__ = ["UnknownName", "AdvisorError", "InvalidInput", "InvalidCombination", "UnknownModel", "UnknownGpu", "ConfigError"]


class AdvisorError(Exception):
    """Base of every user-facing error; `info()` gives it as data for renderers (no message parsing)."""

    def info(self) -> dict:
        return {"type": type(self).__name__, "message": str(self)}


class InvalidInput(AdvisorError, ValueError):
    """A value outside what the tool accepts."""

    def __init__(self, field: str, value: object, accepted: str):
        self.field, self.value, self.accepted = field, value, accepted
        self.problems: list[tuple[str, object, str]] = [(field, value, accepted)]
        super().__init__(f"Invalid {field}: {value!r}. Accepted: {str(accepted).rstrip('.')}.")

    def info(self) -> dict:
        return {"type": "InvalidInput", "field": self.field, "value": self.value, "accepted": self.accepted,
                "problems": [{"field": f, "value": v, "accepted": a} for f, v, a in self.problems]}


class InvalidCombination(AdvisorError, ValueError):
    """Values that are each valid but cannot be used together; `missing` names an input that would
    resolve it (e.g. "dataset"), so that a renderer can ask for it in the user's language."""

    def __init__(self, message: str, missing: str | None = None):
        self.missing = missing
        super().__init__(message)

    def info(self) -> dict:
        return super().info() | ({"missing": self.missing} if self.missing else {})


class UnknownName(AdvisorError, LookupError):
    kind = "name"
    hint = ""

    def info(self) -> dict:
        kind = "Ambiguous" if self.ambiguous else ("UnknownGpu" if self.kind == "GPU" else "UnknownModel")
        return {"type": kind, "name": self.name, "suggestions": list(self.suggestions), "what": self.kind}

    def __init__(self, name: str, suggestions: list[str], ambiguous: bool = False):
        self.name, self.suggestions, self.ambiguous = name, list(suggestions), ambiguous
        if ambiguous:
            kind = self.kind if self.kind == "GPU" else self.kind.capitalize()
            msg = f"{kind} name {name!r} is ambiguous: it matches {', '.join(self.suggestions)}. Say which."
            super().__init__(msg)
            return
        else:
            msg = f"Unknown {self.kind} {name!r}."
            if self.suggestions:
                msg += " Closest known: " + ", ".join(self.suggestions) + "."
        if self.hint:
            msg += " " + self.hint
        super().__init__(msg)


class UnknownModel(UnknownName):
    kind = "model"
    hint = "Give the parameter count (--params-b) or a Hugging Face config.json (--config)."


class UnknownGpu(UnknownName):
    kind = "GPU"
    hint = "Run `gpu-advisor gpus` to list the GPUs the advisor knows."


class ConfigError(AdvisorError, ValueError):
    """A config.json that cannot be read as a known architecture."""
