"""The web app's stylesheet and page script (constants; app.py passes them to Gradio's launch()).

CSS: an Urdu font stack (Noto Nastaliq Urdu, then Noto Naskh Arabic: Debian fonts-noto-core) with
room for Nastaliq's tall lines; the answer card, key numbers, HTML bar charts (assistant/frontends/web/chart.py)
and tables that scroll inside their own box on a phone; headers break only between words.

Script (HEAD_JS): answer-first scrolling: when a new answer card appears in the chat, it is scrolled
to the top of the view (Gradio's own autoscroll, which goes to the bottom, is off); example chips and
the question box get dir="auto".
"""

from __future__ import annotations

__all__ = ["CSS", "HEAD_JS", "RECORDS_KEY", "URDU_FONT_FILES", "URDU_FONT_STACK", "clear_thread_url_js", "font_faces",
           "keep_record_js", "records_js", "set_thread_url_js", "theme"]

from pathlib import Path

URDU_FONT_STACK = '"Noto Nastaliq Urdu", "Noto Naskh Arabic", serif'
# Debian's fonts-noto-core. When the server has them, readers whose system lacks them get them from
# the app (the browser uses its own copy first: local() before url()).
_NOTO = Path("/usr/share/fonts/truetype/noto")
URDU_FONT_FILES = {("Noto Nastaliq Urdu", 400): _NOTO / "NotoNastaliqUrdu-Regular.ttf",
                   ("Noto Nastaliq Urdu", 700): _NOTO / "NotoNastaliqUrdu-Bold.ttf",
                   ("Noto Naskh Arabic", 400): _NOTO / "NotoNaskhArabic-Regular.ttf"}

CSS = """
textarea { unicode-bidi: plaintext; }
#chat .message-content, #chat .ga-answer { font-size: 16px; line-height: 1.55; }
#chat .bot .message-content, #chat .message.bot { max-width: 100%; }
/* Urdu: the Nastaliq stack, right to left, tall lines; Latin runs inside keep the UI face */
[lang="ur"], [dir="rtl"] { font-family: URDU_STACK; }
#chat [dir="rtl"] p, #chat [dir="rtl"] li, .ga-card[dir="rtl"] { line-height: 2.3; }
[dir="rtl"] { text-align: right; }
bdi.ga-ltr { font-family: var(--font, ui-sans-serif, system-ui, sans-serif); unicode-bidi: isolate; }
.ga-nw { white-space: nowrap; color: inherit; }
/* the answer */
.ga-answer { max-width: 100%; overflow-wrap: break-word; scroll-margin-top: 12px; }
.ga-card { border: 1px solid var(--border-color-primary); border-inline-start: 5px solid var(--ga-v, #6b7280);
  border-radius: 10px; padding: 10px 14px; margin: 2px 0 10px; background: var(--background-fill-secondary); }
.ga-card .ga-headline p { margin: 4px 0; font-size: 17px; }
.ga-verdict { display: inline-block; font-weight: 700; font-size: 13px; letter-spacing: .02em; padding: 1px 10px;
  border-radius: 999px; background: var(--ga-vbg, #e5e7eb); color: var(--ga-vfg, #111827); }
.ga-v-yes { --ga-v: #16a34a; --ga-vbg: #dcfce7; --ga-vfg: #14532d; }
.ga-v-no, .ga-v-error { --ga-v: #dc2626; --ga-vbg: #fee2e2; --ga-vfg: #7f1d1d; }
.ga-v-partly { --ga-v: #d97706; --ga-vbg: #fef3c7; --ga-vfg: #78350f; }
.ga-v-ask { --ga-v: #2563eb; --ga-vbg: #dbeafe; --ga-vfg: #1e3a8a; }
.ga-sub, .ga-notes-h { font-weight: 600; margin: 12px 0 4px; }
#chat .ga-kn, .ga-kn { border-collapse: collapse; font-size: 15px; border: none; margin: 0; width: auto; }
#chat .ga-kn th, #chat .ga-kn td { border: none; border-bottom: 1px solid var(--border-color-primary);
  padding: 3px 18px 3px 0; background: none; color: var(--body-text-color); font-weight: 400; }
#chat .ga-kn td { padding-right: 0; font-weight: 600; }
#chat [dir="rtl"] .ga-kn th { padding: 3px 0 3px 18px; line-height: 2.1; }
#chat [dir="rtl"] .ga-table td, #chat [dir="rtl"] .ga-table th { line-height: 2.0; }
.ga-num { text-align: end; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ga-note { font-size: 14px; color: var(--body-text-color-subdued); margin: 6px 0; }
details.ga-more { margin: 8px 0; border-top: 1px solid var(--border-color-primary); padding-top: 6px; }
details.ga-more > summary { cursor: pointer; font-weight: 600; }
.ga-opt-nums { font-size: 14px; color: var(--body-text-color-subdued); }
sup.ga-ref { font-size: 11px; font-weight: 700; color: var(--color-accent); padding: 0 1px; }
.ga-notes { border-top: 1px solid var(--border-color-primary); margin-top: 10px; font-size: 14px; }
.ga-notes ol { margin: 2px 0; padding-inline-start: 0; list-style: none; }
details.ga-fn > summary { cursor: pointer; }
.ga-fn-n { display: inline-block; min-width: 1.4em; text-align: center; font-weight: 700; font-size: 12px;
  border-radius: 4px; background: var(--background-fill-secondary); border: 1px solid var(--border-color-primary); }
.ga-fn-id { color: var(--body-text-color-subdued); font-size: 12px; }
details.ga-fn blockquote { margin: 4px 0 8px; padding: 4px 10px; border-inline-start: 3px solid var(--color-accent); }
/* tables: readable, whole words in headers, sideways scroll inside their own box */
/* inline-size containment: a wide table scrolls in its box instead of widening the chat bubble and the page */
.ga-table-wrap { width: 100%; contain: inline-size; max-width: calc(min(100vw, 1040px) - 120px); overflow-x: auto;
  -webkit-overflow-scrolling: touch; margin: 6px 0; }
.ga-table { border-collapse: collapse; font-size: 14px; min-width: 60%; }
.ga-table th { white-space: normal; word-break: keep-all; overflow-wrap: normal; hyphens: none; text-align: start;
  font-weight: 600; padding: 4px 8px; border-bottom: 2px solid var(--border-color-primary); vertical-align: bottom; }
.ga-table td { padding: 3px 8px; border-bottom: 1px solid var(--border-color-primary); white-space: nowrap;
  overflow-wrap: normal; word-break: normal; }
.ga-table th.ga-num { text-align: end; }
.ga-table caption { text-align: start; font-weight: 600; padding: 4px 0; }
/* charts (assistant/frontends/web/chart.py) */
.ga-chart { margin: 8px 0 10px; font-size: 13px; max-width: 640px; }
.ga-chart-title { font-weight: 700; font-size: 14px; margin-bottom: 4px; }
.ga-legend { display: flex; flex-wrap: wrap; gap: 2px 12px; margin: 2px 0 6px; }
.ga-key { display: inline-flex; align-items: center; gap: 4px; white-space: nowrap; }
.ga-swatch { width: 11px; height: 11px; border-radius: 2px; display: inline-block; }
.ga-bars { margin-right: 64px; background-image: linear-gradient(to right, var(--border-color-primary) 1px, transparent 1px);
  background-size: 25% 100%; background-repeat: repeat-x; border-right: 1px solid var(--border-color-primary); }
.ga-row { padding: 2px 0 4px; }
.ga-label { font-size: 13px; line-height: 1.3; overflow-wrap: anywhere; }
.ga-track { display: flex; align-items: center; height: 18px; }
.ga-seg { flex: none; height: 100%; }
.ga-seg + .ga-seg { box-shadow: inset 1px 0 0 rgba(255,255,255,.6); }
.ga-val { flex: none; margin-left: 5px; font-weight: 600; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ga-axis { position: relative; height: 16px; margin-right: 64px; color: var(--body-text-color-subdued); font-size: 11px; }
.ga-tick { position: absolute; top: 1px; transform: translateX(-50%); white-space: nowrap; }
.ga-tick:first-child { transform: none; }
.ga-unit { font-size: 12px; color: var(--body-text-color-subdued); margin-top: 2px; }
/* options side by side: a table on a wide screen, one card per option on a phone */
.ga-compare th.ga-win, .ga-compare td.ga-win { background: var(--ga-winbg, #ecfdf5); }
.ga-compare thead th { vertical-align: bottom; }
.ga-compare tbody th { font-weight: 400; white-space: normal; min-width: 9em; }
.ga-win-badge { display: inline-block; margin-inline-start: 6px; padding: 0 8px; border-radius: 999px; font-size: 12px;
  font-weight: 700; background: #dcfce7; color: #14532d; white-space: nowrap; }
.ga-opt-cards { display: none; }
.ga-opt-card { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 6px 10px; margin: 6px 0; }
.ga-opt-card.ga-win { border-color: #16a34a; border-width: 2px; }
.ga-opt-title { font-weight: 600; margin-bottom: 2px; }
.ga-opt-card table { border-collapse: collapse; width: 100%; font-size: 14px; border: none; margin: 0; }
#chat .ga-opt-card th, #chat .ga-opt-card td { border: none; border-bottom: 1px solid var(--border-color-primary);
  padding: 2px 0; background: none; font-weight: 400; text-align: start; }
#chat .ga-opt-card td { text-align: end; font-weight: 600; padding-inline-start: 8px; white-space: normal; }
/* the steps, folded under the answer; while they run, a short list */
details.ga-steps ol { margin: 4px 0; padding-inline-start: 1.4em; font-size: 14px; }
.ga-live ul { list-style: none; padding-inline-start: 0; margin: 2px 0; font-size: 14px; }
/* a table wider than its box: a shadow at the edge that hides more (scrolls with the content) */
/* (the covers take the answer bubble's colour: with nothing to scroll they hide the shadows and show nothing) */
.ga-table-wrap { background:
  linear-gradient(to right, var(--background-fill-secondary) 30%, transparent) left / 28px 100% no-repeat local,
  linear-gradient(to left, var(--background-fill-secondary) 30%, transparent) right / 28px 100% no-repeat local,
  radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.28), rgba(0,0,0,0)) left / 12px 100% no-repeat scroll,
  radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.28), rgba(0,0,0,0)) right / 12px 100% no-repeat scroll; }
.ga-table-wrap .ga-table td, .ga-table-wrap .ga-table th { background-color: transparent; }
/* page chrome */
#status { font-size: 13px; color: var(--body-text-color-subdued); }
#chat .placeholder-content button, #chat .example { unicode-bidi: plaintext; }
.field-error textarea, .field-error input { border-color: #dc2626 !important; }
.ga-field-msg { color: #b91c1c; font-size: 14px; }
/* no floating "scroll down" button over the answers (it covered chart values and the start of Urdu lines):
   each new answer is scrolled into view by the page script, and the chat scrolls as usual */
#chat .scroll-down-button-container { display: none !important; }
@media (max-width: 640px) {
  /* every tab on a phone's row, none behind a "..." menu (Gradio measures the buttons as styled here) */
  .tab-container button { padding-left: 7px !important; padding-right: 7px !important; font-size: 14px !important; }
  .ga-opt-table { display: none; }
  .ga-opt-cards { display: block; }
  .ga-bars, .ga-axis { margin-right: 52px; }
  .ga-card { padding: 8px 10px; }
  .ga-table-wrap { max-width: calc(100vw - 64px); }
  #chat .bubble-wrap { padding-left: 0 !important; padding-right: 0 !important; }
  #chat .message.bot, #chat .bot.message { padding: 4px 6px !important; }
  #chat .message-row { margin-left: 0 !important; margin-right: 0 !important; }
  #chat .message-content, #chat .ga-answer { font-size: 15px; }
}
""".replace("URDU_STACK", URDU_FONT_STACK)

# Answer-first: scroll each new answer card to the top of the view. Counting cards (not watching
# every mutation) means a streamed update of the same answer does not pull the view back.
HEAD_JS = """
<style>
/* page chrome: outside the app's own (scoped) stylesheet */
.gradio-container { width: 100% !important; max-width: 1040px !important; margin: 0 auto !important; }
@media (max-width: 640px) { .gradio-container .main.fillable { padding: 8px 8px !important; } }
</style>
<script>
(() => {
  let seen = -1;
  const dirAuto = () => {
    for (const el of document.querySelectorAll('#chat .example, #chat .placeholder-content button, #question textarea, #recent label span'))
      if (!el.hasAttribute('dir')) {
        el.setAttribute('dir', 'auto');
        if (/[\u0600-\u06FF]/.test(el.textContent || '')) el.setAttribute('lang', 'ur');  // the Urdu font stack
      }
  };
  const check = () => {
    dirAuto();
    const cards = document.querySelectorAll('#chat .ga-answer');
    if (seen < 0) { seen = cards.length; if (!cards.length) return; }
    if (cards.length > seen) cards[cards.length - 1].scrollIntoView({block: 'start'});
    seen = cards.length;
  };
  const start = () => new MutationObserver(() => requestAnimationFrame(check))
    .observe(document.body, {childList: true, subtree: true});
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
  window.gaResetScroll = () => { seen = 0; };
})();
</script>
"""


def set_thread_url_js() -> str:
    """JS for an event's `js=`: put the thread id in the address bar (?thread=...), no reload."""
    return ("(t) => { if (t) { const u = new URL(window.location.href); u.searchParams.set('thread', t);"
            " window.history.replaceState(null, '', u); } return []; }")


RECORDS_KEY = "gpu-advisor-answers:"  # + thread id: that thread's typed answer records (a JSON list)
_RECORD_THREADS, _RECORD_CHARS = 12, 600_000  # threads kept with records; characters per thread


def keep_record_js() -> str:
    """JS for `js=` after a turn (inputs: thread id, the answer's typed record): the thread in the
    address bar, and the record kept in this browser for a reload (web_chat.answer_view)."""
    return ("(t, r) => { if (t) { const u = new URL(window.location.href); u.searchParams.set('thread', t);"
            " window.history.replaceState(null, '', u); }"
            " if (t && r) { try { const K = '" + RECORDS_KEY + "', k = K + t, rec = JSON.parse(r);"
            " const a = JSON.parse(localStorage.getItem(k) || '[]').filter(x => x.h !== rec.h); a.push(rec);"
            f" while (a.length > 1 && JSON.stringify(a).length > {_RECORD_CHARS}) a.shift();"
            " localStorage.setItem(k, JSON.stringify(a));"
            " const idx = JSON.parse(localStorage.getItem(K + 'index') || '[]').filter(x => x !== t); idx.unshift(t);"
            f" for (const old of idx.slice({_RECORD_THREADS})) localStorage.removeItem(K + old);"
            f" localStorage.setItem(K + 'index', JSON.stringify(idx.slice(0, {_RECORD_THREADS})));"
            " } catch (e) { console.warn('answer record not kept', e); } } return []; }")


def records_js(from_choice: bool = False) -> str:
    """JS for `js=` before a thread is opened: this browser's records of it, for the server to render
    (on load the thread comes from ?thread=; from Recent chats it is the chosen value)."""
    get = "(t ? (localStorage.getItem('" + RECORDS_KEY + "' + t) || '') : '')"
    if from_choice:
        return f"(t) => [t, {get}]"
    return f"() => {{ const t = new URL(window.location.href).searchParams.get('thread'); return [{get}]; }}"


def clear_thread_url_js() -> str:
    return ("() => { const u = new URL(window.location.href); u.searchParams.delete('thread');"
            " window.history.replaceState(null, '', u); if (window.gaResetScroll) window.gaResetScroll(); return []; }")


def theme() -> object:
    """Gradio's default theme on the reader's own system fonts. The default asks Google Fonts for Source
    Sans Pro, which an offline server cannot reach: bold text then fell back to a mismatched face."""
    import gradio as gr

    sans = ["system-ui", "-apple-system", "Segoe UI", "Roboto", "Noto Sans", "DejaVu Sans", "sans-serif"]
    mono = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "DejaVu Sans Mono", "monospace"]
    return gr.themes.Default(font=sans, font_mono=mono)


def font_faces() -> tuple[str, list[str]]:
    """(a <style> of @font-face rules for the Urdu fonts this server has, the files to allow Gradio to serve)."""
    rules, files = [], []
    for (family, weight), path in URDU_FONT_FILES.items():
        if path.is_file():
            files.append(str(path))
            rules.append(f'@font-face {{ font-family: "{family}"; font-weight: {weight}; font-display: swap; '
                         f'src: local("{family}"), url("/gradio_api/file={path}") format("truetype"); }}')
    return (f"<style>{' '.join(rules)}</style>" if rules else ""), files
