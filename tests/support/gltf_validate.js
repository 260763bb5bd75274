// Validates glTF files with the Khronos glTF Validator; prints each report as JSON.
const fs = require('fs');
const path = require('path');
const validator = require('gltf-validator');
(async () => {
  for (const file of process.argv.slice(2)) {
    const data = new Uint8Array(fs.readFileSync(file));
    const report = await validator.validateBytes(data, {
      uri: file,
      externalResourceFunction: (uri) => new Promise((resolve, reject) => {
        try { resolve(new Uint8Array(fs.readFileSync(path.resolve(path.dirname(file), decodeURIComponent(uri))))); }
        catch (e) { reject(e.toString()); }
      }),
    });
    console.log(JSON.stringify({ file, issues: report.issues }));
  }
})().catch((e) => { console.error(e); process.exit(1); });
