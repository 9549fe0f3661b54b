// Validates glTF binaries with the Khronos glTF validator (npm package `gltf-validator`).
// Usage: node tools/validate_gltf.mjs FILE.glb [...]; exits 1 if any file has errors.
import validator from 'gltf-validator';
import fs from 'fs';

let failed = false;
for (const path of process.argv.slice(2)) {
  const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(path)));
  const i = report.issues;
  console.log(`${path}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos`);
  for (const m of i.messages.slice(0, 20)) console.log(`  ${m.severity} ${m.code} ${m.pointer ?? ''} ${m.message}`);
  if (i.numErrors > 0) failed = true;
}
process.exit(failed ? 1 : 0);
