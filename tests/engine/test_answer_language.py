"""The answer's language: Urdu script in Urdu, English and Roman Urdu in English, unless the user
(or `--lang`, or the API's `lang`) says otherwise."""

import pytest

from tools.errors import InvalidInput


def test_roman_urdu_is_answered_in_english_unless_lang_says_urdu(adv):
    q = "bhai mistral 7b A100 pe chalega?"
    assert adv.ask(q).language == "en"
    ur = adv.ask(q, lang="ur")
    assert ur.language == "ur" and "سما" in ur.answer


def test_urdu_script_can_be_answered_in_english(adv):
    a = adv.ask("کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟", lang="en")
    assert a.language == "en" and "fits" in a.answer


def test_an_unknown_language_is_refused_by_name(adv):
    with pytest.raises(InvalidInput, match="lang"):
        adv.ask("hi", lang="fr")


def test_cli_lang_flag(capsys, tmp_path, monkeypatch):
    from assistant.main import main

    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    assert main(["ask", "--lang", "ur", "Can I run Mistral 7B on an A100?"]) == 0
    assert "سما" in capsys.readouterr().out
