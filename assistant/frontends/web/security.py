"""Security pieces shared by the web app and the Slack bot.

Scrubbing secrets from text shown to users (provider error messages may echo keys), sign-in with
several users (plain or hashed passwords), login throttling, trusted proxies, and rate limits and
de-duplication that live in Redis when GPU_ADVISOR_REDIS_URL is set (so replicas share them).
"""

from __future__ import annotations

__all__ = ["AuthConfigError", "LoginThrottle", "RateLimit", "Users", "client_address", "hash_password",
           "parse_json_body", "rest_auth", "scrub_secrets", "shared_seen", "shared_user_limit"]

import math
import os
import time
from typing import Any, Callable

from assistant.runtime.limits import (RateLimit, Windows, parse_json_body, shared_seen,  # noqa: F401 - re-exported
                                      shared_user_limit)
from assistant.threads import MAX_NAME_BYTES, canonical_name
from assistant.runtime.secrets import scrub_secrets  # noqa: E402,F401 - re-exported (the web front end scrubs too)


# ---------------------------------------------------------------- users and passwords

_SCRYPT = {"n": 2**14, "r": 8, "p": 1}  # hashlib.scrypt's interactive-login cost (~50 ms, 16 MiB)


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """A salted scrypt hash for GPU_ADVISOR_AUTH / GPU_ADVISOR_AUTH_FILE: "scrypt$N$r$p$salt$hash" (base64)."""
    import base64
    import hashlib

    salt = salt or os.urandom(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, dklen=32, **_SCRYPT)
    b64 = base64.b64encode
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${b64(salt).decode()}${b64(digest).decode()}"


def _check_password(password: str, stored: str) -> bool:
    import base64
    import hashlib
    import hmac

    if not stored.startswith("scrypt$"):  # the same scrypt work as a hashed entry: timing tells neither apart
        _check_password(password, _DUMMY_HASH)
        return hmac.compare_digest(password.encode("utf-8"), stored.encode("utf-8"))
    try:
        _, n, r, p, salt, digest = stored.split("$")
        want = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(want), maxmem=2**26)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


class AuthConfigError(ValueError):
    """GPU_ADVISOR_AUTH or GPU_ADVISOR_AUTH_FILE cannot be read; the message says how to fix it."""


class Users:
    """Who may sign in: GPU_ADVISOR_AUTH ("user:password" pairs, comma-separated; a password may be a
    scrypt hash from `python -m assistant.frontends.web.security hash`) and/or GPU_ADVISOR_AUTH_FILE (one
    "user:password-or-hash" a line, # comments). Empty: auth is off."""

    def __init__(self, entries: dict[str, str]):
        self._entries = entries
        self._ok_cache: dict[str, float] = {}  # digest of a recently verified pair -> expiry (hashing is slow)

    @classmethod
    def from_env(cls) -> "Users":
        """Read the two variables (when called; raises AuthConfigError naming the bad entry). The result is
        reused while the variables and the file's modification time stay the same."""
        raw = os.environ.get("GPU_ADVISOR_AUTH", "").strip()
        path = os.environ.get("GPU_ADVISOR_AUTH_FILE", "").strip()
        try:
            stamp = os.stat(path).st_mtime_ns if path else 0
        except OSError:
            stamp = -1
        key = (raw, path, stamp)
        cached = _USERS_CACHE.get(key)
        if cached is None:
            cached = cls._read(raw, path)
            _USERS_CACHE.clear()
            _USERS_CACHE[key] = cached
        return cached

    @classmethod
    def _read(cls, raw: str, path: str) -> "Users":
        entries: dict[str, str] = {}
        items = [x for x in raw.split(",") if x.strip()]
        if path:
            try:
                with open(path, encoding="utf-8") as fh:
                    items += [ln for ln in fh.read().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            except OSError as exc:
                raise AuthConfigError(f"GPU_ADVISOR_AUTH_FILE {path!r} cannot be read ({exc.strerror}).") from None
        for item in items:
            user, sep, pw = item.strip().partition(":")
            if not sep or not user or not pw:
                raise AuthConfigError("GPU_ADVISOR_AUTH entries must be user:password (or user:scrypt$…), "
                                      f"comma-separated; got an entry starting {item.strip()[:12]!r}.")
            name = canonical_name(user)
            if pw.startswith("scrypt") and (not pw.startswith("scrypt$") or pw.count("$") != 5):
                raise AuthConfigError(f"The password of {user!r} starts like a scrypt hash but is not one (a hash in a "
                                      "double-quoted shell string loses its $ parts): quote it with single quotes "
                                      "or put it in GPU_ADVISOR_AUTH_FILE.")
            if len(name.encode("utf-8", "replace")) > MAX_NAME_BYTES:
                raise AuthConfigError(f"The user name starting {user[:12]!r} is longer than {MAX_NAME_BYTES} bytes.")
            if name in entries:
                raise AuthConfigError(f"The user {user!r} is listed twice (names are compared after Unicode NFC "
                                      "and case folding, so 'Alice' and 'alice' are one user).")
            entries[name] = pw
        return cls(entries)

    @property
    def enabled(self) -> bool:
        return bool(self._entries)

    def entry_digest(self, user: str) -> str:
        """A digest of the user's entry (changes with the password), or "" when the user is not listed."""
        import hashlib

        stored = self._entries.get(canonical_name(user))
        return hashlib.sha256(f"{canonical_name(user)}\0{stored}".encode("utf-8")).hexdigest()[:32] if stored else ""

    def check(self, user: str, password: str) -> bool:
        """True when the pair is valid (constant-time comparison; an unknown user costs the same)."""
        import hashlib
        import time

        key = hashlib.sha256(f"{user}\0{password}".encode("utf-8", "replace")).hexdigest()
        now = time.monotonic()
        if self._ok_cache.get(key, 0) > now:
            return True
        stored = self._entries.get(canonical_name(user))
        ok = _check_password(password, stored if stored is not None else _DUMMY_HASH) and stored is not None
        if ok:
            self._ok_cache[key] = now + 300.0
        return ok

    def check_basic(self, header: str | None) -> str | None:
        """The user named by a valid `Authorization: Basic …` header, else None."""
        import base64

        scheme, _, value = (header or "").partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            given = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        user, _, pw = given.partition(":")
        return user if self.check(user, pw) else None

    def basic_user(self, header: str | None) -> str:
        """The user a Basic header claims (valid or not), for per-user throttling."""
        import base64

        try:
            return base64.b64decode((header or "").partition(" ")[2].strip(), validate=True).decode(
                "utf-8").partition(":")[0][:200]
        except (ValueError, UnicodeDecodeError):
            return ""


_USERS_CACHE: dict[tuple[str, str, int], Users] = {}
_DUMMY_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


class LoginThrottle:
    """Failed sign-ins, counted so that nobody can aim them at someone else; over a limit, 429 + Retry-After.

    Per (user name, address): GPU_ADVISOR_LOGIN_FAILURES_PER_USER (default 5) failures in the window
    are free, each one after that makes the pair wait twice as long (1, 2, 4 … s, at most
    `max_backoff_s`), refused before the password is checked. Wrong passwords from other addresses
    never hold a user back. Per address: past GPU_ADVISOR_LOGIN_FAILURES_PER_CLIENT (default 10)
    failures in the window, names that have not signed in from that address in the last day wait too
    (spraying many names from one address), while those that have are not held. A request with no
    credentials at all is no failed sign-in (it gets 401 and counts only towards the rate limit).
    """

    def __init__(self, window_s: float = 300.0, per_client: int | None = None, per_user: int | None = None,
                 clock: Callable[[], float] = time.monotonic, max_backoff_s: float = 300.0):
        self.window_s, self.max_backoff_s = window_s, max_backoff_s
        self.per_client = per_client or int(os.environ.get("GPU_ADVISOR_LOGIN_FAILURES_PER_CLIENT") or 10)
        self.per_user = per_user or int(os.environ.get("GPU_ADVISOR_LOGIN_FAILURES_PER_USER") or 5)
        self.failures = Windows("login-fail", clock)

    @staticmethod
    def _pair(client: str, user: str) -> str:
        return f"pair:{canonical_name(user)}|{client}"

    def retry_after(self, client: str, user: str) -> int:
        """Seconds to wait before another attempt (0: go ahead)."""
        pair = self._pair(client, user)
        waits = [self.failures.peek("lock:" + pair)[1]]
        n, left = self.failures.peek(f"client:{client}")
        if n >= self.per_client and not self.failures.peek("ok:" + pair)[0]:
            waits.append(left)
        return int(math.ceil(max(waits)))

    def failed(self, client: str, user: str) -> None:
        pair = self._pair(client, user)
        n, _ = self.failures.hit(pair, self.window_s)
        self.failures.hit(f"client:{client}", self.window_s)
        if n >= self.per_user:
            self.failures.hold("lock:" + pair, min(self.max_backoff_s, 2.0 ** (n - self.per_user)))

    def succeeded(self, user: str, client: str) -> None:
        pair = self._pair(client, user)
        self.failures.reset(pair)
        self.failures.reset("lock:" + pair)
        self.failures.hold("ok:" + pair, 86400.0)


def client_address(request: Any) -> str:
    """The client's address as the server sees it (X-Forwarded-For already applied for trusted proxies)."""
    client = getattr(request, "client", None)
    return getattr(client, "host", None) or "local"


def main(argv: list[str] | None = None) -> int:
    """`python -m assistant.frontends.web.security hash`: read a password (stdin or prompt), print its scrypt hash."""
    import getpass
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args != ["hash"]:
        print("usage: python -m assistant.frontends.web.security hash   (then add user:HASH to GPU_ADVISOR_AUTH_FILE)")
        return 2
    pw = getpass.getpass("Password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
    if not pw:
        print("empty password", file=sys.stderr)
        return 2
    print(hash_password(pw))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def rest_auth(request: Any, throttle: LoginThrottle) -> tuple[str | None, Any]:
    """For a plain JSON endpoint: (user, None) when the request may go on (user None with auth off),
    else (None, a 401 or a 429 JSONResponse with Retry-After). Failed Basic credentials count
    towards the same sign-in throttle as the login form."""
    from starlette.responses import JSONResponse

    users = Users.from_env()
    if not users.enabled:
        return None, None
    header = request.headers.get("authorization")
    client, claimed = client_address(request), users.basic_user(header)
    if not header:  # no credentials: no sign-in attempt to count, nobody to throttle
        return None, JSONResponse({"error": "authentication required"}, status_code=401,
                                  headers={"WWW-Authenticate": 'Basic realm="gpu-advisor"'})
    wait = throttle.retry_after(client, claimed)
    if wait:
        return None, JSONResponse({"error": f"Too many failed sign-ins; try again in {wait} s."}, status_code=429,
                                  headers={"Retry-After": str(wait)})
    user = users.check_basic(header)
    if user is None:
        throttle.failed(client, claimed)
        return None, JSONResponse({"error": "authentication required"}, status_code=401,
                                  headers={"WWW-Authenticate": 'Basic realm="gpu-advisor"'})
    throttle.succeeded(user, client)
    return user, None
