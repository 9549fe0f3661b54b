// Loam in a browser page: keeps the world file's bytes in IndexedDB, starts the editor
// (loam_web.wasm) on the canvas, and shows what the user must know (a world that did not
// open, a server that cannot be joined yet). `window.loam` is what tests read.
import init, { start, status, world_bytes, check_world } from './pkg/loam_web.js';

const DB = 'loam';
const WORLDS = 'worlds';
const KEY = 'world';

const messageBox = document.getElementById('loam-message');
function say(text, kind = 'error') {
  messageBox.textContent = text;
  messageBox.className = kind;
  messageBox.style.display = 'block';
  console.log(`loam: ${text}`);
}

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}
function openDb() {
  const r = indexedDB.open(DB, 1);
  r.onupgradeneeded = () => r.result.createObjectStore(WORLDS);
  return request(r);
}
function transaction(db, mode, f) {
  return new Promise((resolve, reject) => {
    const tx = db.transaction(WORLDS, mode);
    const result = f(tx.objectStore(WORLDS));
    tx.oncomplete = () => resolve(result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}
async function get(db, key) {
  let r;
  await transaction(db, 'readonly', (s) => { r = s.get(key); });
  return r.result;
}
const put = (db, key, value) => transaction(db, 'readwrite', (s) => { s.put(value, key); });
const remove = (db, key) => transaction(db, 'readwrite', (s) => { s.delete(key); });

let db;
// The sequence number of the bytes IndexedDB holds (written whole), and of the newest
// handed over; writes go one at a time, the newest waiting bytes last.
let storedSeq = 0;
let waiting = null;
let writing = false;
async function writeKept() {
  if (writing) return;
  writing = true;
  while (waiting) {
    const w = waiting;
    waiting = null;
    try {
      await put(db, KEY, { bytes: w.bytes, lastSeq: w.lastSeq, at: Date.now() });
      storedSeq = w.lastSeq;
    } catch (e) {
      say(`This browser did not keep the world (${e}): download it to keep your edits.`);
    }
  }
  writing = false;
}

window.loamPage = {
  // Called by the editor (loam_web) with the world file's bytes after an edit. The bytes
  // are a view into the module's memory: copied before the write waits.
  keepWorld(bytes, lastSeq) {
    waiting = { bytes: bytes.slice(), lastSeq };
    writeKept();
  },
};

window.loam = {
  status: () => JSON.parse(status()),
  storedSeq: () => storedSeq,
  worldBytes: () => world_bytes(),
  ready: false,
};

async function main() {
  await init();
  db = await openDb();
  const params = new URLSearchParams(location.search);
  if (params.has('connect')) {
    say(`Joining a server from the browser is not built yet: ${params.get('connect')} was not `
      + 'contacted, and you are editing alone, in the world this browser keeps.', 'info');
  }
  const saved = await get(db, KEY);
  let line;
  try {
    line = start(saved ? saved.bytes : undefined, '#loam-canvas');
    if (saved) storedSeq = saved.lastSeq ?? 0;
  } catch (e) {
    if (!saved) throw e;
    // Never lost: the bytes stay in IndexedDB under another key.
    const aside = `unreadable-${new Date().toISOString()}`;
    await put(db, aside, saved);
    await remove(db, KEY);
    say(`The world kept in this browser does not open (${e.message ?? e}). It is kept aside `
      + `in IndexedDB (database "${DB}", key "${aside}") and a new world starts.`);
    line = start(undefined, '#loam-canvas');
  }
  console.log(`loam: ${line}`);
  document.getElementById('loam-loading').remove();
  document.getElementById('loam-canvas').focus();
  window.loam.ready = true;
}

document.getElementById('loam-download').addEventListener('click', () => {
  const bytes = world_bytes();
  if (bytes.length === 0) {
    say('Nothing to download yet: the world is kept half a second after an edit.', 'info');
    return;
  }
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  a.download = 'world.loam';
  a.click();
  URL.revokeObjectURL(a.href);
});

document.getElementById('loam-open').addEventListener('change', async (ev) => {
  const file = ev.target.files[0];
  if (!file) return;
  const bytes = new Uint8Array(await file.arrayBuffer());
  let line;
  try {
    line = check_world(bytes);
  } catch (e) {
    say(`${file.name} does not open (${e.message ?? e}); this browser's world is unchanged.`);
    return;
  }
  const current = await get(db, KEY);
  if (current) await put(db, `replaced-${new Date().toISOString()}`, current);
  await put(db, KEY, { bytes, lastSeq: 0, at: Date.now() });
  console.log(`loam: opening ${file.name}: ${line}`);
  location.reload();
});

main().catch((e) => say(`Loam did not start: ${e.message ?? e}`));
