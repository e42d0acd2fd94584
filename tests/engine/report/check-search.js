// check-search.js: runs a report's report.js and search-index.js outside a browser (node, a stub document) and
// checks the search: node check-search.js DIR WORD EXPECTED_ID... exits 1 unless every expected compile id is
// among the results for WORD, and a word no page holds finds nothing.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const [dir, word, ...expected] = process.argv.slice(2);
const listeners = {};
const context = {
  window: {},
  document: {
    currentScript: { getAttribute: () => '' },
    addEventListener: (name, fn) => { listeners[name] = fn; },
    getElementById: () => null,
    body: { getAttribute: () => null },
  },
};
context.window.document = context.document;
vm.createContext(context);
for (const name of ['search-index.js', 'report.js']) {
  vm.runInContext(fs.readFileSync(path.join(dir, name), 'utf8'), context,
                  { filename: name });
}
// report.js defines window.fxwbSearch; search-index.js sets window.FXWB_SEARCH.
const win = context.window;
if (!win.fxwbSearch || !Array.isArray(win.FXWB_SEARCH)) {
  console.error('report.js or search-index.js did not set window.fxwbSearch / window.FXWB_SEARCH');
  process.exit(1);
}
listeners.DOMContentLoaded && listeners.DOMContentLoaded();
const ids = win.fxwbSearch(word).map((r) => r.id);
const missing = expected.filter((id) => !ids.includes(id));
if (missing.length) {
  console.error(`search '${word}' found [${ids}], not ${missing}`);
  process.exit(1);
}
if (win.fxwbSearch('zzqx-no-such-word').length !== 0) {
  console.error('a word no page holds found something');
  process.exit(1);
}
console.log(`search '${word}': ${ids.join(' ')}`);
