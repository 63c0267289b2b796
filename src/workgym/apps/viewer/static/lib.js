// Shared helpers: DOM building (text only, never innerHTML), the API client and the router.
"use strict";

const WG = (window.WG = {});

// el("div", {class: "x", onclick: fn}, "text", child) -- strings become text nodes, so
// whatever the data holds (agent output, tool output, file names) is shown, never parsed.
WG.el = function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  WG.append(node, children);
  return node;
};

WG.append = function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

// Replace a node's children (null/undefined/false children are skipped, arrays flattened).
WG.fill = function fill(node, ...children) {
  return WG.append(WG.clear(node), children);
};

WG.clear = function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
};

WG.fmt = function fmt(x, digits = 3) {
  if (x === null || x === undefined) return "–";
  if (typeof x === "number") {
    if (Number.isInteger(x)) return x.toLocaleString("en-US");
    return x.toFixed(digits);
  }
  if (typeof x === "boolean") return x ? "yes" : "no";
  return typeof x === "string" ? x : JSON.stringify(x);
};

WG.json = function json(value) {
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2);
};

WG.pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%");

WG.api = async function api(path, params, body) {
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") url.searchParams.set(k, v);
  }
  const init = body === undefined ? {} : {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify(body),
  };
  const response = await fetch(url, init);
  const data = await response.json().catch(() => ({error: response.statusText}));
  if (!response.ok) throw new Error(data.error || data.detail || response.statusText);
  return data;
};

// Hash routes: #/page?key=value ; pages register themselves in WG.pages.
WG.pages = {};

WG.route = function route() {
  const hash = window.location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  return {page: path.replace(/^\//, "") || "home", params: new URLSearchParams(query || "")};
};

WG.href = function href(page, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") query.set(k, v);
  }
  const qs = query.toString();
  return "#/" + page + (qs ? "?" + qs : "");
};

WG.crumbs = function crumbs(...items) {
  const nav = WG.clear(document.getElementById("crumbs"));
  for (const [label, link] of items) {
    nav.appendChild(WG.el("span", {class: "sep"}, "/"));
    nav.appendChild(link ? WG.el("a", {href: link}, label) : WG.el("span", {}, label));
  }
};

WG.error = function error(main, err) {
  WG.clear(main).appendChild(WG.el("div", {class: "banner bad", role: "alert"}, String(err.message || err)));
};

// Each render draws into a detached view and swaps it in only if no newer navigation started
// meanwhile, so a slow page can never overwrite the page the user moved on to.
WG._token = 0;
WG.render = async function render() {
  const token = ++WG._token;
  const main = document.getElementById("main");
  const view = document.createElement("div");
  const {page, params} = WG.route();
  const handler = WG.pages[page];
  try {
    if (!handler) throw new Error("no page " + page);
    await handler(view, params);
  } catch (err) {
    WG.error(view, err);
  }
  if (token !== WG._token) return;
  WG.fill(main, view);
  main.dataset.ready = page;
};

// A small collapsible block: long text is folded to its first lines with a "show all" toggle.
WG.textBlock = function textBlock(text, opts = {}) {
  const cls = "text " + (opts.class || "");
  const content = text === null || text === undefined ? "" : String(text);
  const lines = content.split("\n");
  const limit = opts.lines || 14;
  if (lines.length <= limit && content.length <= (opts.chars || 1600)) {
    return WG.el("pre", {class: cls}, content);
  }
  const head = lines.slice(0, limit).join("\n").slice(0, opts.chars || 1600);
  const pre = WG.el("pre", {class: cls + " folded"}, head);
  const button = WG.el("button", {class: "fold", type: "button"},
    `show all ${lines.length} lines (${content.length.toLocaleString("en-US")} chars)`);
  button.addEventListener("click", () => {
    const open = pre.classList.toggle("folded");
    pre.textContent = open ? head : content;
    button.textContent = open ? `show all ${lines.length} lines (${content.length.toLocaleString("en-US")} chars)` : "fold";
  });
  return WG.el("div", {class: "foldable"}, pre, button);
};

WG.kv = function kv(rows) {
  return WG.el("table", {class: "kv"}, WG.el("tbody", {},
    rows.filter((r) => r).map(([k, v]) => WG.el("tr", {}, WG.el("th", {}, k),
      WG.el("td", {}, v instanceof Node ? v : WG.fmt(v))))));
};

WG.badge = function badge(text, kind) {
  return WG.el("span", {class: "badge " + (kind || "")}, text);
};

window.addEventListener("hashchange", () => WG.render());
document.addEventListener("DOMContentLoaded", () => WG.render());
