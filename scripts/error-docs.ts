// Prints the error table of docs/errors.md from the catalogue, for pasting when entries are added:
//   node --import tsx scripts/error-docs.ts
import { ERRORS } from '../src/errors/catalogue.ts';

console.log('| name | code | HTTP status | system | message |');
console.log('|---|---|---|---|---|');
for (const [name, e] of Object.entries(ERRORS)) {
  console.log(`| ${name} | ${e.code} | ${e.status} | ${e.system} | ${e.message.replace(/\|/g, '\\|')} |`);
}
