// The console's page: lists devices, previews a camera's MJPEG stream in the format chosen from
// its real list, and builds its controls from the controls JSON. Plain JS, no build step.
"use strict";
const token = new URLSearchParams(location.search).get("token");
const api = (path, params = {}) => {
  const query = new URLSearchParams(params);
  if (token) query.set("token", token);
  const text = query.toString();
  return path + (text ? "?" + text : "");
};
const $ = (id) => document.getElementById(id);
const element = (tag, text, attrs = {}) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
};
let camera = null, formats = [], cameraEvents = null, meterEvents = null;
const controlUpdaters = new Map();   // control key -> function showing a new value

async function getJSON(path, options) {
  const response = await fetch(path, options);
  const text = await response.text();
  if (!response.ok) throw new Error(text || response.statusText);
  return JSON.parse(text);
}

async function loadDevices() {
  const list = await getJSON(api("api/devices"));
  const cameras = $("cameras"); cameras.replaceChildren();
  for (const c of list.cameras) {
    const item = element("li", `${c.name} (${c.path || c.driver})`, { class: "camera", "data-id": c.id });
    item.onclick = () => chooseCamera(c);
    cameras.append(item);
  }
  if (!list.cameras.length) cameras.append(element("li", "no cameras"));
  $("screens").replaceChildren(...(list.screens.length ? list.screens.map((s) => element("li", `${s.name} ${s.width ? s.width + "x" + s.height : ""} (${s.backend})`)) : [element("li", "no screens")]));
  $("audio").replaceChildren(...(list.audio.length ? list.audio.map(audioRow) : [element("li", "no audio devices")]));
  $("problems").replaceChildren(...list.problems.map((p) => element("li", p)));
  if (!camera && list.cameras.length) chooseCamera(list.cameras[0]);
}

function audioRow(a) {
  const item = element("li", `${a.direction === "input" ? "Microphone" : "Speaker"}: ${a.description} (${a.backend})${a.isDefault ? " default" : ""}`,
                       { class: a.direction === "input" ? "microphone" : "speaker", "data-id": a.uniqueID });
  if (a.direction === "input") item.onclick = () => startMeter(a);
  return item;
}

// The microphone's level, ten times a second, while the meter runs (server-sent events).
function startMeter(a) {
  if (meterEvents) meterEvents.close();
  for (const item of document.querySelectorAll("#audio li")) item.classList.toggle("selected", item.dataset.id === a.uniqueID);
  $("meter-name").textContent = a.description;
  meterEvents = new EventSource(api("api/audio/level", { device: a.uniqueID }));
  meterEvents.addEventListener("level", (event) => {
    const level = JSON.parse(event.data);
    const rms = Math.max(...level.rms), peak = Math.max(...level.peak);
    $("meter-bar").style.width = `${Math.max(0, Math.min(100, 100 + rms * (100 / 60)))}%`;   // -60..0 dBFS
    $("meter-text").textContent = `${rms.toFixed(1)} dBFS RMS, peak ${peak.toFixed(1)}`;
  });
  meterEvents.addEventListener("problem", (event) => { $("meter-text").textContent = JSON.parse(event.data).message; meterEvents.close(); });
}

const commonSizes = [[320, 240], [640, 480], [800, 600], [1280, 720], [1920, 1080], [3840, 2160]];
const commonRates = ["5", "10", "15", "24", "25", "30", "60"];
const rateValue = (text) => { const [n, d] = text.split("/").map(Number); return d ? n / d : n; };

function sizesOf(format) {
  const sizes = [];
  for (const option of format.sizes) {
    if (option.width) sizes.push({ width: option.width, height: option.height, rates: option.rates });
    else for (const [w, h] of commonSizes)
      if (w >= option.minWidth && w <= option.maxWidth && h >= option.minHeight && h <= option.maxHeight)
        sizes.push({ width: w, height: h, rates: option.rates });
  }
  return sizes;
}

function ratesOf(size) {
  const rates = [];
  for (const r of size.rates) {
    if (r.fps) rates.push(r.fps);
    else for (const c of commonRates) if (rateValue(c) >= rateValue(r.minFPS) && rateValue(c) <= rateValue(r.maxFPS)) rates.push(c);
  }
  return [...new Set(rates)];
}

function fill(select, values, label) {
  select.replaceChildren(...values.map((v, i) => { const o = element("option", label(v)); o.value = i; return o; }));
}

async function chooseCamera(c) {
  camera = c;
  for (const item of document.querySelectorAll("#cameras li")) item.classList.toggle("selected", item.dataset.id === c.id);
  $("camera-title").textContent = c.name;
  watchCamera(c);
  formats = (await getJSON(api(`api/cameras/${encodeURIComponent(c.id)}/formats`))).formats;
  fill($("format"), formats, (f) => `${f.pixelFormat} ${f.description}`);
  formatChanged();
  loadControls();
}

function formatChanged() {
  const format = formats[$("format").value];
  const sizes = format ? sizesOf(format) : [];
  fill($("size"), sizes, (s) => `${s.width}x${s.height}`);
  const vga = sizes.findIndex((s) => s.width === 640 && s.height === 480);
  if (vga >= 0) $("size").value = vga;
  sizeChanged();
}

function sizeChanged() {
  const format = formats[$("format").value];
  const size = format ? sizesOf(format)[$("size").value] : null;
  const rates = size ? ratesOf(size) : [];
  fill($("rate"), rates, (r) => `${r} fps`);
  // 30 fps when offered, else the fastest rate up to 30 (the list may start at 1 fps).
  let chosen = rates.indexOf("30");
  if (chosen < 0) rates.forEach((r, i) => { if (rateValue(r) <= 30 && (chosen < 0 || rateValue(r) > rateValue(rates[chosen]))) chosen = i; });
  if (chosen >= 0) $("rate").value = chosen;
  startPreview();
}

function startPreview() {
  const format = formats[$("format").value];
  if (!camera || !format) return;
  const size = sizesOf(format)[$("size").value];
  const rate = size ? ratesOf(size)[$("rate").value] : undefined;
  const params = { format: format.pixelFormat };
  if (size) { params.width = size.width; params.height = size.height; }
  if (rate) params.fps = rate;
  $("preview").src = api(`api/cameras/${encodeURIComponent(camera.id)}/stream.mjpg`, params);
  $("status").textContent = `${format.pixelFormat} ${size ? size.width + "x" + size.height : ""} ${rate ? "@ " + rate + " fps" : ""}`;
}

// The chosen camera's control changes (also another program's) and its capture statistics.
function watchCamera(c) {
  if (!live) return;   // opened once the page is live (below)
  if (cameraEvents) cameraEvents.close();
  $("stats").textContent = "";
  cameraEvents = new EventSource(api(`api/cameras/${encodeURIComponent(c.id)}/events`));
  cameraEvents.addEventListener("control", (event) => {
    const change = JSON.parse(event.data);
    const show = controlUpdaters.get(change.key);
    if (show) show(change.value && typeof change.value === "object" ? Object.values(change.value)[0] : change.value);
  });
  cameraEvents.addEventListener("stats", (event) => {
    const s = JSON.parse(event.data);
    $("stats").textContent = `${s.fps.toFixed(2)} fps, ${s.delivered} delivered, ${s.dropped} dropped, ${s.corrupt} corrupt, ` +
      `delay ${s.meanDelayMilliseconds.toFixed(1)} ms mean, ${s.maxDelayMilliseconds.toFixed(1)} ms max, ${s.viewers} viewer${s.viewers === 1 ? "" : "s"}`;
  });
}

async function loadControls() {
  const box = $("controls"); box.replaceChildren(); controlUpdaters.clear();
  let controls;
  try { controls = await getJSON(api(`api/cameras/${encodeURIComponent(camera.id)}/controls`)); }
  catch (error) { box.append(element("p", error.message)); return; }
  if (!controls.length) box.append(element("p", "This camera has no controls."));
  for (const c of controls) box.append(controlRow(c));
}

function controlRow(c) {
  const row = element("div", undefined, { class: "control", "data-key": c.key });
  row.append(element("label", c.name));
  const typeName = { 1: "integer", 2: "boolean", 3: "menu", 9: "menu" }[c.type] || "other";
  const value = c.value && typeof c.value === "object" ? Object.values(c.value)[0] : c.value;
  const readOnly = Boolean(c.flags & (0x0001 | 0x0004));   // V4L2_CTRL_FLAG_DISABLED, _READ_ONLY
  let input;
  if (typeName === "boolean") {
    input = element("input", undefined, { type: "checkbox" }); input.checked = value == 1;
    controlUpdaters.set(c.key, (v) => { input.checked = v == 1; });
    input.onchange = () => setControl(c, input.checked, row);
  } else if (typeName === "menu") {
    input = element("select");
    for (const entry of c.menu) { const o = element("option", entry.value != null ? `${entry.name} (${entry.value})` : entry.name); o.value = entry.index; input.append(o); }
    input.value = value;
    controlUpdaters.set(c.key, (v) => { input.value = v; });
    input.onchange = () => setControl(c, Number(input.value), row);
  } else if (typeName === "integer") {
    input = element("input", undefined, { type: "range", min: c.minimum, max: c.maximum, step: c.step || 1 });
    input.value = value;
    const shown = element("span", String(value), { class: "value" });
    controlUpdaters.set(c.key, (v) => { input.value = v; shown.textContent = String(v); });
    input.oninput = () => { shown.textContent = input.value; };
    input.onchange = () => setControl(c, Number(input.value), row);
    input.disabled = readOnly;
    row.append(input, shown);
    return row;
  } else {
    input = element("span", String(value ?? ""));
  }
  if (input.disabled !== undefined) input.disabled = readOnly;
  row.append(input);
  return row;
}

async function setControl(c, value, row) {
  row.classList.remove("error");
  try {
    await getJSON(api(`api/cameras/${encodeURIComponent(camera.id)}/controls`),
                  { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ [c.key]: value }) });
  } catch (error) {
    row.classList.add("error"); row.title = error.message;
  }
}

$("format").onchange = formatChanged;
$("size").onchange = sizeChanged;
$("rate").onchange = startPreview;
$("refresh").onclick = loadDevices;
// Hotplug: the lists follow the devices without a reload. The live streams (this one and the
// camera's) open 3 s after the page's first load, so a page that only looks once (a headless
// check or preview with a short budget) holds none open.
let reloadTimer = null, live = false;
setTimeout(() => {
  live = true;
  new EventSource(api("api/events")).addEventListener("devices", () => {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => loadDevices().catch(() => {}), 300);
  });
  if (camera) watchCamera(camera);
}, 3000);
loadDevices().catch((error) => { $("problems").replaceChildren(element("li", error.message)); });
