// symgpt's page: reads the inputs, evaluates every closed form exactly (E, page_exact.js),
// writes the values (data-quantity / data-value), swaps formulas, redraws the plots, and links
// the compute graph to the tables. Nothing here counts: the closed forms come from symgpt.
const D = JSON.parse(document.getElementById("symgpt-data").textContent);
const $ = (q, el = document) => el.querySelector(q);
const $$ = (q, el = document) => [...el.querySelectorAll(q)];
const QS = new Map(D.quantities.map((q) => [q.name, q]));
const OPS = new Map(D.ops.map((o) => [o.path, o]));
let state = null, cache = new Map(), selected = null;

function ev(i, s) {
  if (i === null || i === undefined) return Q(0n);
  if (s !== state.s) return E[i](s);
  if (!cache.has(i)) cache.set(i, E[i](s));
  return cache.get(i);
}

function readInputs() {
  const s = {}, opts = {}, bad = [];
  for (const el of $$("[data-symbol], [data-option]")) {
    const name = el.dataset.symbol || el.dataset.option, v = el.value.trim();
    if (el.tagName === "SELECT") { opts[name] = v; continue; }
    if (!/^[1-9][0-9]{0,39}$/.test(v)) {
      el.setAttribute("aria-invalid", "true");
      bad.push(`${name} must be a positive integer (got ${JSON.stringify(v.slice(0, 20))})`);
      continue;
    }
    el.removeAttribute("aria-invalid");
    s[name] = Q(BigInt(v));
    opts[name] = v;
  }
  // a hardware profile binds the roofline's F_peak and BW_mem (exact integers from symgpt)
  if (D.hardware && opts.hardware in D.hardware) for (const [k, v] of Object.entries(D.hardware[opts.hardware])) s[k] = Q(BigInt(v));
  return { s, opts, bad };
}

function variant(q, opts) { return q.variants[q.pick[q.reads.map((r) => opts[r]).join("|")]]; }

/** "flops.train" -> its total; "flops.train[blocks/ffn/up]" -> that breakdown entry (null: 0) */
function lookup(spec) {
  const m = /^([^[]+)(?:\[(.*)\])?$/.exec(spec), q = QS.get(m[1]), v = variant(q, state.opts);
  if (m[2] === undefined) return { q, i: v.total };
  const part = v.parts.find((p) => p[0] === m[2]);
  return { q, i: part ? part[1] : null };
}

function approx(q, v) {
  if (q.unit === "bytes") return bytesText(v);
  return v.d === 1n && v.n < 10000n && v.n > -10000n ? "" : "≈ " + sci(v);
}

function update() {
  const st = readInputs();
  const problems = [...st.bad];
  if (!problems.length) {
    state = st; cache = new Map();
    for (const c of D.constraints) {
      const v = ev(c.expr, st.s);
      const ok = c.kind === "integer" ? v.d === 1n && v.n > 0n : v.n <= 0n;
      if (!ok) problems.push(c.message);
    }
  }
  const box = $("#problems");
  box.textContent = problems.join("; ");
  box.hidden = !problems.length;
  document.body.classList.toggle("invalid", problems.length > 0);
  if (problems.length) {
    for (const el of $$("[data-quantity]")) { el.dataset.value = ""; el.textContent = "—"; }
    for (const el of $$("[data-approx], [data-share], [data-human]")) el.textContent = "";
    return;
  }
  for (const el of $$("[data-quantity]")) {
    const { i } = lookup(el.dataset.quantity), v = ev(i, st.s);
    el.dataset.value = rawText(v);
    el.textContent = exactText(v);
  }
  for (const el of $$("[data-approx]")) {
    const { q, i } = lookup(el.dataset.approx);
    el.textContent = approx(q, ev(i, st.s));
  }
  for (const el of $$("[data-human]")) {
    const { q, i } = lookup(el.dataset.human);
    el.textContent = humanText(q.unit, ev(i, st.s));
  }
  for (const el of $$("[data-share]")) {
    const [part, whole] = el.dataset.share.split(" of ");
    const t = ev(lookup(whole).i, st.s);
    el.textContent = t.n === 0n ? "" : pct(M(ev(lookup(part).i, st.s), Q(t.d, t.n)));
  }
  servingFit();
  formulas(document);
  plots();
  if (selected) showOp(selected);
}

function formulas(root) {
  for (const el of $$("[data-formula]", root)) {
    const { i } = lookup(el.dataset.formula), key = String(i);
    if (el.dataset.expr === key) continue;
    el.dataset.expr = key;
    el.innerHTML = i === null ? "<math><mn>0</mn></math>" : D.mathml[i];
  }
}

/** the serving panel: a budget below zero means no sequence fits (the weights and workspace alone
 *  exceed the memory the engine may use), said in words rather than as a negative count */
function servingFit() {
  const box = $("#serving-fit");
  if (!box) return;
  const budget = ev(lookup("serving.kv_budget").i, state.s), el = $('#serving [data-quantity="serving.max_sequences"]');
  if (budget.n < 0n) {
    el.dataset.value = ""; el.textContent = "—";
    const ap = $('#serving [data-approx="serving.max_sequences"]'); if (ap) ap.textContent = "";
    const hu = $('#serving [data-human="serving.max_sequences"]'); if (hu) hu.textContent = "—";
    box.textContent = "No sequence fits: the weights and the workspace alone exceed the memory the cache may use on one device of this profile.";
  } else {
    box.textContent = "";
  }
}

// --- the compute graph: hover or focus shows an op, click or Enter selects its rows ------------
function esc(t) { return String(t).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }

function shapeText(sh) {
  const dims = sh.dims.map((i) => { const v = ev(i, state.s); return v.d === 1n ? String(v.n) : rawText(v); });
  const concrete = "(" + dims.join(", ") + (dims.length === 1 ? ",)" : ")");
  return sh.text === concrete ? esc(concrete) : `${esc(sh.text)} = ${esc(concrete)}`;
}

function showOp(path) {
  const o = OPS.get(path), box = $("#op-info");
  if (!o || !state || document.body.classList.contains("invalid")) return;
  const rows = D.op_rows.filter((r) => QS.has(r.quantity) && variant(QS.get(r.quantity), state.opts).parts.some((p) => p[0] === path))
    .map((r) => { const spec = `${esc(r.quantity)}[${esc(path)}]`;
      return `<dt>${esc(r.title)}</dt><dd><span data-formula="${spec}"></span><br>= <span class="num" data-quantity="${spec}"></span> <span class="ap" data-approx="${spec}"></span></dd>`; });
  box.innerHTML = `<h3>${esc(o.label)}</h3><p class="path"><code>${esc(o.path)}</code> · ${esc(o.describe)}${o.repeat ? " · " + esc(o.repeat) : ""}</p>`
    + `<p class="shapes">in ${o.inputs.map(shapeText).join(", ") || "—"}<br>out ${shapeText(o.output)}</p>`
    + (rows.length ? `<dl>${rows.join("")}</dl>` : "<p>no parameters, FLOPs or saved tensors</p>")
    + (o.repeat ? `<p class="note">formulas and values total all copies (${esc(o.repeat)})</p>` : "");
  for (const el of $$("[data-quantity]", box)) {
    const v = ev(lookup(el.dataset.quantity).i, state.s);
    el.dataset.value = rawText(v); el.textContent = exactText(v);
  }
  for (const el of $$("[data-approx]", box)) { const { q, i } = lookup(el.dataset.approx); el.textContent = approx(q, ev(i, state.s)); }
  formulas(box);
}

function select(path) {
  selected = selected === path ? null : path;
  for (const el of $$(".hl")) el.classList.remove("hl");
  for (const el of $$("#graph g.node[data-op]")) el.setAttribute("aria-pressed", String(el.dataset.op === selected));
  let n = 0;
  if (selected) {
    for (const el of $$(`[data-op="${CSS.escape(selected)}"]`)) { el.classList.add("hl"); if (el.tagName === "TR") n++; }
    showOp(selected);
  }
  $("#selection").textContent = selected ? `${selected}: ${n} table row${n === 1 ? "" : "s"} highlighted` : "";
}

for (const g of $$("#graph g.node[data-op]")) {
  const path = g.dataset.op;
  g.addEventListener("mouseenter", () => showOp(path));
  g.addEventListener("focus", () => showOp(path));
  g.addEventListener("click", () => select(path));
  g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(path); } });
}
for (const tr of $$("tr[data-op]")) tr.addEventListener("click", () => { if (OPS.has(tr.dataset.op)) select(tr.dataset.op); });
document.addEventListener("keydown", (e) => { if (e.key === "Escape" && selected) select(selected); });

// --- plots, redrawn as the inputs change --------------------------------------------------------
const NS = "http://www.w3.org/2000/svg";
function el(tag, attrs = {}, text) {
  const x = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) x.setAttribute(k, v);
  if (text !== undefined) x.textContent = text;
  return x;
}
const COLORS = ["#2f5d8a", "#e08a1e", "#6a9f3a", "#b8457a", "#7a5cc2", "#3a9fa0", "#a0522d", "#888"];

function plots() { crossoverPlot(); memoryPlot(); sharesPlot(); }

function crossoverPlot() {
  const c = D.plots.crossover, svg = $("#plot-flops");
  if (!c) return;  // no one sequence length T (an encoder-decoder's T_enc and T_dec, ViT)
  const sol = c.solution === null ? null : ev(c.solution, state.s);
  const T = toFloat(state.s.T);
  const xmax = Math.max(sol && sol.n > 0n ? 2 * toFloat(sol) : 0, 1.25 * T, 8);
  const pts = [];
  for (let k = 0; k <= 48; k++) {
    const t = BigInt(Math.max(1, Math.round((xmax * k) / 48)));
    const s = { ...state.s, T: Q(t) };
    pts.push([Number(t), toFloat(E[c.fast](s)), toFloat(E[c.slow](s))]);
  }
  const ymax = Math.max(...pts.map((p) => Math.max(p[1], p[2]))) || 1;
  const W = width(svg), H = 300, L = 84, R = 36, Tp = 28, B = 40;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const x = (v) => L + ((W - L - R) * v) / xmax, y = (v) => H - B - ((H - Tp - B) * v) / ymax;
  svg.replaceChildren();
  svg.append(el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }), el("line", { x1: L, y1: Tp, x2: L, y2: H - B, class: "axis" }));
  for (const f of [0, 0.5, 1]) {
    svg.append(el("text", { x: x(xmax * f), y: H - B + 16, "text-anchor": "middle" }, Math.round(xmax * f).toLocaleString("en-US")));
    svg.append(el("text", { x: L - 6, y: y(ymax * f) + 4, "text-anchor": "end" }, f ? sci(Q(BigInt(Math.round(ymax * f))), 2) : "0"));
  }
  svg.append(el("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, "T (sequence length)"));
  svg.append(el("text", { x: 4, y: 12 }, "FLOPs"));
  [[1, COLORS[1], c.fast_label], [2, COLORS[0], c.slow_label]].forEach(([j, color]) => {
    svg.append(el("polyline", { points: pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[j]).toFixed(1)}`).join(" "), fill: "none", stroke: color, "stroke-width": 2.5 }));
  });
  svg.append(el("line", { x1: x(T), y1: Tp, x2: x(T), y2: H - B, stroke: "#222", "stroke-dasharray": "2 3" }));
  svg.append(el("text", { x: x(T) + 4, y: Tp + 12 }, "T now"));
  if (sol && sol.n > 0n && toFloat(sol) <= xmax) {
    svg.append(el("line", { x1: x(toFloat(sol)), y1: Tp, x2: x(toFloat(sol)), y2: H - B, stroke: "#b8457a", "stroke-width": 1.5, "stroke-dasharray": "6 4" }));
    svg.append(el("text", { x: x(toFloat(sol)) + 4, y: Tp + 28, fill: "#b8457a" }, "crossover T = " + dec(sol, 4)));
  }
}

/** the drawing width: the figure's width on screen, so that text stays legible on a phone */
const width = (svg) => Math.round(Math.min(640, Math.max(340, svg.getBoundingClientRect().width || 640)));

function barRows(svg, items, total, unitText) {
  const W = width(svg), rowH = 26, L = Math.min(150, Math.round(W * 0.38)), R = Math.min(150, Math.round(W * 0.3));
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${rowH * items.length + 8}`);
  const t = toFloat(total) || 1;
  items.forEach(([label, v], j) => {
    const w = Math.max(0, ((W - L - R) * toFloat(v)) / t), yy = 4 + j * rowH;
    svg.append(el("text", { x: L - 6, y: yy + 16, "text-anchor": "end" }, label));
    svg.append(el("rect", { x: L, y: yy + 3, width: w.toFixed(1), height: rowH - 8, fill: COLORS[j % COLORS.length], rx: 2 }));
    svg.append(el("text", { x: L + w + 6, y: yy + 16 }, unitText(v)));
  });
}

function memoryPlot() {
  const items = D.plots.memory.map((k) => [k, ev(lookup("memory." + k).i, state.s)]);
  const total = ev(lookup("memory.total").i, state.s);
  barRows($("#plot-memory"), items, total, (v) => `${dec(M(v, Q(1n, TEN(9))))} GB · ${total.n ? pct(M(v, Q(total.d, total.n))) : ""}`);
}

function sharesPlot() {
  const total = ev(lookup("params").i, state.s);
  const items = D.plots.shares.map(([p, i]) => [p, ev(i, state.s)]);
  barRows($("#plot-shares"), items, items.reduce((a, b) => (cmp(a, b[1]) > 0 ? a : b[1]), Q(0n)),
    (v) => (total.n ? pct(M(v, Q(total.d, total.n))) : ""));
}

for (const x of $$("[data-symbol], [data-option]")) { x.addEventListener("input", update); x.addEventListener("change", update); }
$("#reset").addEventListener("click", () => { for (const x of $$("[data-symbol], [data-option]")) x.value = x.dataset.default; update(); });
let resizing = 0;
window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(() => { if (state && !document.body.classList.contains("invalid")) plots(); }, 100); });
update();
document.body.dataset.ready = "true";
