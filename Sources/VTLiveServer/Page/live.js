"use strict";
// The live view. Every URL is relative, so the page also works behind a proxy under a sub-path.

const $ = id => document.getElementById(id);
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const DASH = "–";

async function request(url, options = {}, timeoutMs = 4000) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    return await fetch(url, {cache: "no-store", ...options, signal: abort.signal});
  } finally {
    clearTimeout(timer);
  }
}

async function getJSON(url) {
  const response = await request(url, {headers: {Accept: "application/json"}});
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

// Sends a command and answers the server's {"ok":…,"error":…} as [ok, message].
async function post(url, body) {
  try {
    const response = await request(url, {
      method: "POST",
      headers: {"Content-Type": "application/json", Accept: "application/json"},
      body: JSON.stringify(body ?? {}),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.ok && answer.ok !== false) return [true, null];
    return [false, answer.error || `HTTP ${response.status}`];
  } catch (error) {
    return [false, error.name === "AbortError" ? "no answer" : error.message];
  }
}

function say(element, ok, text) {
  element.textContent = text;
  element.className = "note " + (ok ? "ok" : "error");
  clearTimeout(element.hideTimer);
  element.hideTimer = setTimeout(() => { element.textContent = ""; }, 5000);
}

// ---- Live picture

const MAX_AHEAD = 0.5;    // seconds buffered beyond the playhead before skipping ahead
const KEEP_BEHIND = 10;   // seconds of played picture kept in the buffer
const STALL_MS = 5000;    // a stream silent this long is given up and opened again

const video = $("video");
const liveInfo = $("live-info");

function concat(chunks) {
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) { all.set(chunk, at); at += chunk.length; }
  return all;
}

// Plays one response of live.mp4 until it ends or fails. Returns false when the browser
// cannot play it through Media Source Extensions.
async function playStream() {
  const abort = new AbortController();
  const noAnswer = setTimeout(() => abort.abort(), STALL_MS);
  const response = await fetch("live.mp4", {cache: "no-store", signal: abort.signal})
    .finally(() => clearTimeout(noAnswer));
  // No live stream from this recording (it keeps a camera's own Motion JPEG): show that.
  if (response.status === 404) return false;
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const type = response.headers.get("Content-Type") || "";
  if (!window.MediaSource || !MediaSource.isTypeSupported(type)) {
    abort.abort();
    return false;
  }

  const source = new MediaSource();
  video.src = URL.createObjectURL(source);
  await new Promise(resolve => source.addEventListener("sourceopen", resolve, {once: true}));
  URL.revokeObjectURL(video.src);
  const buffer = source.addSourceBuffer(type);
  buffer.mode = "segments";

  let failure = null;
  const fail = error => { failure = failure || error; abort.abort(); };
  buffer.addEventListener("error", () => fail(new Error("the stream could not be decoded")));
  video.onerror = () => fail(new Error(video.error?.message || "video error"));

  let queued = [];
  function pump() {
    if (buffer.updating || source.readyState !== "open") return;
    const ranges = buffer.buffered;
    if (ranges.length) {
      const start = ranges.start(0), end = ranges.end(ranges.length - 1);
      // Stay near the newest picture: the stream may start far from 0, and a stall leaves a backlog.
      if (end - video.currentTime > MAX_AHEAD || video.currentTime < start) {
        video.currentTime = Math.max(start, end - 0.1);
      }
      if (video.paused) video.play().catch(() => {});
      liveInfo.textContent = `MSE · ${Math.max(0, end - video.currentTime).toFixed(2)} s buffered ahead`;
      if (!queued.length && video.currentTime - start > KEEP_BEHIND + 5) {
        buffer.remove(start, video.currentTime - KEEP_BEHIND);
        return;
      }
    }
    if (queued.length) {
      const chunk = concat(queued);
      queued = [];
      try { buffer.appendBuffer(chunk); } catch (error) { fail(error); }
    }
  }
  buffer.addEventListener("updateend", pump);

  const reader = response.body.getReader();
  try {
    for (;;) {
      const stall = setTimeout(() => fail(new Error("the stream stalled")), STALL_MS);
      const {done, value} = await reader.read().finally(() => clearTimeout(stall));
      if (done) break;
      queued.push(value);
      pump();
    }
  } catch (error) {
    throw failure || error;
  }
  if (failure) throw failure;
  return true;
}

async function showMJPEG() {
  // A multipart image never finishes loading, so it comes after the page's load event.
  if (document.readyState !== "complete") {
    await new Promise(resolve => window.addEventListener("load", resolve, {once: true}));
  }
  const image = document.createElement("img");
  image.alt = "Live picture";
  image.onerror = () => setTimeout(() => { image.src = "stream.mjpeg?" + Date.now(); }, 2000);
  image.src = "stream.mjpeg";
  video.replaceWith(image);
  liveInfo.textContent = "MJPEG";
}

async function runLive() {
  if (!window.MediaSource) return showMJPEG();
  for (;;) {
    try {
      if (!await playStream()) return showMJPEG();
      liveInfo.textContent = "MSE · stream ended, reconnecting…";
    } catch (error) {
      const reason = error.name === "AbortError" ? "no answer" : error.message;
      liveInfo.textContent = `MSE · ${reason}, reconnecting…`;
    }
    video.onerror = null;
    video.removeAttribute("src");
    video.load();
    await sleep(1500);
  }
}

// ---- Status

const has = value => value !== undefined && value !== null;
const fixed = (value, digits) => typeof value === "number" ? value.toFixed(digits) : DASH;

function formatBytes(bytes) {
  if (typeof bytes !== "number") return DASH;
  const units = ["B", "kB", "MB", "GB", "TB"];
  let unit = 0;
  while (bytes >= 1000 && unit < units.length - 1) { bytes /= 1000; unit++; }
  return `${bytes.toFixed(unit && bytes < 10 ? 1 : 0)} ${units[unit]}`;
}

function setText(id, value) {
  $(id).textContent = has(value) && value !== "" ? String(value) : DASH;
}

// Fills a list with one line per item, or a dash when there are none.
function setList(id, items, line) {
  const list = $(id);
  const lines = Array.isArray(items) && items.length ? items.map(line) : [DASH];
  list.replaceChildren(...lines.map(text => {
    const item = document.createElement("li");
    item.textContent = text;
    return item;
  }));
}

function showStatus(s) {
  setText("captured", s.frames_captured);
  setText("encoded", s.frames_encoded);
  const drops = [s.dropped_queue, s.dropped_driver].filter(n => typeof n === "number");
  setText("dropped", drops.length ? drops.reduce((a, b) => a + b) : null);
  setText("bitrate", typeof s.bitrate === "number" ? `${(s.bitrate / 1e6).toFixed(2)} Mbit/s` : null);
  setText("speed", s.speed?.last);
  const audio = s.audio;
  setText("audio", audio && [
    has(audio.drift_ppm) && `drift ${fixed(audio.drift_ppm, 1)} ppm`,
    has(audio.gaps) && `${audio.gaps} gaps`,
    has(audio.level_dbfs) && `${fixed(audio.level_dbfs, 1)} dBFS`,
  ].filter(Boolean).join(", "));
  setText("motion", has(s.motion?.score_last) ? fixed(s.motion.score_last, 3) : null);
  setList("outputs", s.outputs, o => `${o.name ?? DASH}: ${o.state ?? DASH}` + (o.error ? ` (${o.error})` : ""));
  setList("disks", s.disk, d => {
    const share = d.total_bytes ? ` (${Math.round(100 * d.free_bytes / d.total_bytes)} %)` : "";
    return `${d.path ?? DASH}: ${formatBytes(d.free_bytes)} free of ${formatBytes(d.total_bytes)}${share}`;
  });
  setList("clips", s.events?.clips, c =>
    [c.file, c.state, c.trigger, c.label && `“${c.label}”`].filter(Boolean).join(" · "));
}

async function pollStatus() {
  for (;;) {
    try {
      showStatus(await getJSON("status"));
      $("connection").textContent = "";
    } catch (error) {
      $("connection").textContent = "no answer from the recorder";
    }
    await sleep(1000);
  }
}

// ---- Recent files

const FILES_SHOWN = 12;

// Server paths ("/recordings/…") are made relative so they also resolve under a proxy's sub-path.
const relative = url => url.replace(/^\/(?!\/)/, "");

function fileCard(file) {
  const card = document.createElement("div");
  card.className = "card";
  if (file.thumbnail) {
    const image = document.createElement("img");
    image.loading = "lazy";
    image.alt = "";
    image.src = relative(file.thumbnail);
    card.append(image);
  } else {
    card.append(Object.assign(document.createElement("span"), {className: "no-thumb"}));
  }
  const text = document.createElement("div");
  const link = document.createElement("a");
  link.href = relative(file.url);
  link.download = file.name;
  link.textContent = file.name;
  const when = new Date(file.modified);
  const details = document.createElement("div");
  details.className = "note";
  details.textContent = [file.kind, formatBytes(file.bytes),
    isNaN(when) ? file.modified : when.toLocaleString(undefined, {dateStyle: "short", timeStyle: "short"})].filter(Boolean).join(" · ");
  text.append(link, details);
  if (file.open) {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = "● being written";
    text.append(badge);
  }
  card.append(text);
  return card;
}

async function pollFiles() {
  let shown = null;
  for (;;) {
    try {
      const files = ((await getJSON("recordings")).files || []).slice(0, FILES_SHOWN);
      const key = JSON.stringify(files);
      // Rebuilding only on a change keeps the thumbnails from reloading every time.
      if (key !== shown) {
        shown = key;
        const grid = $("file-grid");
        if (files.length) {
          grid.replaceChildren(...files.map(fileCard));
        } else {
          grid.replaceChildren(Object.assign(document.createElement("p"),
            {className: "note", textContent: "No files yet."}));
        }
      }
    } catch (error) {
      // The status poll already says when the recorder does not answer.
    }
    await sleep(5000);
  }
}

// ---- Commands

$("event-form").addEventListener("submit", async event => {
  event.preventDefault();
  const form = event.target;
  const label = form.label.value.trim();
  const body = {duration: Number(form.duration.value)};
  if (label) body.label = label;
  form.querySelector("button").disabled = true;
  const [ok, error] = await post("events", body);
  form.querySelector("button").disabled = false;
  say($("event-result"), ok, ok ? "Event marked." : `Not marked: ${error}`);
});

$("stop").addEventListener("click", async () => {
  if (!confirm("Stop recording? The recorder finishes its files and exits.")) return;
  const [ok, error] = await post("stop");
  say($("stop-result"), ok, ok ? "Stopping." : `Not stopped: ${error}`);
});

runLive();
pollStatus();
pollFiles();
