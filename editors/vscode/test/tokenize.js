// Tokenizes a .coll file with syntaxes/coll.tmLanguage.json the way a TextMate
// engine applies single-line `match` rules: at each position, the rule whose match
// starts first wins (ties: the rule listed first). Prints one JSON array of
// [startByte, endByte, scope] for the whole file. Used by lsp/tests/textmate.rs.
'use strict';
const fs = require('fs');
const path = require('path');

const grammar = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'syntaxes', 'coll.tmLanguage.json'), 'utf8'),
);

function rules(patterns) {
  const out = [];
  for (const p of patterns) {
    if (p.include) {
      const r = grammar.repository[p.include.replace(/^#/, '')];
      out.push(...rules(r.patterns ? r.patterns : [r]));
    } else if (p.match) {
      out.push({ re: new RegExp(p.match, 'gd'), name: p.name, captures: p.captures });
    }
  }
  return out;
}

const all = rules(grammar.patterns);
const text = fs.readFileSync(process.argv[2], 'utf8');
const tokens = [];
let lineStart = 0;
for (const line of text.split('\n')) {
  let pos = 0;
  while (pos < line.length) {
    let best = null;
    for (const r of all) {
      r.re.lastIndex = pos;
      const m = r.re.exec(line);
      if (m && m[0].length > 0 && (best === null || m.index < best.m.index)) {
        best = { r, m };
      }
    }
    if (best === null) break;
    const { r, m } = best;
    const bytes = (s) => Buffer.byteLength(s, 'utf8');
    if (r.name) {
      const a = lineStart + bytes(line.slice(0, m.index));
      tokens.push([a, a + bytes(m[0]), r.name]);
    } else if (r.captures) {
      for (const [k, c] of Object.entries(r.captures)) {
        const at = m.indices[Number(k)];
        if (at) {
          const a = lineStart + bytes(line.slice(0, at[0]));
          tokens.push([a, a + bytes(line.slice(at[0], at[1])), c.name]);
        }
      }
    }
    pos = m.index + m[0].length;
  }
  lineStart += Buffer.byteLength(line, 'utf8') + 1;
}
process.stdout.write(JSON.stringify(tokens));
