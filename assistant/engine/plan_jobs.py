"""Generation jobs against a deadline ("1B tokens by tomorrow", "2M documents in 3 days"): after the
speed estimate and the memory solve, the number of model copies the job needs (tools.solve.job_replicas)."""

from __future__ import annotations

__all__ = ["job_replicas_calls"]

from typing import Any

from assistant.engine.query import Query


def job_replicas_calls(q: Query, done: list[tuple[str, dict, dict]]) -> list[dict[str, Any]]:
    """The `job_replicas` call for a job of N requests x output tokens by a deadline, once the speed
    estimator has given one replica's throughput-optimal rate; [] when it does not apply or ran."""
    if not (q.examples and q.output_tokens and q.deadline_hours and q.method == "inference") or \
            any(n == "job_replicas" for n, _, _ in done):
        return []
    rate = next(((r.get("memory") or {}).get("aggregate_tokens_per_s_at_max_batch") for n, _, r in done
                 if n == "speed_estimator" and isinstance(r, dict) and (r.get("memory") or {}).get("aggregate_tokens_per_s_at_max_batch")),
                None)
    if not rate:
        return []
    per = next((int(r["value"]) for n, _, r in done if n == "solve_for" and isinstance(r, dict)
                and r.get("unknown") == "min_gpu_count" and r.get("solved") and r.get("value")), 1)
    return [{"name": "job_replicas", "args": {"total_output_tokens": float(q.examples * q.output_tokens),
                                              "tokens_per_s_per_replica": float(rate), "deadline_hours": float(q.deadline_hours),
                                              "gpus_per_replica": per}}]
