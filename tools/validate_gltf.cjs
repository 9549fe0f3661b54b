// Validates glTF binaries with the Khronos glTF validator (npm package `gltf-validator`).
// Usage: NODE_PATH=<dir>/node_modules node tools/validate_gltf.cjs FILE.glb [...]
// Exits 1 if any file has errors.
const validator = require('gltf-validator');
const fs = require('fs');

(async () => {
  let failed = false;
  for (const path of process.argv.slice(2)) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(path)));
    const i = report.issues;
    console.log(`${path}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos`);
    for (const m of i.messages.slice(0, 20)) console.log(`  ${m.severity} ${m.code} ${m.pointer ?? ''} ${m.message}`);
    if (i.numErrors > 0) failed = true;
  }
  process.exit(failed ? 1 : 0);
})();
