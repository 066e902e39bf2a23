"""The queue and session settings of assistant/frontends/web/queue.py: Gradio's session state, its page configs
rendered only when needed, and no per-event monitoring summary (benchmarks/app_load.py measures them)."""

import json

import httpx

from assistant.frontends.web import queue as web_queue


def _block_id(demo, elem_id: str) -> int:
    return next(k for k, b in demo.blocks.items() if getattr(b, "elem_id", None) == elem_id)


def test_lean_session_state_is_gradios_with_configs_on_demand(app_module):
    import gradio as gr
    from gradio.state_holder import SessionState

    demo = app_module.build_demo()
    eager, lean = SessionState(demo), web_queue.LeanSessionState(demo)
    # The same attributes as Gradio's own (a Gradio upgrade that adds one fails here).
    assert set(vars(lean)) - {"_page_ids"} == set(vars(eager))
    assert lean.config_values == {} and len(eager.config_values) == len(demo.blocks)
    recent, box = _block_id(demo, "recent"), _block_id(demo, "question")
    for state in (eager, lean):  # what an event's output does: a component replaced, a value changed
        state[recent] = gr.Radio(choices=[("Cheapest H100 per hour?", "t1")], visible=True, elem_id="recent")
        state._update_value_in_config(box, "typed")
    assert set(lean.config_values) == {recent, box}
    assert list(lean.components) == list(eager.components)  # a deep link saves the same page
    assert [c["id"] for c in lean.components] == [c["id"] for c in eager.components]


def test_a_call_api_request_renders_no_page_config_and_no_summary(app_demo):
    demo, url = app_demo
    holder = demo.app.state_holder
    assert isinstance(holder, web_queue.LeanStateHolder) and demo.state_holder is holder
    r = httpx.post(url + "gradio_api/call/ask", json={"data": ["Cheapest H100 per hour?", ""]}, timeout=60)
    body = httpx.get(url + f"gradio_api/call/ask/{r.json()['event_id']}", timeout=60).text
    data = [ln[5:] for ln in body.splitlines() if ln.startswith("data:")]
    assert "event: complete" in body and json.loads(data[-1])[0]["intent"] == "prices"
    newest = next(reversed(holder.session_data.values()))  # each call is a new session
    fns = demo.fns.values() if isinstance(demo.fns, dict) else demo.fns
    ask = next(f for f in fns if f.api_name == "ask")
    # Rendered: only the endpoint's own input and output values Gradio records, not the ~100 blocks of the page.
    assert isinstance(newest, web_queue.LeanSessionState)
    assert set(newest.config_values) <= {c._id for c in ask.inputs + ask.outputs}
    queue = demo._queue  # Gradio 6.31's names: a rename would leave the summary on again
    assert queue.ANAYLTICS_CACHE_FREQUENCY >= 10**9 and queue.event_count_at_last_cache == 0
    assert len(queue.event_analytics) <= 1


def test_the_chat_still_works_on_a_lean_session(client):
    """/chat replaces the recent-threads list and the textbox per session: Gradio's setters on the lean state."""
    hist, box, tid, _, recent, _record = client.predict("Cheapest H100 per hour?", [], "", [], api_name="/chat")
    assert box == "" and tid and recent[0][0] == tid
    assert any("H100" in str(m.get("content")) for m in hist if m["role"] == "assistant")
