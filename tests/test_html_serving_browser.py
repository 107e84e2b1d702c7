"""The interactive page's serving panel in a real browser (headless Chromium through Selenium):
the KV budget, the bytes per sequence and the sequences that fit, evaluated exactly in the page
as the T, block and hardware inputs change, equal digit for digit to symgpt's Python values
(``symgpt.derive.serving``, as ``symgpt serve`` prices them: flash attention, 16-bit) and to
GPT-2-small's capacity worked by hand from its sizes and the H100 SXM datasheet's 80 GB."""

import pytest

import helpers
import symgpt
from symgpt.derive import serving
from symgpt.documents.html import html
from symgpt.render.text import number

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

PANEL = ("serving.kv_budget", "serving.kv_per_sequence", "serving.max_sequences")


@pytest.fixture(scope="module")
def browser():
    b = helpers.chromium()
    b.set_window_size(1280, 1000)
    yield b
    b.quit()


def open_page(b, tmp_path, name):
    path = tmp_path / f"{name}.html"
    path.write_text(html(symgpt.load(name)), encoding="utf-8")
    b.get(path.as_uri())
    assert b.execute_script("return document.body.dataset.ready") == "true"
    assert not [e for e in b.get_log("browser") if e["level"] == "SEVERE"]


def set_input(b, name, value, kind="symbol"):
    el = b.find_element(By.CSS_SELECTOR, f'[data-{kind}="{name}"]')
    if el.tag_name == "select":
        Select(el).select_by_visible_text(str(value))
    else:
        el.send_keys(Keys.CONTROL, "a")
        el.send_keys(str(value))


def shown(b, quantity):
    el = b.find_element(By.CSS_SELECTOR, f'#serving [data-quantity="{quantity}"]')
    # the exact digits sit one click away (a closed <details> under the value in human units):
    # read them whether or not it is open
    return el.get_attribute("data-value"), el.get_attribute("textContent")


def raw(v):
    v = sympy_rational(v)
    return str(v.p) + ("" if v.q == 1 else f"/{v.q}")


def sympy_rational(v):
    import sympy

    return sympy.Rational(v)


def expect(b, model, block, hardware):
    opts = {"hardware": hardware, "attention": "flash"}
    values = {"serving.kv_budget": serving.kv_budget(model, block=block, **opts).value,
              "serving.kv_per_sequence": serving.kv_per_sequence(model, block, **opts).value,
              "serving.max_sequences": serving.max_sequences(model, block=block, **opts).value}
    for name in PANEL:
        assert shown(b, name) == (raw(values[name]), number(values[name])), (name, block, hardware)
    return values


def test_gpt2_small_panel_follows_t_block_and_hardware(browser, tmp_path):
    open_page(browser, tmp_path, "gpt2-small")
    v = expect(browser, symgpt.load("gpt2-small", B=8, T=1024), 16, "h100-sxm")
    # by hand: 9/10 of 80 GB less 2 x 124,439,808 weight bytes and the 2048 x 50257 16-bit logits,
    # over 64 blocks of 16 tokens x 12 layers x (K + V) x 768 x 2 bytes
    budget = 72 * 10**9 - 2 * 124_439_808 - 2048 * 50257 * 2
    assert v["serving.max_sequences"] == budget // (64 * 16 * 12 * 2 * 768 * 2) == 1895
    set_input(browser, "T", 1000)
    set_input(browser, "block", 32)
    expect(browser, symgpt.load("gpt2-small", B=8, T=1000), 32, "h100-sxm")
    set_input(browser, "hardware", "tpu-v5e", "option")
    expect(browser, symgpt.load("gpt2-small", B=8, T=1000), 32, "tpu-v5e")
    assert browser.find_element(By.ID, "serving-fit").text == ""


def test_mixtral_does_not_fit_on_one_h100_and_says_so(browser, tmp_path):
    open_page(browser, tmp_path, "mixtral-8x7b")
    model = symgpt.load("mixtral-8x7b", B=8, T=32768)
    budget = serving.kv_budget(model, hardware="h100-sxm", attention="flash").value
    assert budget < 0 and shown(browser, "serving.kv_budget")[0] == raw(budget)
    with pytest.raises(symgpt.SymgptError, match="do not fit"):
        serving.max_sequences(model, hardware="h100-sxm", attention="flash")
    assert shown(browser, "serving.max_sequences") == ("", "—")
    assert "No sequence fits" in browser.find_element(By.ID, "serving-fit").text
    set_input(browser, "hardware", "mi300x", "option")
    expect(browser, model, 16, "mi300x")
    assert browser.find_element(By.ID, "serving-fit").text == ""
