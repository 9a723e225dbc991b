// Parses every Swift file of the package with tree-sitter-swift and fails
// on any syntax error, naming the file, line and column. This is a syntax
// check only: no Swift compiler runs here, so types are not checked.
const fs = require('fs');
const path = require('path');
const Parser = require('tree-sitter');
const Swift = require('tree-sitter-swift');

const parser = new Parser();
parser.setLanguage(Swift);
// The check itself must be able to fail: a broken declaration is refused.
if (!parser.parse('public struct Broken: Codable { public var x: }\n').rootNode.hasError) {
  console.log('syntax: the parser accepted a broken declaration');
  process.exit(1);
}
const root = process.argv[2];
const files = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== '.build') walk(p);
    else if (e.name.endsWith('.swift')) files.push(p);
  }
})(root);
let bad = 0;
for (const f of files.sort()) {
  const src = fs.readFileSync(f, 'utf8');
  // The native binding reads long sources through a callback.
  const tree = parser.parse((i) => src.slice(i, i + 4096));
  const errors = [];
  (function find(n) {
    if (n.type === 'ERROR' || n.isMissing) {
      errors.push(`${n.isMissing ? 'missing ' + n.type : 'error'} at ${n.startPosition.row + 1}:${n.startPosition.column + 1}: ${src.slice(n.startIndex, Math.min(n.endIndex, n.startIndex + 80)).split('\n')[0]}`);
      return;
    }
    for (let i = 0; i < n.childCount; i++) find(n.child(i));
  })(tree.rootNode);
  if (errors.length) {
    bad++;
    console.log(`${path.relative(root, f)}:\n  ${errors.slice(0, 10).join('\n  ')}`);
  }
}
console.log(`syntax: ${files.length - bad} passed, ${bad} failed`);
process.exit(bad ? 1 : 0);
