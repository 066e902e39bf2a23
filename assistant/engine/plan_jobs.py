"""Generation jobs against a deadline ("1B tokens by tomorrow", "2M documents in 3 days"): after the
speed estimate and the memory solve, the number of model copies the job needs (tools.solve.job_replicas)."""

from __future__ import annotations

__all__ = ["job_replicas_calls"]

from typing import Any

from assistant.engine.query import Query


def job_replicas_calls(q: Query, done: list[tuple[str, dict, dict]]) -> list[dict[str, Any]]:
    """The `job_replicas` call for a job by a deadline (N requests x output tokens, or N images), once the
    speed estimator has given one copy's rate; [] when it does not apply or ran."""
    if q.solve_for != "min_gpu_count" or not q.deadline_hours or any(n == "job_replicas" for n, _, _ in done):
        return []
    speeds = [r for n, _, r in done if n == "speed_estimator" and isinstance(r, dict) and "error" not in r]
    per = next((int(r["value"]) for n, _, r in done if n == "solve_for" and isinstance(r, dict)
                and r.get("unknown") == "min_gpu_count" and r.get("solved") and r.get("value")), 1)
    args: dict[str, Any] = {"deadline_hours": float(q.deadline_hours), "gpus_per_replica": per}
    if q.images and speeds and speeds[0].get("images_per_hour"):
        args |= {"images": int(q.images), "images_per_hour_per_replica": float(speeds[0]["images_per_hour"])}
    elif q.examples and q.output_tokens and q.method == "inference":
        rate = next(((r.get("memory") or {}).get("aggregate_tokens_per_s_at_max_batch") for r in speeds
                     if (r.get("memory") or {}).get("aggregate_tokens_per_s_at_max_batch")), None)
        if not rate:
            return []
        args |= {"total_output_tokens": float(q.examples * q.output_tokens), "tokens_per_s_per_replica": float(rate)}
    else:
        return []
    return [{"name": "job_replicas", "args": args}]
