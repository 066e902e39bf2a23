"""A real browser against `python app.py`: headless Chromium asks a question and sees the streamed
answer, the tool step, the chart and the table; then an Urdu example renders right-to-left.

Prints (and writes to test-artifacts/app-timings.json) two timings: the page served after the
process started, and the first answer text on screen after Enter. Screenshots go to test-artifacts/.
"""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.app.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
FIT_Q = "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?"
URDU_Q = "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟"
SERVE_TARGET_S = 5.0


@pytest.fixture(scope="module")
def served_app(tmp_path_factory):
    """`python app.py --port P` in a fresh data directory; (url, seconds until the page was served)."""
    home = tmp_path_factory.mktemp("app-home")
    port = free_port()
    env = os.environ | {"GPU_ADVISOR_HOME": str(home)}
    log_path = home / "app.log"
    with open(log_path, "w") as log:
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "app.py", "--host", "127.0.0.1", "--port", str(port)],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            if time.monotonic() - t0 > 60:
                pytest.fail(f"app.py did not serve {url} within 60 s:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200 and b"<html" in r.read(2000).lower():
                        break
            except OSError:
                time.sleep(0.05)
        yield url, time.monotonic() - t0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("chromium not installed: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed: pip install playwright")
    pw = sync_api.sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, timeout=30_000)
    except Exception as exc:  # a broken install, missing libraries, no sandbox support...
        pw.stop()
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        pytest.skip(f"chromium cannot start ({exc.__class__.__name__}: {first}); apt-get install -y chromium")
    yield b
    b.close()
    pw.stop()


def _chat_text_contains(page, text: str, timeout_ms: int = 20_000) -> None:
    page.wait_for_function("t => (document.querySelector('#chat')?.innerText || '').includes(t)", arg=text,
                           timeout=timeout_ms, polling=10)


def _scroll_chat_to_top(page) -> None:
    page.evaluate("for (const el of document.querySelectorAll('#chat *'))"
                  " if (el.scrollHeight > el.clientHeight + 10) el.scrollTop = 0;")


def test_chat_in_a_real_browser(served_app, browser, capsys):
    url, served_s = served_app
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    box = page.locator("#question textarea")
    box.wait_for(timeout=15_000)
    box.fill(FIT_Q)

    t0 = time.monotonic()
    box.press("Enter")
    _chat_text_contains(page, "it fits")  # the answer's first words
    first_answer_s = time.monotonic() - t0

    chat = page.locator("#chat").inner_text()
    assert "vram_calculator" in chat  # the tool step
    assert "19.6 GB" in chat  # total_gb 19.58 from the tool result, as the answer states it
    page.locator("#chart svg").first.wait_for(timeout=10_000)
    chart_text = page.evaluate(
        "() => [...document.querySelectorAll('#chart svg text')].map(t => t.textContent).join(' ')")
    assert "19.6 GB per GPU" in chart_text and "GPU: a 24 GB GPU" in chart_text
    page.wait_for_function("() => (document.querySelector('#table')?.innerText || '').includes('19.584')",
                           timeout=10_000)
    assert "Fits" in page.locator("#data-note").inner_text()
    page.locator("#chat").get_by_text("vram_calculator").first.click()  # open the tool step
    _chat_text_contains(page, "Needs 19.58 GB per GPU of 25.77 GB", 5_000)
    assert "seq_len=8192" in page.locator("#chat").inner_text()
    time.sleep(0.3)  # let the last frame paint
    _scroll_chat_to_top(page)
    page.screenshot(path=str(ARTIFACTS / "app-chat.png"), full_page=True)

    # Urdu: a new thread, the example question clicked, the answer laid out right-to-left
    page.get_by_role("button", name="New chat").click()
    page.wait_for_function("() => !(document.querySelector('#chat')?.innerText || '').includes('it fits')",
                           timeout=10_000)
    page.get_by_text(URDU_Q[:12]).first.click()
    _chat_text_contains(page, "جی ہاں")
    rtl = page.locator('#chat [dir="rtl"][lang="ur"]').last
    assert rtl.evaluate("e => getComputedStyle(e).direction") == "rtl"
    time.sleep(0.3)
    page.screenshot(path=str(ARTIFACTS / "app-chat-urdu.png"), full_page=True)
    assert not errors, errors

    timings = {"page_served_after_process_start_s": round(served_s, 2),
               "enter_to_first_answer_text_s": round(first_answer_s, 3), "serve_target_s": SERVE_TARGET_S}
    (ARTIFACTS / "app-timings.json").write_text(json.dumps(timings, indent=2) + "\n")
    with capsys.disabled():
        print(f"\n[app timings] page served {served_s:.2f} s after `python app.py` started "
              f"(target {SERVE_TARGET_S:g} s); Enter -> first answer text {first_answer_s:.3f} s; "
              f"screenshots in {ARTIFACTS}")
    # Loose bounds so a loaded CI machine does not flake; the measured values are reported above.
    assert served_s < 20 and first_answer_s < 10
