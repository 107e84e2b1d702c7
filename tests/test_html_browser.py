"""The interactive page in a real browser (headless Chromium through Selenium; one session).

Each test sets inputs as a user would (typing, choosing), reads the values the page displays
and compares them, digit for digit, with symgpt's Python values and with independent oracles:
GPT-2-small's 124,439,808 parameters (the released checkpoint), LLaMA-7B's 6,738,415,616 and
Mixtral's 46,702,792,704 / 12,879,925,248 (the released models, also checked against
transformers in tests/test_arch_transformers.py), GPT-3-175B's training FLOPs by hand arithmetic
(beyond 2⁵³), and ZeRO-3's Ψ·K/N_d weights per device (an exact fraction on 7 ranks).
"""

from fractions import Fraction

import pytest

import helpers
import symgpt
from symgpt.documents.html import html
from symgpt.render.text import number

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

SUMMARY = ("params", "flops.forward", "flops.backward", "flops.train", "memory.weights",
           "memory.gradients", "memory.optimizer", "memory.activations", "memory.total", "memory.kv_cache")
MEMORY_OPTIONS = ("precision", "optimizer", "zero", "dp", "tp")


@pytest.fixture(scope="module")
def browser():
    b = helpers.chromium()
    b.set_window_size(1280, 1000)
    yield b
    b.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = folder / f"{name}.html"
            cache[name].write_text(html(symgpt.load(name)), encoding="utf-8")
        return cache[name]

    return get


def open_page(b, path):
    b.get(path.as_uri())
    assert b.execute_script("return document.body.dataset.ready") == "true"
    errors = [e for e in b.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def set_input(b, name, value, kind="symbol"):
    el = b.find_element(By.CSS_SELECTOR, f'[data-{kind}="{name}"]')
    if el.tag_name == "select":
        Select(el).select_by_visible_text(str(value))
    else:
        el.send_keys(Keys.CONTROL, "a")
        el.send_keys(str(value))


def shown(b, quantity, scope="#summary"):
    """(data-value, text) of the value displayed for *quantity*."""
    el = b.find_element(By.CSS_SELECTOR, f'{scope} [data-quantity="{quantity}"]')
    # the exact digits sit one click away (a closed <details> under the value in human units):
    # read them whether or not it is open
    return el.get_attribute("data-value"), el.get_attribute("textContent")


def expect(b, model, options, names=SUMMARY):
    """Every displayed value equals symgpt's Python value: data-value exactly, text as the CLI prints."""
    for name in names:
        opts = {k: v for k, v in options.items() if name.startswith("memory.")}
        v = model.quantity(name, **opts).value
        raw = str(v.p) + ("" if v.q == 1 else f"/{v.q}")
        assert shown(b, name) == (raw, number(v)), (name, options)


def test_gpt2_small_shows_the_cli_values_and_follows_its_inputs(browser, pages):
    open_page(browser, pages("gpt2-small"))
    assert shown(browser, "params") == ("124439808", "124,439,808")   # the released checkpoint
    expect(browser, symgpt.load("gpt2-small", B=8, T=1024), {})
    for name, value in (("B", 4), ("T", 512), ("L", 24), ("d", 1024), ("h", 16)):
        set_input(browser, name, value)
    expect(browser, symgpt.load("gpt2-small", B=4, T=512, L=24, d=1024, h=16), {})
    # the crossover of the plot: T = 6·d + V/(2·L) at d = 1024, L = 24
    want = Fraction(6 * 1024) + Fraction(50257, 2 * 24)
    assert shown(browser, "crossover.T", "#plots")[0] == f"{want.numerator}/{want.denominator}"
    assert browser.execute_script("return document.querySelectorAll('#plot-flops polyline').length") == 2


def test_gpt3_175b_training_flops_beyond_2_to_the_53(browser, pages):
    open_page(browser, pages("gpt3-175b"))
    L, V = 96, 50257
    for B, T, d in ((1536, 2048, 12288), (1535, 2047, 12384)):   # the second: no double holds it
        for name, value in (("B", B), ("T", T), ("d", d)):
            set_input(browser, name, value)
        want = 12 * B * L * T**2 * d + 72 * B * L * T * d**2 + 6 * B * T * V * d   # by hand
        assert want > 2**53 * 100
        assert shown(browser, "flops.train") == (str(want), f"{want:,}")
        expect(browser, symgpt.load("gpt3-175b", B=B, T=T, d=d), {}, names=("flops.forward", "flops.train", "params"))
    assert int(float(want)) != want


def test_zero3_share_is_an_exact_fraction(browser, pages):
    open_page(browser, pages("gpt2-small"))
    set_input(browser, "zero", 3, "option")
    set_input(browser, "dp", 7, "option")
    # ZeRO §5: Psi·K/N_d, fp32 weights (K = 4 bytes) on 7 ranks
    assert shown(browser, "memory.weights") == ("497759232/7", "497,759,232/7")
    options = dict(precision="fp32", optimizer="adamw", zero=3, dp=7)
    expect(browser, symgpt.load("gpt2-small", B=8, T=1024), options)
    for opt, value in (("precision", "mixed-bf16"), ("optimizer", "adam8bit"), ("tp", 4), ("zero", 2)):
        set_input(browser, opt, value, "option")
        options[opt] = value
    expect(browser, symgpt.load("gpt2-small", B=8, T=1024), options)


def test_llama_7b(browser, pages):
    open_page(browser, pages("llama-7b"))
    assert shown(browser, "params") == ("6738415616", "6,738,415,616")
    set_input(browser, "T", 2048)
    set_input(browser, "precision", "bf16", "option")
    set_input(browser, "tp", 8, "option")
    expect(browser, symgpt.load("llama-7b", B=8, T=2048), dict(precision="bf16", tp=8))


def test_mixtral_total_and_active_parameters(browser, pages):
    open_page(browser, pages("mixtral-8x7b"))
    assert shown(browser, "params") == ("46702792704", "46,702,792,704")
    assert shown(browser, "params.active") == ("12879925248", "12,879,925,248")
    set_input(browser, "T", 4096)
    set_input(browser, "k", 1)
    for opt, value in (("precision", "mixed-bf16"), ("zero", 3), ("dp", 24), ("tp", 2)):
        set_input(browser, opt, value, "option")
    expect(browser, symgpt.load("mixtral-8x7b", B=8, T=4096, k=1),
           dict(precision="mixed-bf16", zero=3, dp=24, tp=2), names=(*SUMMARY, "params.active"))


def test_mistral_sliding_window_min_t_w(browser, pages):
    # attention over Min(T, W) keys: compiled Min, on both sides of the window
    open_page(browser, pages("mistral-7b"))
    for T, W in ((2048, 4096), (8192, 4096), (8192, 1000)):
        set_input(browser, "T", T)
        set_input(browser, "W", W)
        expect(browser, symgpt.load("mistral-7b", B=8, T=T, W=W), {},
               names=("flops.forward", "flops.train", "memory.activations", "memory.kv_cache"))


def test_bad_input_is_refused_not_evaluated(browser, pages):
    open_page(browser, pages("gpt2-small"))
    problems = browser.find_element(By.ID, "problems")
    set_input(browser, "d", 770)
    assert "d must be divisible by h" in problems.text
    assert shown(browser, "params") == ("", "—")
    set_input(browser, "d", "768; alert(1)")
    assert "d must be a positive integer" in problems.text
    set_input(browser, "d", 768)
    set_input(browser, "tp", 5, "option")
    assert "tp must divide" in problems.text
    set_input(browser, "tp", 4, "option")
    assert not problems.is_displayed() and shown(browser, "params")[0] == "124439808"


def test_graph_ops_show_their_formulas_and_select_their_rows(browser, pages):
    open_page(browser, pages("gpt2-small"))
    m = symgpt.load("gpt2-small", B=8, T=1024)
    path = "blocks/ffn/up"
    node = browser.find_element(By.CSS_SELECTOR, f'#graph g.node[data-op="{path}"]')
    browser.execute_script("arguments[0].focus()", node)
    info = browser.find_element(By.ID, "op-info")
    assert "(B, T, d) = (8, 1024, 768)" in info.text and "(B, T, 4·d) = (8, 1024, 3072)" in info.text
    for q in ("params", "flops.forward", "flops.train", "memory.activations"):
        el = info.find_element(By.CSS_SELECTOR, f'[data-quantity="{q}[{path}]"]')
        assert el.get_attribute("data-value") == str(m.quantity(q).values()[path])
        assert info.find_element(By.CSS_SELECTOR, f'[data-formula="{q}[{path}]"] math')
    node.send_keys(Keys.ENTER)
    rows = browser.find_elements(By.CSS_SELECTOR, f'tr.hl[data-op="{path}"]')
    assert len(rows) == 3 and node.get_attribute("aria-pressed") == "true"   # params, FLOPs, activations
    node.send_keys(Keys.ESCAPE)
    assert not browser.find_elements(By.CSS_SELECTOR, "tr.hl")


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("name", ["gpt2-small", "deepseek-v3"])   # DeepSeek-V3: a long crossover formula
def test_screenshot_fits_the_width(browser, pages, tmp_path, width, name):
    open_page(browser, pages(name))
    browser.set_window_size(width, 900)
    try:
        overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow}px wider than a {width}px window"
        shot = tmp_path / f"page-{width}.png"
        assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    finally:
        browser.set_window_size(1280, 1000)


def test_encoder_decoder_page_two_lengths(browser, tmp_path):
    """T5-small's page (tests/test_encdec_transformers.py checks its counts against transformers):
    both lengths are inputs, every value follows them, and no plot against T is drawn (it has
    none)."""
    path = tmp_path / "t5-small.html"
    path.write_text(html(symgpt.load("t5-small", T_enc=64, T_dec=16)), encoding="utf-8")
    open_page(browser, path)
    assert shown(browser, "params") == ("60506624", "60,506,624")   # the released checkpoint
    expect(browser, symgpt.load("t5-small", B=8, T_enc=64, T_dec=16), {})
    for name, value in (("T_enc", 128), ("T_dec", 32)):
        set_input(browser, name, value)
    expect(browser, symgpt.load("t5-small", B=8, T_enc=128, T_dec=32), {})
    assert browser.execute_script("return document.querySelectorAll('#plot-flops').length") == 0


INFERENCE = ("inference.prefill.time", "inference.decode.time", "inference.kv_cache")


@pytest.mark.parametrize("name,sizes", [("gpt2-small", dict(B=8, T=1024)), ("llama-7b", dict(B=8, T=2048))])
def test_hardware_profile_inference_times(browser, pages, name, sizes):
    """A hardware profile binds F_peak and BW_mem: the page's roofline times (sums of Max over the
    ops, exact rationals), KV cache and decode tokens/s equal symgpt's ``infer`` values digit for
    digit; tokens/s is B / decode step by hand; the KV cache is 2·L·B·T·d 16-bit numbers (keys and
    values of every layer, by hand)."""
    open_page(browser, pages(name))
    for k, v in sizes.items():
        set_input(browser, k, v)
    for profile in ("h100-sxm", "a100-40gb", "tpu-v5e"):
        set_input(browser, "hardware", profile, "option")
        m = symgpt.load(name, **sizes)
        for q in INFERENCE:
            v = m.quantity(q, hardware=profile).value
            raw = str(v.p) + ("" if v.q == 1 else f"/{v.q}")
            assert shown(browser, q) == (raw, number(v)), (name, profile, q)
        dec = Fraction(str(m.quantity("inference.decode.time", hardware=profile).value))
        tps = sizes["B"] / dec
        assert shown(browser, "inference.decode.tokens_per_s")[0] == (
            str(tps.numerator) + ("" if tps.denominator == 1 else f"/{tps.denominator}"))
    L, d = m.sizes["L"], m.sizes["d"]
    assert shown(browser, "inference.kv_cache")[0] == str(2 * L * sizes["B"] * sizes["T"] * d * 2)


def _human(x: Fraction, steps, unit_word=None) -> str:
    """The page's rounding by hand: x in the largest of *steps* ((size, name), descending) it
    reaches, 3 significant digits, trailing zeros kept (``12.0``), thousands separated."""
    for size, name in steps:
        if x >= size:
            break
    v = x / size
    text = f"{float(v):#,.3g}".rstrip(".")
    return f"{text} {name}"


BYTE_STEPS = ((Fraction(10**15), "PB"), (Fraction(10**12), "TB"), (Fraction(10**9), "GB"), (Fraction(10**6), "MB"),
              (Fraction(10**3), "kB"), (Fraction(1), "B"))
TIME_STEPS = ((Fraction(3600), "h"), (Fraction(60), "min"), (Fraction(1), "s"), (Fraction(1, 1000), "ms"),
              (Fraction(1, 10**6), "µs"), (Fraction(1, 10**9), "ns"))


def test_values_in_human_units_first_the_exact_one_click_away(browser, pages):
    """Times in ms (or s, µs), bytes in GB (or MB, TB), rates in tokens/s are what a reader sees
    first; the exact value (the digits `symgpt` prints) shows when its "exact" line is clicked.
    The rounding is checked against Python's own 3-significant-digit formatting."""
    from selenium.webdriver.common.by import By as _By

    open_page(browser, pages("gpt2-small"))
    set_input(browser, "hardware", "h100-sxm", "option")
    m = symgpt.load("gpt2-small", B=8, T=1024)
    for name, steps in (("memory.weights", BYTE_STEPS), ("memory.total", BYTE_STEPS),
                        ("memory.kv_cache", BYTE_STEPS), ("inference.prefill.time", TIME_STEPS),
                        ("inference.decode.time", TIME_STEPS)):
        opts = {"hardware": "h100-sxm"} if name.startswith("inference.") else {}
        v = Fraction(str(m.quantity(name, **opts).value))
        human = browser.find_element(_By.CSS_SELECTOR, f'#summary [data-human="{name}"]')
        assert human.text == _human(v, steps), name
        exact = browser.find_element(_By.CSS_SELECTOR, f'#summary [data-quantity="{name}"]')
        assert exact.text == ""  # folded away
    dec = Fraction(str(m.quantity("inference.decode.time", hardware="h100-sxm").value))
    tps = 8 / dec  # B tokens per decode step, by hand
    shown_tps = browser.find_element(_By.CSS_SELECTOR, '#summary [data-human="inference.decode.tokens_per_s"]').text
    rounded = float(f"{float(tps):.3g}")  # 3 significant digits, written out below a million
    assert tps < 10**6 and shown_tps == (f"{int(rounded):,}" if rounded >= 100 else f"{rounded:#.3g}") + " tokens/s"
    # "291,687,555,757/32,371,337,890,625 seconds" is no longer the first thing shown: one click opens it
    row = browser.find_element(_By.CSS_SELECTOR, '#summary [data-human="inference.prefill.time"]')
    cell = row.find_element(_By.XPATH, "..")
    cell.find_element(_By.CSS_SELECTOR, "details.exact summary").click()
    v = m.quantity("inference.prefill.time", hardware="h100-sxm").value
    assert cell.find_element(_By.CSS_SELECTOR, '[data-quantity="inference.prefill.time"]').text == number(v)
