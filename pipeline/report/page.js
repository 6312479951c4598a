// trajset report: the session list (search, pages) and the tree of the session chosen.
// Reads the JSON in <script id="report-data">; no network, no library.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const sessions = data.sessions;
  const pairs = data.pairs.pairs;
  const PAGE = 50;  // sessions per page
  const PAIR_PAGE = 15;  // pairs per page: each row is a pair to read

  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const SVG = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  };
  const score = (s) => (s === null || s === undefined ? "–" : Number(s).toFixed(2));

  function matches(s, q) {
    if (!q) return true;
    if (s.id.toLowerCase().includes(q)) return true;
    return s.leaves.some((l) => String(l.leaf).toLowerCase().includes(q) || String(l.label || "").toLowerCase().includes(q));
  }

  // A searchable list shown `size` rows at a time: the sessions and the preference pairs.
  function pagedList({ items, search, body, prev, next, info, noun, match, row, size = PAGE }) {
    const index = new Map(items.map((item, i) => [item, i]));
    let shown = items, page = 0;
    const draw = () => {
      body.replaceChildren();
      const start = page * size;
      shown.slice(start, start + size).forEach((item) => body.append(row(item, index.get(item))));
      const pages = Math.max(1, Math.ceil(shown.length / size));
      info.textContent = `${shown.length} of ${items.length} ${noun} · page ${page + 1} of ${pages}`;
      prev.disabled = page === 0;
      next.disabled = page + 1 >= pages;
    };
    search.addEventListener("input", (ev) => {
      const q = ev.target.value.trim().toLowerCase();
      shown = items.filter((item) => match(item, q));
      page = 0;
      draw();
    });
    prev.addEventListener("click", () => { page = Math.max(0, page - 1); draw(); });
    next.addEventListener("click", () => { page += 1; draw(); });
    draw();
  }

  const clickable = (rowEl, open) => {
    rowEl.addEventListener("click", open);
    rowEl.addEventListener("keydown", (ev) => { if (ev.key === "Enter") open(); });
    return rowEl;
  };

  function sessionRow(s, i) {
    const row = el("tr", { "data-session": String(i), class: "session-row", tabindex: "0" });
    row.append(el("td", {}, s.id), el("td", {}, String(s.leaves.length)), el("td", {}, String(s.forks)), el("td", {}, score(s.best)));
    return clickable(row, () => openSession(i));
  }

  // --- preference pairs: the list, and one pair's prompt above its two sides
  const pairText = (p) => [...p.prompt, ...p.chosen, ...p.rejected].map((m) => m.t).join(" ").toLowerCase();
  function pairMatches(p, q) {
    if (!q) return true;
    return [p.session, p.kind, p.policy].some((v) => String(v).toLowerCase().includes(q)) || pairText(p).includes(q);
  }

  const firstText = (msgs) => { const m = msgs.find((x) => x.t || x.c); return m ? (m.t || `calls ${m.c.join(", ")}`) : ""; };

  function pairRow(p, i) {
    const row = el("tr", { class: "pair-row", "data-pair": String(i), tabindex: "0" });
    row.append(el("td", { class: "id", title: p.session }, p.session), el("td", {}, p.kind), el("td", {}, p.policy),
      el("td", { class: "num" }, score(p.chosen_score)), el("td", { class: "num" }, score(p.rejected_score)),
      el("td", { class: "num" }, score(p.margin)), el("td", { class: "snippet" }, firstText(p.chosen).slice(0, 90)));
    return clickable(row, () => openPair(i));
  }

  function messages(box, msgs, total, what) {
    for (const m of msgs) {
      const item = el("div", { class: `msg role-${m.role}` });
      item.append(el("p", { class: "role" }, m.role));
      if (m.t) item.append(el("pre", { class: "message" }, m.t));
      if (m.r) item.append(el("pre", { class: "reasoning" }, m.r));
      if (m.c) item.append(el("p", { class: "calls" }, `tool calls: ${m.c.join(", ")}`));
      box.append(item);
    }
    if (total > msgs.length) box.append(el("p", { class: "meta" }, `… ${total - msgs.length} more message${total - msgs.length === 1 ? "" : "s"} ${what}`));
  }

  function openPair(i) {
    const p = pairs[i];
    $("pair-title").textContent = `Pair ${p.id} · ${p.kind} · session ${p.session} · fork ${p.fork}`;
    const prompt = $("pair-prompt");
    prompt.replaceChildren(el("p", { class: "meta" }, p.prompt_n > p.prompt.length
      ? `prompt: ${p.prompt_n} messages, the last ${p.prompt.length} shown` : `prompt: ${p.prompt_n} message${p.prompt_n === 1 ? "" : "s"}`));
    messages(prompt, p.prompt, 0, "");
    for (const side of ["chosen", "rejected"]) {
      const box = $(`pair-${side}`);
      box.replaceChildren(el("h3", {}, `${side} · score ${score(p[side + "_score"])}`),
        el("p", { class: "meta" }, `leaf ${p[side + "_leaf"]} · ${p[side + "_n"]} messages${side === "chosen" && p.margin !== null ? ` · margin ${score(p.margin)}` : ""}`));
      messages(box, p[side], p[side + "_n"], "in the table");
    }
    document.querySelectorAll(".pair-row.selected").forEach((e) => e.classList.remove("selected"));
    const rowEl = document.querySelector(`.pair-row[data-pair="${i}"]`);
    if (rowEl) rowEl.classList.add("selected");
    $("pair-view").hidden = false;
  }

  // --- session trees
  // The best outcome score of the leaves below each node (null where none is scored).
  function bestBelow(s) {
    const best = s.nodes.map(() => null);
    for (const l of s.leaves) {
      if (l.node >= 0 && l.score !== null && (best[l.node] === null || l.score > best[l.node])) best[l.node] = l.score;
    }
    for (let k = s.nodes.length - 1; k >= 0; k--) {  // a child always comes after its parent
      const p = s.nodes[k].p;
      if (p >= 0 && best[k] !== null && (best[p] === null || best[k] > best[p])) best[p] = best[k];
    }
    return best;
  }

  function layout(s) {
    const children = s.nodes.map(() => []);
    const roots = [];
    s.nodes.forEach((n, i) => (n.p < 0 ? roots : children[n.p]).push(i));
    const pos = new Array(s.nodes.length);
    let row = 0;
    const place = (i, depth) => {
      if (!children[i].length) { pos[i] = { x: depth, y: row++ }; return; }
      children[i].forEach((c) => place(c, depth + 1));
      const first = pos[children[i][0]].y, last = pos[children[i][children[i].length - 1]].y;
      pos[i] = { x: depth, y: (first + last) / 2 };
    };
    // a parent always comes before its children, so depths take one pass
    const dep = [];
    s.nodes.forEach((n, i) => { dep[i] = n.p < 0 ? 0 : dep[n.p] + 1; });
    const maxDepth = dep.length ? dep.reduce((a, b) => Math.max(a, b), 0) : 0;
    if (maxDepth < 3000) roots.forEach((r) => place(r, 1));  // place() recurses once per level
    else s.nodes.forEach((_, i) => { pos[i] = { x: dep[i] + 1, y: 0 }; });
    return { pos, rows: Math.max(row, 1), depth: maxDepth + 1 };
  }

  function pathTo(s, node) {
    const on = new Set();
    for (let i = node; i >= 0; i = s.nodes[i].p) on.add(i);
    return on;
  }

  function openSession(i) {
    const s = sessions[i];
    location.hash = `s=${i}`;
    $("tree-title").textContent = `Session ${s.id}`;
    const pref = s.leaves.find((l) => l.preferred) || s.leaves.find((l) => l.main);
    const onPath = pref && pref.node >= 0 ? pathTo(s, pref.node) : new Set();
    const { pos, rows, depth } = layout(s);
    const dx = 34, dy = 26, r = 7;
    const w = (depth + 1) * dx + 220, h = rows * dy + 30;
    const g = svg("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, id: "tree-svg" });
    const X = (p) => p.x * dx, Y = (p) => p.y * dy + 20;
    g.append(svg("circle", { cx: 0.5 * dx, cy: h / 2, r: 4, class: "start" }));
    s.nodes.forEach((n, k) => {
      const a = n.p >= 0 ? pos[n.p] : { x: 0.5, y: (h / 2 - 20) / dy };
      const b = pos[k];
      g.append(svg("path", {
        d: `M${X(a)},${Y(a)} C${X(a) + dx / 2},${Y(a)} ${X(b) - dx / 2},${Y(b)} ${X(b)},${Y(b)}`,
        class: onPath.has(k) ? "edge preferred" : "edge abandoned",
      }));
    });
    s.nodes.forEach((n, k) => {
      const c = svg("circle", {
        cx: X(pos[k]), cy: Y(pos[k]), r, class: `node src-${n.s || "other"}${onPath.has(k) ? " on-path" : ""}`,
        "data-node": k, tabindex: 0,
      });
      const t = svg("title", {});
      t.textContent = `${n.s}: ${n.t || (n.c || []).join(", ")}`;
      c.append(t);
      c.addEventListener("click", () => showNode(s, k));
      c.addEventListener("keydown", (ev) => { if (ev.key === "Enter") showNode(s, k); });
      g.append(c);
    });
    for (const l of s.leaves) {
      if (l.node < 0) continue;
      const p = pos[l.node];
      const label = svg("text", { x: X(p) + r + 4, y: Y(p) + 4, class: l.preferred ? "leaf preferred" : "leaf" });
      label.textContent = `${l.preferred ? "★ " : ""}${score(l.score)}${l.label ? " " + l.label : ""}${l.pass === true ? " pass" : l.pass === false ? " fail" : ""}`;
      g.append(label);
    }
    // each branch of a fork carries the best score of the leaves it leads to
    if (s.leaves.some((l) => l.score !== null)) {
      const best = bestBelow(s);
      const kids = new Map();  // parent -> children; -1 holds the roots
      s.nodes.forEach((n) => kids.set(n.p, (kids.get(n.p) || 0) + 1));
      s.nodes.forEach((n, k) => {
        if (kids.get(n.p) < 2) return;
        const label = svg("text", { x: X(pos[k]) - r, y: Y(pos[k]) - r - 3, class: "branch-score", "data-node": k });
        label.textContent = best[k] === null ? "unscored" : `best ${score(best[k])}`;
        g.append(label);
      });
    }
    $("tree").replaceChildren(g);
    const leaves = $("leaves");
    leaves.replaceChildren();
    for (const l of s.leaves) {
      const row = el("tr", { class: l.preferred ? "preferred" : "" });
      row.append(el("td", {}, l.leaf), el("td", {}, l.preferred ? "preferred" : l.abandoned_at ? `abandoned at ${l.abandoned_at}` : ""),
        el("td", {}, String(l.steps)), el("td", {}, score(l.score)), el("td", {}, l.label || ""), el("td", {}, l.atif || ""));
      leaves.append(row);
    }
    $("detail").replaceChildren(el("p", { class: "hint" }, "Click a node to see its step."));
    $("session-view").hidden = false;
  }

  function showNode(s, k) {
    const n = s.nodes[k];
    const box = $("detail");
    box.replaceChildren();
    box.append(el("h3", {}, `${n.s || "step"}${n.m ? " · " + n.m : ""}`));
    box.append(el("p", { class: "meta" }, `entry ${n.e || "–"}${n.k ? ` · ${n.k} tokens` : ""}`));
    if (n.t) box.append(el("pre", { class: "message" }, n.t));
    if (n.r) box.append(el("pre", { class: "reasoning" }, n.r));
    if (n.c) box.append(el("p", { class: "calls" }, `tool calls: ${n.c.join(", ")}`));
    for (const o of n.o || []) box.append(el("pre", { class: "output" }, o));
    const through = s.leaves.filter((l) => l.node >= 0 && pathTo(s, l.node).has(k)).map((l) => l.leaf);
    box.append(el("p", { class: "meta" }, `on the path of ${through.length} trajector${through.length === 1 ? "y" : "ies"}`));
    document.querySelectorAll("#tree .node.selected").forEach((e) => e.classList.remove("selected"));
    const dot = document.querySelector(`#tree .node[data-node="${k}"]`);
    if (dot) dot.classList.add("selected");
  }

  pagedList({
    items: sessions, search: $("search"), body: $("session-rows"), prev: $("prev"), next: $("next"),
    info: $("page-info"), noun: "sessions", match: matches, row: sessionRow,
  });
  if (pairs.length) {
    pagedList({
      items: pairs, search: $("pair-search"), body: $("pair-rows"), prev: $("pair-prev"), next: $("pair-next"),
      info: $("pair-page-info"), noun: "pairs", match: pairMatches, row: pairRow, size: PAIR_PAGE,
    });
  }
  const m = /^#s=(\d+)$/.exec(location.hash);
  if (m && sessions[Number(m[1])]) openSession(Number(m[1]));
  else if (sessions.length === 1) openSession(0);
})();
