"""Pure computation: pydantic models in, pydantic models out; no I/O, no LLM."""
