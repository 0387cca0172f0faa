// Samples the frame code (Sources/VTCapture/FrameCode.swift) of the picture a playing <video>
// (or an <img> of a multipart MJPEG stream) shows, for cdp.py: `cdp.py URL framecode.js --args '{"samples": 30}'`. Returns
// [{t, frame, decoded, currentTime}] (with `captured` and `asked_ms` when args.status names a
// status URL), frame null where no valid code is seen.
const SAMPLES = args.samples ?? 50;          // at most this many samples,
const SECONDS = args.seconds ?? 10;          // for at most this long,
const PERIOD_MS = args.period_ms ?? 100;     // one every this many milliseconds
const SELECTOR = args.selector ?? "video";
const WAIT_SECONDS = args.wait_seconds ?? 10; // for the first picture
const STATUS = args.status ?? null;          // a URL whose JSON has frames_captured, read with each sample

const INSERT_IMAGE = args.insert_image ?? null; // an image URL (an MJPEG stream) to show first

if (INSERT_IMAGE) {
  // Put in after the page has loaded: an endless image would keep the load from ever ending.
  const image = document.createElement("img");
  image.src = INSERT_IMAGE;
  document.body.appendChild(image);
}
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
// The page may put the element in after it loaded (the live page's MJPEG in place of its video).
let video = null;
for (const start = performance.now(); !(video = document.querySelector(INSERT_IMAGE ? "img" : SELECTOR));) {
  if (performance.now() - start > WAIT_SECONDS * 1000) throw new Error(`no ${SELECTOR} in the page`);
  await sleep(50);
}
// An <img> (a multipart MJPEG stream) has no playback state: its size says it shows a picture.
const isImage = video.tagName === "IMG";
const pictureWidth = () => isImage ? video.naturalWidth : video.videoWidth;
const pictureHeight = () => isImage ? video.naturalHeight : video.videoHeight;

for (const start = performance.now(); isImage ? !video.naturalWidth : video.readyState < 2 || !video.videoWidth;) {
  if (performance.now() - start > WAIT_SECONDS * 1000) throw new Error("the video shows no picture");
  await sleep(50);
}

const canvas = document.createElement("canvas");
const context = canvas.getContext("2d", {willReadFrequently: true});

// Mirrors FrameCode.read: 40 blocks in reading order, each judged by the mean luma of its
// central quarter; a mean within 40 of mid-grey means there is no code.
function readFrameCode() {
  const width = pictureWidth(), height = pictureHeight();
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width;
    canvas.height = height;
  }
  context.drawImage(video, 0, 0, width, height);
  const blockSize = width >= 320 ? 16 : 8;
  const perRow = Math.floor(width / blockSize);
  const rows = Math.ceil(40 / perRow);
  const pixels = context.getImageData(0, 0, width, Math.min(height, rows * blockSize)).data;
  const inset = blockSize / 4, side = blockSize / 2;
  const bits = [];
  for (let slot = 0; slot < 40; slot++) {
    const x0 = (slot % perRow) * blockSize + inset, y0 = Math.floor(slot / perRow) * blockSize + inset;
    let sum = 0;
    for (let y = y0; y < y0 + side; y++) {
      for (let x = x0; x < x0 + side; x++) {
        const i = (y * width + x) * 4;
        sum += 0.299 * pixels[i] + 0.587 * pixels[i + 1] + 0.114 * pixels[i + 2];
      }
    }
    const mean = sum / (side * side);
    if (Math.abs(mean - 128) < 40) return null;
    bits.push(mean > 128);
  }
  if (!bits[0] || bits[1] || bits[38] || !bits[39]) return null;
  // Most significant bit first; >>> 0 keeps the 32-bit numbers unsigned.
  const number = (from, to) => bits.slice(from, to).reduce((n, bit) => ((n << 1) | bit) >>> 0, 0);
  const gray = number(2, 34);
  const check = number(34, 38);
  let nibbles = 0;
  for (let i = 0; i < 8; i++) nibbles ^= (gray >>> (4 * i)) & 0xF;
  if (check !== nibbles) return null;
  let frame = gray;
  for (let shift = 1; shift < 32; shift <<= 1) frame = (frame ^ (frame >>> shift)) >>> 0;
  return frame;
}

const samples = [];
for (const start = performance.now();
     samples.length < SAMPLES && performance.now() - start < SECONDS * 1000;) {
  const t = performance.now();
  const sample = {
    t,
    // Milliseconds since the epoch, for a clock outside the browser.
    wall: performance.timeOrigin + t,
    frame: readFrameCode(),
    decoded: isImage ? null : video.getVideoPlaybackQuality().totalVideoFrames,
    currentTime: isImage ? null : video.currentTime,
  };
  if (STATUS) {
    // The camera's frames so far, asked right after the picture was read.
    const answer = await fetch(STATUS, {cache: "no-store"});
    sample.captured = (await answer.json()).frames_captured;
    sample.asked_ms = performance.now() - sample.t;
  }
  samples.push(sample);
  await sleep(PERIOD_MS);
}
return samples;
