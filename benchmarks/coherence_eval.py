"""Coherence-guard violations over the evaluation questions (target 0).

Every item of the given batches runs through the embedded engine, each earlier turn first in the same thread,
and the last turn's `coherence` verdict (assistant/engine/coherence.py) is counted by rule.

    python -m benchmarks.coherence_eval tests/data/eval/batch3[0-5].jsonl [--show]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import uuid
from collections import Counter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batches", nargs="+")
    ap.add_argument("--show", action="store_true", help="print each violation")
    args = ap.parse_args()
    os.environ.setdefault("GPU_ADVISOR_HOME", tempfile.mkdtemp(prefix="gpa-coherence-"))
    from assistant.service import api

    adv, rules, items, bad = api.advisor(), Counter(), 0, 0
    for path in args.batches:
        for line in open(path, encoding="utf-8"):
            if not line.strip():
                continue
            item, tid = json.loads(line), "coh-" + uuid.uuid4().hex
            for turn in item["turns"]:
                ans = adv.ask(turn, thread_id=tid)
            items += 1
            violations = (ans.coherence or {}).get("violations", [])
            bad += bool(violations)
            for v in violations:
                rules[v["rule"]] += 1
                if args.show:
                    print(item["id"], v["rule"], v["detail"])
    print(f"{items} questions, {bad} with a violation; by rule: {dict(rules) or 'none'}")


if __name__ == "__main__":
    main()
