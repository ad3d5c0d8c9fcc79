// A JavaScript hot loop for report_jit_test.sh: one named function doing arithmetic, called until
// SECONDS have passed, long enough for V8 to compile it (Turbofan) and for most samples to land in
// its compiled code. Writes the process's pid to PID_FILE first: its perf map is /tmp/perf-PID.map.
// Usage: node --perf-basic-prof jit_hot_loop.js PID_FILE SECONDS
'use strict';
const fs = require('fs');

function userperfJitHotLoop(n) {
  let acc = 0;
  for (let i = 0; i < n; i++) acc = (acc * 31 + i) % 1000003;
  return acc;
}

fs.writeFileSync(process.argv[2], `${process.pid}\n`);
const end = Date.now() + 1000 * Number(process.argv[3]);
let total = 0;
while (Date.now() < end) total += userperfJitHotLoop(200000);
if (total < 0) console.log(total);  // keeps the result alive
