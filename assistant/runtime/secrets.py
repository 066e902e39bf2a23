"""Secrets never reach a user: provider error text is scrubbed of keys, tokens and passwords."""

from __future__ import annotations

__all__ = ["scrub_secrets"]

import os
import re

_REDACTED = "[redacted]"
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.I)
_SECRET_PATTERNS = [
    re.compile(r"\b(?:sk|pk|rk)-(?:[A-Za-z]+-)?[A-Za-z0-9_\-]{8,}"),  # OpenAI / Anthropic style keys
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{6,}"),  # Slack tokens
    re.compile(r"\bxapp-[A-Za-z0-9\-]{6,}"),
    re.compile(r"\b(?:ghp|gho|ghs|github_pat|hf|glpat)_[A-Za-z0-9_]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?token|secret|password|passwd|token)\s*[=:]\s*)[\"']?[^\s\"',;]{4,}"),
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password@ in URLs
]
_REDACTED = "[redacted]"


def scrub_secrets(text: str) -> str:
    """The text with API keys, tokens and passwords replaced by "[redacted]".

    Removes the values of environment variables whose names look secret (…KEY, …TOKEN, …SECRET,
    …PASSWORD; 8 characters or more) wherever they appear, then well-known key shapes (sk-…, xoxb-…,
    Bearer …, api_key=…, user:password@ in URLs).
    """
    if not text:
        return text
    out = str(text)
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_ENV.search(name) and value in out:
            out = out.replace(value, _REDACTED)
    for pat in _SECRET_PATTERNS:
        if pat.groups:
            out = pat.sub(lambda m: (m.group(1) if m.group(1) and m.group(1)[-1] in "=: " else m.group(1) + " ")
                          + _REDACTED, out)
        else:
            out = pat.sub(_REDACTED, out)
    return out
