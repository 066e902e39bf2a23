"""Web sign-in sessions that every replica accepts and the users file can end.

Gradio keeps a random token per sign-in in one process's memory (`App.tokens`), so another replica
refuses it. Here the token is signed instead: `base64url(user).expiry.signature`, an HMAC-SHA256
with GPU_ADVISOR_SESSION_SECRET over the name, the expiry and a digest of the user's entry in the users
file. Any process holding the secret accepts it; it stops working when it expires, when the user leaves
the users file, or when their password changes (the digest no longer matches), on every replica as
soon as the file's new modification time is seen (each check stats it).
"""

from __future__ import annotations

__all__ = ["SignedSessions"]

import base64
import hashlib
import hmac
import logging
import secrets
import time
from typing import Any, Callable

from assistant.frontends.web.security import AuthConfigError, Users

_log = logging.getLogger("gpu_advisor.security")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SignedSessions(dict):
    """A drop-in for Gradio's `App.tokens` (token -> user name) whose tokens carry their own proof.

    Gradio stores its random token here (`__setitem__`) and looks tokens up with `get`; the web guard
    swaps the cookie Gradio sets for `issue(user)`, so `get` verifies instead of remembering.
    """

    def __init__(self, secret: str, ttl_s: float, users: Callable[[], Users] = Users.from_env,
                 clock: Callable[[], float] = time.time):
        super().__init__()
        if not secret:
            _log.warning("GPU_ADVISOR_SESSION_SECRET is not set: web sign-ins are valid on this process only "
                         "(set the same secret on every replica)")
        self._key = (secret or secrets.token_hex(32)).encode("utf-8")
        self.ttl_s, self._users, self._clock = ttl_s, users, clock
        self.cookie_id = _b64(hmac.new(self._key, b"cookie-id", hashlib.sha256).digest()[:12])

    def _sign(self, name_b64: str, expiry: str, entry: str) -> str:
        msg = f"{name_b64}.{expiry}.{entry}".encode("utf-8")
        return _b64(hmac.new(self._key, msg, hashlib.sha256).digest())

    def issue(self, user: str) -> str:
        """A signed session token for `user` (who has just signed in), valid for ttl_s."""
        name_b64 = _b64(user.encode("utf-8"))
        expiry = str(int(self._clock() + self.ttl_s))
        return f"{name_b64}.{expiry}.{self._sign(name_b64, expiry, self._users().entry_digest(user))}"

    def get(self, token: Any, default: Any = None) -> Any:  # type: ignore[override]
        if not isinstance(token, str) or token.count(".") != 2:
            return super().get(token, default)
        name_b64, expiry, sig = token.split(".")
        try:
            user = _unb64(name_b64).decode("utf-8")
            alive = int(expiry) > self._clock()
            entry = self._users().entry_digest(user)
        except (ValueError, UnicodeDecodeError, AuthConfigError):
            return default
        if not alive or not entry or not hmac.compare_digest(sig, self._sign(name_b64, expiry, entry)):
            return default
        return user
