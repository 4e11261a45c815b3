"use strict";
// llmeval report: the problems table (sort, filter, expand). Model text goes in via textContent only.
(function () {
  const DATA = JSON.parse(document.getElementById("llmeval-data").textContent);
  const P = DATA.problems;
  const PAGE = 500;
  const state = { task: "all", filter: "all", query: "", key: null, dir: 1, open: new Set(), shown: PAGE };
  const FILTERS = {
    all: () => true,
    wrong: (p) => p.wrong > 0,
    no_answer: (p) => p.noans > 0,
    truncated: (p) => p.trunc > 0,
  };
  // a sample row: [sample_idx, status, pred, finish_reason, tokens, latency_s]
  const SAMPLE_FILTERS = {
    all: () => true,
    wrong: (s) => s[1] !== "correct",
    no_answer: (s) => s[1] === "no_answer",
    truncated: (s) => s[3] === "length",
  };
  const COLS = [
    ["task", "task"], ["id", "problem"], ["subject", "subject"], ["level", "level"],
    ["frac", "correct"], ["n", "n"], ["maj", "majority answer"], ["gold", "gold"],
    ["wrong", "wrong"], ["noans", "no answer"], ["trunc", "truncated"],
  ];

  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "text") e.textContent = v == null ? "" : String(v);
      else if (k === "cls") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const kid of kids) if (kid != null) e.append(kid);
    return e;
  }

  const textCache = new Map();
  function texts(i) {
    if (!textCache.has(i)) textCache.set(i, loadTexts(i));
    return textCache.get(i);
  }
  async function loadTexts(i) {
    const node = document.getElementById("t" + i);
    if (node.dataset.enc !== "gzip") return JSON.parse(node.textContent);
    const bin = Uint8Array.from(atob(node.textContent.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function visible() {
    const q = state.query.toLowerCase();
    const rows = [];
    P.forEach((p, i) => {
      if (state.task !== "all" && p.task !== state.task) return;
      if (!FILTERS[state.filter](p)) return;
      if (q && !String(p.id).toLowerCase().includes(q) && !String(p.subject || "").toLowerCase().includes(q)) return;
      rows.push(i);
    });
    if (state.key) {
      const k = state.key;
      rows.sort((a, b) => {
        const x = P[a][k], y = P[b][k];
        if (x == null || y == null) return (x == null) - (y == null);
        const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
        return c * state.dir || a - b;
      });
    }
    return rows;
  }

  function controls() {
    const box = document.getElementById("controls");
    const tasks = ["all", ...new Set(P.map((p) => p.task))];
    const taskSel = el("select", { id: "task-select", onchange: (e) => { state.task = e.target.value; render(); } },
      ...tasks.map((t) => el("option", { value: t, text: t })));
    const filterSel = el("select", { id: "filter-select", onchange: (e) => { state.filter = e.target.value; state.shown = PAGE; render(); } },
      el("option", { value: "all", text: "all problems" }),
      el("option", { value: "wrong", text: "with wrong samples" }),
      el("option", { value: "no_answer", text: "with no-answer samples" }),
      el("option", { value: "truncated", text: "with truncated samples" }));
    filterSel.value = state.filter;
    const search = el("input", { id: "search", type: "search", placeholder: "problem id or subject",
      oninput: (e) => { state.query = e.target.value; render(); } });
    box.append(el("label", { text: "task " }, taskSel), el("label", { text: "show " }, filterSel), search,
      el("span", { id: "count", cls: "note" }));
  }

  function header() {
    return el("thead", {}, el("tr", {}, ...COLS.map(([key, name]) => el("th", {
      text: name, "data-key": key,
      cls: state.key === key ? (state.dir > 0 ? "sorted-asc" : "sorted-desc") : "",
      onclick: () => { state.dir = state.key === key ? -state.dir : 1; state.key = key; render(); },
    }))));
  }

  function problemRow(i) {
    const p = P[i];
    const cells = COLS.map(([key]) => {
      if (key === "frac") {
        return el("td", { cls: "num" }, el("span", { cls: "track" }, el("span", { cls: "bar", style: `width:${Math.round(p.frac * 50)}px` })),
          (100 * p.frac).toFixed(1) + "%");
      }
      const cls = ["n", "wrong", "noans", "trunc", "level"].includes(key) ? "num"
        : key === "maj" ? "ans " + (p.majok ? "maj-ok" : "maj-bad") : key === "gold" ? "ans" : "";
      return el("td", { cls, text: p[key] });
    });
    const tr = el("tr", { cls: "prow" + (state.open.has(i) ? " open" : ""), "data-i": i, "data-id": p.id,
      onclick: () => { if (state.open.has(i)) state.open.delete(i); else state.open.add(i); render(); } }, ...cells);
    return tr;
  }

  function detailRow(i) {
    const p = P[i];
    const td = el("td", { colspan: COLS.length });
    const problem = el("pre", { cls: "text problem", text: "loading problem text…" });
    const shown = p.s.filter(SAMPLE_FILTERS[state.filter]);
    const note = el("p", { cls: "note", text: `${shown.length} of ${p.n} samples shown (filter: ${state.filter}); click a sample for its text.` });
    const tbody = el("tbody");
    const table = el("table", { cls: "samples" }, el("thead", {}, el("tr", {},
      ...["sample", "status", "extracted", "gold", "finish", "tokens", "latency s"].map((h) => el("th", { text: h })))), tbody);
    for (const s of shown) tbody.append(sampleRow(i, s, p.gold));
    texts(i).then((t) => { problem.textContent = t[0] || "(prompt not recorded)"; },
      (err) => { problem.textContent = "could not read the texts: " + err; });
    td.append(el("details", {}, el("summary", { text: "problem" }), problem), note, table);
    return el("tr", { cls: "detail" }, td);
  }

  function sampleRow(i, s, gold) {
    const [idx, status, pred, finish, tokens, latency] = s;
    const tr = el("tr", { cls: "srow", "data-sample": idx },
      el("td", { text: idx }), el("td", { cls: "st-" + status, text: status }),
      el("td", { cls: "ans", text: pred == null ? "–" : pred }), el("td", { cls: "ans", text: gold }),
      el("td", { text: finish == null ? "–" : finish }), el("td", { cls: "num", text: tokens == null ? "–" : tokens }),
      el("td", { cls: "num", text: latency == null ? "–" : latency.toFixed(1) }));
    let textRow = null;
    tr.addEventListener("click", () => {
      if (textRow) { textRow.remove(); textRow = null; return; }
      const td = el("td", { colspan: 7, cls: "sample-text" }, el("p", { cls: "note", text: "loading…" }));
      textRow = el("tr", {}, td);
      tr.after(textRow);
      texts(i).then((t) => {
        const pos = P[i].s.indexOf(s);
        let [reasoning, gen] = t[1][pos];
        const end = gen.lastIndexOf("</think>");
        if (!reasoning && end >= 0) {  // reasoning inline: fold what comes before the last </think>
          reasoning = gen.slice(0, end + 8);
          gen = gen.slice(end + 8).replace(/^\s+/, "");
        }
        td.textContent = "";
        if (reasoning) {
          td.append(el("details", {}, el("summary", { text: `reasoning (${reasoning.length} characters)` }),
            el("pre", { cls: "text reasoning", text: reasoning })));
        }
        td.append(el("pre", { cls: "text gen", text: gen }));
      });
    });
    return tr;
  }

  function render() {
    const rows = visible();
    const table = document.getElementById("ptable");
    const tbody = el("tbody");
    for (const i of rows.slice(0, state.shown)) {
      tbody.append(problemRow(i));
      if (state.open.has(i)) tbody.append(detailRow(i));
    }
    if (rows.length > state.shown) {
      tbody.append(el("tr", {}, el("td", { colspan: COLS.length },
        el("button", { text: `show ${Math.min(PAGE, rows.length - state.shown)} more`, onclick: () => { state.shown += PAGE; render(); } }))));
    }
    table.replaceChildren(header(), tbody);
    document.getElementById("count").textContent = `${rows.length} of ${P.length} problems`;
  }

  // The per-problem grid (section "grid"): a table per run, problems by solve rate, a cell per
  // sample with the glyph of its kind (s[6], decided by the report); a cell opens its sample.
  const GLYPHS = DATA.glyphs || {};
  const KIND_NAMES = DATA.kinds || {};
  function grids() {
    const box = document.getElementById("grids");
    if (!box) return;
    const byTask = new Map();
    P.forEach((p, i) => { if (!byTask.has(p.task)) byTask.set(p.task, []); byTask.get(p.task).push(i); });
    let first = true;
    for (const [task, idxs] of byTask) {
      idxs.sort((a, b) => P[b].frac - P[a].frac || a - b);
      const columns = [...new Set(idxs.flatMap((i) => P[i].s.map((s) => s[0])))].sort((a, b) => a - b);
      const det = el("details", { cls: "grid", "data-task": task },
        el("summary", { text: `${task}: ${idxs.length} problems × ${columns.length} samples` }));
      const fill = () => { if (!det.dataset.built) { det.dataset.built = "1"; det.append(gridTable(idxs, columns)); } };
      det.addEventListener("toggle", fill);
      if (first) { det.open = true; fill(); first = false; }
      box.append(det);
    }
  }

  function gridCell(i, p, j, s) {
    if (!s) return el("td", { cls: "gc gc-missing", "aria-label": `${p.id}, sample ${j}: not in the files`, text: "·" });
    const kind = s[6];
    const answer = s[2] == null ? "" : `, answer ${String(s[2]).slice(0, 80)}`;
    const label = `${p.id}, sample ${j}: ${KIND_NAMES[kind] || kind}${answer}`;
    const open = () => openSample(i, j);
    return el("td", { cls: "gc gc-" + kind, role: "button", tabindex: "0", title: label, "aria-label": label,
      "data-i": i, "data-sample": j, text: GLYPHS[kind] || "?", onclick: open,
      onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } } });
  }

  function gridTable(idxs, columns) {
    const head = el("tr", {}, el("th", { text: "problem" }), el("th", { text: "solved" }),
      ...columns.map((j) => el("th", { cls: "gi", text: j })));
    const body = el("tbody");
    for (const i of idxs) {
      const p = P[i];
      const bySample = new Map(p.s.map((s) => [s[0], s]));
      body.append(el("tr", { "data-id": p.id }, el("th", { cls: "gp", text: p.id }),
        el("td", { cls: "num", text: (100 * p.frac).toFixed(0) + "%" }),
        ...columns.map((j) => gridCell(i, p, j, bySample.get(j)))));
    }
    return el("table", { cls: "gridt" }, el("thead", {}, head), body);
  }

  // Open problem i in the problems table, every filter off, and the text of its sample idx.
  function openSample(i, idx) {
    Object.assign(state, { task: "all", filter: "all", query: "" });
    for (const [id, value] of [["task-select", "all"], ["filter-select", "all"], ["search", ""]]) {
      document.getElementById(id).value = value;
    }
    state.open.add(i);
    state.shown = Math.max(state.shown, visible().indexOf(i) + 1);
    render();
    const detail = document.querySelector(`#ptable tr.prow[data-i='${i}']`).nextElementSibling;
    const row = detail.querySelector(`tr.srow[data-sample='${idx}']`);
    if (row) { row.click(); row.scrollIntoView({ block: "center" }); }
  }

  // A link may carry #filter=wrong&task=aime24&open=<problem id>.
  function fromHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    if (FILTERS[h.get("filter")]) state.filter = h.get("filter");
    if (h.get("task")) state.task = h.get("task");
    if (h.has("open")) P.forEach((p, i) => { if (p.id === h.get("open")) state.open.add(i); });
  }

  fromHash();
  controls();
  render();
  grids();
  document.body.dataset.ready = "1";
})();
