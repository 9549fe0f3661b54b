// The browser editor in headless Chromium (tools/web_check.sh runs it):
//   node tools/web_check.cjs PAGE_URL OUT_DIR LOAM_BINARY
// Each check prints "ok" or "FAILED" with its figures; the exit code is the number failed.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const [url, out, loam] = process.argv.slice(2);
let failed = 0;
function check(name, ok, detail) {
  console.log(`${ok ? 'ok    ' : 'FAILED'} ${name}: ${detail}`);
  if (!ok) failed += 1;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const shot = (name) => path.join(out, name);

// ImageMagick: a number printed by `convert … -format FORMAT info:`.
function magick(file, ops, format) {
  return Number(execFileSync('convert', [file, ...ops, '-format', format, 'info:']).toString());
}
// Normalised cross-correlation of two pictures' grey 64×24 thumbnails of their band below
// the editor's HUD and palette (rows 360–680 of 720; 1: the same).
function ncc(a, b) {
  const small = (f, tag) => {
    const s = path.join(out, `${tag}-band.png`);
    execFileSync('convert', [f, '-crop', '1280x320+0+360', '+repage', '-colorspace', 'gray',
      '-resize', '64x16!', s]);
    return s;
  };
  try {
    execFileSync('compare', ['-metric', 'NCC', small(a, 'a'), small(b, 'b'), 'null:'], { stdio: 'pipe' });
  } catch (e) {
    // `compare` exits 1 when the pictures differ; the metric is on stderr either way.
    return Number(e.stderr.toString());
  }
  return 1;
}
// The share of pixels in the centre 96×96 of two pictures that differ by more than 8 %.
function centreChange(a, b) {
  const crop = (f, tag) => {
    const s = path.join(out, `${tag}-centre.png`);
    execFileSync('convert', [f, '-gravity', 'center', '-crop', '96x96+0+0', '+repage', s]);
    return s;
  };
  let ae;
  try {
    execFileSync('compare', ['-metric', 'AE', '-fuzz', '8%', crop(a, 'a'), crop(b, 'b'), 'null:'], { stdio: 'pipe' });
    ae = 0;
  } catch (e) {
    ae = Number(e.stderr.toString().trim().split(/\s/)[0]);
  }
  return ae / (96 * 96);
}

async function status(page) {
  return page.evaluate(() => (window.loam && window.loam.ready ? window.loam.status() : null));
}
// Polls the page's status until `pred` holds (or `seconds` pass); returns the last status.
async function until(page, seconds, pred) {
  const end = Date.now() + seconds * 1000;
  let s = null;
  while (Date.now() < end) {
    s = await status(page).catch(() => null);
    if (s && pred(s)) return s;
    await sleep(250);
  }
  return s;
}
// Waits for the view to be loaded: chunks on screen, none waiting to be built, for three
// frames in a row.
async function settled(page, seconds) {
  let frame = -1;
  let calm = 0;
  return until(page, seconds, (s) => {
    if (s.frames === frame) return false;
    frame = s.frames;
    calm = s.chunks_shown > 0 && s.chunks_waiting === 0 ? calm + 1 : 0;
    return calm >= 3;
  });
}
const message = (page) => page.evaluate(() => {
  const m = document.getElementById('loam-message');
  return m.style.display === 'block' ? m.textContent : '';
});

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
      // WebGL2 without a GPU: ANGLE on SwiftShader.
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  page.setDefaultTimeout(300000);
  const log = fs.createWriteStream(path.join(out, 'console.log'));
  page.on('console', (m) => log.write(`${m.type()}: ${m.text()}\n`));
  page.on('pageerror', (e) => log.write(`pageerror: ${e}\n`));

  // 1. The page loads and shows terrain.
  const t0 = Date.now();
  await page.goto(url);
  const first = await settled(page, 600);
  const loadS = (Date.now() - t0) / 1000;
  await page.screenshot({ path: shot('page-first.png'), timeout: 300000 });
  check('the page starts a new world', first !== null && first.last_seq === 0,
    `status ${JSON.stringify(first)}`);
  check('terrain is drawn', first !== null && first.chunks_shown > 20 && first.chunks_waiting === 0,
    `${first && first.chunks_shown} chunks shown, all built, after ${loadS.toFixed(1)} s and ${first && first.frames} frames`);
  const spread = magick(shot('page-first.png'), ['-colorspace', 'gray'], '%[fx:standard_deviation]');
  check('the picture is not flat', spread > 0.04, `grey standard deviation ${spread.toFixed(3)}`);
  const layout = ncc(shot('page-first.png'), path.join(out, 'native.png'));
  check('laid out as the native render of the session', layout > 0.6,
    `NCC of the grey thumbnails ${layout.toFixed(3)} (page-first.png against native.png)`);

  // 2. A click captures the pointer; a held left button digs at the crosshair.
  const canvas = page.locator('#loam-canvas');
  const box = await canvas.boundingBox();
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  // Each press is held over frames (a frame can take a second without a GPU): the first
  // click captures the pointer and does not dig; the second, held, digs.
  const frames = async (n) => {
    const f = (await status(page)).frames;
    await until(page, 120, (s) => s.frames >= f + n);
  };
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  await frames(2);
  await page.mouse.up();
  await frames(3);
  await page.mouse.down();
  await frames(3);
  await page.mouse.up();
  const dug = await until(page, 60, (s) => s.last_seq > 0 && s.hashed_seq === s.last_seq);
  // The dig's chunks are built first and shown within a frame or two.
  await frames(4);
  await page.screenshot({ path: shot('page-dug.png'), timeout: 300000 });
  check('the held button dug', dug !== null && dug.last_seq > 0, `${dug && dug.last_seq} ops, ${dug && dug.message}`);
  const change = centreChange(shot('page-first.png'), shot('page-dug.png'));
  check('the pixels at the crosshair changed', change > 0.05,
    `${(change * 100).toFixed(1)} % of the centre 96×96 pixels`);

  // 3. The world the page keeps is a world file; natively it has the page's field hash.
  const kept = await until(page, 30, (s) => s.kept_seq === s.last_seq);
  const stored = await page.waitForFunction(
    (seq) => window.loam.storedSeq() === seq, kept.last_seq, { timeout: 30000 },
  ).then(() => true, () => false);
  check('the world is kept in IndexedDB', stored, `kept and stored at op ${kept.last_seq}`);
  const bytes = await page.evaluate(() => Array.from(window.loam.worldBytes()));
  const file = path.join(out, 'page-world.loam');
  fs.writeFileSync(file, Buffer.from(bytes));
  const info = execFileSync(loam, ['world', 'info', file]).toString();
  fs.writeFileSync(path.join(out, 'page-world-info.txt'), info);
  const nativeHash = (info.match(/^field-hash: (\w+)/m) || [])[1];
  check('the native replay has the page\'s field hash', nativeHash === kept.field_hash,
    `page ${kept.field_hash}, loam world info ${nativeHash}`);

  // 3b. Ctrl+Z undoes the dig's stroke (the field as it was before it), Ctrl+Y redoes it;
  // each chord held over frames.
  const chord = async (key) => {
    await page.keyboard.down('Control');
    await page.keyboard.down(key);
    await frames(2);
    await page.keyboard.up(key);
    await page.keyboard.up('Control');
    await frames(2);
  };
  await chord('z');
  const undone = await until(page, 60, (s) => s.last_seq > kept.last_seq && s.hashed_seq === s.last_seq);
  check('Ctrl+Z undoes the dig', undone !== null && undone.field_hash === first.field_hash,
    `op ${undone && undone.last_seq}, hash ${undone && undone.field_hash} (before the dig ${first.field_hash})`);
  await chord('y');
  const redone = await until(page, 60, (s) => undone && s.last_seq > undone.last_seq && s.hashed_seq === s.last_seq);
  check('Ctrl+Y redoes it', redone !== null && redone.field_hash === kept.field_hash,
    `op ${redone && redone.last_seq}, hash ${redone && redone.field_hash}`);
  const final = await until(page, 30, (s) => s.kept_seq === s.last_seq);
  await page.waitForFunction((seq) => window.loam.storedSeq() === seq, final.last_seq, { timeout: 30000 });

  // 4. A reload opens the kept world with the dig (and its undo and redo).
  await page.reload();
  const back = await until(page, 300, (s) => s.frames > 2);
  await settled(page, 300);
  await page.screenshot({ path: shot('page-reloaded.png'), timeout: 300000 });
  check('a reload keeps the edits', back !== null && back.last_seq === final.last_seq
    && back.field_hash === final.field_hash,
    `after the reload: op ${back && back.last_seq}, hash ${back && back.field_hash}`);

  // 5. A damaged saved world: a message, a fresh world, the bytes kept aside.
  await page.evaluate(() => new Promise((resolve, reject) => {
    const r = indexedDB.open('loam', 1);
    r.onsuccess = () => {
      const tx = r.result.transaction('worlds', 'readwrite');
      const junk = new Uint8Array(8192).fill(7);
      junk.set(new TextEncoder().encode('SQLite format 3\0'));
      tx.objectStore('worlds').put({ bytes: junk, lastSeq: 3 }, 'world');
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    };
  }));
  await page.reload();
  const fresh = await until(page, 300, (s) => s.frames > 2);
  const said = await message(page);
  const aside = await page.evaluate(() => new Promise((resolve) => {
    const r = indexedDB.open('loam', 1);
    r.onsuccess = () => {
      const q = r.result.transaction('worlds').objectStore('worlds').getAllKeys();
      q.onsuccess = () => resolve(q.result);
    };
  }));
  await page.screenshot({ path: shot('page-damaged.png'), timeout: 300000 });
  check('a damaged saved world is said and replaced by a fresh one',
    fresh !== null && fresh.last_seq === 0 && said.includes('does not open'), `message: ${said}`);
  check('the damaged bytes are kept aside', aside.some((k) => String(k).startsWith('unreadable-')),
    `IndexedDB keys ${JSON.stringify(aside)}`);

  // 6. Joining from a browser is not built yet: said, and the page edits alone.
  await page.goto(`${url}?connect=ws://127.0.0.1:1/ws&name=ada`);
  await until(page, 300, (s) => s.frames > 2);
  const joinSaid = await message(page);
  check('?connect= says joining is not built yet', joinSaid.includes('not built yet'), joinSaid);

  await browser.close();
  console.log(failed === 0 ? 'web check: all passed' : `web check: ${failed} FAILED`);
  process.exit(failed);
})().catch((e) => {
  console.error(`web check: ${e.stack || e}`);
  process.exit(100);
});
