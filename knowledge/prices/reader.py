"""Read SkyPilot catalog inputs as they are in the wild: trees, single files, URLs; fail fast and small.

- A folder: every `vms.csv` under it is an offer file, its folder name the provider (known or not);
  every other file is listed as skipped (images.csv, common/, kubernetes/ ...).
- A file is streamed line by line: the first 64 KiB are checked for binary content, the header is
  checked before any row is read, a line over 1 MiB or a non-UTF-8 line stops the file at that line.
  Memory stays bounded by one line plus the normalised GPU rows.
- A URL is downloaded to a temporary file first (timeout, size cap), so a failed download changes nothing.
- Dates: `--as-of`, else a URL's Last-Modified, else the file's last git commit date when it sits in a
  git work tree; otherwise unknown.
"""

from __future__ import annotations

__all__ = ["BadFile", "CatalogInput", "REQUIRED_COLUMNS", "expand_inputs", "download", "git_commit_date",
           "iter_rows"]

import csv
import email.utils
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
SNIFF_BYTES = 64 * 1024
MAX_LINE_BYTES = 1 << 20  # real catalog lines are < 1 KB (the longest: AWS GpuInfo JSON)
MAX_DOWNLOAD_BYTES = 512 << 20  # the largest real vms.csv (AWS) is ~4 MB


class BadFile(Exception):
    """A catalog file that cannot be used, with the line where reading stopped (0 = the file as a whole)."""

    def __init__(self, label: str, line: int, message: str):
        self.label, self.line, self.message = label, line, message
        where = f"line {line}: " if line else ""
        super().__init__(f"{label}: {where}{message}")


@dataclass
class CatalogInput:
    label: str  # what the user named: a path or a URL
    path: Path | None  # the file to read (None = skipped)
    provider: str  # folder name or --provider
    as_of: str | None = None
    date_from: str = "unknown"
    skipped: str = ""  # why a non-offer file is not read


def _sniff(head: bytes, label: str) -> None:
    if not head.strip():
        raise BadFile(label, 0, "the file is empty")
    if b"\x00" in head:
        raise BadFile(label, 0, "binary data (NUL bytes), not a CSV text file")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the 64 KiB boundary
            raise BadFile(label, head.count(b"\n", 0, exc.start) + 1,
                          f"not UTF-8 text (byte 0x{head[exc.start]:02x} at offset {exc.start}): "
                          "binary data or another encoding") from None


def _lines(fh, label: str) -> Iterator[str]:
    n = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        n += 1
        if len(raw) > MAX_LINE_BYTES:
            raise BadFile(label, n, "a line longer than 1 MiB: not a SkyPilot catalog")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadFile(label, n, "not UTF-8 text") from None


def iter_rows(path: Path, label: str) -> Iterator[dict[str, str]]:
    """Rows of one vms.csv as dicts, streamed. Raises BadFile (with the line) on the first problem."""
    with open(path, "rb", buffering=1 << 20) as fh:
        _sniff(fh.peek(SNIFF_BYTES)[:SNIFF_BYTES], label)
        reader = csv.reader(_lines(fh, label))
        try:
            header = next(reader, None)
            if header is None:
                raise BadFile(label, 0, "the file is empty")
            header = [h.strip() for h in header]
            missing = [c for c in REQUIRED_COLUMNS if c not in header]
            if missing or len(header) > 200:
                raise BadFile(label, 1, "not a SkyPilot vms.csv: missing column(s) " + ", ".join(missing or ["(over 200)"])
                              + f" in the header (a vms.csv has at least {', '.join(REQUIRED_COLUMNS)})")
            width, rows = len(header), 0
            for rec in reader:
                if not rec or (len(rec) == 1 and not rec[0].strip()):
                    continue
                if len(rec) != width:
                    raise BadFile(label, reader.line_num, f"{len(rec)} fields, the header has {width} "
                                                          "(truncated or malformed file)")
                rows += 1
                yield dict(zip(header, rec))
            if not rows:
                raise BadFile(label, 0, "the file has a header but no rows")
        except csv.Error as exc:
            raise BadFile(label, reader.line_num, f"not a readable CSV ({exc})") from None


def git_commit_date(path: Path) -> str | None:
    """Date (YYYY-MM-DD) of the last commit that touched `path`, when it sits in a git work tree."""
    try:
        p = subprocess.run(["git", "-C", str(path.parent), "log", "-1", "--format=%cs", "--", path.name],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    out = p.stdout.strip()
    return out if p.returncode == 0 and len(out) == 10 else None


def expand_inputs(sources: list[str], provider: str | None) -> list[CatalogInput]:
    """Files and folders named by the user -> one CatalogInput per file (offer files and skipped ones).

    Raises:
        BadFile: a path that does not exist.
    """
    out: list[CatalogInput] = []
    for s in sources:
        p = Path(s).expanduser()
        if p.is_dir():
            for f in sorted(x for x in p.rglob("*") if x.is_file()):
                if f.name == "vms.csv":
                    out.append(CatalogInput(str(f), f, (provider or f.parent.name).lower()))
                else:
                    out.append(CatalogInput(str(f), None, "", skipped="not an offer file (only vms.csv is read)"))
        elif p.is_file():
            out.append(CatalogInput(str(p), p, (provider or p.resolve().parent.name).lower()))
        else:
            raise BadFile(s, 0, "no such file or folder")
    for c in out:
        if c.path is not None and (d := git_commit_date(c.path)):
            c.as_of, c.date_from = d, "git commit date of the file"
    return out


def download(url: str, dest: Path, timeout_s: float, progress: Callable[[str], None] | None = None) -> tuple[str | None, str]:
    """Fetch `url` into `dest`. Returns (Last-Modified date or None, how the date is known).

    Raises:
        BadFile: HTTP error, timeout, a response over the size cap.
    """
    if urllib.parse.urlparse(url).scheme not in ("http", "https"):
        raise BadFile(url, 0, "only http(s) URLs are fetched")
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp, open(dest, "wb") as out:  # noqa: S310
            size = 0
            while chunk := resp.read(1 << 16):
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise BadFile(url, 0, f"more than {MAX_DOWNLOAD_BYTES >> 20} MB: not a SkyPilot catalog file")
                out.write(chunk)
            lm = resp.headers.get("Last-Modified")
    except urllib.error.HTTPError as exc:
        raise BadFile(url, 0, f"HTTP {exc.code} {exc.reason}") from None
    except (OSError, ValueError) as exc:
        raise BadFile(url, 0, f"could not be fetched ({exc.__class__.__name__}: {exc})") from None
    if progress:
        progress(f"  fetched {url} ({size:,} bytes)")
    if lm:
        try:
            return email.utils.parsedate_to_datetime(lm).date().isoformat(), "Last-Modified header of the URL"
        except (TypeError, ValueError):
            pass
    return None, "unknown"

